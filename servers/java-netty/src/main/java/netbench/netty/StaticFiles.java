package netbench.netty;

import io.netty.buffer.Unpooled;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.FileRegion;
import io.netty.handler.codec.DateFormatter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpChunkedInput;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.stream.ChunkedNioFile;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Date;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code GET /static/<name>}: the files of one folder (the build writes the contract's two into
 * ./static with contract/static/make.py), served the way Netty's HttpStaticFileServer example
 * does: the file opened for each request, a head with its Content-Length, then the file as a
 * {@link DefaultFileRegion} (zero-copy: FileChannel.transferTo, sendfile on Linux) and an empty
 * LastHttpContent. Netty has no file handler of its own beyond that example, so the validators
 * are done here: Last-Modified formatted by Netty's DateFormatter (IMF-fixdate), an ETag derived
 * from the file's modification time and size, as nginx and Apache derive theirs, and 304 for an
 * If-None-Match that names it (weak comparison). No cache but the operating system's page cache.
 * Where a file region cannot go (TLS, HTTP/2 streams) the file is read as the connection takes
 * it, in chunks ({@link HttpChunkedInput} over {@link ChunkedNioFile}), as the example does over
 * TLS.
 */
final class StaticFiles {
    static final String PREFIX = "/static/";
    /** Netty's ChunkedNioFile default: a chunk per read, 8 KiB. */
    private static final int CHUNK = 8192;

    /** Null when the folder is missing: every file is then 404. */
    private final Path dir;

    private StaticFiles(Path dir) {
        this.dir = dir;
    }

    /** The files of {@code dir}, or none (every name 404) when it is not a folder. */
    static StaticFiles of(Path dir) {
        return new StaticFiles(dir != null && Files.isDirectory(dir) ? dir : null);
    }

    boolean present() {
        return dir != null;
    }

    /**
     * What {@link Handler} writes: a head, then the file when {@code body} is not null
     * (a 304 is a whole answer without one): a {@link FileRegion}, which needs a
     * LastHttpContent after it, or an {@link HttpChunkedInput}, which ends with its own.
     */
    record Answer(HttpResponse head, Object body) {}

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

    /**
     * The answer to a GET of {@code name} with the request's headers, or null when there is no
     * such file (the caller answers 404). The file's channel, when there is a body, is closed by
     * the region or the chunked input once it is written (or released unwritten).
     * {@code chunked}: the body as an {@link HttpChunkedInput} rather than a file region.
     */
    Answer answer(String name, HttpHeaders request, boolean chunked) {
        if (dir == null || !validName(name)) {
            return null;
        }
        Path file = dir.resolve(name);
        FileChannel channel;
        try {
            channel = FileChannel.open(file, StandardOpenOption.READ);
        } catch (IOException e) { // missing, a folder, unreadable
            return null;
        }
        boolean handedOver = false;
        try {
            BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class);
            if (!attrs.isRegularFile()) {
                return null;
            }
            long size = channel.size();
            String etag = etag(size, attrs.lastModifiedTime());
            String lastModified = DateFormatter.format(new Date(attrs.lastModifiedTime().toMillis()));
            if (noneMatch(request.getAll(HttpHeaderNames.IF_NONE_MATCH), etag)) {
                // No body and no Content-Length: a 304's length would be the file's, never sent.
                DefaultFullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                        HttpResponseStatus.NOT_MODIFIED, Unpooled.EMPTY_BUFFER);
                res.headers()
                        .set(HttpHeaderNames.ETAG, etag)
                        .set(HttpHeaderNames.LAST_MODIFIED, lastModified)
                        .set(HttpHeaderNames.DATE, DateFormatter.format(new Date()));
                return new Answer(res, null);
            }
            HttpResponse res = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            res.headers()
                    .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_OCTET_STREAM)
                    .set(HttpHeaderNames.CONTENT_LENGTH, size)
                    .set(HttpHeaderNames.ETAG, etag)
                    .set(HttpHeaderNames.LAST_MODIFIED, lastModified)
                    .set(HttpHeaderNames.DATE, DateFormatter.format(new Date()));
            Object body = chunked
                    ? new HttpChunkedInput(new ChunkedNioFile(channel, 0, size, CHUNK))
                    : new DefaultFileRegion(channel, 0, size);
            Answer answer = new Answer(res, body);
            handedOver = true;
            return answer;
        } catch (IOException e) {
            return null;
        } finally {
            if (!handedOver) {
                try {
                    channel.close();
                } catch (IOException ignored) {
                    // nothing was read from it
                }
            }
        }
    }

    /** A strong entity-tag from the modification time (nanoseconds) and the size, in hexadecimal. */
    static String etag(long size, FileTime modified) {
        return "\"" + Long.toHexString(modified.to(TimeUnit.NANOSECONDS)) + "-" + Long.toHexString(size) + "\"";
    }

    /**
     * Whether If-None-Match (every line of it) names {@code etag} by the weak comparison of
     * RFC 9110 §13.1.2 ({@code W/} ignored on both sides), or is {@code *}.
     */
    static boolean noneMatch(List<String> header, String etag) {
        if (header == null || header.isEmpty()) {
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
