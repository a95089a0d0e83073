package netbench.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The server over real loopback connections on a free port. */
class ServerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String EXAMPLE = "{\n"
            + "  \"product\": \"WidgetPro-7\",\n"
            + "  \"requestId\": \"5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59\",\n"
            + "  \"group\": {\n"
            + "    \"kind\": \"retail\",\n"
            + "    \"default\": true,\n"
            + "    \"balance\": 1234.56,\n"
            + "    \"dates\": [\"2020-01-12T10:53:17.773Z\", \"2019-03-01T00:00:00.000Z\", \"2021-07-30T23:59:59.999Z\"]\n"
            + "  }\n"
            + "}\n";
    private static final String EXAMPLE_ANSWER = "{\"product\":\"WidgetPro-7\","
            + "\"requestId\":\"5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59\",\"client\":{\"balance\":1234.56,"
            + "\"minDate\":\"2019-03-01T00:00:00.000Z\",\"maxDate\":\"2021-07-30T23:59:59.999Z\"}}";

    private static Server server;
    private static Server blankRoot;
    private static Server workRoot;

    @BeforeAll
    static void start() throws Exception {
        InetSocketAddress any = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        server = Server.start(any, Handler.Root.NOT_FOUND);
        blankRoot = Server.start(any, Handler.Root.BLANK);
        workRoot = Server.start(any, Handler.Root.WORK);
    }

    @AfterAll
    static void stop() {
        server.stop();
        blankRoot.stop();
        workRoot.stop();
    }

    private static RawHttp connect(Server s) throws Exception {
        return new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), s.address().getPort()));
    }

    private static RawHttp.Response request(String raw) throws Exception {
        try (RawHttp http = connect(server)) {
            return http.send(raw);
        }
    }

    private static void assertFramedAndDated(RawHttp.Response r) {
        assertNotNull(r.header("content-length"), "Content-Length");
        assertEquals(r.body.length, Integer.parseInt(r.header("content-length")));
        String date = r.header("date");
        assertNotNull(date, "Date header");
        ZonedDateTime.parse(date, DateTimeFormatter.RFC_1123_DATE_TIME); // an IMF-fixdate
        assertTrue(date.endsWith(" GMT"), date);
    }

    @Test
    void blank() throws Exception {
        RawHttp.Response r = request(RawHttp.get("/blank"));
        assertEquals(200, r.status);
        assertEquals("text/plain", r.header("content-type"));
        assertEquals("2", r.header("content-length"));
        assertEquals("OK", r.text());
        assertFramedAndDated(r);
    }

    @Test
    void work() throws Exception {
        RawHttp.Response r = request(RawHttp.post("/work", EXAMPLE));
        assertEquals(200, r.status);
        assertEquals("application/json", r.header("content-type"));
        assertEquals(JSON.readTree(EXAMPLE_ANSWER), JSON.readTree(r.body));
        assertFramedAndDated(r);
    }

    @Test
    void workKeepsZeroMilliseconds() throws Exception {
        String doc = "{\"product\":\"a\",\"requestId\":\"b\",\"group\":{\"kind\":\"c\",\"default\":false,"
                + "\"balance\":-3.5,\"dates\":[\"2022-05-05T05:05:05.000Z\",\"2001-01-01T00:00:00.000Z\"]}}";
        RawHttp.Response r = request(RawHttp.post("/work", doc));
        assertEquals(200, r.status);
        String body = r.text();
        assertTrue(body.contains("\"minDate\":\"2001-01-01T00:00:00.000Z\""), body);
        assertTrue(body.contains("\"maxDate\":\"2022-05-05T05:05:05.000Z\""), body);
        assertEquals(-3.5, JSON.readTree(body).at("/client/balance").doubleValue());
    }

    @Test
    void workWithChunkedBody() throws Exception {
        byte[] doc = EXAMPLE.getBytes(StandardCharsets.UTF_8);
        int half = doc.length / 2;
        String chunked = "POST /work HTTP/1.1\r\nHost: test\r\nContent-Type: application/json; charset=utf-8\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n"
                + Integer.toHexString(half) + "\r\n" + new String(doc, 0, half, StandardCharsets.UTF_8) + "\r\n"
                + Integer.toHexString(doc.length - half) + "\r\n"
                + new String(doc, half, doc.length - half, StandardCharsets.UTF_8) + "\r\n0\r\n\r\n";
        RawHttp.Response r = request(chunked);
        assertEquals(200, r.status);
        assertEquals(JSON.readTree(EXAMPLE_ANSWER), JSON.readTree(r.body));
    }

    @Test
    void requestSplitAcrossWrites() throws Exception {
        String raw = RawHttp.post("/work", EXAMPLE);
        try (RawHttp http = connect(server)) {
            http.write(raw.substring(0, 7));
            Thread.sleep(50);
            http.write(raw.substring(7, 90));
            Thread.sleep(50);
            http.write(raw.substring(90));
            RawHttp.Response r = http.read();
            assertEquals(200, r.status);
            assertEquals(JSON.readTree(EXAMPLE_ANSWER), JSON.readTree(r.body));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "this is not JSON",
        "[1,2,3]",
        "{\"requestId\":\"r\",\"group\":{\"kind\":\"k\",\"default\":true,\"balance\":1,\"dates\":[\"2020-01-01T00:00:00.000Z\"]}}",
        "{\"product\":\"p\",\"requestId\":\"r\",\"group\":{\"kind\":\"k\",\"default\":\"yes\",\"balance\":1,\"dates\":[\"2020-01-01T00:00:00.000Z\"]}}",
        "{\"product\":\"p\",\"requestId\":\"r\",\"group\":{\"kind\":\"k\",\"default\":true,\"balance\":\"1\",\"dates\":[\"2020-01-01T00:00:00.000Z\"]}}",
        "{\"product\":\"p\",\"requestId\":\"r\",\"group\":{\"kind\":\"k\",\"default\":true,\"balance\":1,\"dates\":[]}}",
        "{\"product\":\"p\",\"requestId\":\"r\",\"group\":{\"kind\":\"k\",\"default\":true,\"balance\":1,\"dates\":[\"2020-13-45T99:00:00.000Z\"]}}",
        "{\"product\":\"p\",\"requestId\":\"r\",\"group\":{\"kind\":\"k\",\"default\":true,\"balance\":1,\"dates\":[\"yesterday\"]}}",
    })
    void badRequests(String body) throws Exception {
        RawHttp.Response r = request(RawHttp.post("/work", body));
        assertEquals(400, r.status, body);
        assertFramedAndDated(r);
    }

    @Test
    void echo() throws Exception {
        for (String text : new String[] {"abc-1.2_x~y", "a", "Z9"}) {
            RawHttp.Response r = request(RawHttp.get("/echo/" + text));
            assertEquals(200, r.status);
            assertEquals("text/plain", r.header("content-type"));
            assertEquals(text, r.text());
        }
        assertEquals("q", request(RawHttp.get("/echo/q?x=1&y=2")).text());
    }

    @Test
    void notFound() throws Exception {
        for (String path : new String[] {"/nope", "/", "/blank/x", "/echo", "/workx"}) {
            RawHttp.Response r = request(RawHttp.get(path));
            assertEquals(404, r.status, path);
            assertFramedAndDated(r);
        }
    }

    @Test
    void wrongMethod() throws Exception {
        assertEquals(405, request(RawHttp.get("/work")).status);
        assertEquals(405, request(RawHttp.post("/blank", "{}")).status);
    }

    @Test
    void dbWithoutDatabase() throws Exception {
        for (String path : new String[] {"/db?id=1", "/db/list?from=1", "/db?id=abc"}) {
            RawHttp.Response r = request(RawHttp.get(path));
            assertEquals(503, r.status, path);
            assertFramedAndDated(r);
        }
        assertEquals(405, request(RawHttp.post("/db?id=1", "{}")).status);
        assertEquals(404, request(RawHttp.get("/db/other")).status);
    }

    @Test
    void keepAlive() throws Exception {
        try (RawHttp http = connect(server)) {
            for (int i = 0; i < 100; i++) {
                RawHttp.Response r = i % 2 == 0 ? http.send(RawHttp.get("/blank")) : http.send(RawHttp.post("/work", EXAMPLE));
                assertEquals(200, r.status, "request " + i);
                if (i % 2 == 0) {
                    assertEquals("OK", r.text());
                } else {
                    assertEquals(JSON.readTree(EXAMPLE_ANSWER), JSON.readTree(r.body));
                }
            }
        }
    }

    @Test
    void connectionClose() throws Exception {
        try (RawHttp http = connect(server)) {
            RawHttp.Response r = http.send("GET /blank HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
            assertEquals("OK", r.text());
            assertTrue(http.closedByPeer());
        }
    }

    @Test
    void rootModes() throws Exception {
        try (RawHttp http = connect(blankRoot)) {
            RawHttp.Response r = http.send(RawHttp.get("/"));
            assertEquals(200, r.status);
            assertEquals("OK", r.text());
        }
        try (RawHttp http = connect(workRoot)) {
            RawHttp.Response r = http.send(RawHttp.post("/", EXAMPLE));
            assertEquals(200, r.status);
            assertEquals(JSON.readTree(EXAMPLE_ANSWER), JSON.readTree(r.body));
            assertEquals("OK", http.send(RawHttp.get("/blank")).text());
        }
    }
}
