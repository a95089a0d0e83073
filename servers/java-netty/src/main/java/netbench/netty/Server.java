package netbench.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslContext;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * netbench reference server on Netty 4.2 with the NIO transport (Netty's portable default;
 * epoll is an opt-in native transport). One boss event loop accepts connections and hands
 * each to one of the worker event loops (Netty's default count: twice the available
 * processors), which owns it from then on: reads, HTTP decoding, the handler and writes all
 * run on that loop's thread. {@code GET /ws} upgrades the connection to a WebSocket with
 * Netty's own codec and echoes every message ({@link WsEcho}).
 *
 * <p>Every connection's pipeline: {@code HttpServerCodec} (HTTP/1.1 decoding and encoding),
 * {@link Compression.Compressor} (Netty's HttpContentCompressor, for {@code /work} answers and
 * {@code /app} pages only), {@link Upload.Stream} (takes {@code POST /upload} off the pipeline and
 * hashes its body as it arrives), {@code HttpObjectAggregator} (whole requests of at most 1 MiB
 * for everything else) and {@link Handler}. {@code GET /static/<name>} serves the files of
 * ./static ({@link StaticFiles}); {@code /app} reads its stylesheet and script from
 * ../../contract/app at start-up ({@link App}).
 *
 * <p>Contract 1.5's listeners, each opened only when its port is set ({@link Protocols}): TLS
 * on {@code TLS_PORT} with {@code TLS_CERT} and {@code TLS_KEY}, offering HTTP/2 and HTTP/1.1
 * by ALPN; HTTP/2 with prior knowledge on {@code H2C_PORT}; gRPC ({@link Grpc}) on
 * {@code GRPC_PORT}. HTTP/2 streams reach the same handlers as HTTP/1.1 requests.
 *
 * <p>Environment: {@code HOST} (default 127.0.0.1), {@code PORT} (default 1234),
 * {@code DATABASE_URL} ({@code postgres://user@host:port/db}; without it {@code /db},
 * {@code /fortunes}, {@code /queries} and {@code /updates} answer 503) and {@code DATABASE_POOL_SIZE} (the most connections HikariCP opens, default 4).
 * Optional first argument {@code 0} or {@code 1}: {@code /} answers as {@code /blank} or
 * {@code /work}.
 */
public final class Server {
    /** Bodies are small (the contract sends at most 64 KiB); above 1 MiB the aggregator answers 413. */
    static final int MAX_BODY = 1 << 20;

    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    /** PORT's listener, then TLS_PORT's and H2C_PORT's (null when not started). */
    private final Channel http;
    private final Channel tls;
    private final Channel h2c;
    /** GRPC_PORT's grpc-java server, or null. */
    private final io.grpc.Server grpc;
    private final Db db;

    private Server(EventLoopGroup boss, EventLoopGroup workers, Channel http, Channel tls, Channel h2c,
            io.grpc.Server grpc, Db db) {
        this.boss = boss;
        this.workers = workers;
        this.http = http;
        this.tls = tls;
        this.h2c = h2c;
        this.grpc = grpc;
        this.db = db;
    }

    /** Where the build writes the contract's static files (contract/static/make.py), from the server's folder. */
    static final Path STATIC_DIR = Path.of("static");
    /** contract/app's stylesheet and script, from the server's folder. */
    static final Path APP_DIR = Path.of("../../contract/app");

    /** {@link #start(InetSocketAddress, Handler.Root, Db)} without a database. */
    public static Server start(InetSocketAddress address, Handler.Root root) throws InterruptedException {
        return start(address, root, null);
    }

    /** {@link #start(InetSocketAddress, Handler.Root, Db, StaticFiles)} serving ./static. */
    static Server start(InetSocketAddress address, Handler.Root root, Db db) throws InterruptedException {
        return start(address, root, db, StaticFiles.of(STATIC_DIR));
    }

    /** {@link #start(InetSocketAddress, Handler.Root, Db, StaticFiles, App)} with contract/app's files. */
    static Server start(InetSocketAddress address, Handler.Root root, Db db, StaticFiles files) throws InterruptedException {
        return start(address, root, db, files, App.of(APP_DIR));
    }

    /**
     * The listeners contract 1.5 adds beside PORT's, each null when its variable is unset:
     * {@code tls} (TLS_PORT, HTTP/2 or HTTP/1.1 by ALPN) with its {@code ssl} context,
     * {@code h2c} (H2C_PORT) and {@code grpc} (GRPC_PORT).
     */
    record Extra(InetSocketAddress tls, SslContext ssl, InetSocketAddress h2c, InetSocketAddress grpc) {
        static final Extra NONE = new Extra(null, null, null, null);
    }

    /** {@link #start(InetSocketAddress, Handler.Root, Db, StaticFiles, App, Extra)} on PORT alone. */
    static Server start(InetSocketAddress address, Handler.Root root, Db db, StaticFiles files, App app)
            throws InterruptedException {
        return start(address, root, db, files, app, Extra.NONE);
    }

    /**
     * Binds, starts and returns the server; port 0 picks a free port. {@code db} may be null
     * (the db paths answer 503); the server closes it on {@link #stop}. {@code files} is what
     * {@code /static/} serves; {@code app} holds the app's sessions, stylesheet and script.
     * Every HTTP listener shares the event loops and the handler; gRPC runs on grpc-java's own.
     */
    static Server start(InetSocketAddress address, Handler.Root root, Db db, StaticFiles files, App app, Extra extra)
            throws InterruptedException {
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        EventLoopGroup workers = new MultiThreadIoEventLoopGroup(NioIoHandler.newFactory()); // default size
        Handler handler = new Handler(root, db, files, app);
        Channel http = null;
        Channel tls = null;
        Channel h2c = null;
        try {
            http = bind(boss, workers, address, Protocols.http1(handler));
            if (extra.tls() != null) {
                tls = bind(boss, workers, extra.tls(), Protocols.tls(extra.ssl(), handler));
            }
            if (extra.h2c() != null) {
                h2c = bind(boss, workers, extra.h2c(), Protocols.h2c(handler));
            }
            io.grpc.Server grpc = extra.grpc() == null ? null : Grpc.start(extra.grpc());
            return new Server(boss, workers, http, tls, h2c, grpc, db);
        } catch (IOException e) { // gRPC's bind
            abandon(boss, workers, http, tls, h2c);
            throw new UncheckedIOException(e);
        } catch (InterruptedException | RuntimeException e) {
            abandon(boss, workers, http, tls, h2c);
            throw e;
        }
    }

    /** A start that failed half-way: what was bound is closed, the event loops stopped. */
    private static void abandon(EventLoopGroup boss, EventLoopGroup workers, Channel... bound) {
        for (Channel ch : bound) {
            if (ch != null) {
                ch.close();
            }
        }
        boss.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    }

    private static Channel bind(EventLoopGroup boss, EventLoopGroup workers, InetSocketAddress address,
            ChannelInitializer<SocketChannel> pipeline) throws InterruptedException {
        return new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .childHandler(pipeline)
                .bind(address)
                .sync()
                .channel();
    }

    /** The address the server listens on (with the real port when it was started on port 0). */
    public InetSocketAddress address() {
        return (InetSocketAddress) http.localAddress();
    }

    /** TLS_PORT's listener (its real port when started on 0), or null. */
    InetSocketAddress tlsAddress() {
        return tls == null ? null : (InetSocketAddress) tls.localAddress();
    }

    /** H2C_PORT's listener, or null. */
    InetSocketAddress h2cAddress() {
        return h2c == null ? null : (InetSocketAddress) h2c.localAddress();
    }

    /** GRPC_PORT's listener's port, when started. */
    int grpcPort() {
        return grpc == null ? -1 : grpc.getPort();
    }

    /** Closes the listeners, then every connection with their event loops (no quiet period), then the database pool. */
    public void stop() {
        if (grpc != null) {
            grpc.shutdownNow();
        }
        for (Channel ch : new Channel[] {http, tls, h2c}) {
            if (ch != null) {
                ch.close().syncUninterruptibly();
            }
        }
        boss.shutdownGracefully(0, 5, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
        if (db != null) {
            db.close();
        }
    }

    public static void main(String[] args) {
        Handler.Root root = Handler.Root.NOT_FOUND;
        if (args.length > 0) {
            switch (args[0]) {
                case "0":
                    root = Handler.Root.BLANK;
                    break;
                case "1":
                    root = Handler.Root.WORK;
                    break;
                default:
                    System.err.println("usage: java -jar server.jar [0|1]  (0: / is /blank, 1: / is /work)");
                    System.exit(2);
            }
        }
        String host = env("HOST", "127.0.0.1");
        int port;
        Extra extra;
        try {
            port = Integer.parseInt(env("PORT", "1234"));
            extra = extra(host);
        } catch (NumberFormatException e) {
            System.err.println("PORT, TLS_PORT, H2C_PORT and GRPC_PORT must be integers: " + e.getMessage());
            System.exit(2);
            return;
        } catch (IllegalArgumentException | IOException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        Db db = null;
        String databaseUrl = System.getenv("DATABASE_URL");
        if (databaseUrl != null && !databaseUrl.isEmpty()) {
            try {
                db = Db.open(databaseUrl, System.getenv("DATABASE_POOL_SIZE"));
            } catch (IllegalArgumentException e) {
                System.err.println(e.getMessage());
                System.exit(2);
                return;
            } catch (RuntimeException e) { // HikariCP's PoolInitializationException: no connection
                System.err.println("cannot connect to the database: " + e.getMessage());
                System.exit(1);
                return;
            }
        }
        StaticFiles files = StaticFiles.of(STATIC_DIR);
        if (!files.present()) {
            System.err.println("no ./static folder (the build writes it): /static/ answers 404");
        }
        App app = App.of(APP_DIR);
        if (!app.present()) {
            System.err.println("no ../../contract/app/app.css and app.js (the server runs in its own folder): /app answers 503");
        }
        Server server;
        try {
            server = start(new InetSocketAddress(host, port), root, db, files, app, extra);
        } catch (Exception e) {
            System.err.println("cannot listen on " + host + ":" + port + ": " + e);
            System.exit(1);
            return;
        }
        // SIGTERM runs the shutdown hooks: stop accepting, close connections, let the JVM exit.
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop, "shutdown"));
        System.err.println("java-netty listening on " + host + ":" + server.address().getPort()
                + (server.tlsAddress() == null ? "" : ", TLS (h2, http/1.1) on " + server.tlsAddress().getPort())
                + (server.h2cAddress() == null ? "" : ", h2c on " + server.h2cAddress().getPort())
                + (server.grpcPort() < 0 ? "" : ", gRPC on " + server.grpcPort())
                + (db == null ? ", no database" : ", database pool of " + Db.poolSize(System.getenv("DATABASE_POOL_SIZE"))));
    }

    /** The listeners TLS_PORT, H2C_PORT and GRPC_PORT ask for; TLS_PORT needs TLS_CERT and TLS_KEY. */
    private static Extra extra(String host) throws IOException {
        String tlsPort = System.getenv("TLS_PORT");
        String h2cPort = System.getenv("H2C_PORT");
        String grpcPort = System.getenv("GRPC_PORT");
        InetSocketAddress tls = null;
        SslContext ssl = null;
        if (tlsPort != null && !tlsPort.isEmpty()) {
            String cert = System.getenv("TLS_CERT");
            String key = System.getenv("TLS_KEY");
            if (cert == null || cert.isEmpty() || key == null || key.isEmpty()) {
                throw new IllegalArgumentException("TLS_PORT needs TLS_CERT and TLS_KEY (PEM files)");
            }
            tls = new InetSocketAddress(host, Integer.parseInt(tlsPort));
            try {
                ssl = Protocols.sslContext(new File(cert), new File(key));
            } catch (IOException | IllegalArgumentException e) {
                throw new IOException("cannot read TLS_CERT " + cert + " and TLS_KEY " + key + ": " + e.getMessage(), e);
            }
        }
        InetSocketAddress h2c = h2cPort == null || h2cPort.isEmpty() ? null
                : new InetSocketAddress(host, Integer.parseInt(h2cPort));
        InetSocketAddress grpc = grpcPort == null || grpcPort.isEmpty() ? null
                : new InetSocketAddress(host, Integer.parseInt(grpcPort));
        return new Extra(tls, ssl, h2c, grpc);
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }
}
