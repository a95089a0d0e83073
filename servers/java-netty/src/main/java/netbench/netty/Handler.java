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
import java.nio.charset.StandardCharsets;
import java.util.Date;

/**
 * The last handler of every connection's pipeline: gets whole requests from
 * {@code HttpObjectAggregator} (Content-Length or chunked bodies alike), routes them by
 * path and method, and writes one {@link FullHttpResponse} framed by Content-Length.
 * Stateless, so one instance serves every connection.
 */
@Sharable
final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
    /** What {@code /} answers, chosen by the optional first command-line argument. */
    enum Root { NOT_FOUND, BLANK, WORK }

    private static final byte[] OK = "OK".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_FOUND = "not found".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_ALLOWED = "method not allowed".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BAD_HTTP = "bad request".getBytes(StandardCharsets.US_ASCII);

    private final Root root;

    Handler(Root root) {
        this.root = root;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
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
        FullHttpResponse res = route(req);
        if (!req.protocolVersion().equals(HttpVersion.HTTP_1_1)) {
            res.setProtocolVersion(req.protocolVersion());
        }
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        if (!keepAlive) {
            res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.write(res).addListener(ChannelFutureListener.CLOSE);
        } else {
            if (!req.protocolVersion().isKeepAliveDefault()) {
                res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            }
            ctx.write(res);
        }
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
