package netbench.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code /db}, {@code /db/list}, {@code /fortunes}, {@code /queries} and {@code /updates} against a real PostgreSQL holding contract/db/schema.sql:
 * runs only when DATABASE_URL is set (scripts/pg-dev.sh start prints one), skipped otherwise.
 */
class DbServerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static String databaseUrl;
    private static Server server;

    @BeforeAll
    static void start() throws Exception {
        databaseUrl = System.getenv("DATABASE_URL");
        if (databaseUrl != null && !databaseUrl.isEmpty()) {
            Db db = Db.open(databaseUrl, System.getenv("DATABASE_POOL_SIZE"));
            server = Server.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Handler.Root.NOT_FOUND, db);
        }
    }

    /** Per test rather than in start(), so that each shows as skipped in the report. */
    @BeforeEach
    void needsDatabase() {
        assumeTrue(server != null, "DATABASE_URL is not set");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.stop();
        }
    }

    private static RawHttp.Response get(String path) throws Exception {
        try (RawHttp http = new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.address().getPort()))) {
            return http.send(RawHttp.get(path));
        }
    }

    private static String row(int i) {
        return new String(Db.render(DbPureTest.seeded(i)), StandardCharsets.UTF_8);
    }

    private static String rows(int from, int to) {
        List<String> all = new ArrayList<>();
        for (int i = from; i <= to; i++) {
            all.add(row(i));
        }
        return "[" + String.join(",", all) + "]";
    }

    @Test
    void rows() throws Exception {
        List<Integer> ids = new ArrayList<>(List.of(1, 2, 100, 9999, 10000));
        Random random = new Random();
        for (int k = 0; k < 20; k++) {
            ids.add(1 + random.nextInt(10000));
        }
        for (int id : ids) {
            RawHttp.Response r = get("/db?id=" + id);
            assertEquals(200, r.status, "id " + id);
            assertEquals("application/json", r.header("content-type"));
            assertEquals(row(id), r.text(), "id " + id);
        }
        assertEquals(DbPureTest.ROW_1, get("/db?id=1").text());
    }

    @Test
    void lists() throws Exception {
        RawHttp.Response r = get("/db/list?from=42");
        assertEquals(200, r.status);
        assertEquals("application/json", r.header("content-type"));
        assertEquals(rows(42, 141), r.text());
        assertEquals(rows(7, 7), get("/db/list?from=7&count=1").text());
        assertEquals(rows(9999, 10000), get("/db/list?from=9999&count=5").text());
        assertEquals("[]", get("/db/list?from=10001").text());
        assertEquals(rows(1, 1000), get("/db/list?from=0&count=1000").text());
    }

    @Test
    void errors() throws Exception {
        for (String path : new String[] {"/db?id=0", "/db?id=10001", "/db?id=2147483647"}) {
            assertEquals(404, get(path).status, path);
        }
        for (String path : new String[] {"/db?id=abc", "/db?id=1.5", "/db?id=", "/db", "/db?id=2147483648",
            "/db/list?from=1&count=0", "/db/list?from=1&count=1001", "/db/list", "/db/list?from=x"}) {
            assertEquals(400, get(path).status, path);
        }
    }

    /** The query runs off the event loop, yet pipelined answers keep the order of their requests. */
    @Test
    void pipelinedAnswersKeepTheirOrder() throws Exception {
        try (RawHttp http = new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.address().getPort()))) {
            http.write(RawHttp.get("/db?id=1") + RawHttp.get("/blank") + RawHttp.get("/db/list?from=3&count=2")
                    + RawHttp.get("/echo/x") + RawHttp.get("/db?id=abc") + RawHttp.get("/db?id=0") + RawHttp.get("/db?id=2")
                    + RawHttp.get("/db?id=3"));
            assertEquals(DbPureTest.ROW_1, http.read().text());
            assertEquals("OK", http.read().text());
            assertEquals(rows(3, 4), http.read().text());
            assertEquals("x", http.read().text());
            assertEquals(400, http.read().status);
            assertEquals(404, http.read().status);
            assertEquals(row(2), http.read().text());
            assertEquals(row(3), http.read().text());
            // and the connection reads again afterwards
            assertEquals(row(5), http.send(RawHttp.get("/db?id=5")).text());
            assertEquals("OK", http.send(RawHttp.get("/blank")).text());
        }
    }

    @Test
    void connectionClose() throws Exception {
        try (RawHttp http = new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.address().getPort()))) {
            RawHttp.Response r = http.send("GET /db?id=9 HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
            assertEquals(row(9), r.text());
            assertTrue(http.closedByPeer());
        }
    }

    /** Every answer is read from the table: a row changed through another connection shows at once. */
    @Test
    void followsTheDatabase() throws Exception {
        try (Connection c = connection()) {
            try (PreparedStatement st = c.prepareStatement(
                    "UPDATE items SET name = 'changed', price = 12.30, updated = '2030-06-07T08:09:10Z' WHERE id = 4242")) {
                st.executeUpdate();
            }
            try {
                String body = get("/db?id=4242").text();
                assertTrue(body.contains("\"name\":\"changed\""), body);
                assertTrue(body.contains("\"price\":12.30"), body);
                assertTrue(body.contains("\"updated\":\"2030-06-07T08:09:10.000Z\""), body);
                assertTrue(get("/db/list?from=4242&count=1").text().contains("\"name\":\"changed\""));
            } finally {
                try (PreparedStatement st = c.prepareStatement(
                        "UPDATE items SET name = 'item-4242', price = ((4242 * 7919) % 100000) / 100.0,"
                                + " updated = timestamptz '2020-01-01 00:00:00+00' + (4242::bigint * 1234567) * interval '1 millisecond'"
                                + " WHERE id = 4242")) {
                    st.executeUpdate();
                }
            }
        }
        assertEquals(row(4242), get("/db?id=4242").text());
    }

    /** A connection of the test's own, beside the server's pool. */
    private static Connection connection() throws Exception {
        Db.ConnectionInfo info = Db.ConnectionInfo.parse(databaseUrl);
        Properties props = new Properties();
        if (info.user() != null) {
            props.setProperty("user", info.user());
        }
        if (info.password() != null) {
            props.setProperty("password", info.password());
        }
        return DriverManager.getConnection(info.jdbcUrl(), props);
    }

    private static void execute(Connection c, String sql) throws Exception {
        try (PreparedStatement st = c.prepareStatement(sql)) {
            st.executeUpdate();
        }
    }

    /** contract/db/schema.sql's world table, as seeded. */
    private static void reseedWorld(Connection c) throws Exception {
        execute(c, "UPDATE world SET randomnumber = 1 + (id * 7919 + 13) % 10000");
    }

    private static String fortunesPage() throws Exception {
        RawHttp.Response r = get("/fortunes");
        assertEquals(200, r.status);
        assertEquals("text/html; charset=utf-8", r.header("content-type"));
        return r.text();
    }

    @Test
    void fortunes() throws Exception {
        for (int i = 0; i < 2; i++) {
            String page = fortunesPage();
            assertFalse(page.contains("<script>"), page);
            assertEquals(FortunesTest.expected(FortunesTest.seeded()), FortunesTest.rows(page));
        }
    }

    /** The table is read for every page: a row of markup added through another connection shows, escaped. */
    @Test
    void fortunesFollowTheTable() throws Exception {
        Fortune added = new Fortune(424242, "netbench test: <b>bold</b> & \"quoted\" 'too' </td></tr> &amp;");
        try (Connection c = connection()) {
            try (PreparedStatement st = c.prepareStatement("INSERT INTO fortune (id, message) VALUES (?, ?)")) {
                st.setInt(1, added.id());
                st.setString(2, added.message());
                st.executeUpdate();
            }
            try {
                List<Fortune> read = new ArrayList<>(FortunesTest.seeded());
                read.add(added);
                assertEquals(FortunesTest.expected(read), FortunesTest.rows(fortunesPage()));
            } finally {
                execute(c, "DELETE FROM fortune WHERE id = 424242");
            }
        }
        assertEquals(FortunesTest.expected(FortunesTest.seeded()), FortunesTest.rows(fortunesPage()));
    }

    /** The rows of a /queries or /updates answer: exactly two integer keys each. */
    private static List<World> worldRows(RawHttp.Response r, int n) throws Exception {
        assertEquals(200, r.status, r.text());
        assertEquals("application/json", r.header("content-type"));
        JsonNode array = JSON.readTree(r.body);
        assertTrue(array.isArray(), r.text());
        assertEquals(n, array.size(), r.text());
        List<World> rows = new ArrayList<>();
        for (JsonNode row : array) {
            assertEquals(2, row.size(), row.toString());
            assertTrue(row.get("id").isInt() && row.get("randomNumber").isInt(), row.toString());
            int id = row.get("id").intValue();
            assertTrue(id >= 1 && id <= World.ROWS, row.toString());
            rows.add(new World(id, row.get("randomNumber").intValue()));
        }
        return rows;
    }

    @Test
    void queries() throws Exception {
        // The database is shared (with the other tests here, and in the
        // runner's conformance test with other servers' tests): start from
        // the seeded table rather than assume it.
        try (Connection c = connection()) {
            reseedWorld(c);
        }
        Set<Integer> ids = new HashSet<>();
        for (int n : new int[] {1, 5, 20, 20, 500}) {
            for (World w : worldRows(get("/queries?queries=" + n), n)) {
                assertEquals(WorldTest.seeded(w.id()), w.randomNumber(), "row " + w.id());
                ids.add(w.id());
            }
        }
        assertTrue(ids.size() > 400, ids.size() + " distinct ids: not random");
    }

    @Test
    void queriesClamped() throws Exception {
        for (String q : new String[] {"", "?queries=", "?queries=foo", "?queries=0", "?queries=-1"}) {
            worldRows(get("/queries" + q), 1);
            worldRows(get("/updates" + q), 1);
        }
        worldRows(get("/queries?queries=501"), 500);
    }

    /** Each row is read for the request: every row changed through another connection shows at once. */
    @Test
    void queriesFollowTheTable() throws Exception {
        try (Connection c = connection()) {
            execute(c, "UPDATE world SET randomnumber = 10001 - randomnumber");
            try {
                for (World w : worldRows(get("/queries?queries=500"), 500)) {
                    assertEquals(10001 - WorldTest.seeded(w.id()), w.randomNumber(), "row " + w.id());
                }
            } finally {
                reseedWorld(c);
            }
        }
    }

    /** What /updates answers is what the table holds afterwards. */
    @Test
    void updatesWritten() throws Exception {
        try (Connection c = connection()) {
            try {
                for (int round = 0; round < 3; round++) {
                    List<World> answered = worldRows(get("/updates?queries=20"), 20);
                    Map<Integer, Set<Integer>> numbers = new HashMap<>();
                    for (World w : answered) {
                        assertTrue(w.randomNumber() >= 1 && w.randomNumber() <= World.ROWS, w.toString());
                        numbers.computeIfAbsent(w.id(), k -> new HashSet<>()).add(w.randomNumber());
                    }
                    int changed = 0;
                    try (PreparedStatement st = c.prepareStatement("SELECT randomnumber FROM world WHERE id = ?")) {
                        for (Map.Entry<Integer, Set<Integer>> e : numbers.entrySet()) {
                            st.setInt(1, e.getKey());
                            try (ResultSet rs = st.executeQuery()) {
                                assertTrue(rs.next());
                                int held = rs.getInt(1);
                                assertTrue(e.getValue().contains(held), "row " + e.getKey() + " holds " + held + ", answered " + e.getValue());
                                if (round == 0 && held != WorldTest.seeded(e.getKey())) {
                                    changed++;
                                }
                            }
                        }
                    }
                    if (round == 0) {
                        assertTrue(changed >= numbers.size() - 2, changed + " of " + numbers.size() + " rows changed");
                    }
                }
            } finally {
                reseedWorld(c);
            }
        }
    }

    /** Concurrent updates of many rows do not deadlock each other (the batch goes in id order). */
    @Test
    void concurrentUpdates() throws Exception {
        try (Connection c = connection()) {
            try {
                List<Thread> threads = new ArrayList<>();
                List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
                for (int t = 0; t < 8; t++) {
                    Thread thread = new Thread(() -> {
                        try (RawHttp http = new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.address().getPort()))) {
                            for (int i = 0; i < 5; i++) {
                                worldRows(http.send(RawHttp.get("/updates?queries=500")), 500);
                            }
                        } catch (Throwable e) {
                            failures.add(e);
                        }
                    });
                    threads.add(thread);
                    thread.start();
                }
                for (Thread thread : threads) {
                    thread.join(60_000);
                }
                assertTrue(failures.isEmpty(), failures.toString());
            } finally {
                reseedWorld(c);
            }
        }
    }

    /** Pipelined requests to every database path keep their order, with others between them. */
    @Test
    void pipelinedAcrossTheParts() throws Exception {
        try (RawHttp http = new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.address().getPort()))) {
            http.write(RawHttp.get("/fortunes") + RawHttp.get("/queries?queries=3") + RawHttp.get("/blank")
                    + RawHttp.get("/db?id=7") + RawHttp.get("/queries?queries=2") + RawHttp.get("/echo/z"));
            assertEquals(FortunesTest.expected(FortunesTest.seeded()), FortunesTest.rows(http.read().text()));
            worldRows(http.read(), 3);
            assertEquals("OK", http.read().text());
            assertEquals(row(7), http.read().text());
            worldRows(http.read(), 2);
            assertEquals("z", http.read().text());
        }
    }
}
