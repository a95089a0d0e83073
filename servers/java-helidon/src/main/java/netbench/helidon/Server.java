package netbench.helidon;

import io.helidon.webserver.WebServer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * netbench reference server on the Helidon SE 4 WebServer with its defaults: a platform thread
 * accepts connections, and each connection is served on its own virtual thread with blocking
 * reads and writes (the JDK schedules virtual threads on a ForkJoinPool of carrier threads,
 * one per processor).
 *
 * <p>Environment: {@code HOST} (default 127.0.0.1), {@code PORT} (default 1234),
 * {@code DATABASE_URL} ({@code postgres://user@host:port/db}; without it {@code /db},
 * {@code /db/list}, {@code /fortunes}, {@code /queries} and {@code /updates} answer 503) and
 * {@code DATABASE_POOL_SIZE} (the most connections HikariCP opens, default 4).
 * {@code /static/} serves the folder ./static (the build writes the contract's files there);
 * {@code /app} reads its stylesheet and script from ../../contract/app at start-up.
 * Optional first argument {@code 0} or {@code 1}: {@code /} answers as {@code /blank} or
 * {@code /work}.
 */
public final class Server {
    /** contract/app's stylesheet and script, from the server's folder. */
    static final Path APP_DIR = Path.of("../../contract/app");

    private Server() {}

    /** {@link #start(String, int, Routes.Root, Db, Path)} without a database or files. */
    public static WebServer start(String host, int port, Routes.Root root) {
        return start(host, port, root, null, null);
    }

    /** {@link #start(String, int, Routes.Root, Db, Path, App)} with contract/app's files. */
    static WebServer start(String host, int port, Routes.Root root, Db db, Path staticDir) {
        return start(host, port, root, db, staticDir, App.of(APP_DIR));
    }

    /**
     * Builds and starts the server; port 0 picks a free port ({@link WebServer#port()} tells it).
     * {@code db} may be null (the database paths answer 503), {@code staticDir} too (no
     * {@code /static/}); the caller closes {@code db} after stopping the server. {@code app}
     * holds the app's sessions, stylesheet and script.
     */
    static WebServer start(String host, int port, Routes.Root root, Db db, Path staticDir, App app) {
        return WebServer.builder()
                .host(host)
                .port(port)
                .routing(routing -> Routes.register(routing, root, db, staticDir, app))
                .build()
                .start();
    }

    public static void main(String[] args) {
        Routes.Root root = Routes.Root.NOT_FOUND;
        if (args.length > 0) {
            switch (args[0]) {
                case "0" -> root = Routes.Root.BLANK;
                case "1" -> root = Routes.Root.WORK;
                default -> {
                    System.err.println("usage: java -jar server.jar [0|1]  (0: / is /blank, 1: / is /work)");
                    System.exit(2);
                }
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
        Path staticDir = Path.of("static").toAbsolutePath();
        if (!Files.isDirectory(staticDir)) {
            System.err.println("no folder ./static (python3 ../../contract/static/make.py static writes it): /static/ answers 404");
            staticDir = null;
        }
        App app = App.of(APP_DIR);
        if (!app.present()) {
            System.err.println("no ../../contract/app/app.css and app.js (the server runs in its own folder): /app answers 503");
        }
        // SIGTERM: Helidon's own shutdown hook stops the server; the pool closes with the JVM.
        start(host, port, root, db, staticDir, app);
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }
}
