package netbench.helidon;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.webserver.WebServer;
import java.io.ByteArrayInputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** json-comp: the {@code /work} answer gzip-compressed when Accept-Encoding allows it. */
class CompressionTest {
    private static final String DOC = "{\"product\":\"WidgetPro-7\",\"requestId\":\"r-1\",\"group\":{\"kind\":\"retail\","
            + "\"default\":true,\"balance\":1234.56,\"dates\":[\"2020-01-12T10:53:17.773Z\",\"2019-03-01T00:00:00.000Z\"]}}";
    private static WebServer server;
    private static byte[] plain;

    @BeforeAll
    static void start() throws Exception {
        server = Server.start("127.0.0.1", 0, Routes.Root.NOT_FOUND);
        plain = Work.answer(DOC.getBytes(StandardCharsets.UTF_8));
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    private static RawHttp.Response work(String acceptEncoding, String body) throws Exception {
        int length = body.getBytes(StandardCharsets.UTF_8).length;
        String raw = "POST /work HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                + (acceptEncoding == null ? "" : "Accept-Encoding: " + acceptEncoding + "\r\n")
                + "Content-Length: " + length + "\r\n\r\n" + body;
        try (RawHttp http = new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()))) {
            return http.send(raw);
        }
    }

    private static byte[] gunzip(byte[] data) throws Exception {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(data))) {
            return in.readAllBytes();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"gzip", "gzip, br", "br, gzip", "GZIP", "x-gzip", "*", "deflate, gzip;q=0.5", "gzip;q=1.0", "*;q=0, gzip"})
    void gzipWhenAllowed(String acceptEncoding) throws Exception {
        RawHttp.Response r = work(acceptEncoding, DOC);
        assertEquals(200, r.status);
        assertEquals("gzip", r.header("content-encoding"), acceptEncoding);
        assertEquals("Accept-Encoding", r.header("vary"));
        assertEquals("application/json", r.header("content-type"));
        assertArrayEquals(plain, gunzip(r.body));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "identity", "br", "deflate", "gzip;q=0", "gzip; q=0.000", "gzip;q=0, *", "*;q=0", "br, gzip;q=0"})
    void plainOtherwise(String acceptEncoding) throws Exception {
        RawHttp.Response r = work(acceptEncoding.isEmpty() ? null : acceptEncoding, DOC);
        assertEquals(200, r.status);
        assertNull(r.header("content-encoding"), acceptEncoding);
        assertEquals("Accept-Encoding", r.header("vary"));
        assertArrayEquals(plain, r.body);
    }

    @Test
    void badDocumentsStay400() throws Exception {
        assertEquals(400, work("gzip", "not JSON").status);
    }

    /** Only /work is compressed: the other answers stay plain whatever the request allows. */
    @Test
    void otherPathsStayPlain() throws Exception {
        try (RawHttp http = new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()))) {
            RawHttp.Response r = http.send(RawHttp.get("/blank", "Accept-Encoding: gzip\r\n"));
            assertEquals("OK", r.text());
            assertNull(r.header("content-encoding"));
        }
    }

    @Test
    void acceptsGzip() {
        assertTrue(Compression.acceptsGzip(List.of("br", "gzip")));
        assertTrue(Compression.acceptsGzip(List.of("gzip ; q=0.001")));
        assertFalse(Compression.acceptsGzip(List.of("gzip;q=0.0")));
        assertFalse(Compression.acceptsGzip(List.of("gzipx, xgzip")));
        assertFalse(Compression.acceptsGzip(List.of()));
        assertFalse(Compression.acceptsGzip(null));
    }

    @Test
    void gzipRoundTrip() throws Exception {
        byte[] data = "{}".getBytes(StandardCharsets.US_ASCII);
        byte[] packed = Compression.gzip(data);
        assertEquals(0x1f, packed[0] & 0xff);
        assertEquals(0x8b, packed[1] & 0xff);
        assertArrayEquals(data, gunzip(packed));
    }
}
