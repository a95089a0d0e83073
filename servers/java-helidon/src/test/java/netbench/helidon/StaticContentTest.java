package netbench.helidon;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.webserver.WebServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.util.HexFormat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code GET /static/...}: Helidon's static content feature over a folder of the contract's files. */
class StaticContentTest {
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    /** A modification time on the 6th of a month: Helidon alone would write "Fri, 6 Nov 2026". */
    private static final Instant MODIFIED = Instant.parse("2026-11-06T08:49:37Z");

    @TempDir
    static Path dir;
    private static WebServer server;
    private static byte[] small;
    private static byte[] large;

    /** contract/CONTRACT.md, "static": the files' formula (contract/static/make.py). */
    static byte[] contractFile(int size) {
        byte[] out = new byte[size];
        long s = size;
        for (int i = 0; i < size; i++) {
            s = (1103515245L * s + 12345L) % (1L << 31);
            out[i] = (byte) (i % 64 == 63 ? '\n' : ALPHABET.charAt((int) ((s >> 16) % 64)));
        }
        return out;
    }

    @BeforeAll
    static void start() throws Exception {
        small = contractFile(14 * 1024);
        large = contractFile(1024 * 1024);
        assertEquals("57a8ca1d858dbeaeac461a9c9cf2bb09a737493e9846b161c4ad840e42d613be",
                HexFormat.of().formatHex(Upload.sha256().digest(small)));
        assertEquals("3f055e97e631e61d7f5b9e428abbbcfb07255bc181245e235f5fa8d676d99f3c",
                HexFormat.of().formatHex(Upload.sha256().digest(large)));
        Files.write(dir.resolve("14k"), small);
        Files.write(dir.resolve("1m"), large);
        Files.setLastModifiedTime(dir.resolve("14k"), FileTime.from(MODIFIED));
        server = Server.start("127.0.0.1", 0, Routes.Root.NOT_FOUND, null, dir);
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    private static RawHttp connect() throws Exception {
        return new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()));
    }

    @Test
    void filesWithLengthAndValidators() throws Exception {
        try (RawHttp http = connect()) {
            for (int round = 0; round < 2; round++) {
                String etag = null;
                for (String name : new String[] {"14k", "1m"}) {
                    RawHttp.Response r = http.send(RawHttp.get("/static/" + name));
                    assertEquals(200, r.status);
                    assertNull(r.header("transfer-encoding"));
                    assertEquals(Integer.toString(r.body.length), r.header("content-length"));
                    assertArrayEquals(name.equals("14k") ? small : large, r.body);
                    assertNotNull(r.header("etag"));
                    assertTrue(r.header("etag").matches("(W/)?\"[^\"]*\""), r.header("etag"));
                    String lastModified = r.header("last-modified");
                    assertEquals(lastModified, HttpDate.IMF_FIXDATE.format(
                            ZonedDateTime.parse(lastModified, HttpDate.IMF_FIXDATE)), "an IMF-fixdate");
                    if (name.equals("14k")) {
                        assertEquals("Fri, 06 Nov 2026 08:49:37 GMT", lastModified);
                        etag = r.header("etag");
                    }
                }
                // the same tag on every answer while the file does not change
                assertEquals(etag, http.send(RawHttp.get("/static/14k")).header("etag"));
            }
            assertEquals("OK", http.send(RawHttp.get("/blank")).text(), "the connection after the files");
        }
    }

    @Test
    void notModified() throws Exception {
        try (RawHttp http = connect()) {
            String etag = http.send(RawHttp.get("/static/1m")).header("etag");
            for (String tag : new String[] {etag, "W/" + etag}) {
                http.write(RawHttp.get("/static/1m", "If-None-Match: " + tag + "\r\n"));
                RawHttp.Response r = http.readHead();
                assertEquals(304, r.status, tag);
                String length = r.header("content-length");
                assertTrue(length == null || length.equals("0"), "a 304 without a body: " + length);
                // the connection is still usable: the next answer starts right where the 304 ends
                assertEquals("OK", http.send(RawHttp.get("/blank")).text());
            }
            RawHttp.Response other = http.send(RawHttp.get("/static/1m", "If-None-Match: \"another\"\r\n"));
            assertEquals(200, other.status);
            assertArrayEquals(large, other.body);
        }
    }

    @Test
    void unknownFilesAndPaths() throws Exception {
        try (RawHttp http = connect()) {
            for (String path : new String[] {"/static/nope", "/static/../pom.xml", "/static/%2e%2e/pom.xml"}) {
                assertEquals(404, http.send(RawHttp.get(path)).status, path);
            }
            // the folder itself, which has no welcome file: Helidon refuses it (403), no listing
            for (String path : new String[] {"/static/", "/static"}) {
                RawHttp.Response folder = http.send(RawHttp.get(path));
                assertEquals(403, folder.status, path);
                assertFalse(folder.text().contains("14k"), folder.text());
            }
        }
    }

    @Test
    void withoutTheFolder() throws Exception {
        WebServer none = Server.start("127.0.0.1", 0, Routes.Root.NOT_FOUND);
        try (RawHttp http = new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), none.port()))) {
            RawHttp.Response r = http.send(RawHttp.get("/static/14k"));
            assertEquals(404, r.status);
            assertFalse(r.text().contains(new String(small, 0, 64, StandardCharsets.US_ASCII)));
        } finally {
            none.stop();
        }
    }
}
