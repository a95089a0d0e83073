package netbench.vertx;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * netbench reference server on the Vert.x core HTTP server: {@link HttpVerticle} deployed once
 * per available processor (DeploymentOptions.setInstances), each instance on its own event
 * loop, with Vert.x's default options otherwise (NIO transport, event loop pool of twice the
 * processors, of which the instances use one each).
 *
 * <p>Environment: {@code HOST} (default 127.0.0.1), {@code PORT} (default 1234); contract
 * 1.5's {@code TLS_PORT} with {@code TLS_CERT} and {@code TLS_KEY} (TLS, HTTP/2 or HTTP/1.1 by
 * ALPN) and {@code H2C_PORT} (HTTP/2 with prior knowledge), each listener opened only when its
 * port is set.
 * Optional first argument {@code 0} or {@code 1}: {@code /} answers as {@code /blank} or
 * {@code /work}.
 */
public final class Server {
    private final Vertx vertx;

    private Server(Vertx vertx) {
        this.vertx = vertx;
    }

    /** Deploys {@code instances} verticles listening on host:port and waits until all listen. */
    public static Server start(String host, int port, HttpVerticle.Root root, int instances) throws Exception {
        return start(host, port, root, instances, HttpVerticle.Listeners.NONE);
    }

    /** As {@link #start(String, int, HttpVerticle.Root, int)}, with the listeners of contract 1.5. */
    static Server start(String host, int port, HttpVerticle.Root root, int instances, HttpVerticle.Listeners listeners)
            throws Exception {
        Vertx vertx = Vertx.vertx(); // default VertxOptions
        try {
            vertx.deployVerticle(() -> new HttpVerticle(host, port, root, listeners),
                            new DeploymentOptions().setInstances(instances))
                    .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException | InterruptedException e) {
            vertx.close();
            throw e;
        }
        return new Server(vertx);
    }

    /** Undeploys the verticles, which closes the listener and every connection. */
    public void stop() {
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            System.err.println("java-vertx: close: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public static void main(String[] args) {
        HttpVerticle.Root root = HttpVerticle.Root.NOT_FOUND;
        if (args.length > 0) {
            switch (args[0]) {
                case "0":
                    root = HttpVerticle.Root.BLANK;
                    break;
                case "1":
                    root = HttpVerticle.Root.WORK;
                    break;
                default:
                    System.err.println("usage: java -jar server.jar [0|1]  (0: / is /blank, 1: / is /work)");
                    System.exit(2);
            }
        }
        String host = env("HOST", "127.0.0.1");
        int port;
        HttpVerticle.Listeners listeners;
        try {
            port = Integer.parseInt(env("PORT", "1234"));
            listeners = new HttpVerticle.Listeners(Integer.parseInt(env("TLS_PORT", "0")),
                    env("TLS_CERT", null), env("TLS_KEY", null), Integer.parseInt(env("H2C_PORT", "0")));
        } catch (NumberFormatException e) {
            System.err.println("PORT, TLS_PORT and H2C_PORT must be integers: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (listeners.tls() != 0 && (listeners.cert() == null || listeners.key() == null)) {
            System.err.println("TLS_PORT needs TLS_CERT and TLS_KEY (PEM files)");
            System.exit(2);
            return;
        }
        int instances = Runtime.getRuntime().availableProcessors();
        Server server;
        try {
            server = start(host, port, root, instances, listeners);
        } catch (Exception e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            System.err.println("cannot listen on " + host + ":" + port + ": " + cause);
            System.exit(1);
            return;
        }
        // SIGTERM runs the shutdown hooks: close Vert.x (listener, connections, event loops).
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop, "shutdown"));
        System.err.println("java-vertx listening on " + host + ":" + port
                + (listeners.tls() == 0 ? "" : ", TLS (h2, http/1.1) on " + listeners.tls())
                + (listeners.h2c() == 0 ? "" : ", h2c on " + listeners.h2c())
                + " with " + instances + " verticle instances");
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }
}
