package netbench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** The one handler, on context {@code /}: routes by path and method. */
final class Router implements HttpHandler {
    /** What {@code /} answers, chosen by the optional first command-line argument. */
    enum Root { NOT_FOUND, BLANK, WORK }

    private static final byte[] OK = "OK".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_FOUND = "not found".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_ALLOWED = "method not allowed".getBytes(StandardCharsets.US_ASCII);
    private static final String TEXT = "text/plain";
    private static final String JSON = "application/json";

    private final Root root;

    Router(Root root) {
        this.root = root;
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        try {
            String path = exchange.getRequestURI().getRawPath();
            String method = exchange.getRequestMethod();
            if (path == null) {
                send(exchange, 404, TEXT, NOT_FOUND);
            } else if (path.equals("/blank") || (path.equals("/") && root == Root.BLANK)) {
                if (method.equals("GET")) {
                    send(exchange, 200, TEXT, OK);
                } else {
                    notAllowed(exchange, "GET");
                }
            } else if (path.equals("/work") || (path.equals("/") && root == Root.WORK)) {
                if (method.equals("POST")) {
                    work(exchange);
                } else {
                    notAllowed(exchange, "POST");
                }
            } else if (path.startsWith("/echo/")) {
                if (method.equals("GET")) {
                    send(exchange, 200, TEXT, path.substring("/echo/".length()).getBytes(StandardCharsets.UTF_8));
                } else {
                    notAllowed(exchange, "GET");
                }
            } else {
                send(exchange, 404, TEXT, NOT_FOUND);
            }
        } finally {
            exchange.close(); // drains an unread request body and finishes the exchange
        }
    }

    private static void work(HttpExchange exchange) throws IOException {
        byte[] body;
        try (InputStream in = exchange.getRequestBody()) {
            body = in.readAllBytes(); // Content-Length or chunked: the JDK server decodes both
        }
        byte[] answer;
        try {
            answer = Work.answer(body);
        } catch (BadRequest e) {
            send(exchange, 400, TEXT, e.getMessage().getBytes(StandardCharsets.UTF_8));
            return;
        }
        send(exchange, 200, JSON, answer);
    }

    private static void notAllowed(HttpExchange exchange, String allow) throws IOException {
        exchange.getResponseHeaders().set("Allow", allow);
        send(exchange, 405, TEXT, NOT_ALLOWED);
    }

    /** Always framed by Content-Length (length 0 would mean chunked to this API, -1 means no body). */
    private static void send(HttpExchange exchange, int status, String contentType, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }
}
