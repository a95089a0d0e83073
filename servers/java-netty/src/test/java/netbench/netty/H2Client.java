package netbench.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * An HTTP/2 client on Netty's own codec, for the tests: one connection (prior knowledge, or
 * TLS with ALPN h2), each request its own stream, all sent before any answer is read, so the
 * server has them open at once.
 */
final class H2Client implements AutoCloseable {
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
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
                            ch.pipeline().addLast(Http2FrameCodecBuilder.forClient().build(),
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
