package netbench.helidon;

import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.nio.charset.StandardCharsets;

/**
 * The contract's endpoints as Helidon SE routes. Every handler runs on the virtual thread of
 * the connection that read the request and uses blocking calls. Unknown paths, and known paths
 * with another method, get Helidon's own 404.
 */
final class Routes {
    /** What {@code /} answers, chosen by the optional first command-line argument. */
    enum Root { NOT_FOUND, BLANK, WORK }

    private static final byte[] OK = "OK".getBytes(StandardCharsets.US_ASCII);
    private static final String TEXT = "text/plain";
    private static final String JSON = "application/json";

    private Routes() {}

    static void register(HttpRouting.Builder routing, Root root) {
        // Helidon 4.5.0 answers a request that carries "Connection: close" with "Connection: close"
        // but then keeps the socket open, waiting for another request, until the client gives up
        // (helidon-io/helidon#12324, fixed after 4.5.0, the newest release on Maven Central here).
        // The contract wants the connection closed after the answer: a filter may end a
        // connection by throwing CloseConnectionException (see Filter#filter), after the answer
        // has been written.
        routing.addFilter((chain, req, res) -> {
            chain.proceed();
            if (req.headers().containsToken(HeaderValues.CONNECTION_CLOSE)) {
                throw new CloseConnectionException("the request asked for Connection: close");
            }
        });
        routing.get("/blank", Routes::blank)
                .post("/work", Routes::work)
                .get("/echo/{text}", Routes::echo);
        if (root == Root.BLANK) {
            routing.get("/", Routes::blank);
        } else if (root == Root.WORK) {
            routing.post("/", Routes::work);
        }
    }

    private static void blank(ServerRequest req, ServerResponse res) {
        send(res, Status.OK_200, TEXT, OK);
    }

    /** The whole body (Content-Length or chunked, decoded by Helidon), then Jackson. */
    private static void work(ServerRequest req, ServerResponse res) {
        byte[] body = req.content().hasEntity() ? req.content().as(byte[].class) : new byte[0];
        byte[] answer;
        try {
            answer = Work.answer(body);
        } catch (BadRequest e) {
            send(res, Status.BAD_REQUEST_400, TEXT, e.getMessage().getBytes(StandardCharsets.UTF_8));
            return;
        }
        send(res, Status.OK_200, JSON, answer);
    }

    private static void echo(ServerRequest req, ServerResponse res) {
        String text = req.path().pathParameters().get("text");
        send(res, Status.OK_200, TEXT, text.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code send(byte[])} sets Content-Length; Helidon adds Date and handles keep-alive. */
    private static void send(ServerResponse res, Status status, String contentType, byte[] body) {
        res.status(status);
        res.header(HeaderNames.CONTENT_TYPE, contentType);
        res.send(body);
    }
}
