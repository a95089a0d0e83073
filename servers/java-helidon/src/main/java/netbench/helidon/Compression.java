package netbench.helidon;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Locale;
import java.util.zip.GZIPOutputStream;

/**
 * json-comp: the {@code /work} answer gzip-compressed by java.util.zip.GZIPOutputStream (zlib, its
 * default level) whenever the request's Accept-Encoding allows gzip, whatever the size.
 *
 * <p>Not Helidon's own content encoding: its gzip provider (helidon-http-encoding-gzip) is not
 * served at 4.5.0 by the registry this project builds from, and Helidon 4.5.0's encoder choice
 * ({@code ContentEncodingSupportImpl}) orders Accept-Encoding by q but takes the first coding it
 * supports even at {@code q=0}, and applies to every route of the server. Helidon has no brotli.
 */
final class Compression {
    private Compression() {}

    /**
     * Whether Accept-Encoding (every line of it) allows gzip, RFC 9110 §12.5.3: {@code gzip},
     * {@code x-gzip} or {@code *} listed without {@code q=0}; a coding named explicitly wins
     * over {@code *}. No header allows only identity.
     */
    static boolean acceptsGzip(List<String> header) {
        if (header == null) {
            return false;
        }
        boolean star = false;
        for (String line : header) {
            for (String item : line.split(",")) {
                int semi = item.indexOf(';');
                String name = (semi < 0 ? item : item.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
                if (!name.equals("gzip") && !name.equals("x-gzip") && !name.equals("*")) {
                    continue;
                }
                boolean allowed = !qZero(semi < 0 ? "" : item.substring(semi + 1));
                if (name.equals("*")) {
                    star = allowed;
                    continue;
                }
                return allowed;
            }
        }
        return star;
    }

    /** Whether the parameters of an Accept-Encoding item set q to 0 ({@code q=0}, {@code q=0.000}). */
    static boolean qZero(String params) {
        for (String p : params.split(";")) {
            int eq = p.indexOf('=');
            if (eq > 0 && p.substring(0, eq).trim().equalsIgnoreCase("q")) {
                try {
                    return Double.parseDouble(p.substring(eq + 1).trim()) == 0;
                } catch (NumberFormatException e) {
                    return false;
                }
            }
        }
        return false;
    }

    static byte[] gzip(byte[] plain) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(plain.length / 2 + 32);
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(plain);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return out.toByteArray();
    }
}
