package netbench.helidon;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.webserver.WebServer;
import java.io.ByteArrayInputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** app: {@code GET /app?page=K} and {@code POST /app/logout} over real connections. */
class AppTest {
    private static final Path CONTRACT_APP = Path.of("../../contract/app");
    private static final Pattern CELL = Pattern.compile("<td>(.*?)</td>", Pattern.DOTALL);
    private static final Pattern COOKIE = Pattern.compile("sid=([0-9A-Za-z_-]{16,128});.*");
    private static String css;
    private static String js;
    private static WebServer server;
    private static WebServer withoutFiles;

    @BeforeAll
    static void start() throws Exception {
        css = Files.readString(CONTRACT_APP.resolve("app.css"));
        js = Files.readString(CONTRACT_APP.resolve("app.js"));
        server = Server.start("127.0.0.1", 0, Routes.Root.NOT_FOUND);
        withoutFiles = Server.start("127.0.0.1", 0, Routes.Root.NOT_FOUND, null, null, App.none());
    }

    @AfterAll
    static void stop() {
        server.stop();
        withoutFiles.stop();
    }

    private static RawHttp connect(WebServer s) throws Exception {
        return new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), s.port()));
    }

    private static String get(String target, String cookie, String acceptEncoding) {
        return "GET " + target + " HTTP/1.1\r\nHost: test\r\n"
                + (cookie == null ? "" : "Cookie: " + cookie + "\r\n")
                + (acceptEncoding == null ? "" : "Accept-Encoding: " + acceptEncoding + "\r\n") + "\r\n";
    }

    private static String logout(String cookie) {
        return "POST /app/logout HTTP/1.1\r\nHost: test\r\n"
                + (cookie == null ? "" : "Cookie: " + cookie + "\r\n") + "Content-Length: 0\r\n\r\n";
    }

    /** The {@code sid=<id>} a new session's answer sets. */
    private static String cookieSet(RawHttp.Response r) {
        String set = r.header("set-cookie");
        assertNotNull(set, "a new session sets its cookie");
        Matcher m = COOKIE.matcher(set);
        assertTrue(m.matches(), set);
        return "sid=" + m.group(1);
    }

    /** The page's cells, decoded as the contract reads them back. */
    private static List<String> cells(String page) {
        List<String> cells = new ArrayList<>();
        Matcher m = CELL.matcher(page);
        while (m.find()) {
            assertFalse(m.group(1).contains("<"), "a raw < in a cell: " + m.group(1));
            cells.add(FortunesTest.decode(m.group(1)).trim());
        }
        return cells;
    }

    private static long visits(RawHttp.Response r) {
        assertEquals(200, r.status, r.text());
        return Long.parseLong(cells(r.text()).get(1));
    }

    private static long since(RawHttp.Response r) {
        return Long.parseLong(cells(r.text()).get(3));
    }

    /** The formula of CONTRACT.md's app section, written out here rather than taken from App. */
    private static List<String> expectedItems(int k) {
        String[] labels = {"Tom & Jerry's cheese board", "<b>bold</b> move of the week", "\"Quoted\" goods, boxed",
            "O'Brien's pick for winter", "a < b > c, the ordered set"};
        List<String> cells = new ArrayList<>();
        for (int i = 1; i <= 50; i++) {
            long q = (k * 7L + i * 13L) % 100 + 1;
            long c = (k * 7919L + i * 104729L) % 100000;
            cells.add(Long.toString((k - 1L) * 50 + i));
            cells.add(labels[(k + i) % 5] + ", no. " + k + "." + i);
            cells.add(Long.toString(q));
            cells.add(String.format("%d.%02d", c / 100, c % 100));
            cells.add(String.format("%d.%02d", q * c / 100, q * c % 100));
        }
        return cells;
    }

    @Test
    void visitsCountOnOneSessionWithOneSetCookie() throws Exception {
        try (RawHttp http = connect(server)) {
            long before = System.currentTimeMillis();
            RawHttp.Response first = http.send(get("/app?page=1", null, null));
            long after = System.currentTimeMillis();
            assertEquals(1, visits(first));
            String cookie = cookieSet(first);
            assertTrue(first.header("set-cookie").contains("Path=/"));
            long since = since(first);
            assertTrue(since >= before && since <= after, since + " not within " + before + ".." + after);
            for (int n = 2; n <= 3; n++) {
                RawHttp.Response r = http.send(get("/app?page=" + n, cookie, null));
                assertEquals(n, visits(r));
                assertEquals(since, since(r));
                assertNull(r.header("set-cookie"), "only the answer that made the session sets a cookie");
            }
        }
    }

    @Test
    void twoSessionsApart() throws Exception {
        try (RawHttp a = connect(server); RawHttp b = connect(server)) {
            RawHttp.Response a1 = a.send(get("/app?page=5", null, null));
            RawHttp.Response b1 = b.send(get("/app?page=5", null, null));
            String ca = cookieSet(a1);
            String cb = cookieSet(b1);
            assertNotEquals(ca, cb);
            assertEquals(1, visits(a1));
            assertEquals(1, visits(b1));
            assertEquals(2, visits(a.send(get("/app?page=6", ca, null))));
            assertEquals(3, visits(a.send(get("/app?page=7", ca, null))));
            assertEquals(2, visits(b.send(get("/app?page=8", cb, null))));
            assertEquals(4, visits(a.send(get("/app?page=9", ca, null))));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4711, 99_999, 100_000})
    void theRowsAreTheFormulas(int k) throws Exception {
        try (RawHttp http = connect(server)) {
            RawHttp.Response r = http.send(get("/app?page=" + k, null, null));
            assertEquals(200, r.status);
            assertTrue(r.header("content-type").startsWith("text/html"), r.header("content-type"));
            assertEquals("no-store", r.header("cache-control"));
            List<String> cells = cells(r.text());
            assertEquals(4 + 250, cells.size());
            assertEquals(List.of("visits", "1", "since"), cells.subList(0, 3));
            assertEquals(expectedItems(k), cells.subList(4, cells.size()));
            assertTrue(r.text().contains("<title>Orders, page " + k + "</title>"));
            assertTrue(r.text().contains("<h1>Orders, page " + k + "</h1>"));
        }
    }

    @Test
    void theLabelsAreEscaped() throws Exception {
        try (RawHttp http = connect(server)) {
            String page = http.send(get("/app?page=4711", null, null)).text();
            assertFalse(page.contains("<b>"), "markup in a label came through");
            assertFalse(page.contains("Tom & Jerry"));
            assertFalse(page.contains("a < b"));
            assertTrue(page.contains("Tom &amp; Jerry"), page);
            assertTrue(page.contains("&lt;b&gt;bold&lt;/b&gt;"), page);
            assertTrue(page.contains("&quot;Quoted&quot;"), page);
        }
    }

    @Test
    void theStylesheetAndScriptByteForByte() throws Exception {
        try (RawHttp http = connect(server)) {
            String page = http.send(get("/app?page=3", null, null)).text();
            assertTrue(page.contains("<style>\n" + css + "</style>"), "app.css is not in the page as it is");
            assertTrue(page.contains("<script>\n" + js + "</script>"), "app.js is not in the page as it is");
            assertTrue(page.length() > 9000 && page.length() < 14000, "about 10 KB: " + page.length());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8, *;q=0.1"})
    void gzipWhenAllowed(String acceptEncoding) throws Exception {
        try (RawHttp http = connect(server)) {
            RawHttp.Response r = http.send(get("/app?page=12", null, acceptEncoding));
            assertEquals(200, r.status);
            assertEquals("gzip", r.header("content-encoding"));
            assertEquals("Accept-Encoding", r.header("vary"));
            byte[] plain;
            try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(r.body))) {
                plain = in.readAllBytes();
            }
            String page = new String(plain, StandardCharsets.UTF_8);
            List<String> cells = cells(page);
            assertEquals("1", cells.get(1));
            assertEquals(expectedItems(12), cells.subList(4, cells.size()));
            assertTrue(page.contains(css) && page.contains(js));
            // The same session's next page, plain this time, is the same page but for visits.
            RawHttp.Response next = http.send(get("/app?page=12", cookieSet(r), null));
            assertArrayEquals(plain, next.text().replace("<td>visits</td><td>2</td>", "<td>visits</td><td>1</td>")
                    .getBytes(StandardCharsets.UTF_8));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "identity", "br", "gzip;q=0", "*;q=0"})
    void plainOtherwise(String acceptEncoding) throws Exception {
        try (RawHttp http = connect(server)) {
            RawHttp.Response r = http.send(get("/app?page=12", null, acceptEncoding.isEmpty() ? null : acceptEncoding));
            assertEquals(200, r.status);
            assertNull(r.header("content-encoding"));
            assertEquals("Accept-Encoding", r.header("vary"));
            assertEquals(expectedItems(12), cells(r.text()).subList(4, 254));
        }
    }

    /** 8 connections x 25 pages on one session: each count from 2 to 201 seen once. */
    @Test
    void oneSessionLockedAcrossConnections() throws Exception {
        String cookie;
        try (RawHttp http = connect(server)) {
            RawHttp.Response first = http.send(get("/app?page=1", null, null));
            assertEquals(1, visits(first));
            cookie = cookieSet(first);
        }
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<List<Long>>> runs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int page = t + 1;
                runs.add(pool.submit(() -> {
                    List<Long> seen = new ArrayList<>();
                    try (RawHttp http = connect(server)) {
                        for (int n = 0; n < 25; n++) {
                            RawHttp.Response r = http.send(get("/app?page=" + page, cookie, "gzip"));
                            assertNull(r.header("set-cookie"));
                            byte[] plain;
                            try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(r.body))) {
                                plain = in.readAllBytes();
                            }
                            seen.add(Long.parseLong(cells(new String(plain, StandardCharsets.UTF_8)).get(1)));
                        }
                    }
                    return seen;
                }));
            }
            Set<Long> all = new HashSet<>();
            for (Future<List<Long>> run : runs) {
                for (long v : run.get()) {
                    assertTrue(all.add(v), "visits " + v + " seen twice");
                }
            }
            Set<Long> expected = new HashSet<>();
            for (long v = 2; v <= 201; v++) {
                expected.add(v);
            }
            assertEquals(expected, all);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void logoutThenANewSession() throws Exception {
        try (RawHttp http = connect(server)) {
            RawHttp.Response first = http.send(get("/app?page=1", null, null));
            String cookie = cookieSet(first);
            assertEquals(2, visits(http.send(get("/app?page=1", cookie, null))));
            RawHttp.Response out = http.send(logout(cookie));
            assertEquals(200, out.status);
            // The browser's cookie is cleared too: same name and path, no value.
            String cleared = out.header("set-cookie");
            assertTrue(cleared.startsWith("sid=;") && cleared.contains("Path=/"), cleared);
            RawHttp.Response again = http.send(get("/app?page=1", cookie, null));
            assertEquals(1, visits(again));
            assertNotEquals(cookie, cookieSet(again));
            // Without a cookie, with a dead one, twice: still 200.
            assertEquals(200, http.send(logout(null)).status);
            assertEquals(200, http.send(logout(cookie)).status);
            assertEquals(200, http.send(logout(cookie)).status);
        }
    }

    @Test
    void aMadeUpCookieGetsANewId() throws Exception {
        try (RawHttp http = connect(server)) {
            String made = "sid=00112233445566778899aabbccddeeff";
            RawHttp.Response r = http.send(get("/app?page=1", "theme=dark; " + made + "; lang=en", null));
            assertEquals(1, visits(r));
            assertNotEquals(made, cookieSet(r));
            // The real id found among other cookies.
            String cookie = cookieSet(r);
            assertEquals(2, visits(http.send(get("/app?page=1", "theme=dark; " + cookie + "; lang=en", null))));
        }
    }

    @Test
    void twentySessionsTwentyIds() throws Exception {
        Set<String> ids = new HashSet<>();
        try (RawHttp http = connect(server)) {
            for (int n = 0; n < 20; n++) {
                ids.add(cookieSet(http.send(get("/app?page=1", null, null))));
            }
        }
        assertEquals(20, ids.size());
    }

    @ParameterizedTest
    @ValueSource(strings = {"/app?page=0", "/app?page=100001", "/app?page=abc", "/app?page=", "/app", "/app?p=1",
        "/app?page=-1", "/app?page=1.5", "/app?page=+1", "/app?page=99999999999", "/app?page=%201"})
    void badPagesAre400AndLeaveTheSession(String target) throws Exception {
        try (RawHttp http = connect(server)) {
            String cookie = cookieSet(http.send(get("/app?page=1", null, null)));
            RawHttp.Response r = http.send(get(target, cookie, "gzip"));
            assertEquals(400, r.status, target);
            assertNull(r.header("set-cookie"));
            assertEquals(2, visits(http.send(get("/app?page=1", cookie, null))));
        }
    }

    @Test
    void otherMethodsAndNoFiles() throws Exception {
        try (RawHttp http = connect(server)) {
            // Helidon answers a known path with another method 404, as every other path here.
            assertEquals(404, http.send(RawHttp.post("/app?page=1", "{}")).status);
            assertEquals(404, http.send(get("/app/logout", null, null)).status);
            assertEquals(404, http.send(get("/app/other", null, null)).status);
        }
        try (RawHttp http = connect(withoutFiles)) {
            assertEquals(503, http.send(get("/app?page=1", null, null)).status);
        }
    }

    @Test
    void money() {
        assertEquals("0.05", App.money(5));
        assertEquals("999.99", App.money(99_999));
        assertEquals("0.00", App.money(0));
        assertEquals("1.10", App.money(110));
        assertEquals("99999.00", App.money(9_999_900));
    }
}
