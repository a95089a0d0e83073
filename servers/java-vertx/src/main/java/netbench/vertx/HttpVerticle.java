package netbench.vertx;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.net.PemKeyCertOptions;
import java.util.ArrayList;
import java.util.List;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * One instance per core: each instance runs on its own event loop and creates its own
 * {@code HttpServer} on the same host and port; Vert.x binds the port once and hands
 * accepted connections round-robin to the instances' event loops. The same goes for the
 * listeners of contract 1.5 ({@link Listeners}): each instance opens one {@code HttpServer}
 * per port, all with this verticle's request handler, so HTTP/2 streams and HTTP/1.1 requests
 * are answered alike.
 */
final class HttpVerticle extends VerticleBase {
    /** What {@code /} answers, chosen by the optional first command-line argument. */
    enum Root { NOT_FOUND, BLANK, WORK }

    /** IMF-fixdate (RFC 9110): two-digit day, English names, GMT. */
    private static final DateTimeFormatter IMF_FIXDATE = DateTimeFormatter
            .ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.ENGLISH)
            .withZone(ZoneOffset.UTC);
    private static final String TEXT = "text/plain";
    private static final String JSON = "application/json";
    private static final Buffer OK = Buffer.buffer("OK");
    private static final Buffer NOT_FOUND = Buffer.buffer("not found");
    private static final Buffer NOT_ALLOWED = Buffer.buffer("method not allowed");

    /**
     * The ports beside PORT (0 where not opened; a test may not ask for port 0 here, as every
     * instance must bind the same port): {@code tls} with the PEM chain and PKCS#8 key, and
     * {@code h2c}.
     */
    record Listeners(int tls, String cert, String key, int h2c) {
        static final Listeners NONE = new Listeners(0, null, null, 0);
    }

    private final String host;
    private final int port;
    private final Root root;
    private final Listeners listeners;
    /**
     * The Date header, refreshed once a second by a timer on this verticle's event loop (Vert.x
     * adds no Date header of its own); only that loop reads and writes it.
     */
    private String date;

    HttpVerticle(String host, int port, Root root, Listeners listeners) {
        this.host = host;
        this.port = port;
        this.root = root;
        this.listeners = listeners;
    }

    @Override
    public Future<?> start() {
        date = now();
        vertx.setPeriodic(1000, id -> date = now());
        List<Future<?>> listening = new ArrayList<>();
        // Default HttpServerOptions: HTTP/1.1, and h2c too (Vert.x's default takes a client
        // preface or an Upgrade on a cleartext server).
        listening.add(vertx.createHttpServer().requestHandler(this::handle).listen(port, host));
        if (listeners.tls() != 0) {
            // Vert.x's TLS (the JDK's SSLEngine, its default) with ALPN offering h2 and
            // http/1.1 (its default ALPN list); without ALPN a client gets HTTP/1.1.
            HttpServerOptions tls = new HttpServerOptions()
                    .setSsl(true)
                    .setUseAlpn(true)
                    .setKeyCertOptions(new PemKeyCertOptions()
                            .setCertPath(listeners.cert())
                            .setKeyPath(listeners.key()));
            listening.add(vertx.createHttpServer(tls).requestHandler(this::handle).listen(listeners.tls(), host));
        }
        if (listeners.h2c() != 0) {
            // The same default options as PORT: the port of its own is what the contract names.
            listening.add(vertx.createHttpServer().requestHandler(this::handle).listen(listeners.h2c(), host));
        }
        return Future.all(listening);
    }

    private static String now() {
        return IMF_FIXDATE.format(ZonedDateTime.now(ZoneOffset.UTC));
    }

    private void handle(HttpServerRequest req) {
        String path = req.path(); // raw path, without the query string
        HttpMethod method = req.method();
        if (path.equals("/blank") || (path.equals("/") && root == Root.BLANK)) {
            if (method.equals(HttpMethod.GET)) {
                send(req, 200, TEXT, OK);
            } else {
                notAllowed(req, "GET");
            }
        } else if (path.equals("/work") || (path.equals("/") && root == Root.WORK)) {
            if (method.equals(HttpMethod.POST)) {
                // The whole body, Content-Length or chunked, then the work on this event loop.
                req.body().onComplete(body -> {
                    if (body.failed()) {
                        req.connection().close();
                        return;
                    }
                    Buffer answer;
                    try {
                        answer = Work.answer(body.result());
                    } catch (BadRequest e) {
                        send(req, 400, TEXT, Buffer.buffer(e.getMessage()));
                        return;
                    }
                    send(req, 200, JSON, answer);
                });
            } else {
                notAllowed(req, "POST");
            }
        } else if (path.startsWith("/echo/")) {
            if (method.equals(HttpMethod.GET)) {
                send(req, 200, TEXT, Buffer.buffer(path.substring("/echo/".length())));
            } else {
                notAllowed(req, "GET");
            }
        } else {
            send(req, 404, TEXT, NOT_FOUND);
        }
    }

    private void notAllowed(HttpServerRequest req, String allow) {
        req.response().putHeader(HttpHeaders.ALLOW, allow);
        send(req, 405, TEXT, NOT_ALLOWED);
    }

    /** {@code end(Buffer)} sets Content-Length; keep-alive and Connection: close are Vert.x's. */
    private void send(HttpServerRequest req, int status, String contentType, Buffer body) {
        HttpServerResponse res = req.response();
        res.setStatusCode(status)
                .putHeader(HttpHeaders.CONTENT_TYPE, contentType)
                .putHeader(HttpHeaders.DATE, date)
                .end(body);
    }
}
