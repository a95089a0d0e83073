package netbench.netty;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.util.ReferenceCountUtil;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * {@code POST /upload}: the length and SHA-256 of the request body, hashed as it arrives
 * (java.security.MessageDigest over each HttpContent the codec decodes, Content-Length and
 * chunked framing alike), never held whole.
 *
 * <p>{@link Stream} sits between the HTTP codec and the aggregator (whose 1 MiB cap is for every
 * other path) and takes an upload's head and body off the pipeline. What it makes of them goes on
 * to {@link Handler} as one message, {@link Done} once the last byte is in or {@link TooLarge},
 * so that Handler answers in the order of the requests, as for everything else.
 */
final class Upload {
    static final String PATH = "/upload";
    /** The largest body read (contract, "upload"): 16 MiB. */
    static final long LIMIT = 16L * 1024 * 1024;
    /** How long a refused upload's connection is drained after the 413 before it is closed. */
    static final long DRAIN_MILLIS = 1000;
    private static final byte[] TOO_LARGE_BODY = "body too large: at most 16 MiB".getBytes(StandardCharsets.US_ASCII);

    private Upload() {}

    /** A whole upload, hashed. */
    record Done(HttpVersion version, boolean keepAlive, long length, byte[] digest) {}

    /** An upload refused: its Content-Length is over the limit, or its chunked body grew past it. */
    record TooLarge(HttpVersion version) {}

    /** The answer's body: exactly the two keys. */
    static byte[] answer(long length, byte[] digest) {
        return ("{\"length\":" + length + ",\"sha256\":\"" + HexFormat.of().formatHex(digest) + "\"}")
                .getBytes(StandardCharsets.US_ASCII);
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e); // a required algorithm
        }
    }

    /**
     * The 413, then the end of the connection: the rest of the body is not another request.
     * Once the answer is written the sending side is shut down (a FIN after the 413) and the
     * connection goes on reading, and {@link Stream} discarding, what the client still sends, so
     * that the client reads the 413 rather than a reset; it is closed when the client closes its
     * side or after {@link #DRAIN_MILLIS}. On an HTTP/2 stream the answer is followed by
     * RST_STREAM with NO_ERROR, which RFC 9113 §8.1 names for this (stop sending, the answer is
     * complete); the connection's other streams go on.
     */
    static void refuse(ChannelHandlerContext ctx, HttpVersion version) {
        FullHttpResponse res = Handler.response(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                HttpHeaderValues.TEXT_PLAIN, TOO_LARGE_BODY);
        res.setProtocolVersion(version);
        res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(res).addListener((ChannelFuture f) -> {
            Channel ch = f.channel();
            if (f.isSuccess() && ch instanceof Http2StreamChannel) {
                ch.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.NO_ERROR));
                return;
            }
            if (!f.isSuccess() || !(ch instanceof SocketChannel)) {
                ch.close();
                return;
            }
            ((SocketChannel) ch).shutdownOutput();
            ch.config().setAutoRead(true);
            ch.eventLoop().schedule(() -> ch.close(), DRAIN_MILLIS, TimeUnit.MILLISECONDS);
        });
    }

    /**
     * Per connection: lets everything but {@code POST /upload} pass to the aggregator, and turns
     * an upload into a {@link Done} or {@link TooLarge} for {@link Handler}.
     */
    static final class Stream extends ChannelInboundHandlerAdapter {
        private enum State { PASS, HASH, DISCARD }

        private State state = State.PASS;
        private MessageDigest sha;
        private long length;
        private HttpVersion version;
        private boolean keepAlive;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            switch (state) {
                case PASS:
                    if (isUpload(msg)) {
                        try {
                            begin(ctx, (HttpRequest) msg);
                            if (msg instanceof LastHttpContent && state == State.HASH) {
                                hash(ctx, msg); // HTTP/2: a head and its whole body in one message
                            }
                        } finally {
                            ReferenceCountUtil.release(msg);
                        }
                    } else {
                        ctx.fireChannelRead(msg);
                    }
                    return;
                case HASH:
                    try {
                        hash(ctx, msg);
                    } finally {
                        ReferenceCountUtil.release(msg);
                    }
                    return;
                default: // DISCARD: a refused upload's body, and whatever follows it until the connection ends
                    ReferenceCountUtil.release(msg);
            }
        }

        /**
         * A decoded head of {@code POST /upload}: HTTP/1.1's codec gives the head alone, HTTP/2's
         * adapter a full message when the HEADERS frame ends the stream (an empty body). The
         * codec's invalid messages (decoder failures) go on to Handler, which answers 400.
         */
        private static boolean isUpload(Object msg) {
            if (!(msg instanceof HttpRequest)) {
                return false;
            }
            HttpRequest req = (HttpRequest) msg;
            return req.decoderResult().isSuccess()
                    && req.method().equals(HttpMethod.POST)
                    && new QueryStringDecoder(req.uri()).rawPath().equals(PATH);
        }

        private void begin(ChannelHandlerContext ctx, HttpRequest req) {
            version = req.protocolVersion();
            keepAlive = HttpUtil.isKeepAlive(req);
            // -1 for a chunked body (the codec ignores Content-Length beside chunked) or none.
            long declared = HttpUtil.isTransferEncodingChunked(req) ? -1 : HttpUtil.getContentLength(req, -1L);
            if (declared > LIMIT) {
                refuse(ctx); // from the head: not a byte of the body is read
                return;
            }
            if (HttpUtil.is100ContinueExpected(req)) {
                ctx.writeAndFlush(new DefaultFullHttpResponse(version, HttpResponseStatus.CONTINUE, Unpooled.EMPTY_BUFFER));
            }
            sha = sha256();
            length = 0;
            state = State.HASH;
        }

        private void hash(ChannelHandlerContext ctx, Object msg) {
            if (!(msg instanceof HttpContent)) {
                return; // nothing else comes between a head and its last content
            }
            HttpContent content = (HttpContent) msg;
            if (content.decoderResult().isFailure()) { // a broken chunk: nothing sensible to answer
                state = State.DISCARD;
                ctx.close();
                return;
            }
            length += content.content().readableBytes();
            if (length > LIMIT) { // a chunked body that grows past the limit
                refuse(ctx);
                return;
            }
            for (ByteBuffer b : content.content().nioBuffers()) {
                sha.update(b);
            }
            if (msg instanceof LastHttpContent) {
                Done done = new Done(version, keepAlive, length, sha.digest());
                sha = null;
                state = State.PASS;
                ctx.fireChannelRead(done);
            }
        }

        private void refuse(ChannelHandlerContext ctx) {
            sha = null;
            state = State.DISCARD;
            ctx.fireChannelRead(new TooLarge(version));
        }
    }
}
