package netbench.helidon;

import io.helidon.common.configurable.Resource;
import io.helidon.common.pki.Keys;
import io.helidon.common.tls.Tls;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.grpc.GrpcRouting;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * netbench reference server on the Helidon SE 4 WebServer with its defaults: a platform thread
 * accepts connections, and each connection is served on its own virtual thread with blocking
 * reads and writes (the JDK schedules virtual threads on a ForkJoinPool of carrier threads,
 * one per processor).
 *
 * <p>Contract 1.5's listeners, each a named socket of the same server opened only when its port
 * is set: TLS on {@code TLS_PORT} with {@code TLS_CERT} and {@code TLS_KEY} (Helidon's TLS; ALPN
 * offers h2, from the HTTP/2 module, and http/1.1), HTTP/2 with prior knowledge on
 * {@code H2C_PORT} (the HTTP/2 module takes a connection that opens with the client preface),
 * both with the same routes as {@code PORT}, and gRPC ({@link Grpc}) on {@code GRPC_PORT}.
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

    /** The named sockets' names, for {@link WebServer#port(String)}. */
    static final String TLS = "tls";
    static final String H2C = "h2c";
    static final String GRPC = "grpc";

    /**
     * The listeners beside PORT's: {@code tls} (null: none) on {@code tlsPort}, and the
     * {@code h2c} and {@code grpc} ports; -1 where a listener is not opened, 0 for a free port.
     */
    record Listeners(int tlsPort, Tls tls, int h2cPort, int grpcPort) {
        static final Listeners NONE = new Listeners(-1, null, -1, -1);
    }

    /** {@link #start(String, int, Routes.Root, Db, Path, App, Listeners)} on PORT alone. */
    static WebServer start(String host, int port, Routes.Root root, Db db, Path staticDir, App app) {
        return start(host, port, root, db, staticDir, app, Listeners.NONE);
    }

    /**
     * Builds and starts the server; port 0 picks a free port ({@link WebServer#port()} tells it,
     * and {@link WebServer#port(String)} a named socket's). {@code db} may be null (the database
     * paths answer 503), {@code staticDir} too (no {@code /static/}); the caller closes
     * {@code db} after stopping the server. {@code app} holds the app's sessions, stylesheet and
     * script, shared by every socket's routes.
     */
    static WebServer start(String host, int port, Routes.Root root, Db db, Path staticDir, App app,
            Listeners listeners) {
        WebServerConfig.Builder server = WebServer.builder()
                .host(host)
                .port(port)
                .routing(routing -> Routes.register(routing, root, db, staticDir, app));
        if (listeners.tls() != null) {
            server.putSocket(TLS, socket -> socket.host(host)
                    .port(listeners.tlsPort())
                    .tls(listeners.tls())
                    .routing(routing -> Routes.register(routing, root, db, staticDir, app)));
        }
        if (listeners.h2cPort() >= 0) {
            server.putSocket(H2C, socket -> socket.host(host)
                    .port(listeners.h2cPort())
                    .routing(routing -> Routes.register(routing, root, db, staticDir, app)));
        }
        if (listeners.grpcPort() >= 0) {
            server.putSocket(GRPC, socket -> socket.host(host)
                    .port(listeners.grpcPort())
                    .addRouting(GrpcRouting.builder().service(new Grpc())));
        }
        return server.build().start();
    }

    /** Helidon's TLS with the chain and PKCS#8 key of two PEM files (TLS_CERT, TLS_KEY). */
    static Tls tls(Path certChain, Path key) {
        Keys keys = Keys.builder()
                .pem(pem -> pem.key(Resource.create(key)).certChain(Resource.create(certChain)))
                .build();
        return Tls.builder()
                .privateKey(keys.privateKey().orElseThrow(() -> new IllegalArgumentException("no private key in " + key)))
                .privateKeyCertChain(keys.certChain())
                .build();
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
        Listeners listeners;
        try {
            port = Integer.parseInt(env("PORT", "1234"));
            listeners = listeners();
        } catch (NumberFormatException e) {
            System.err.println("PORT, TLS_PORT, H2C_PORT and GRPC_PORT must be integers: " + e.getMessage());
            System.exit(2);
            return;
        } catch (RuntimeException e) { // no TLS_CERT or TLS_KEY, or a file Helidon cannot read
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
        start(host, port, root, db, staticDir, app, listeners);
    }

    /** What TLS_PORT (with TLS_CERT and TLS_KEY), H2C_PORT and GRPC_PORT ask for. */
    private static Listeners listeners() {
        int tlsPort = Integer.parseInt(env("TLS_PORT", "-1"));
        Tls tls = null;
        if (tlsPort >= 0) {
            String cert = env("TLS_CERT", null);
            String key = env("TLS_KEY", null);
            if (cert == null || key == null) {
                throw new IllegalArgumentException("TLS_PORT needs TLS_CERT and TLS_KEY (PEM files)");
            }
            try {
                tls = tls(Path.of(cert), Path.of(key));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("cannot read TLS_CERT " + cert + " and TLS_KEY " + key + ": " + e.getMessage(), e);
            }
        }
        return new Listeners(tlsPort, tls, Integer.parseInt(env("H2C_PORT", "-1")), Integer.parseInt(env("GRPC_PORT", "-1")));
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }
}
