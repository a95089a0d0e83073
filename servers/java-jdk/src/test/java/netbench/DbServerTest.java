package netbench;

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
import java.sql.Statement;
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
 * {@code /db}, {@code /db/list}, {@code /fortunes}, {@code /queries} and {@code /updates} against a real
 * PostgreSQL holding contract/db/schema.sql:
 * runs only when DATABASE_URL is set (scripts/pg-dev.sh start prints one), skipped otherwise.
 */
class DbServerTest {
    private static String databaseUrl;
    private static Server server;

    @BeforeAll
    static void start() throws Exception {
        databaseUrl = System.getenv("DATABASE_URL");
        if (databaseUrl != null && !databaseUrl.isEmpty()) {
            Db db = Db.open(databaseUrl, System.getenv("DATABASE_POOL_SIZE"));
            server = Server.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 2, Router.Root.NOT_FOUND, db);
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
                try (PreparedStatement st = c.prepareStatement("DELETE FROM fortune WHERE id = ?")) {
                    st.setInt(1, added.id());
                    st.executeUpdate();
                }
            }
        }
        assertEquals(FortunesTest.expected(FortunesTest.seeded()), FortunesTest.rows(fortunesPage()));
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

    // -- queries and updates ------------------------------------------------------

    /** contract/db/schema.sql's world table, as the runner puts it back after an updates cell. */
    private static final String RESEED = "UPDATE world SET randomnumber = 1 + (id * 7919 + 13) % 10000";
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static void execute(String sql) throws Exception {
        try (Connection c = connection(); Statement st = c.createStatement()) {
            st.executeUpdate(sql);
        }
    }

    /** The rows of a /queries or /updates answer, checked for the shape: exactly {id, randomNumber}, integers. */
    private static List<World.Row> worldRows(String path, int n) throws Exception {
        RawHttp.Response r = get(path);
        assertEquals(200, r.status, path + ": " + r.text());
        assertEquals("application/json", r.header("content-type"), path);
        JsonNode array = MAPPER.readTree(r.body);
        assertTrue(array.isArray(), path + ": " + r.text());
        assertEquals(n, array.size(), path);
        List<World.Row> rows = new ArrayList<>(n);
        for (JsonNode row : array) {
            assertEquals(2, row.size(), row.toString());
            assertTrue(row.path("id").isInt() && row.path("randomNumber").isInt(), row.toString());
            int id = row.get("id").intValue();
            int number = row.get("randomNumber").intValue();
            assertTrue(id >= 1 && id <= 10_000, row.toString());
            assertTrue(number >= 1 && number <= 10_000, row.toString());
            rows.add(new World.Row(id, number));
        }
        return rows;
    }

    @Test
    void queries() throws Exception {
        // The database is shared (with the other tests here, and in the
        // runner's conformance test with other servers' tests): start from
        // the seeded table rather than assume it.
        execute(RESEED);
        Set<Integer> ids = new HashSet<>();
        String[][] cases = {{"/queries?queries=1", "1"}, {"/queries?queries=5", "5"}, {"/queries?queries=20", "20"},
            {"/queries?queries=500", "500"}, {"/queries?queries=501", "500"}, {"/queries", "1"},
            {"/queries?queries=", "1"}, {"/queries?queries=foo", "1"}, {"/queries?queries=0", "1"}};
        for (String[] c : cases) {
            for (World.Row row : worldRows(c[0], Integer.parseInt(c[1]))) {
                assertEquals(WorldTest.seeded(row.id()), row.randomNumber(), c[0] + ": " + row);
                ids.add(row.id());
            }
        }
        assertTrue(ids.size() > 900, "random ids: " + ids.size() + " distinct of 1030");
    }

    /** Every row is read for the request: a change through another connection shows in the next answer. */
    @Test
    void queriesFollowTheTable() throws Exception {
        try {
            execute("UPDATE world SET randomnumber = 10001 - id");
            for (World.Row row : worldRows("/queries?queries=500", 500)) {
                assertEquals(10_001 - row.id(), row.randomNumber(), row.toString());
            }
        } finally {
            execute(RESEED);
        }
        for (World.Row row : worldRows("/queries?queries=20", 20)) {
            assertEquals(WorldTest.seeded(row.id()), row.randomNumber(), row.toString());
        }
    }

    /** What /updates answers is what the table holds afterwards (for an id drawn twice, either number). */
    @Test
    void updatesAreWritten() throws Exception {
        try {
            for (int n : new int[] {20, 1, 500}) {
                List<World.Row> rows = worldRows("/updates?queries=" + n, n);
                Map<Integer, Set<Integer>> answered = new HashMap<>();
                int changed = 0;
                for (World.Row row : rows) {
                    answered.computeIfAbsent(row.id(), k -> new HashSet<>()).add(row.randomNumber());
                    if (row.randomNumber() != WorldTest.seeded(row.id())) {
                        changed++;
                    }
                }
                assertTrue(changed >= n - 2, changed + " of " + n + " rows given a new number");
                try (Connection c = connection();
                        PreparedStatement st = c.prepareStatement("SELECT randomnumber FROM world WHERE id = ?")) {
                    for (Map.Entry<Integer, Set<Integer>> e : answered.entrySet()) {
                        st.setInt(1, e.getKey());
                        try (ResultSet rs = st.executeQuery()) {
                            assertTrue(rs.next());
                            int held = rs.getInt(1);
                            assertTrue(e.getValue().contains(held),
                                    "row " + e.getKey() + " holds " + held + ", answered " + e.getValue());
                        }
                    }
                }
                execute(RESEED);
            }
        } finally {
            execute(RESEED);
        }
    }

    @Test
    void updatesAreClamped() throws Exception {
        try {
            String[][] cases = {{"/updates", "1"}, {"/updates?queries=", "1"}, {"/updates?queries=foo", "1"},
                {"/updates?queries=0", "1"}, {"/updates?queries=5", "5"}, {"/updates?queries=501", "500"}};
            for (String[] c : cases) {
                worldRows(c[0], Integer.parseInt(c[1]));
            }
        } finally {
            execute(RESEED);
        }
    }

    /** Concurrent updates of overlapping rows neither deadlock nor fail. */
    @Test
    void concurrentUpdates() throws Exception {
        try {
            List<Thread> threads = new ArrayList<>();
            List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
            for (int t = 0; t < 4; t++) {
                Thread thread = new Thread(() -> {
                    try {
                        for (int k = 0; k < 5; k++) {
                            worldRows("/updates?queries=500", 500);
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                });
                threads.add(thread);
                thread.start();
            }
            for (Thread thread : threads) {
                thread.join();
            }
            assertEquals(List.of(), failures);
        } finally {
            execute(RESEED);
        }
    }
}
