package netbench.helidon;

import io.helidon.webserver.WebServer;

/**
 * netbench reference server on the Helidon SE 4 WebServer with its defaults: a platform thread
 * accepts connections, and each connection is served on its own virtual thread with blocking
 * reads and writes (the JDK schedules virtual threads on a ForkJoinPool of carrier threads,
 * one per processor).
 *
 * <p>Environment: {@code HOST} (default 127.0.0.1), {@code PORT} (default 1234).
 * Optional first argument {@code 0} or {@code 1}: {@code /} answers as {@code /blank} or
 * {@code /work}.
 */
public final class Server {
    private Server() {}

    /** Builds and starts the server; port 0 picks a free port ({@link WebServer#port()} tells it). */
    public static WebServer start(String host, int port, Routes.Root root) {
        return WebServer.builder()
                .host(host)
                .port(port)
                .routing(routing -> Routes.register(routing, root))
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
        // SIGTERM: Helidon's own shutdown hook stops the server.
        start(host, port, root);
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }
}
