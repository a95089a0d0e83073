package netbench.netty;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2SecurityUtil;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import io.netty.handler.stream.ChunkedWriteHandler;
import java.io.File;
import javax.net.ssl.SSLException;

/**
 * The pipelines of every listener (contract 1.5's tls, h2 and h2c beside cleartext HTTP/1.1),
 * all ending in the same handlers: HTTP/2 streams are turned into the HTTP/1.1 message objects
 * those handlers already take (Http2StreamFrameToHttpObjectCodec, Netty's own adapter), so
 * every endpoint means the same on every protocol.
 */
final class Protocols {
    private Protocols() {}

    /**
     * The TLS listener's context: the chain and PKCS#8 key from PEM files, ALPN offering h2 and
     * http/1.1 (a client that names neither, or none, gets HTTP/1.1). The provider is Netty's
     * default, the JDK's SSLEngine (OpenSSL would need netty-tcnative, a native library). The
     * cipher list is Netty's for HTTP/2 (RFC 9113 §9.2.2 forbids TLS 1.2 suites without
     * forward secrecy or AEAD), as its HTTP/2 examples set it; TLS 1.3 and 1.2 as the JDK allows.
     */
    static SslContext sslContext(File certChain, File key) throws SSLException {
        return SslContextBuilder.forServer(certChain, key)
                .ciphers(Http2SecurityUtil.CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
                .applicationProtocolConfig(new ApplicationProtocolConfig(
                        ApplicationProtocolConfig.Protocol.ALPN,
                        ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                        ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                        ApplicationProtocolNames.HTTP_2,
                        ApplicationProtocolNames.HTTP_1_1))
                .build();
    }

    /** Cleartext HTTP/1.1 on PORT: the pipeline the server always had. */
    static ChannelInitializer<SocketChannel> http1(Handler handler) {
        return new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(new HttpServerCodec());
                exchange(ch.pipeline(), handler, false);
            }
        };
    }

    /** TLS_PORT: the handshake, then HTTP/2 or HTTP/1.1 as ALPN chose. */
    static ChannelInitializer<SocketChannel> tls(SslContext ssl, Handler handler) {
        return new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(ssl.newHandler(ch.alloc()), new Negotiation(handler));
            }
        };
    }

    /** H2C_PORT: HTTP/2 from the client preface on (prior knowledge, no Upgrade). */
    static ChannelInitializer<SocketChannel> h2c(Handler handler) {
        return new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                http2(ch.pipeline(), handler);
            }
        };
    }

    /**
     * What follows the HTTP/1.1 codec, or a stream's frame-to-object adapter: the answer
     * compressor, the upload hasher, the aggregator and the handler (see {@link Server}).
     * {@code chunkedFiles}: the connection cannot take a file region (TLS encrypts in user
     * space, and an HTTP/2 stream carries DATA frames), so static files go out as
     * HttpChunkedInput, which ChunkedWriteHandler reads as the connection can take it, the way
     * Netty's HttpStaticFileServer example serves them over TLS. It sits after the compressor so
     * that the compressor sees the file's chunks and last content, as it sees a region's.
     */
    static void exchange(ChannelPipeline p, Handler handler, boolean chunkedFiles) {
        p.addLast(new Compression.Compressor());
        if (chunkedFiles) {
            p.addLast(new ChunkedWriteHandler());
        }
        p.addLast(new Upload.Stream(), new HttpObjectAggregator(Server.MAX_BODY), handler);
    }

    /**
     * A connection speaking HTTP/2 with Netty's defaults (Http2FrameCodec: its SETTINGS, flow
     * control and limits), each stream a child channel with the HTTP/1.1-object pipeline of
     * {@link #exchange}; streams are served as they come, concurrently, on the connection's
     * event loop.
     */
    static void http2(ChannelPipeline p, Handler handler) {
        p.addLast(Http2FrameCodecBuilder.forServer().build(),
                new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
                    @Override
                    protected void initChannel(Http2StreamChannel stream) {
                        stream.pipeline().addLast(new Http2StreamFrameToHttpObjectCodec(true));
                        exchange(stream.pipeline(), handler, true);
                    }
                }),
                Quiet.INSTANCE);
    }

    /** Whether answers on this channel must be written as bytes rather than file regions. */
    static boolean needsChunkedFiles(Channel ch) {
        return ch instanceof Http2StreamChannel || ch.pipeline().get(SslHandler.class) != null;
    }

    /** After the TLS handshake: the pipeline for the protocol ALPN agreed on. */
    private static final class Negotiation extends ApplicationProtocolNegotiationHandler {
        private final Handler handler;

        Negotiation(Handler handler) {
            super(ApplicationProtocolNames.HTTP_1_1); // no ALPN: HTTP/1.1
            this.handler = handler;
        }

        @Override
        protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
            if (ApplicationProtocolNames.HTTP_2.equals(protocol)) {
                http2(ctx.pipeline(), handler);
                return;
            }
            ctx.pipeline().addLast(new HttpServerCodec());
            exchange(ctx.pipeline(), handler, true);
        }

        /**
         * A client that gives up mid-handshake, or offers nothing we share, is closed without
         * the warning Netty logs by default: one line per failed connection would be logging
         * per request under load.
         */
        @Override
        protected void handshakeFailure(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /**
     * Last on an HTTP/2 connection: what Http2FrameCodec does not handle itself (a reset
     * connection, a TLS error) ends the connection, as {@link Handler} does on HTTP/1.1, instead
     * of reaching the pipeline's tail, which logs a warning for each.
     */
    @Sharable
    private static final class Quiet extends ChannelInboundHandlerAdapter {
        static final Quiet INSTANCE = new Quiet();

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
