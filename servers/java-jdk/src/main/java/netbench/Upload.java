package netbench;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * {@code POST /upload}: the length and SHA-256 of the request body, hashed as it arrives
 * (java.security.MessageDigest over the JDK server's body stream, which decodes
 * Content-Length and chunked framing), never held whole.
 */
final class Upload {
    /** The largest body read (contract, "upload"): 16 MiB. */
    static final long LIMIT = 16L * 1024 * 1024;
    private static final int BUFFER = 64 * 1024;
    private static final byte[] TOO_LARGE = "body too large: at most 16 MiB".getBytes(StandardCharsets.US_ASCII);

    private Upload() {}

    static void handle(HttpExchange exchange) throws IOException {
        if (declaredLength(exchange) > LIMIT) {
            // Not a byte of the body is read here.
            tooLarge(exchange);
            return;
        }
        MessageDigest sha = sha256();
        long length = 0;
        byte[] buf = new byte[BUFFER];
        InputStream in = exchange.getRequestBody();
        for (int n; (n = in.read(buf)) >= 0; ) {
            length += n;
            if (length > LIMIT) { // a chunked body that grows past the limit
                tooLarge(exchange);
                return;
            }
            sha.update(buf, 0, n);
        }
        Router.send(exchange, 200, Router.JSON, answer(length, sha.digest()));
    }

    /** The answer's body: exactly the two keys. */
    static byte[] answer(long length, byte[] digest) {
        return ("{\"length\":" + length + ",\"sha256\":\"" + HexFormat.of().formatHex(digest) + "\"}")
                .getBytes(StandardCharsets.US_ASCII);
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e); // a required algorithm
        }
    }

    /**
     * The request's Content-Length, or -1 for a chunked body or none. The JDK server has already
     * refused (400) one that is not a non-negative integer, and ignores it beside chunked.
     */
    private static long declaredLength(HttpExchange exchange) {
        if (exchange.getRequestHeaders().containsKey("Transfer-Encoding")) {
            return -1;
        }
        String value = exchange.getRequestHeaders().getFirst("Content-Length");
        if (value == null) {
            return -1;
        }
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE; // longer than a long: too large all the same
        }
    }

    /**
     * 413 with {@code Connection: close}, which makes the JDK server close the connection after
     * the answer: the rest of the body is not another request. The server sends the answer first,
     * then, closing the exchange, drains at most 64 KiB of what the client sent on (its
     * sun.net.httpserver.drainAmount), so a client that sent that much reads the 413 before the
     * close rather than a reset.
     */
    private static void tooLarge(HttpExchange exchange) throws IOException {
        exchange.getResponseHeaders().set("Connection", "close");
        Router.send(exchange, 413, Router.TEXT, TOO_LARGE);
    }
}
