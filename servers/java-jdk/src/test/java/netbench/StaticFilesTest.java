package netbench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code GET /static/<name>} over real connections, from a folder the test writes. */
class StaticFilesTest {
    @TempDir
    static Path dir;
    private static byte[] small;
    private static byte[] large;
    private static Server server;
    private static Server withoutFiles;

    @BeforeAll
    static void start() throws Exception {
        Random random = new Random(42);
        small = new byte[14 * 1024];
        large = new byte[1024 * 1024];
        random.nextBytes(small);
        random.nextBytes(large);
        Files.write(dir.resolve("14k"), small);
        Files.write(dir.resolve("1m"), large);
        Files.write(dir.resolve(".hidden"), small);
        Files.write(dir.resolve("empty"), new byte[0]);
        Files.createDirectory(dir.resolve("sub"));
        // The 5th: a day of one digit, which RFC 1123's formatter would write without its zero.
        Files.setLastModifiedTime(dir.resolve("14k"), FileTime.from(Instant.parse("2024-03-05T07:08:09.123456789Z")));
        InetSocketAddress any = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        server = Server.start(any, 2, Router.Root.NOT_FOUND, null, StaticFiles.of(dir));
        withoutFiles = Server.start(any, 1, Router.Root.NOT_FOUND, null, StaticFiles.of(dir.resolve("missing")));
    }

    @AfterAll
    static void stop() {
        server.stop();
        withoutFiles.stop();
    }

    private static RawHttp connect(Server s) throws Exception {
        return new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), s.address().getPort()));
    }

    private static String get(String path, String ifNoneMatch) {
        return "GET " + path + " HTTP/1.1\r\nHost: test\r\nIf-None-Match: " + ifNoneMatch + "\r\n\r\n";
    }

    @Test
    void servesTheFilesWithValidators() throws Exception {
        try (RawHttp http = connect(server)) {
            for (String name : new String[] {"14k", "1m", "14k"}) {
                byte[] want = name.equals("14k") ? small : large;
                RawHttp.Response r = http.send(RawHttp.get("/static/" + name));
                assertEquals(200, r.status, name);
                assertEquals(Integer.toString(want.length), r.header("content-length"));
                assertNull(r.header("transfer-encoding"));
                assertArrayEquals(want, r.body, name);
                assertTrue(r.header("etag").matches("\"[0-9a-f]+-[0-9a-f]+\""), r.header("etag"));
                String lastModified = r.header("last-modified");
                assertNotNull(lastModified);
                assertEquals(29, lastModified.length(), lastModified); // IMF-fixdate: two-digit day
                ZonedDateTime modified = ZonedDateTime.parse(lastModified, DateTimeFormatter.RFC_1123_DATE_TIME);
                ZonedDateTime date = ZonedDateTime.parse(r.header("date"), DateTimeFormatter.RFC_1123_DATE_TIME);
                assertFalse(modified.isAfter(date), lastModified + " after " + r.header("date"));
                // The connection goes on: the body was exactly Content-Length bytes.
                assertEquals("OK", http.send(RawHttp.get("/blank")).text());
            }
            assertEquals("Tue, 05 Mar 2024 07:08:09 GMT", http.send(RawHttp.get("/static/14k")).header("last-modified"));
        }
    }

    @Test
    void sameETagWhileTheFileIsTheSame() throws Exception {
        try (RawHttp http = connect(server)) {
            String first = http.send(RawHttp.get("/static/1m")).header("etag");
            assertEquals(first, http.send(RawHttp.get("/static/1m")).header("etag"));
            assertNotEquals(first, http.send(RawHttp.get("/static/14k")).header("etag"));
        }
    }

    @Test
    void ifNoneMatch() throws Exception {
        try (RawHttp http = connect(server)) {
            String etag = http.send(RawHttp.get("/static/14k")).header("etag");
            for (String header : new String[] {etag, "W/" + etag, "\"other\", " + etag, "*"}) {
                RawHttp.Response r = http.send(get("/static/14k", header));
                assertEquals(304, r.status, header);
                assertEquals(etag, r.header("etag"));
                assertEquals(0, r.body.length);
                assertNull(r.header("content-length"), "a 304 carries no body");
            }
            // The connection stays usable, and another tag gets the file.
            RawHttp.Response r = http.send(get("/static/14k", "\"other\""));
            assertEquals(200, r.status);
            assertArrayEquals(small, r.body);
        }
    }

    @Test
    void notFound() throws Exception {
        for (String path : new String[] {"/static/nope", "/static/", "/static/.hidden", "/static/sub",
            "/static/..%2F14k", "/static/sub/x", "/static/%31%34k", "/static"}) {
            try (RawHttp http = connect(server)) {
                assertEquals(404, http.send(RawHttp.get(path)).status, path);
            }
        }
        try (RawHttp http = connect(withoutFiles)) {
            assertEquals(404, http.send(RawHttp.get("/static/14k")).status);
        }
    }

    @Test
    void emptyFile() throws Exception {
        try (RawHttp http = connect(server)) {
            RawHttp.Response r = http.send(RawHttp.get("/static/empty"));
            assertEquals(200, r.status);
            assertEquals("0", r.header("content-length"));
            assertEquals("OK", http.send(RawHttp.get("/blank")).text());
        }
    }

    @Test
    void onlyGet() throws Exception {
        try (RawHttp http = connect(server)) {
            assertEquals(405, http.send(RawHttp.post("/static/14k", "{}")).status);
        }
    }

    @Test
    void names() {
        assertTrue(StaticFiles.validName("14k"));
        assertTrue(StaticFiles.validName("a.b-c_d"));
        for (String name : new String[] {"", ".", "..", ".x", "a/b", "a%2Fb", "a\\b", "a b"}) {
            assertFalse(StaticFiles.validName(name), name);
        }
    }

    @Test
    void weakComparison() {
        String etag = "\"abc-1\"";
        assertTrue(StaticFiles.noneMatch(List.of("\"abc-1\""), etag));
        assertTrue(StaticFiles.noneMatch(List.of("W/\"abc-1\""), etag));
        assertTrue(StaticFiles.noneMatch(List.of("\"x\"", " W/\"abc-1\" "), etag));
        assertTrue(StaticFiles.noneMatch(List.of("*"), etag));
        assertFalse(StaticFiles.noneMatch(List.of("\"abc-2\", \"abc\""), etag));
        assertFalse(StaticFiles.noneMatch(List.of("abc-1"), etag));
        assertFalse(StaticFiles.noneMatch(null, etag));
    }
}
