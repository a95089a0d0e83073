// The grpc offer: the service netbench.Work (contract/grpc/work.proto) on grpc-go.
package main

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"netbench/servers/go-nethttp/workpb"
)

// workService answers Compute with the same rules as POST /work.
type workService struct {
	workpb.UnimplementedWorkServer
}

// Compute is /work's computation. proto3 cannot tell a missing string,
// bool or number from its zero value, so only what the wire can show is
// checked: the group, at least one date and every date valid.
func (workService) Compute(_ context.Context, req *workpb.WorkRequest) (*workpb.WorkReply, error) {
	g := req.GetGroup()
	if g == nil {
		return nil, status.Error(codes.InvalidArgument, "group is required")
	}
	minDate, maxDate, err := dateRange(g.GetDates())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, "dates: at least one, each YYYY-MM-DDTHH:MM:SS.sssZ")
	}
	return &workpb.WorkReply{
		Product:   req.GetProduct(),
		RequestId: req.GetRequestId(),
		Client: &workpb.Client{
			Balance: g.GetBalance(),
			MinDate: minDate,
			MaxDate: maxDate,
		},
	}, nil
}

// newGRPCServer is grpc-go's server with its defaults (no compression
// registered, so messages go uncompressed, as the contract asks).
func newGRPCServer() *grpc.Server {
	s := grpc.NewServer()
	workpb.RegisterWorkServer(s, workService{})
	return s
}
