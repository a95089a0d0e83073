package netbench;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * netbench reference server on the JDK's built-in {@code com.sun.net.httpserver.HttpServer}:
 * one dispatcher thread accepts connections and reads requests off a selector, and a fixed
 * pool of worker threads runs the handlers.
 *
 * <p>Environment: {@code HOST} (default 127.0.0.1), {@code PORT} (default 1234),
 * {@code THREADS} (worker threads, default the number of available processors; {@code cached}
 * for a cached pool, which starts a thread whenever every thread is busy: a thread per
 * request in flight, so under keep-alive load one per connection), {@code DATABASE_URL}
 * ({@code postgres://user@host:port/db}; without it {@code /db}, {@code /fortunes}, {@code /queries} and
 * {@code /updates} answer 503)
 * and {@code DATABASE_POOL_SIZE} (the most connections HikariCP opens, default 4).
 * {@code /static/} serves the folder ./static (the build writes the contract's files there);
 * {@code /app} reads its stylesheet and script from ../../contract/app at start-up.
 * Optional first argument {@code 0} or {@code 1}: {@code /} answers as {@code /blank} or
 * {@code /work}.
 */
public final class Server {
    private final HttpServer http;
    private final ExecutorService pool;
    private final Db db;

    private Server(HttpServer http, ExecutorService pool, Db db) {
        this.http = http;
        this.pool = pool;
        this.db = db;
    }

    /** {@link #start(InetSocketAddress, int, Router.Root, Db, StaticFiles)} without a database or files. */
    public static Server start(InetSocketAddress address, int threads, Router.Root root) throws IOException {
        return start(address, threads, root, null, StaticFiles.none());
    }

    /** {@link #start(InetSocketAddress, int, Router.Root, Db, StaticFiles)} without files. */
    static Server start(InetSocketAddress address, int threads, Router.Root root, Db db) throws IOException {
        return start(address, threads, root, db, StaticFiles.none());
    }

    /** {@link #start(InetSocketAddress, int, Router.Root, Db, StaticFiles, App)} without the app's files. */
    static Server start(InetSocketAddress address, int threads, Router.Root root, Db db, StaticFiles files)
            throws IOException {
        return start(address, threads, root, db, files, App.none());
    }

    /**
     * Binds, starts and returns the server; port 0 picks a free port. {@code threads} 0 means a
     * cached pool. {@code db} may be null (the db paths answer 503); the server closes it on
     * {@link #stop}. {@code files} is what {@code /static/} serves; {@code app} holds the app's
     * sessions and stylesheet and script.
     */
    static Server start(InetSocketAddress address, int threads, Router.Root root, Db db, StaticFiles files, App app)
            throws IOException {
        HttpServer http = HttpServer.create(address, 0); // 0: the system's default backlog
        ExecutorService pool = threads == 0 ? Executors.newCachedThreadPool() : Executors.newFixedThreadPool(threads);
        http.setExecutor(pool);
        http.createContext("/", new Router(root, db, files, app));
        http.start();
        return new Server(http, pool, db);
    }

    /** The address the server listens on (with the real port when it was started on port 0). */
    public InetSocketAddress address() {
        return http.getAddress();
    }

    /** Closes the listener and every connection at once, then the worker pool and the database pool. */
    public void stop() {
        http.stop(0);
        pool.shutdownNow();
        if (db != null) {
            db.close();
        }
    }

    public static void main(String[] args) {
        Router.Root root = Router.Root.NOT_FOUND;
        if (args.length > 0) {
            switch (args[0]) {
                case "0":
                    root = Router.Root.BLANK;
                    break;
                case "1":
                    root = Router.Root.WORK;
                    break;
                default:
                    System.err.println("usage: java -jar server.jar [0|1]  (0: / is /blank, 1: / is /work)");
                    System.exit(2);
            }
        }
        String host = env("HOST", "127.0.0.1");
        int port;
        int threads;
        try {
            port = Integer.parseInt(env("PORT", "1234"));
            String t = env("THREADS", Integer.toString(Runtime.getRuntime().availableProcessors()));
            threads = t.equals("cached") ? 0 : Integer.parseInt(t);
        } catch (NumberFormatException e) {
            System.err.println("PORT must be an integer and THREADS an integer or `cached`: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (threads < 0 || (threads == 0 && !env("THREADS", "").equals("cached"))) {
            System.err.println("THREADS must be at least 1 (or `cached`)");
            System.exit(2);
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
        StaticFiles files = StaticFiles.of(Path.of("static"));
        if (!files.present()) {
            System.err.println("no folder ./static (python3 ../../contract/static/make.py static writes it): /static/ answers 404");
        }
        App app = App.of(Path.of("../../contract/app"));
        if (!app.present()) {
            System.err.println("no ../../contract/app/app.css and app.js (the server runs in its own folder): /app answers 503");
        }
        Server server;
        try {
            server = start(new InetSocketAddress(host, port), threads, root, db, files, app);
        } catch (IOException | RuntimeException e) {
            System.err.println("cannot listen on " + host + ":" + port + ": " + e);
            System.exit(1);
            return;
        }
        // SIGTERM runs the shutdown hooks: stop accepting, close connections, let the JVM exit.
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop, "shutdown"));
        System.err.println("java-jdk listening on " + host + ":" + server.address().getPort()
                + " with " + (threads == 0 ? "a cached pool of" : threads) + " worker threads"
                + (db == null ? ", no database" : ", database pool of " + Db.poolSize(System.getenv("DATABASE_POOL_SIZE"))));
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }
}
