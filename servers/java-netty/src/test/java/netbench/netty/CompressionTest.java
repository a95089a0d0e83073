package netbench.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** json-comp: {@code POST /work} compressed by HttpContentCompressor when the request allows it, and only then. */
class CompressionTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String DOC = "{\"product\":\"p\",\"requestId\":\"r\",\"group\":{\"kind\":\"k\",\"default\":true,"
            + "\"balance\":12.5,\"dates\":[\"2020-01-01T00:00:00.000Z\",\"2021-02-03T04:05:06.789Z\"]}}";
    private static final String ANSWER = "{\"product\":\"p\",\"requestId\":\"r\",\"client\":{\"balance\":12.5,"
            + "\"minDate\":\"2020-01-01T00:00:00.000Z\",\"maxDate\":\"2021-02-03T04:05:06.789Z\"}}";

    private static Server server;

    @BeforeAll
    static void start() throws Exception {
        server = Server.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Handler.Root.NOT_FOUND);
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    private static RawHttp connect() throws Exception {
        return new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.address().getPort()));
    }

    private static String work(String body, String acceptEncoding) {
        int length = body.getBytes(StandardCharsets.UTF_8).length;
        return "POST /work HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                + (acceptEncoding == null ? "" : "Accept-Encoding: " + acceptEncoding + "\r\n")
                + "Content-Length: " + length + "\r\n\r\n" + body;
    }

    private static byte[] gunzip(byte[] body) throws Exception {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
            return in.readAllBytes();
        }
    }

    private static void assertVaries(RawHttp.Response r) {
        String vary = r.header("vary");
        assertTrue(vary != null && vary.toLowerCase().contains("accept-encoding"), "Vary: " + vary);
    }

    @ParameterizedTest
    @ValueSource(strings = {"gzip", "gzip, br", "br, gzip", "deflate;q=0.5, gzip", "GZIP", "gzip;q=1.0", "gzip; q=0.1",
        "*", "x-gzip", "br;q=1, *;q=0.5"})
    void gzipWhenAllowed(String acceptEncoding) throws Exception {
        try (RawHttp http = connect()) {
            for (int i = 0; i < 3; i++) { // a fresh compressor state per answer, on one connection
                RawHttp.Response r = http.send(work(DOC, acceptEncoding));
                assertEquals(200, r.status);
                assertEquals("gzip", r.header("content-encoding"), acceptEncoding);
                assertEquals("application/json", r.header("content-type"));
                assertVaries(r);
                assertEquals(Integer.toString(r.body.length), r.header("content-length"), "framed by Content-Length");
                assertEquals(JSON.readTree(ANSWER), JSON.readTree(gunzip(r.body)));
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "identity", "br", "gzip;q=0", "gzip;q=0, br", "gzip;q=0.000", "*;q=0", "gzip;q=0, *",
        "zstd", "deflate", "snappy", "gzipx", "identity;q=1, *;q=0"})
    void plainOtherwise(String acceptEncoding) throws Exception {
        try (RawHttp http = connect()) {
            RawHttp.Response r = http.send(work(DOC, acceptEncoding.isEmpty() ? null : acceptEncoding));
            assertEquals(200, r.status);
            String coding = r.header("content-encoding");
            assertTrue(coding == null || coding.equals("identity"), acceptEncoding + ": " + coding);
            assertVaries(r);
            assertEquals(JSON.readTree(ANSWER), JSON.readTree(r.body));
        }
    }

    @Test
    void acceptEncoding() {
        assertTrue(Compression.acceptsGzip("gzip"));
        assertTrue(Compression.acceptsGzip("deflate, gzip;q=0.2"));
        assertTrue(Compression.acceptsGzip("identity,*"));
        assertTrue(Compression.acceptsGzip("br,gzip")); // several header lines, as Netty joins them
        assertTrue(Compression.acceptsGzip("gzip;level=1"));
        assertTrue(!Compression.acceptsGzip(null));
        assertTrue(!Compression.acceptsGzip("identity"));
        assertTrue(!Compression.acceptsGzip("gzip;q=0"));
        assertTrue(!Compression.acceptsGzip("gzip ; Q=0.0"));
        assertTrue(!Compression.acceptsGzip("*, gzip;q=0"));
        assertTrue(!Compression.acceptsGzip("br"));
    }

    @Test
    void badDocumentStill400() throws Exception {
        try (RawHttp http = connect()) {
            RawHttp.Response r = http.send(work("not json", "gzip"));
            assertEquals(400, r.status);
            String body = "gzip".equals(r.header("content-encoding")) ? new String(gunzip(r.body), StandardCharsets.UTF_8) : r.text();
            assertTrue(!body.isEmpty());
            // and the connection goes on, compressed and plain answers in turn
            assertEquals("gzip", http.send(work(DOC, "gzip")).header("content-encoding"));
            assertNull(http.send(work(DOC, null)).header("content-encoding"));
            assertEquals("OK", http.send(RawHttp.get("/blank")).text());
        }
    }

    /** Only /work: other answers stay as they are, whatever the request allows. */
    @Test
    void onlyWork() throws Exception {
        try (RawHttp http = connect()) {
            for (String path : new String[] {"/blank", "/echo/abc", "/nope"}) {
                RawHttp.Response r = http.send("GET " + path + " HTTP/1.1\r\nHost: test\r\nAccept-Encoding: gzip\r\n\r\n");
                assertNull(r.header("content-encoding"), path);
            }
        }
    }

    @Test
    void pipelinedMixOfCodings() throws Exception {
        try (RawHttp http = connect()) {
            http.write(work(DOC, "gzip") + RawHttp.get("/blank") + work(DOC, null) + work(DOC, "gzip"));
            RawHttp.Response a = http.read();
            assertEquals(JSON.readTree(ANSWER), JSON.readTree(gunzip(a.body)));
            assertEquals("OK", http.read().text());
            RawHttp.Response c = http.read();
            assertNull(c.header("content-encoding"));
            assertEquals(JSON.readTree(ANSWER), JSON.readTree(c.body));
            assertEquals(JSON.readTree(ANSWER), JSON.readTree(gunzip(http.read().body)));
        }
    }
}
