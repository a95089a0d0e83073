package netbench.helidon;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import netbench.WorkGrpc;
import netbench.WorkOuterClass.WorkReply;
import netbench.WorkOuterClass.WorkRequest;

/**
 * The grpc offer: {@code netbench.Work/Compute}, the grpc-java service that the build generates
 * from contract/grpc/work.proto, routed by Helidon's gRPC module on Helidon's own HTTP/2 (each
 * call on its connection's virtual thread; messages uncompressed). Helidon's other way, a
 * GrpcService routed from the file's descriptor, cannot serve this file: it derives the
 * messages' Java class from the file name (netbench.Work$WorkRequest) without protoc's rule
 * that renames the outer class to WorkOuterClass when a service is also named Work.
 */
final class Grpc extends WorkGrpc.WorkImplBase {
    /** /work's computation; what /work answers 400 is INVALID_ARGUMENT. */
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
