package netbench;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * {@code GET /static/<name>}: the files of one folder (the build writes the contract's two into
 * ./static with contract/static/make.py). The JDK 17 HttpServer has no file handler of its own
 * (SimpleFileServer came in JDK 18), so this is the usual one done by hand: the file is opened
 * for each request and streamed from disk (the page cache is the only cache), framed by its
 * Content-Length, with Last-Modified and an ETag derived from its size and modification time,
 * as nginx and Apache derive theirs, and 304 for an If-None-Match that names that ETag.
 */
final class StaticFiles {
    /** IMF-fixdate, as the JDK writes its own Date header (RFC_1123_DATE_TIME drops the day's leading zero). */
    static final DateTimeFormatter HTTP_DATE = DateTimeFormatter
            .ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
            .withZone(ZoneOffset.UTC);
    private static final int BUFFER = 64 * 1024;

    /** Null when the folder is missing: every file is then 404. */
    private final Path dir;

    private StaticFiles(Path dir) {
        this.dir = dir;
    }

    /** The files of {@code dir}, or none (every name 404) when it is not a folder. */
    static StaticFiles of(Path dir) {
        return new StaticFiles(dir != null && Files.isDirectory(dir) ? dir : null);
    }

    static StaticFiles none() {
        return new StaticFiles(null);
    }

    boolean present() {
        return dir != null;
    }

    /**
     * A name inside the folder: no separator, no dot first (so neither {@code ..} nor hidden
     * files), nothing percent-encoded (the router hands the raw path).
     */
    static boolean validName(String name) {
        if (name.isEmpty() || name.charAt(0) == '.') {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '-' || c == '_';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** True when the answer was sent; false when there is no such file (the caller answers 404). */
    boolean serve(HttpExchange exchange, String name) throws IOException {
        if (dir == null || !validName(name)) {
            return false;
        }
        Path file = dir.resolve(name);
        FileChannel channel;
        try {
            channel = FileChannel.open(file, StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) { // a folder, or unreadable
            return false;
        }
        try (channel) {
            BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class);
            if (!attrs.isRegularFile()) {
                return false;
            }
            long size = channel.size();
            String etag = etag(size, attrs.lastModifiedTime());
            Headers h = exchange.getResponseHeaders();
            h.set("ETag", etag);
            if (noneMatch(exchange.getRequestHeaders().get("If-None-Match"), etag)) {
                exchange.sendResponseHeaders(304, -1); // no body, no Content-Length
                return true;
            }
            h.set("Last-Modified", HTTP_DATE.format(attrs.lastModifiedTime().toInstant()));
            h.set("Content-Type", "application/octet-stream");
            exchange.sendResponseHeaders(200, size == 0 ? -1 : size); // 0 would mean chunked
            if (size > 0) {
                try (OutputStream out = exchange.getResponseBody(); InputStream in = Channels.newInputStream(channel)) {
                    byte[] buf = new byte[(int) Math.min(BUFFER, size)];
                    long left = size;
                    while (left > 0) {
                        int n = in.read(buf, 0, (int) Math.min(buf.length, left));
                        if (n < 0) {
                            break; // the file shrank: closing the body short ends the connection
                        }
                        out.write(buf, 0, n);
                        left -= n;
                    }
                }
            }
            return true;
        }
    }

    /** A strong entity-tag from the size and the modification time (nanoseconds), in hexadecimal. */
    static String etag(long size, FileTime modified) {
        return "\"" + Long.toHexString(modified.to(TimeUnit.NANOSECONDS)) + "-" + Long.toHexString(size) + "\"";
    }

    /**
     * Whether If-None-Match (every line of it) names {@code etag} by the weak comparison of
     * RFC 9110 §13.1.2 ({@code W/} ignored on both sides), or is {@code *}.
     */
    static boolean noneMatch(List<String> header, String etag) {
        if (header == null) {
            return false;
        }
        String want = opaque(etag);
        for (String line : header) {
            for (String tag : line.split(",")) {
                String t = tag.trim();
                if (t.equals("*") || opaque(t).equals(want)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static String opaque(String tag) {
        return tag.startsWith("W/") ? tag.substring(2) : tag;
    }
}
