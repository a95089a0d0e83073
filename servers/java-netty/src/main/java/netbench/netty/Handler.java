package netbench.netty;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DateFormatter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.AttributeKey;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Date;
import java.util.concurrent.RejectedExecutionException;

/**
 * The last handler of every connection's pipeline: gets whole requests from
 * {@code HttpObjectAggregator} (Content-Length or chunked bodies alike), routes them by
 * path and method, and writes one {@link FullHttpResponse} framed by Content-Length.
 * One instance serves every connection; what a connection needs to remember lives in its
 * channel's attributes.
 *
 * <p>{@code /db} answers later, from {@link Db#executor()}. So that answers still go out in the
 * order of the requests when a client pipelines, the requests that arrive on a connection
 * while its {@code /db} query runs wait in {@link #WAITING} (and the connection stops reading
 * meanwhile), and are served once the answer is written.
 */
@Sharable
final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
    /** What {@code /} answers, chosen by the optional first command-line argument. */
    enum Root { NOT_FOUND, BLANK, WORK }

    private static final byte[] OK = "OK".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_FOUND = "not found".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_ALLOWED = "method not allowed".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BAD_HTTP = "bad request".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_DATABASE = "no database: DATABASE_URL is not set".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_ROW = "no row with that id".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SHUTTING_DOWN = "shutting down".getBytes(StandardCharsets.US_ASCII);

    /** Set on a connection while its /db query runs: the requests that came in after it. */
    private static final AttributeKey<ArrayDeque<FullHttpRequest>> WAITING = AttributeKey.valueOf("netbench.waiting");

    private final Root root;
    /** Null when the server runs without DATABASE_URL: the db paths answer 503. */
    private final Db db;

    Handler(Root root, Db db) {
        this.root = root;
        this.db = db;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        ArrayDeque<FullHttpRequest> waiting = ctx.channel().attr(WAITING).get();
        if (waiting != null) {
            waiting.add(req.retain()); // SimpleChannelInboundHandler releases its own reference
            return;
        }
        serve(ctx, req);
    }

    private void serve(ChannelHandlerContext ctx, FullHttpRequest req) {
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
        if (db != null && req.method().equals(HttpMethod.GET) && isDbPath(req.uri())) {
            queryLater(ctx, req);
            return;
        }
        respond(ctx, req.protocolVersion(), HttpUtil.isKeepAlive(req), route(req));
    }

    private static void respond(ChannelHandlerContext ctx, HttpVersion version, boolean keepAlive, FullHttpResponse res) {
        if (!version.equals(HttpVersion.HTTP_1_1)) {
            res.setProtocolVersion(version);
        }
        if (!keepAlive) {
            res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.write(res).addListener(ChannelFutureListener.CLOSE);
        } else {
            if (!version.isKeepAliveDefault()) {
                res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            }
            ctx.write(res);
        }
    }

    private static boolean isDbPath(String uri) {
        String path = new QueryStringDecoder(uri).rawPath();
        return path.equals("/db") || path.equals("/db/list");
    }

    /** What a query produced, handed from the db thread back to the event loop. */
    private record Answer(HttpResponseStatus status, CharSequence contentType, byte[] body) {}

    /**
     * Parameters are checked here, on the event loop (a 400 needs no database); the query runs
     * on the db executor, and the answer is written back on the event loop.
     */
    private void queryLater(ChannelHandlerContext ctx, FullHttpRequest req) {
        QueryStringDecoder uri = new QueryStringDecoder(req.uri());
        String query = uri.rawQuery(); // "" without a "?": every parameter is missing
        boolean oneRow = uri.rawPath().equals("/db");
        HttpVersion version = req.protocolVersion();
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        int first;
        int count;
        try {
            first = oneRow ? DbParams.id(query) : DbParams.from(query);
            count = oneRow ? 1 : DbParams.count(query);
        } catch (BadRequest e) {
            respond(ctx, version, keepAlive, response(HttpResponseStatus.BAD_REQUEST, HttpHeaderValues.TEXT_PLAIN,
                    e.getMessage().getBytes(StandardCharsets.UTF_8)));
            return;
        }
        ctx.channel().attr(WAITING).set(new ArrayDeque<>());
        ctx.channel().config().setAutoRead(false);
        try {
            db.executor().execute(() -> {
                Answer answer = query(oneRow, first, count);
                ctx.executor().execute(() -> answered(ctx, version, keepAlive, answer));
            });
        } catch (RejectedExecutionException e) { // the server is stopping
            answered(ctx, version, keepAlive, new Answer(HttpResponseStatus.SERVICE_UNAVAILABLE,
                    HttpHeaderValues.TEXT_PLAIN, SHUTTING_DOWN));
        }
    }

    /** On a db thread: blocks on the pool and the query. */
    private Answer query(boolean oneRow, int first, int count) {
        try {
            byte[] body = oneRow ? db.row(first) : db.list(first, count);
            if (body == null) {
                return new Answer(HttpResponseStatus.NOT_FOUND, HttpHeaderValues.TEXT_PLAIN, NO_ROW);
            }
            return new Answer(HttpResponseStatus.OK, HttpHeaderValues.APPLICATION_JSON, body);
        } catch (SQLException | RuntimeException e) {
            return new Answer(HttpResponseStatus.INTERNAL_SERVER_ERROR, HttpHeaderValues.TEXT_PLAIN,
                    ("database error: " + e.getMessage()).getBytes(StandardCharsets.UTF_8));
        }
    }

    /** Back on the event loop: the answer, then the requests that waited behind it, in order. */
    private void answered(ChannelHandlerContext ctx, HttpVersion version, boolean keepAlive, Answer answer) {
        respond(ctx, version, keepAlive, response(answer.status(), answer.contentType(), answer.body()));
        ArrayDeque<FullHttpRequest> waiting = ctx.channel().attr(WAITING).getAndSet(null);
        ctx.channel().config().setAutoRead(true);
        if (waiting != null) {
            for (FullHttpRequest next = waiting.poll(); next != null; next = waiting.poll()) {
                ArrayDeque<FullHttpRequest> again = ctx.channel().attr(WAITING).get();
                if (again != null) {
                    again.add(next); // another /db query went out: the rest wait behind it
                    continue;
                }
                try {
                    serve(ctx, next);
                } finally {
                    next.release();
                }
            }
        }
        ctx.flush();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        ArrayDeque<FullHttpRequest> waiting = ctx.channel().attr(WAITING).getAndSet(null);
        if (waiting != null) {
            waiting.forEach(FullHttpRequest::release);
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

    private FullHttpResponse route(FullHttpRequest req) {
        String path = new QueryStringDecoder(req.uri()).rawPath();
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
            try {
                byte[] answer = Work.answer(ByteBufUtil.getBytes(req.content()));
                return response(HttpResponseStatus.OK, HttpHeaderValues.APPLICATION_JSON, answer);
            } catch (BadRequest e) {
                return response(HttpResponseStatus.BAD_REQUEST, HttpHeaderValues.TEXT_PLAIN,
                        e.getMessage().getBytes(StandardCharsets.UTF_8));
            }
        }
        if (path.equals("/db") || path.equals("/db/list")) {
            if (!method.equals(HttpMethod.GET)) {
                return notAllowed("GET");
            }
            // GET with a database never gets here: serve() sends it to queryLater.
            return response(HttpResponseStatus.SERVICE_UNAVAILABLE, HttpHeaderValues.TEXT_PLAIN, NO_DATABASE);
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

    private static FullHttpResponse notAllowed(String allow) {
        FullHttpResponse res = response(HttpResponseStatus.METHOD_NOT_ALLOWED, HttpHeaderValues.TEXT_PLAIN, NOT_ALLOWED);
        res.headers().set(HttpHeaderNames.ALLOW, allow);
        return res;
    }

    private static FullHttpResponse response(HttpResponseStatus status, CharSequence contentType, byte[] body) {
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body));
        HttpHeaders h = res.headers();
        h.set(HttpHeaderNames.CONTENT_TYPE, contentType);
        h.setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        // Netty adds no Date header of its own: an IMF-fixdate of now, formatted per answer.
        h.set(HttpHeaderNames.DATE, DateFormatter.format(new Date()));
        return res;
    }
}
