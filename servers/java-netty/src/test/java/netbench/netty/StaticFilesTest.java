package netbench.netty;

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
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code GET /static/<name>} over real connections, from a folder the test writes with the contract's formula. */
class StaticFilesTest {
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    @TempDir
    static Path dir;
    private static byte[] small;
    private static byte[] large;
    private static Server server;
    private static Server withoutFiles;

    /** contract/CONTRACT.md, "static": the bytes of a file of {@code size} bytes. */
    static byte[] contractBytes(int size) {
        byte[] out = new byte[size];
        long s = size;
        for (int i = 0; i < size; i++) {
            s = (1103515245L * s + 12345L) % (1L << 31);
            out[i] = i % 64 == 63 ? (byte) '\n' : (byte) ALPHABET.charAt((int) ((s >> 16) % 64));
        }
        return out;
    }

    @BeforeAll
    static void start() throws Exception {
        small = contractBytes(14 * 1024);
        large = contractBytes(1024 * 1024);
        Files.write(dir.resolve("14k"), small);
        Files.write(dir.resolve("1m"), large);
        Files.write(dir.resolve(".hidden"), small);
        Files.write(dir.resolve("empty"), new byte[0]);
        Files.createDirectory(dir.resolve("sub"));
        // The 5th: a day of one digit, which RFC 1123's formatter would write without its zero.
        Files.setLastModifiedTime(dir.resolve("14k"), FileTime.from(Instant.parse("2024-03-05T07:08:09.123456789Z")));
        InetSocketAddress any = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        server = Server.start(any, Handler.Root.NOT_FOUND, null, StaticFiles.of(dir));
        withoutFiles = Server.start(any, Handler.Root.NOT_FOUND, null, StaticFiles.of(dir.resolve("missing")));
    }

    @AfterAll
    static void stop() {
        server.stop();
        withoutFiles.stop();
    }

    private static RawHttp connect(Server s) throws Exception {
        return new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), s.address().getPort()));
    }

    private static String get(String path, String header, String value) {
        return "GET " + path + " HTTP/1.1\r\nHost: test\r\n" + header + ": " + value + "\r\n\r\n";
    }

    @Test
    void theFormulaMatchesTheContractsDigests() {
        assertEquals("57a8ca1d858dbeaeac461a9c9cf2bb09a737493e9846b161c4ad840e42d613be",
                HexFormat.of().formatHex(Upload.sha256().digest(small)));
        assertEquals("3f055e97e631e61d7f5b9e428abbbcfb07255bc181245e235f5fa8d676d99f3c",
                HexFormat.of().formatHex(Upload.sha256().digest(large)));
    }

    @Test
    void servesTheFilesWithValidators() throws Exception {
        try (RawHttp http = connect(server)) {
            for (String name : new String[] {"14k", "1m", "14k", "1m"}) {
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
                RawHttp.Response r = http.send(get("/static/14k", "If-None-Match", header));
                assertEquals(304, r.status, header);
                assertEquals(etag, r.header("etag"));
                assertNull(r.header("content-length"), "a 304 carries no body");
                assertNull(r.header("transfer-encoding"), "a 304 carries no body");
                assertNotNull(r.header("date"));
            }
            // The connection stays usable, and another tag gets the file.
            RawHttp.Response r = http.send(get("/static/14k", "If-None-Match", "\"other\""));
            assertEquals(200, r.status);
            assertArrayEquals(small, r.body);
            assertEquals("OK", http.send(RawHttp.get("/blank")).text());
        }
    }

    /** The files are never compressed: the compressor is for /work only. */
    @Test
    void notCompressed() throws Exception {
        try (RawHttp http = connect(server)) {
            RawHttp.Response r = http.send(get("/static/1m", "Accept-Encoding", "gzip"));
            assertEquals(200, r.status);
            assertNull(r.header("content-encoding"));
            assertArrayEquals(large, r.body);
            assertEquals("OK", http.send(RawHttp.get("/blank")).text());
        }
    }

    @Test
    void pipelined() throws Exception {
        try (RawHttp http = connect(server)) {
            http.write(RawHttp.get("/static/1m") + RawHttp.get("/blank") + RawHttp.get("/static/14k")
                    + RawHttp.get("/static/nope") + RawHttp.get("/static/14k"));
            assertArrayEquals(large, http.read().body);
            assertEquals("OK", http.read().text());
            assertArrayEquals(small, http.read().body);
            assertEquals(404, http.read().status);
            assertArrayEquals(small, http.read().body);
        }
    }

    @Test
    void connectionClose() throws Exception {
        try (RawHttp http = connect(server)) {
            RawHttp.Response r = http.send("GET /static/1m HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
            assertArrayEquals(large, r.body);
            assertEquals("close", r.header("connection"));
            assertTrue(http.closedByPeer());
        }
        try (RawHttp http = connect(server)) {
            RawHttp.Response r = http.send("GET /static/14k HTTP/1.0\r\n\r\n");
            assertArrayEquals(small, r.body);
            assertTrue(http.closedByPeer());
        }
    }

    @Test
    void notFound() throws Exception {
        for (String path : new String[] {"/static/nope", "/static/", "/static/.hidden", "/static/sub",
            "/static/..%2F14k", "/static/sub/x", "/static/%31%34k", "/static", "/static/../pom.xml"}) {
            try (RawHttp http = connect(server)) {
                RawHttp.Response r = http.send(RawHttp.get(path));
                assertEquals(404, r.status, path);
                assertEquals("OK", http.send(RawHttp.get("/blank")).text());
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
        assertTrue(StaticFiles.validName("a-b_c.txt"));
        for (String bad : new String[] {"", ".", "..", ".hidden", "a/b", "a\\b", "%2e", "a b"}) {
            assertFalse(StaticFiles.validName(bad), bad);
        }
    }

    @Test
    void weakComparison() {
        String etag = "\"abc-1\"";
        assertTrue(StaticFiles.noneMatch(List.of(etag), etag));
        assertTrue(StaticFiles.noneMatch(List.of("W/" + etag), etag));
        assertTrue(StaticFiles.noneMatch(List.of("\"x\"", " W/\"abc-1\" "), etag));
        assertTrue(StaticFiles.noneMatch(List.of("\"x\", \"abc-1\""), etag));
        assertTrue(StaticFiles.noneMatch(List.of("*"), etag));
        assertFalse(StaticFiles.noneMatch(List.of("\"abc-2\""), etag));
        assertFalse(StaticFiles.noneMatch(List.of("abc-1"), etag), "an unquoted tag is not the tag");
        assertFalse(StaticFiles.noneMatch(List.of(), etag));
        assertFalse(StaticFiles.noneMatch(null, etag));
        assertEquals(StaticFiles.etag(5, FileTime.fromMillis(1000)), StaticFiles.etag(5, FileTime.fromMillis(1000)));
        assertNotEquals(StaticFiles.etag(5, FileTime.fromMillis(1000)), StaticFiles.etag(6, FileTime.fromMillis(1000)));
        assertNotEquals(StaticFiles.etag(5, FileTime.fromMillis(1000)), StaticFiles.etag(5, FileTime.fromMillis(1001)));
    }
}
