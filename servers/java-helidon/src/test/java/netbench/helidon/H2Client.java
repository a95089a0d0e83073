package netbench.helidon;

import io.grpc.netty.shaded.io.netty.bootstrap.Bootstrap;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.SimpleChannelInboundHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.http.FullHttpRequest;
import io.grpc.netty.shaded.io.netty.handler.codec.http.FullHttpResponse;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpObjectAggregator;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Settings;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2StreamChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.grpc.netty.shaded.io.netty.handler.ssl.ApplicationProtocolConfig;
import io.grpc.netty.shaded.io.netty.handler.ssl.ApplicationProtocolNames;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslHandler;
import io.grpc.netty.shaded.io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * An HTTP/2 client for the h2c tests: Netty's codec, as grpc-netty-shaded (the gRPC tests'
 * client) carries it. One connection (prior knowledge, or TLS with ALPN h2), each request its
 * own stream, all sent before any answer is read, so the server has them open at once.
 *
 * <p>Its windows are opened as wide as HTTP/2 allows from the start, as curl's, h2load's and
 * netbench's are: Helidon 4.5.0's HTTP/2 server sends one byte more than a window holds when it
 * runs dry (four 16 KiB DATA frames into the connection's initial 65,535 bytes), which Netty's
 * client, keeping the RFC's default windows, rightly answers with GOAWAY FLOW_CONTROL_ERROR.
 * Helidon's own HTTP/2 client (helidon-webclient-http2 4.5.0), tried first, stalled the same
 * test: the server timed out waiting for its WINDOW_UPDATE.
 */
final class H2Client implements AutoCloseable {
    /** HTTP/2's largest window (2^31 - 1), and the one every window starts with. */
    private static final int MAX_WINDOW = Integer.MAX_VALUE;
    private static final int DEFAULT_WINDOW = 65_535;

    private final EventLoopGroup group = new NioEventLoopGroup(1);
    private final Channel connection;

    /** {@code tls}: connect over TLS offering only h2 (the test certificate is not checked). */
    H2Client(InetSocketAddress address, boolean tls) throws Exception {
        SslContext ssl = tls ? SslContextBuilder.forClient()
                .trustManager(InsecureTrustManagerFactory.INSTANCE)
                .applicationProtocolConfig(new ApplicationProtocolConfig(
                        ApplicationProtocolConfig.Protocol.ALPN,
                        ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                        ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                        ApplicationProtocolNames.HTTP_2))
                .build() : null;
        try {
            connection = new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            if (ssl != null) {
                                ch.pipeline().addLast(ssl.newHandler(ch.alloc(), "localhost", address.getPort()));
                            }
                            ch.pipeline().addLast(Http2FrameCodecBuilder.forClient()
                                            .initialSettings(Http2Settings.defaultSettings().initialWindowSize(MAX_WINDOW))
                                            .build(),
                                    new Http2MultiplexHandler(new ChannelInitializer<Channel>() {
                                        @Override
                                        protected void initChannel(Channel pushed) {
                                            // the server opens no streams
                                        }
                                    }));
                        }
                    })
                    .connect(address).sync().channel();
            if (ssl != null) {
                connection.pipeline().get(SslHandler.class).handshakeFuture().sync();
            }
            connection.writeAndFlush(new DefaultHttp2WindowUpdateFrame(MAX_WINDOW - DEFAULT_WINDOW)).sync();
        } catch (Exception e) {
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw e;
        }
    }

    /** The protocol ALPN agreed on, or null without TLS. */
    String alpn() {
        SslHandler ssl = connection.pipeline().get(SslHandler.class);
        return ssl == null ? null : ssl.applicationProtocol();
    }

    /**
     * Sends every request on a stream of its own, then waits for the answers, in the requests'
     * order. Each answer is the caller's to release.
     */
    List<FullHttpResponse> send(List<FullHttpRequest> requests) throws Exception {
        List<CompletableFuture<FullHttpResponse>> answers = new ArrayList<>();
        for (FullHttpRequest req : requests) {
            String what = req.method() + " " + req.uri();
            CompletableFuture<FullHttpResponse> answer = new CompletableFuture<>();
            answers.add(answer);
            Http2StreamChannel stream = new Http2StreamChannelBootstrap(connection)
                    .handler(new ChannelInitializer<Http2StreamChannel>() {
                        @Override
                        protected void initChannel(Http2StreamChannel ch) {
                            ch.pipeline().addLast(new Http2StreamFrameToHttpObjectCodec(false),
                                    new HttpObjectAggregator(16 << 20),
                                    new SimpleChannelInboundHandler<FullHttpResponse>() {
                                        @Override
                                        protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse res) {
                                            answer.complete(res.retain());
                                        }

                                        @Override
                                        public void channelInactive(ChannelHandlerContext ctx) {
                                            answer.completeExceptionally(new IllegalStateException(what + ": stream closed without an answer"));
                                        }

                                        @Override
                                        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                            answer.completeExceptionally(new IllegalStateException(what + ": " + cause, cause));
                                        }
                                    });
                        }
                    })
                    .open().sync().getNow();
            stream.writeAndFlush(req);
        }
        List<FullHttpResponse> out = new ArrayList<>();
        for (CompletableFuture<FullHttpResponse> answer : answers) {
            out.add(answer.get(20, TimeUnit.SECONDS));
        }
        return out;
    }

    @Override
    public void close() {
        connection.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
