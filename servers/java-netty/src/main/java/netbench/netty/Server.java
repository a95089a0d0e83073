package netbench.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
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
    private final Channel channel;
    private final Db db;

    private Server(EventLoopGroup boss, EventLoopGroup workers, Channel channel, Db db) {
        this.boss = boss;
        this.workers = workers;
        this.channel = channel;
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
     * Binds, starts and returns the server; port 0 picks a free port. {@code db} may be null
     * (the db paths answer 503); the server closes it on {@link #stop}. {@code files} is what
     * {@code /static/} serves; {@code app} holds the app's sessions, stylesheet and script.
     */
    static Server start(InetSocketAddress address, Handler.Root root, Db db, StaticFiles files, App app)
            throws InterruptedException {
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        EventLoopGroup workers = new MultiThreadIoEventLoopGroup(NioIoHandler.newFactory()); // default size
        Handler handler = new Handler(root, db, files, app);
        try {
            Channel channel = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(
                                    new HttpServerCodec(),
                                    new Compression.Compressor(),
                                    new Upload.Stream(),
                                    new HttpObjectAggregator(MAX_BODY),
                                    handler);
                        }
                    })
                    .bind(address)
                    .sync()
                    .channel();
            return new Server(boss, workers, channel, db);
        } catch (InterruptedException | RuntimeException e) {
            boss.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            workers.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw e;
        }
    }

    /** The address the server listens on (with the real port when it was started on port 0). */
    public InetSocketAddress address() {
        return (InetSocketAddress) channel.localAddress();
    }

    /** Closes the listener, then every connection with their event loops (no quiet period), then the database pool. */
    public void stop() {
        channel.close().syncUninterruptibly();
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
        try {
            port = Integer.parseInt(env("PORT", "1234"));
        } catch (NumberFormatException e) {
            System.err.println("PORT must be an integer: " + e.getMessage());
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
            server = start(new InetSocketAddress(host, port), root, db, files, app);
        } catch (Exception e) {
            System.err.println("cannot listen on " + host + ":" + port + ": " + e);
            System.exit(1);
            return;
        }
        // SIGTERM runs the shutdown hooks: stop accepting, close connections, let the JVM exit.
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop, "shutdown"));
        System.err.println("java-netty listening on " + host + ":" + server.address().getPort()
                + (db == null ? ", no database" : ", database pool of " + Db.poolSize(System.getenv("DATABASE_POOL_SIZE"))));
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }
}
