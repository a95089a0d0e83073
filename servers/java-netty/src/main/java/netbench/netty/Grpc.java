package netbench.netty;

import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import netbench.WorkGrpc;
import netbench.WorkOuterClass.WorkReply;
import netbench.WorkOuterClass.WorkRequest;

/**
 * The grpc offer: {@code netbench.Work/Compute} (contract/grpc/work.proto, compiled by the build)
 * on grpc-java's Netty transport with its defaults: its own event loops (the shaded Netty 4.1
 * inside grpc-netty-shaded), each call run on its default executor, messages uncompressed.
 */
final class Grpc {
    private Grpc() {}

    /** Binds and starts the gRPC server on {@code address} (port 0: a free one). */
    static io.grpc.Server start(InetSocketAddress address) throws IOException {
        return NettyServerBuilder.forAddress(address)
                .addService(new Service())
                .build()
                .start();
    }

    /** /work's computation; what /work answers 400 is INVALID_ARGUMENT. */
    static final class Service extends WorkGrpc.WorkImplBase {
        @Override
        public void compute(WorkRequest request, StreamObserver<WorkReply> answer) {
            WorkReply reply;
            try {
                reply = Work.reply(request);
            } catch (BadRequest e) {
                answer.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
                return;
            }
            answer.onNext(reply);
            answer.onCompleted();
        }
    }
}
