package netbench.helidon;

import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.helidon.webserver.staticcontent.FileSystemHandlerConfig;
import io.helidon.webserver.staticcontent.StaticContentFeature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.List;

/**
 * The contract's endpoints as Helidon SE routes. Every handler runs on the virtual thread of
 * the connection that read the request and uses blocking calls (JDBC included). Unknown paths,
 * and known paths with another method, get Helidon's own 404.
 */
final class Routes {
    /** What {@code /} answers, chosen by the optional first command-line argument. */
    enum Root { NOT_FOUND, BLANK, WORK }

    private static final byte[] OK = "OK".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_DATABASE = "no database: DATABASE_URL is not set".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_ROW = "no row with that id".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATABASE_ERROR = "database error".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_APP = "no app: ../../contract/app was not found at start-up".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LOGGED_OUT = "logged out".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TOO_LARGE = "body too large: at most 16 MiB".getBytes(StandardCharsets.US_ASCII);
    private static final String TEXT = "text/plain";
    private static final String JSON = "application/json";
    private static final String HTML = "text/html; charset=utf-8";
    private static final System.Logger LOG = System.getLogger(Routes.class.getName());

    /** Null when the server runs without DATABASE_URL: the database paths answer 503. */
    private final Db db;
    private final App app;

    private Routes(Db db, App app) {
        this.db = db;
        this.app = app;
    }

    /**
     * The routes; {@code db} may be null (the database paths answer 503), {@code staticDir} too
     * (no {@code /static/} route: 404); {@code app} holds the app's sessions, stylesheet and script.
     */
    static void register(HttpRouting.Builder routing, Root root, Db db, Path staticDir, App app) {
        Routes routes = new Routes(db, app);
        // Helidon 4.5.0 answers a request that carries "Connection: close" with "Connection: close"
        // but then keeps the socket open, waiting for another request, until the client gives up
        // (helidon-io/helidon#12324, fixed after 4.5.0, the newest release on Maven Central here).
        // The contract wants the connection closed after the answer: a filter may end a
        // connection by throwing CloseConnectionException (see Filter#filter), after the answer
        // has been written. The same for an answer that says Connection: close itself (413 to
        // an upload that is too large, whose body must not be read as the next request).
        // Before that, the filter gives every answer an IMF-fixdate Date (see HttpDate: Helidon's
        // own writes one-digit days on the 1st to the 9th of a month).
        // HTTP/2 has no Connection header and ends streams, not connections: there the filter only
        // dates the answer.
        routing.addFilter((chain, req, res) -> {
            res.header(HttpDate.now());
            chain.proceed();
            if (!http2(req) && req.headers().containsToken(HeaderValues.CONNECTION_CLOSE)
                    || res.headers().contains(HeaderValues.CONNECTION_CLOSE)) {
                throw new CloseConnectionException("the request or the answer asked for Connection: close");
            }
        });
        routing.get("/blank", Routes::blank)
                .post("/work", Routes::work)
                .get("/echo/{text}", Routes::echo)
                .get("/db", routes::db)
                .get("/db/list", routes::dbList)
                .get("/fortunes", routes::fortunes)
                .get("/queries", routes::queries)
                .get("/updates", routes::updates)
                .post("/upload", Routes::upload)
                .get("/app", routes::app)
                .post("/app/logout", routes::logout);
        if (staticDir != null) {
            // Helidon's static content feature: each file streamed from disk per request (no
            // in-memory cache unless configured), with Content-Length, Last-Modified, an ETag of
            // its modification time and 304 for an If-None-Match that names it. The route before
            // it only respells Last-Modified as an IMF-fixdate (HttpDate) as the answer goes out.
            routing.any("/static/*", (req, res) -> {
                res.beforeSend(() -> HttpDate.fixLastModified(res.headers()));
                res.next();
            });
            routing.register("/static", StaticContentFeature.createService(
                    FileSystemHandlerConfig.builder().location(staticDir).build()));
        }
        if (root == Root.BLANK) {
            routing.get("/", Routes::blank);
        } else if (root == Root.WORK) {
            routing.post("/", Routes::work);
        }
    }

    private static void blank(ServerRequest req, ServerResponse res) {
        send(res, Status.OK_200, TEXT, OK);
    }

    /**
     * The whole body (Content-Length or chunked, decoded by Helidon), then Jackson. json-comp:
     * gzip when Accept-Encoding allows it, and Vary on every answer of the path.
     */
    private static void work(ServerRequest req, ServerResponse res) {
        byte[] body = req.content().hasEntity() ? req.content().as(byte[].class) : new byte[0];
        byte[] answer;
        try {
            answer = Work.answer(body);
        } catch (BadRequest e) {
            send(res, Status.BAD_REQUEST_400, TEXT, e.getMessage().getBytes(StandardCharsets.UTF_8));
            return;
        }
        res.header(HeaderNames.VARY, "Accept-Encoding");
        if (Compression.acceptsGzip(req.headers().all(HeaderNames.ACCEPT_ENCODING, List::of))) {
            res.header(HeaderNames.CONTENT_ENCODING, "gzip");
            answer = Compression.gzip(answer);
        }
        send(res, Status.OK_200, JSON, answer);
    }

    private static void echo(ServerRequest req, ServerResponse res) {
        String text = req.path().pathParameters().get("text");
        send(res, Status.OK_200, TEXT, text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A Content-Length over the limit is refused from the head: the body is never read, and the
     * answer says Connection: close, so Helidon does not drain the entity (Http1Connection skips
     * that for a closing answer) and the filter above ends the connection. A chunked body is
     * hashed until it passes the limit. On HTTP/2 the 413 ends the stream alone (Helidon resets
     * it, as the body is not read), and a body without Content-Length is hashed until it passes
     * the limit.
     */
    private static void upload(ServerRequest req, ServerResponse res) {
        boolean chunked = req.headers().contains(HeaderValues.TRANSFER_ENCODING_CHUNKED);
        if (!chunked && req.headers().contentLength().orElse(0) > Upload.LIMIT) {
            tooLarge(req, res);
            return;
        }
        byte[] answer;
        try {
            answer = req.content().hasEntity() ? Upload.digest(req.content().inputStream()) : Upload.answer(0, Upload.sha256().digest());
        } catch (Upload.TooLarge e) {
            tooLarge(req, res);
            return;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        send(res, Status.OK_200, JSON, answer);
    }

    private static void tooLarge(ServerRequest req, ServerResponse res) {
        if (!http2(req)) {
            res.header(HeaderValues.CONNECTION_CLOSE); // a connection-specific header, which HTTP/2 forbids
        }
        send(res, Status.REQUEST_ENTITY_TOO_LARGE_413, TEXT, TOO_LARGE);
    }

    /** Whether the request came on an HTTP/2 stream (h2 or h2c), where Helidon's prologue says 2.0. */
    static boolean http2(ServerRequest req) {
        return "2.0".equals(req.prologue().protocolVersion());
    }

    /**
     * {@code GET /app?page=K} on the connection's virtual thread: the session named by the cookie
     * (or a new one), its visit counted and the page rendered under its lock, then gzipped
     * outside it when the client allows, as {@code /work} is.
     */
    private void app(ServerRequest req, ServerResponse res) {
        if (!app.present()) {
            send(res, Status.SERVICE_UNAVAILABLE_503, TEXT, NO_APP);
            return;
        }
        int k;
        try {
            k = App.page(req.query());
        } catch (BadRequest e) {
            send(res, Status.BAD_REQUEST_400, TEXT, e.getMessage().getBytes(StandardCharsets.UTF_8));
            return;
        }
        Sessions.Session session = app.sessions.find(Sessions.cookie(req.headers().cookies()));
        if (session == null) {
            session = app.sessions.create();
            res.headers().addCookie(Sessions.setCookie(session));
        }
        long since = session.since;
        byte[] page = session.visit(visits -> app.render(k, visits, since));
        res.header(HeaderNames.CACHE_CONTROL, "no-store");
        res.header(HeaderNames.VARY, "Accept-Encoding");
        if (Compression.acceptsGzip(req.headers().all(HeaderNames.ACCEPT_ENCODING, List::of))) {
            res.header(HeaderNames.CONTENT_ENCODING, "gzip");
            page = Compression.gzip(page);
        }
        send(res, Status.OK_200, HTML, page);
    }

    /** {@code POST /app/logout}: 200 whether or not the session was there, and the cookie cleared. */
    private void logout(ServerRequest req, ServerResponse res) {
        app.sessions.end(Sessions.cookie(req.headers().cookies()));
        res.headers().clearCookie(Sessions.clearCookie());
        send(res, Status.OK_200, TEXT, LOGGED_OUT);
    }

    private void db(ServerRequest req, ServerResponse res) {
        if (noDatabase(res)) {
            return;
        }
        try {
            byte[] row = db.row(DbParams.id(req.query()));
            if (row == null) {
                send(res, Status.NOT_FOUND_404, TEXT, NO_ROW);
            } else {
                send(res, Status.OK_200, JSON, row);
            }
        } catch (BadRequest e) {
            send(res, Status.BAD_REQUEST_400, TEXT, e.getMessage().getBytes(StandardCharsets.UTF_8));
        } catch (SQLException e) {
            databaseError(res, e);
        }
    }

    private void dbList(ServerRequest req, ServerResponse res) {
        if (noDatabase(res)) {
            return;
        }
        try {
            int from = DbParams.from(req.query());
            send(res, Status.OK_200, JSON, db.list(from, DbParams.count(req.query())));
        } catch (BadRequest e) {
            send(res, Status.BAD_REQUEST_400, TEXT, e.getMessage().getBytes(StandardCharsets.UTF_8));
        } catch (SQLException e) {
            databaseError(res, e);
        }
    }

    /** The fortune table read for this request, rendered by mustache.java. */
    private void fortunes(ServerRequest req, ServerResponse res) {
        if (noDatabase(res)) {
            return;
        }
        try {
            send(res, Status.OK_200, HTML, Fortunes.render(db.fortunes()));
        } catch (SQLException e) {
            databaseError(res, e);
        }
    }

    private void queries(ServerRequest req, ServerResponse res) {
        if (noDatabase(res)) {
            return;
        }
        try {
            send(res, Status.OK_200, JSON, World.json(db.worldRows(World.count(queriesParam(req)))));
        } catch (SQLException e) {
            databaseError(res, e);
        }
    }

    private void updates(ServerRequest req, ServerResponse res) {
        if (noDatabase(res)) {
            return;
        }
        try {
            send(res, Status.OK_200, JSON, World.json(db.updateWorld(World.count(queriesParam(req)))));
        } catch (SQLException e) {
            databaseError(res, e);
        }
    }

    /** {@code queries} as Helidon decodes it, or null when absent. */
    private static String queriesParam(ServerRequest req) {
        return req.query().first("queries").orElse(null);
    }

    private boolean noDatabase(ServerResponse res) {
        if (db == null) {
            send(res, Status.SERVICE_UNAVAILABLE_503, TEXT, NO_DATABASE);
            return true;
        }
        return false;
    }

    private static void databaseError(ServerResponse res, SQLException e) {
        LOG.log(System.Logger.Level.WARNING, "database error", e);
        send(res, Status.INTERNAL_SERVER_ERROR_500, TEXT, DATABASE_ERROR);
    }

    /** {@code send(byte[])} sets Content-Length; Helidon adds Date and handles keep-alive. */
    private static void send(ServerResponse res, Status status, String contentType, byte[] body) {
        res.status(status);
        res.header(HeaderNames.CONTENT_TYPE, contentType);
        res.send(body);
    }
}
