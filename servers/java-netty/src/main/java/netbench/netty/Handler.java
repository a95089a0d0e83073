package netbench.netty;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.FileRegion;
import io.netty.handler.codec.DateFormatter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Date;
import java.util.concurrent.Callable;
import java.util.concurrent.RejectedExecutionException;

/**
 * The last handler of every connection's pipeline (and of every HTTP/2 stream's, where
 * Http2StreamFrameToHttpObjectCodec makes the same request objects): gets whole requests from
 * {@code HttpObjectAggregator} (Content-Length or chunked bodies alike) and uploads already
 * hashed by {@link Upload.Stream}, routes them by path and method, and writes one answer framed
 * by Content-Length each (a {@link FullHttpResponse}, or for a static file a head and the file).
 * One instance serves every connection; what a connection needs to remember lives in its
 * channel's attributes.
 *
 * <p>The database paths ({@code /db}, {@code /db/list}, {@code /fortunes}, {@code /queries},
 * {@code /updates}) answer later, from {@link Db#executor()}. So that answers still go out in the
 * order of the requests when a client pipelines, what arrives on a connection while its query
 * runs waits in {@link #WAITING} (and the connection stops reading meanwhile), and is served once
 * the answer is written.
 *
 * <p>{@code /app} answers at once, on the event loop: the session's lock it may wait for is held
 * for one page's render, never across I/O.
 */
@Sharable
final class Handler extends ChannelInboundHandlerAdapter {
    /** What {@code /} answers, chosen by the optional first command-line argument. */
    enum Root { NOT_FOUND, BLANK, WORK }

    private static final byte[] OK = "OK".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_FOUND = "not found".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_ALLOWED = "method not allowed".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BAD_HTTP = "bad request".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_DATABASE = "no database: DATABASE_URL is not set".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_ROW = "no row with that id".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_APP = "no app: ../../contract/app was not found at start-up".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LOGGED_OUT = "logged out".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SHUTTING_DOWN = "shutting down".getBytes(StandardCharsets.US_ASCII);
    private static final CharSequence TEXT_HTML_UTF8 = Fortunes.CONTENT_TYPE;

    /**
     * Set on a connection while its database query runs: what came in after it (requests, and
     * {@link Upload.Done} / {@link Upload.TooLarge}).
     */
    private static final AttributeKey<ArrayDeque<Object>> WAITING = AttributeKey.valueOf("netbench.waiting");

    private final Root root;
    /** Null when the server runs without DATABASE_URL: the database paths answer 503. */
    private final Db db;
    private final StaticFiles files;
    private final App app;

    Handler(Root root, Db db, StaticFiles files, App app) {
        this.root = root;
        this.db = db;
        this.files = files;
        this.app = app;
    }

    /** Whether this handler serves {@code msg}; anything else goes on down the pipeline. */
    private static boolean ours(Object msg) {
        return msg instanceof FullHttpRequest || msg instanceof Upload.Done || msg instanceof Upload.TooLarge;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!ours(msg)) {
            ctx.fireChannelRead(msg);
            return;
        }
        ArrayDeque<Object> waiting = ctx.channel().attr(WAITING).get();
        if (waiting != null) {
            waiting.add(msg); // released once served, or when the connection ends
            return;
        }
        try {
            serve(ctx, msg);
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void serve(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof Upload.Done) {
            Upload.Done done = (Upload.Done) msg;
            respond(ctx, done.version(), done.keepAlive(), response(HttpResponseStatus.OK,
                    HttpHeaderValues.APPLICATION_JSON, Upload.answer(done.length(), done.digest())));
            return;
        }
        if (msg instanceof Upload.TooLarge) {
            Upload.refuse(ctx, ((Upload.TooLarge) msg).version());
            return;
        }
        FullHttpRequest req = (FullHttpRequest) msg;
        if (req.decoderResult().isFailure()) {
            FullHttpResponse res = response(HttpResponseStatus.BAD_REQUEST, HttpHeaderValues.TEXT_PLAIN, BAD_HTTP);
            res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (WsEcho.isUpgrade(req) && ctx.pipeline().get(WsEcho.class) == null) {
            WsEcho.upgrade(ctx, req);
            return;
        }
        String path = new QueryStringDecoder(req.uri()).rawPath();
        if (req.method().equals(HttpMethod.GET)) {
            if (db != null && isDbPath(path)) {
                queryLater(ctx, req, path);
                return;
            }
            if (path.startsWith(StaticFiles.PREFIX)) {
                StaticFiles.Answer file = files.answer(path.substring(StaticFiles.PREFIX.length()), req.headers(),
                        Protocols.needsChunkedFiles(ctx.channel()));
                if (file != null) {
                    respond(ctx, req.protocolVersion(), HttpUtil.isKeepAlive(req), file.head(), file.body());
                    return;
                }
            }
        }
        respond(ctx, req.protocolVersion(), HttpUtil.isKeepAlive(req), route(req, path));
    }

    private static void respond(ChannelHandlerContext ctx, HttpVersion version, boolean keepAlive, FullHttpResponse res) {
        respond(ctx, version, keepAlive, res, null);
    }

    /**
     * Writes one answer: {@code head} alone when it is a whole answer, or {@code head} and the
     * file: a file region and an empty LastHttpContent, or chunked input, which ends with its
     * own (the head carries the file's Content-Length). Closes the connection after it unless it
     * is kept alive (on HTTP/2, the stream: a request there is always kept alive).
     */
    private static void respond(ChannelHandlerContext ctx, HttpVersion version, boolean keepAlive,
            HttpResponse head, Object body) {
        if (!version.equals(HttpVersion.HTTP_1_1)) {
            head.setProtocolVersion(version);
        }
        if (!keepAlive) {
            head.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        } else if (!version.isKeepAliveDefault()) {
            head.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        }
        ChannelFuture last = ctx.write(head);
        if (body instanceof FileRegion) {
            ctx.write(body);
            last = ctx.write(LastHttpContent.EMPTY_LAST_CONTENT);
        } else if (body != null) {
            last = ctx.write(body);
        }
        if (!keepAlive) {
            last.addListener(ChannelFutureListener.CLOSE);
        }
    }

    private static boolean isDbPath(String path) {
        switch (path) {
            case "/db":
            case "/db/list":
            case "/fortunes":
            case "/queries":
            case "/updates":
                return true;
            default:
                return false;
        }
    }

    /** What a query produced, handed from the db thread back to the event loop. */
    private record Answer(HttpResponseStatus status, CharSequence contentType, byte[] body) {}

    /**
     * Parameters are checked here, on the event loop (a 400 needs no database); the query runs
     * on the db executor, and the answer is written back on the event loop.
     */
    private void queryLater(ChannelHandlerContext ctx, FullHttpRequest req, String path) {
        String query = new QueryStringDecoder(req.uri()).rawQuery(); // "" without a "?": every parameter is missing
        HttpVersion version = req.protocolVersion();
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        Callable<Answer> job;
        try {
            job = job(path, query);
        } catch (BadRequest e) {
            respond(ctx, version, keepAlive, response(HttpResponseStatus.BAD_REQUEST, HttpHeaderValues.TEXT_PLAIN,
                    e.getMessage().getBytes(StandardCharsets.UTF_8)));
            return;
        }
        ctx.channel().attr(WAITING).set(new ArrayDeque<>());
        ctx.channel().config().setAutoRead(false);
        try {
            db.executor().execute(() -> {
                Answer answer = run(job);
                ctx.executor().execute(() -> answered(ctx, version, keepAlive, answer));
            });
        } catch (RejectedExecutionException e) { // the server is stopping
            answered(ctx, version, keepAlive, new Answer(HttpResponseStatus.SERVICE_UNAVAILABLE,
                    HttpHeaderValues.TEXT_PLAIN, SHUTTING_DOWN));
        }
    }

    /** What a database path's request runs on a db thread, its parameters already read. */
    private Callable<Answer> job(String path, String query) throws BadRequest {
        switch (path) {
            case "/db": {
                int id = DbParams.id(query);
                return () -> json(db.row(id));
            }
            case "/db/list": {
                int from = DbParams.from(query);
                int count = DbParams.count(query);
                return () -> json(db.list(from, count));
            }
            case "/fortunes":
                return () -> new Answer(HttpResponseStatus.OK, TEXT_HTML_UTF8, Fortunes.render(db.fortunes()));
            case "/queries": {
                int n = World.count(query);
                return () -> json(World.render(db.queries(n)));
            }
            case "/updates": {
                int n = World.count(query);
                return () -> json(World.render(db.updates(n)));
            }
            default:
                throw new IllegalArgumentException(path); // isDbPath said yes
        }
    }

    /** 200 with the JSON, or 404 for no row (null). */
    private static Answer json(byte[] body) {
        if (body == null) {
            return new Answer(HttpResponseStatus.NOT_FOUND, HttpHeaderValues.TEXT_PLAIN, NO_ROW);
        }
        return new Answer(HttpResponseStatus.OK, HttpHeaderValues.APPLICATION_JSON, body);
    }

    /** On a db thread: blocks on the pool and the queries. */
    private static Answer run(Callable<Answer> job) {
        try {
            return job.call();
        } catch (Exception e) { // SQLException, or a runtime one
            return new Answer(HttpResponseStatus.INTERNAL_SERVER_ERROR, HttpHeaderValues.TEXT_PLAIN,
                    ("database error: " + e.getMessage()).getBytes(StandardCharsets.UTF_8));
        }
    }

    /** Back on the event loop: the answer, then the requests that waited behind it, in order. */
    private void answered(ChannelHandlerContext ctx, HttpVersion version, boolean keepAlive, Answer answer) {
        respond(ctx, version, keepAlive, response(answer.status(), answer.contentType(), answer.body()));
        ArrayDeque<Object> waiting = ctx.channel().attr(WAITING).getAndSet(null);
        ctx.channel().config().setAutoRead(true);
        if (waiting != null) {
            for (Object next = waiting.poll(); next != null; next = waiting.poll()) {
                ArrayDeque<Object> again = ctx.channel().attr(WAITING).get();
                if (again != null) {
                    again.add(next); // another query went out: the rest wait behind it
                    continue;
                }
                try {
                    serve(ctx, next);
                } finally {
                    ReferenceCountUtil.release(next);
                }
            }
        }
        ctx.flush();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        ArrayDeque<Object> waiting = ctx.channel().attr(WAITING).getAndSet(null);
        if (waiting != null) {
            waiting.forEach(ReferenceCountUtil::release);
        }
        ctx.fireChannelInactive();
    }

    /** Answers are written as requests come in and flushed once per read from the socket. */
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close(); // a reset connection or similar: nothing to answer, nothing to log per request
    }

    private FullHttpResponse route(FullHttpRequest req, String path) {
        HttpMethod method = req.method();
        if (path.equals("/blank") || (path.equals("/") && root == Root.BLANK)) {
            if (!method.equals(HttpMethod.GET)) {
                return notAllowed("GET");
            }
            return response(HttpResponseStatus.OK, HttpHeaderValues.TEXT_PLAIN, OK);
        }
        if (path.equals("/work") || (path.equals("/") && root == Root.WORK)) {
            if (!method.equals(HttpMethod.POST)) {
                return notAllowed("POST");
            }
            // Both answers are /work answers: compressed when the request allows it (json-comp).
            try {
                byte[] answer = Work.answer(ByteBufUtil.getBytes(req.content()));
                return compressible(HttpResponseStatus.OK, HttpHeaderValues.APPLICATION_JSON, answer);
            } catch (BadRequest e) {
                return compressible(HttpResponseStatus.BAD_REQUEST, HttpHeaderValues.TEXT_PLAIN,
                        e.getMessage().getBytes(StandardCharsets.UTF_8));
            }
        }
        if (isDbPath(path)) {
            if (!method.equals(HttpMethod.GET)) {
                return notAllowed("GET");
            }
            // GET with a database never gets here: serve() sends it to queryLater.
            return response(HttpResponseStatus.SERVICE_UNAVAILABLE, HttpHeaderValues.TEXT_PLAIN, NO_DATABASE);
        }
        if (path.equals("/app")) {
            if (!method.equals(HttpMethod.GET)) {
                return notAllowed("GET");
            }
            return app(req);
        }
        if (path.equals("/app/logout")) {
            if (!method.equals(HttpMethod.POST)) {
                return notAllowed("POST");
            }
            app.sessions.end(Sessions.cookie(req.headers().getAll(HttpHeaderNames.COOKIE)));
            FullHttpResponse res = response(HttpResponseStatus.OK, HttpHeaderValues.TEXT_PLAIN, LOGGED_OUT);
            res.headers().set(HttpHeaderNames.SET_COOKIE, Sessions.clearCookie());
            return res;
        }
        if (path.equals(Upload.PATH)) {
            return notAllowed("POST"); // a POST never gets here: Upload.Stream takes it
        }
        if (path.startsWith(StaticFiles.PREFIX) && !method.equals(HttpMethod.GET)) {
            return notAllowed("GET"); // a GET of a file that exists never gets here
        }
        if (path.startsWith("/echo/")) {
            if (!method.equals(HttpMethod.GET)) {
                return notAllowed("GET");
            }
            byte[] text = path.substring("/echo/".length()).getBytes(StandardCharsets.UTF_8);
            return response(HttpResponseStatus.OK, HttpHeaderValues.TEXT_PLAIN, text);
        }
        return response(HttpResponseStatus.NOT_FOUND, HttpHeaderValues.TEXT_PLAIN, NOT_FOUND);
    }

    /**
     * {@code GET /app?page=K} on the event loop: the session named by the cookie (or a new one),
     * its visit counted and the page rendered under its lock; {@link Compression.Compressor}
     * gzips the page on its way out when the request allows it.
     */
    private FullHttpResponse app(FullHttpRequest req) {
        if (!app.present()) {
            return response(HttpResponseStatus.SERVICE_UNAVAILABLE, HttpHeaderValues.TEXT_PLAIN, NO_APP);
        }
        int k;
        try {
            k = App.page(new QueryStringDecoder(req.uri()).rawQuery());
        } catch (BadRequest e) {
            return response(HttpResponseStatus.BAD_REQUEST, HttpHeaderValues.TEXT_PLAIN,
                    e.getMessage().getBytes(StandardCharsets.UTF_8));
        }
        String setCookie = null;
        Sessions.Session session = app.sessions.find(Sessions.cookie(req.headers().getAll(HttpHeaderNames.COOKIE)));
        if (session == null) {
            session = app.sessions.create();
            setCookie = Sessions.setCookie(session);
        }
        long since = session.since;
        byte[] page = session.visit(visits -> app.render(k, visits, since));
        FullHttpResponse res = compressible(HttpResponseStatus.OK, TEXT_HTML_UTF8, page);
        res.headers().set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
        if (setCookie != null) {
            res.headers().set(HttpHeaderNames.SET_COOKIE, setCookie);
        }
        return res;
    }

    private static FullHttpResponse notAllowed(String allow) {
        FullHttpResponse res = response(HttpResponseStatus.METHOD_NOT_ALLOWED, HttpHeaderValues.TEXT_PLAIN, NOT_ALLOWED);
        res.headers().set(HttpHeaderNames.ALLOW, allow);
        return res;
    }

    static FullHttpResponse response(HttpResponseStatus status, CharSequence contentType, byte[] body) {
        return withHeaders(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body)),
                contentType, body.length);
    }

    /**
     * A {@code /work} answer or an {@code /app} page, which {@link Compression.Compressor}
     * compresses when the request allows it; plain or not, it says that it varies with
     * Accept-Encoding.
     */
    private static FullHttpResponse compressible(HttpResponseStatus status, CharSequence contentType, byte[] body) {
        FullHttpResponse res = withHeaders(new Compression.Compressible(status, Unpooled.wrappedBuffer(body)),
                contentType, body.length);
        res.headers().set(HttpHeaderNames.VARY, HttpHeaderNames.ACCEPT_ENCODING);
        return res;
    }

    private static FullHttpResponse withHeaders(FullHttpResponse res, CharSequence contentType, int length) {
        HttpHeaders h = res.headers();
        h.set(HttpHeaderNames.CONTENT_TYPE, contentType);
        h.setInt(HttpHeaderNames.CONTENT_LENGTH, length);
        // Netty adds no Date header of its own: an IMF-fixdate of now, formatted per answer.
        h.set(HttpHeaderNames.DATE, DateFormatter.format(new Date()));
        return res;
    }
}
