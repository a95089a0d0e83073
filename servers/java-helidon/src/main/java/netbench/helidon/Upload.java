package netbench.helidon;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * {@code POST /upload}: the length and SHA-256 of the request body, hashed as it arrives
 * (java.security.MessageDigest over Helidon's entity stream, which decodes Content-Length and
 * chunked framing), never held whole. At most {@link #LIMIT} bytes are read.
 */
final class Upload {
    /** The largest body read (contract, "upload"): 16 MiB. */
    static final long LIMIT = 16L * 1024 * 1024;
    private static final int BUFFER = 64 * 1024;

    /** The body was longer than {@link #LIMIT}: the rest is not read. */
    static final class TooLarge extends Exception {
        private static final long serialVersionUID = 1L;

        TooLarge() {
            super("body too large: at most 16 MiB", null, false, false);
        }
    }

    private Upload() {}

    /** The answer's body for the stream's bytes; stops with {@link TooLarge} once past the limit. */
    static byte[] digest(InputStream in) throws IOException, TooLarge {
        MessageDigest sha = sha256();
        long length = 0;
        byte[] buf = new byte[BUFFER];
        for (int n; (n = in.read(buf)) >= 0; ) {
            length += n;
            if (length > LIMIT) { // a chunked body that grows past the limit
                throw new TooLarge();
            }
            sha.update(buf, 0, n);
        }
        return answer(length, sha.digest());
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
}
