package netbench.netty;

import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;

/**
 * {@code GET /ws}: a WebSocket echo with Netty's own codec.
 *
 * <p>The WebSocket handlers join a connection's pipeline only when it asks for the upgrade
 * ({@link #upgrade}), so plain HTTP connections run the same pipeline as before /ws existed,
 * and {@code /ws} without an upgrade is an ordinary unknown path for {@link Handler} (a 404
 * with Content-Length and Date, where Netty's handshaker would answer an unframed 400).
 *
 * <p>By the time a frame gets here, {@code WebSocketServerProtocolHandler} has answered pings
 * and closes itself (and dropped pongs), and {@code WebSocketFrameAggregator} has joined a
 * fragmented message into one frame, so only whole text and binary messages arrive.
 * Stateless, so one instance serves every connection.
 */
@Sharable
final class WsEcho extends SimpleChannelInboundHandler<WebSocketFrame> {
    static final String PATH = "/ws";
    static final WsEcho INSTANCE = new WsEcho();

    /**
     * Netty's defaults but for the path, the size and sendCloseFrame: masked client frames
     * required (an unmasked one is a protocol error, answered by the decoder with close 1002),
     * UTF-8 of text checked, pings answered and closes echoed by the protocol handler, no
     * extension (no compression handler, so permessage-deflate is never agreed to). The
     * contract's messages are at most 64 KiB; frames up to the HTTP body limit are taken, as
     * bodies are. sendCloseFrame(null): the default would send a second close (1000) whenever
     * the channel is closed after the decoder has already sent its 1002.
     */
    static final WebSocketServerProtocolConfig CONFIG = WebSocketServerProtocolConfig.newBuilder()
            .websocketPath(PATH)
            .checkStartsWith(false)
            .maxFramePayloadLength(Server.MAX_BODY)
            .sendCloseFrame(null)
            .build();

    private WsEcho() {}

    /** A GET of exactly /ws asking for a WebSocket; Netty's handshaker checks the rest. */
    static boolean isUpgrade(FullHttpRequest req) {
        return req.method().equals(HttpMethod.GET)
                && req.uri().equals(PATH)
                && req.headers().containsValue(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true);
    }

    /**
     * Puts the WebSocket handlers in front of {@code handler} on this connection and hands them
     * the request, right after the HTTP aggregator, where the protocol handler's handshake
     * handler now sits: it answers 101 and swaps the HTTP codec for the frame codec.
     */
    static void upgrade(ChannelHandlerContext handler, FullHttpRequest req) {
        ChannelPipeline p = handler.pipeline();
        p.addBefore(handler.name(), "ws-protocol", new WebSocketServerProtocolHandler(CONFIG));
        p.addBefore(handler.name(), "ws-aggregator", new WebSocketFrameAggregator(Server.MAX_BODY));
        p.addBefore(handler.name(), "ws-echo", INSTANCE);
        // retain(): the caller's SimpleChannelInboundHandler releases the request on return,
        // and the handshake handler releases it once more when done.
        p.context(HttpObjectAggregator.class).fireChannelRead(req.retain());
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
        if (frame instanceof TextWebSocketFrame || frame instanceof BinaryWebSocketFrame) {
            // The same frame goes back out: same type, same payload, FIN set by the aggregator.
            // retain() because SimpleChannelInboundHandler releases it after this call. The
            // flush comes once per socket read, from Handler.channelReadComplete at the end of
            // the pipeline, as for HTTP answers.
            ctx.write(frame.retain());
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close(); // too big a message, broken UTF-8 or a reset: nothing to log per connection
    }
}
