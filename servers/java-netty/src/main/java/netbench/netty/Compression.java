package netbench.netty;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.compression.StandardCompressionOptions;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContentCompressor;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.util.Locale;

/**
 * json-comp and app: the {@code /work} answer and the {@code /app} page compressed by Netty's own
 * HttpContentCompressor whenever the request's Accept-Encoding allows it.
 */
final class Compression {
    private Compression() {}

    /**
     * A {@code /work} answer or an {@code /app} page: the one kind of answer {@link Compressor}
     * compresses. Only {@link Handler} makes them; every other answer is a plain
     * {@code DefaultFullHttpResponse} (or, for static files, a head and a {@code FileRegion},
     * which a compressor must not touch).
     */
    static final class Compressible extends DefaultFullHttpResponse {
        Compressible(HttpResponseStatus status, ByteBuf content) {
            super(HttpVersion.HTTP_1_1, status, content);
        }
    }

    /**
     * Netty's HttpContentCompressor, with gzip as its one coding (StandardCompressionOptions.gzip():
     * zlib's default level 6) and a minimum size of 0, so that a ~200-byte {@code /work} answer is
     * compressed too. Netty reads each request's Accept-Encoding as it passes in, matches the
     * answers to the requests in order, compresses through its own ZlibEncoder and fixes up
     * Content-Length. Answers other than {@link Compressible}s pass through as they are.
     *
     * <p>One thing is overridden: which coding a request allows ({@link #determineEncoding}).
     * Netty 4.2.20's own choice breaks RFC 9110 in ways the contract forbids: for
     * {@code gzip;q=0, br} without brotli it picks gzip although q=0 refuses it, it matches coding
     * names case-sensitively ({@code GZIP} gets nothing), and it answers {@code *} with snappy.
     *
     * <p>One per connection: the encoder keeps per-connection state.
     */
    static final class Compressor extends HttpContentCompressor {
        Compressor() {
            super(0, StandardCompressionOptions.gzip()); // contentSizeThreshold 0: any size
        }

        @Override
        protected Result beginEncode(HttpResponse response, String acceptEncoding) throws Exception {
            if (!(response instanceof Compressible)) {
                return null; // pass through, uncompressed
            }
            return super.beginEncode(response, acceptEncoding);
        }

        /** {@code "gzip"} when the request allows gzip, else null (the plain answer). */
        @Override
        protected String determineEncoding(String acceptEncoding) {
            return acceptsGzip(acceptEncoding) ? "gzip" : null;
        }
    }

    /**
     * Whether an Accept-Encoding value (Netty joins several header lines with commas) allows gzip,
     * RFC 9110 §12.5.3: {@code gzip}, {@code x-gzip} or {@code *} listed without {@code q=0},
     * names compared case-insensitively; a coding named explicitly wins over {@code *}. No header
     * (Netty passes {@code identity}) allows only identity.
     */
    static boolean acceptsGzip(String header) {
        if (header == null) {
            return false;
        }
        boolean star = false;
        for (String item : header.split(",")) {
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
        return star;
    }

    /** Whether the parameters of an Accept-Encoding item set q to 0. */
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
}
