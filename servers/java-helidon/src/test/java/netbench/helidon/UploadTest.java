package netbench.helidon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.helidon.webserver.WebServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code POST /upload} over real connections. */
class UploadTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static WebServer server;

    @BeforeAll
    static void start() {
        server = Server.start("127.0.0.1", 0, Routes.Root.NOT_FOUND);
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    private static RawHttp connect() throws Exception {
        return new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()));
    }

    private static byte[] head(String framing) {
        return ("POST /upload HTTP/1.1\r\nHost: test\r\nContent-Type: application/octet-stream\r\n" + framing + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    private static byte[] chunked(byte[] body, int chunk) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(body.length + 64);
        for (int at = 0; at < body.length; at += chunk) {
            int n = Math.min(chunk, body.length - at);
            out.writeBytes((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body, at, n);
            out.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        return out.toByteArray();
    }

    private static void assertDigest(byte[] body, RawHttp.Response r) throws Exception {
        assertEquals(200, r.status);
        assertEquals("application/json", r.header("content-type"));
        JsonNode answer = JSON.readTree(r.body);
        assertEquals(2, answer.size(), r.text());
        assertTrue(answer.get("length").isIntegralNumber(), r.text());
        assertEquals(body.length, answer.get("length").longValue());
        assertEquals(HexFormat.of().formatHex(Upload.sha256().digest(body)), answer.get("sha256").textValue());
    }

    @Test
    void theContractsExample() throws Exception {
        try (RawHttp http = connect()) {
            http.write(concat(head("Content-Length: 1024"), new byte[1024]));
            RawHttp.Response r = http.read();
            assertEquals(200, r.status);
            assertEquals("{\"length\":1024,\"sha256\":\"5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef\"}", r.text());
        }
    }

    @Test
    void digestsOfManySizesOnOneConnection() throws Exception {
        Random random = new Random();
        try (RawHttp http = connect()) {
            for (int size : new int[] {1024, 1025, 65_537, 1_000_000, 8 * 1024 * 1024, 0}) {
                byte[] body = new byte[size];
                random.nextBytes(body);
                http.write(concat(head("Content-Length: " + size), body));
                assertDigest(body, http.read());
                // chunked, in uneven chunks
                http.write(concat(head("Transfer-Encoding: chunked"), chunked(body, 7_777)));
                assertDigest(body, http.read());
            }
            assertEquals("OK", http.send(RawHttp.get("/blank")).text());
        }
    }

    @Test
    void theLimitItselfIsRead() throws Exception {
        byte[] body = new byte[(int) Upload.LIMIT];
        try (RawHttp http = connect()) {
            http.write(concat(head("Content-Length: " + body.length), body));
            assertDigest(body, http.read());
        }
    }

    @Test
    void noAnswerBeforeTheBodyIsWhole() throws Exception {
        byte[] body = new byte[64 * 1024];
        new Random().nextBytes(body);
        try (RawHttp http = connect()) {
            http.write(concat(head("Content-Length: " + body.length), Arrays.copyOf(body, body.length - 1)));
            Thread.sleep(300);
            assertEquals(0, http.available(), "answered before the last byte was sent");
            http.write(new byte[] {body[body.length - 1]});
            assertDigest(body, http.read());
        }
    }

    /** 413 from the head, then the connection is closed: what follows is not another request. */
    @Test
    void tooLargeContentLength() throws Exception {
        for (long length : new long[] {Upload.LIMIT + 1, 10_000_000_000L}) {
            try (RawHttp http = connect()) {
                http.write(concat(head("Content-Length: " + length), new byte[64 * 1024]));
                RawHttp.Response r = http.read();
                assertEquals(413, r.status, "Content-Length " + length);
                assertEquals("close", r.header("connection"));
                assertTrue(http.closedByPeer(), "the connection stays open after the 413");
            }
        }
    }

    /** The 413 comes at once, with no body byte sent at all. */
    @Test
    void tooLargeWithoutBody() throws Exception {
        try (RawHttp http = connect()) {
            http.write(head("Content-Length: 10000000000"));
            assertEquals(413, http.read().status);
        }
    }

    @Test
    void chunkedBodyPastTheLimit() throws Exception {
        try (RawHttp http = connect()) {
            http.write(head("Transfer-Encoding: chunked"));
            Thread writer = new Thread(() -> {
                byte[] chunk = chunked(new byte[1024 * 1024], 1024 * 1024);
                byte[] oneChunk = Arrays.copyOf(chunk, chunk.length - 5); // without the last chunk
                try {
                    for (int i = 0; i < 20; i++) {
                        http.write(oneChunk);
                    }
                } catch (IOException e) {
                    // the server answered and closed while the body was still coming
                }
            });
            writer.start();
            RawHttp.Response r = http.read();
            assertEquals(413, r.status);
            writer.join(10_000);
        }
    }

    /** Helidon's routing answers another method on a known path as an unknown path. */
    @Test
    void onlyPost() throws Exception {
        try (RawHttp http = connect()) {
            assertEquals(404, http.send(RawHttp.get("/upload")).status);
        }
    }
}
