// Tests of the gRPC listener: netbench.Work/Compute answered right, and INVALID_ARGUMENT where /work answers 400.
package main

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"netbench/servers/go-nethttp/workpb"
)

func grpcClient(t *testing.T) workpb.WorkClient {
	t.Helper()
	t.Setenv("GRPC_PORT", "0")
	addr := serveProtocols(t)["grpc"]
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return workpb.NewWorkClient(conn)
}

func TestGRPCCompute(t *testing.T) {
	client := grpcClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, c := range []struct {
		req  *workpb.WorkRequest
		want *workpb.WorkReply
	}{
		{
			&workpb.WorkRequest{Product: "WidgetPro-7", RequestId: "5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59", Group: &workpb.Group{
				Kind: "retail", Default: true, Balance: 1234.56,
				Dates: []string{"2020-01-12T10:53:17.773Z", "2019-03-01T00:00:00.000Z", "2021-07-30T23:59:59.999Z"},
			}},
			&workpb.WorkReply{Product: "WidgetPro-7", RequestId: "5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59", Client: &workpb.Client{
				Balance: 1234.56, MinDate: "2019-03-01T00:00:00.000Z", MaxDate: "2021-07-30T23:59:59.999Z",
			}},
		},
		// Same product and id, other dates: each call from its own message.
		{
			&workpb.WorkRequest{Product: "WidgetPro-7", RequestId: "5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59", Group: &workpb.Group{
				Kind: "retail", Balance: -1500, Dates: []string{"2000-02-29T00:00:00.000Z"},
			}},
			&workpb.WorkReply{Product: "WidgetPro-7", RequestId: "5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59", Client: &workpb.Client{
				Balance: -1500, MinDate: "2000-02-29T00:00:00.000Z", MaxDate: "2000-02-29T00:00:00.000Z",
			}},
		},
	} {
		got, err := client.Compute(ctx, c.req)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got, c.want) {
			t.Errorf("got %v, want %v", got, c.want)
		}
	}
}

func TestGRPCInvalid(t *testing.T) {
	client := grpcClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	withDates := func(dates ...string) *workpb.WorkRequest {
		return &workpb.WorkRequest{Product: "p", RequestId: "r", Group: &workpb.Group{Kind: "k", Balance: 1, Dates: dates}}
	}
	for name, req := range map[string]*workpb.WorkRequest{
		"no group":        {Product: "p", RequestId: "r"},
		"no dates":        withDates(),
		"month 13":        withDates("2020-01-12T10:53:17.773Z", "2020-13-45T99:00:00.000Z"),
		"29 February":     withDates("2021-02-29T00:00:00.000Z"),
		"24:00":           withDates("2020-01-01T24:00:00.000Z"),
		"leap second":     withDates("2016-12-31T23:59:60.000Z"),
		"signed fraction": withDates("2020-01-01T00:00:00.+01Z"),
		"offset":          withDates("2020-01-12T10:53:17.773+01:00"),
		"no milliseconds": withDates("2020-01-12T10:53:17Z"),
		"one-digit month": withDates("2020-1-12T10:53:17.773Z"),
		"space":           withDates("2020-01-12 10:53:17.773Z"),
		"yesterday":       withDates("yesterday"),
	} {
		_, err := client.Compute(ctx, req)
		if code := status.Code(err); code != codes.InvalidArgument {
			t.Errorf("%s: got %v (%v), want InvalidArgument", name, code, err)
		}
	}
}
