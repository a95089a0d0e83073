package netbench;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;

/** The one handler, on context {@code /}: routes by path and method. */
final class Router implements HttpHandler {
    /** What {@code /} answers, chosen by the optional first command-line argument. */
    enum Root { NOT_FOUND, BLANK, WORK }

    private static final byte[] OK = "OK".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_FOUND = "not found".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_ALLOWED = "method not allowed".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_DATABASE = "no database: DATABASE_URL is not set".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_APP = "no app: ../../contract/app was not found at start-up".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LOGGED_OUT = "logged out".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_ROW = "no row with that id".getBytes(StandardCharsets.US_ASCII);
    static final String TEXT = "text/plain";
    static final String JSON = "application/json";
    private static final String HTML = "text/html; charset=utf-8";
    private static final String STATIC_PREFIX = "/static/";

    private final Root root;
    /** Null when the server runs without DATABASE_URL: the db paths answer 503. */
    private final Db db;
    private final StaticFiles files;
    private final App app;

    Router(Root root, Db db, StaticFiles files, App app) {
        this.root = root;
        this.db = db;
        this.files = files;
        this.app = app;
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
            } else if (path.equals("/db") || path.equals("/db/list")) {
                if (method.equals("GET")) {
                    db(exchange, path.equals("/db"));
                } else {
                    notAllowed(exchange, "GET");
                }
            } else if (path.equals("/fortunes")) {
                if (method.equals("GET")) {
                    fortunes(exchange);
                } else {
                    notAllowed(exchange, "GET");
                }
            } else if (path.equals("/queries") || path.equals("/updates")) {
                if (method.equals("GET")) {
                    world(exchange, path.equals("/updates"));
                } else {
                    notAllowed(exchange, "GET");
                }
            } else if (path.equals("/app")) {
                if (method.equals("GET")) {
                    app(exchange);
                } else {
                    notAllowed(exchange, "GET");
                }
            } else if (path.equals("/app/logout")) {
                if (method.equals("POST")) {
                    logout(exchange);
                } else {
                    notAllowed(exchange, "POST");
                }
            } else if (path.equals("/upload")) {
                if (method.equals("POST")) {
                    Upload.handle(exchange);
                } else {
                    notAllowed(exchange, "POST");
                }
            } else if (path.startsWith(STATIC_PREFIX)) {
                if (!method.equals("GET")) {
                    notAllowed(exchange, "GET");
                } else if (!files.serve(exchange, path.substring(STATIC_PREFIX.length()))) {
                    send(exchange, 404, TEXT, NOT_FOUND);
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
        // json-comp: the answer depends on Accept-Encoding, plain or not.
        exchange.getResponseHeaders().set("Vary", "Accept-Encoding");
        byte[] answer;
        try {
            answer = Work.answer(body);
        } catch (BadRequest e) {
            send(exchange, 400, TEXT, e.getMessage().getBytes(StandardCharsets.UTF_8));
            return;
        }
        if (Compression.acceptsGzip(exchange.getRequestHeaders().get("Accept-Encoding"))) {
            answer = Compression.gzip(answer);
            exchange.getResponseHeaders().set("Content-Encoding", "gzip");
        }
        send(exchange, 200, JSON, answer);
    }

    private void fortunes(HttpExchange exchange) throws IOException {
        if (db == null) {
            send(exchange, 503, TEXT, NO_DATABASE);
            return;
        }
        byte[] page;
        try {
            page = Fortunes.render(db.fortunes());
        } catch (SQLException e) {
            send(exchange, 500, TEXT, ("database error: " + e.getMessage()).getBytes(StandardCharsets.UTF_8));
            return;
        }
        send(exchange, 200, HTML, page);
    }

    /**
     * {@code GET /app?page=K}: the session named by the cookie (or a new one), its visit counted
     * and the page rendered under its lock, then gzipped outside it when the client allows.
     */
    private void app(HttpExchange exchange) throws IOException {
        if (!app.present()) {
            send(exchange, 503, TEXT, NO_APP);
            return;
        }
        int k;
        try {
            k = App.page(exchange.getRequestURI().getRawQuery());
        } catch (BadRequest e) {
            send(exchange, 400, TEXT, e.getMessage().getBytes(StandardCharsets.UTF_8));
            return;
        }
        Headers headers = exchange.getResponseHeaders();
        Sessions.Session session = app.sessions.find(Sessions.cookie(exchange.getRequestHeaders().get("Cookie")));
        if (session == null) {
            session = app.sessions.create();
            headers.set("Set-Cookie", Sessions.setCookie(session));
        }
        long since = session.since;
        byte[] page = session.visit(visits -> app.render(k, visits, since));
        headers.set("Cache-Control", "no-store");
        headers.set("Vary", "Accept-Encoding");
        if (Compression.acceptsGzip(exchange.getRequestHeaders().get("Accept-Encoding"))) {
            page = Compression.gzip(page);
            headers.set("Content-Encoding", "gzip");
        }
        send(exchange, 200, HTML, page);
    }

    /** {@code POST /app/logout}: 200 whether or not the session was there. */
    private void logout(HttpExchange exchange) throws IOException {
        app.sessions.end(Sessions.cookie(exchange.getRequestHeaders().get("Cookie")));
        exchange.getResponseHeaders().set("Set-Cookie", Sessions.clearCookie());
        send(exchange, 200, TEXT, LOGGED_OUT);
    }

    /** {@code /queries} and {@code /updates}: N clamped, never a 400. */
    private void world(HttpExchange exchange, boolean update) throws IOException {
        if (db == null) {
            send(exchange, 503, TEXT, NO_DATABASE);
            return;
        }
        int n = World.queries(exchange.getRequestURI().getRawQuery());
        World.Row[] rows;
        try {
            rows = update ? db.updateWorld(n) : db.world(n);
        } catch (SQLException e) {
            send(exchange, 500, TEXT, ("database error: " + e.getMessage()).getBytes(StandardCharsets.UTF_8));
            return;
        }
        // Rendered after the connection is back in the pool.
        send(exchange, 200, JSON, World.render(rows));
    }

    private void db(HttpExchange exchange, boolean oneRow) throws IOException {
        if (db == null) {
            send(exchange, 503, TEXT, NO_DATABASE);
            return;
        }
        String query = exchange.getRequestURI().getRawQuery();
        byte[] answer;
        try {
            if (oneRow) {
                answer = db.row(DbParams.id(query));
                if (answer == null) {
                    send(exchange, 404, TEXT, NO_ROW);
                    return;
                }
            } else {
                int from = DbParams.from(query);
                answer = db.list(from, DbParams.count(query));
            }
        } catch (BadRequest e) {
            send(exchange, 400, TEXT, e.getMessage().getBytes(StandardCharsets.UTF_8));
            return;
        } catch (SQLException e) {
            send(exchange, 500, TEXT, ("database error: " + e.getMessage()).getBytes(StandardCharsets.UTF_8));
            return;
        }
        send(exchange, 200, JSON, answer);
    }

    private static void notAllowed(HttpExchange exchange, String allow) throws IOException {
        exchange.getResponseHeaders().set("Allow", allow);
        send(exchange, 405, TEXT, NOT_ALLOWED);
    }

    /** Always framed by Content-Length (length 0 would mean chunked to this API, -1 means no body). */
    static void send(HttpExchange exchange, int status, String contentType, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }
}
