package netbench.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code /db} and {@code /db/list} against a real PostgreSQL holding contract/db/schema.sql:
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
        Db.ConnectionInfo info = Db.ConnectionInfo.parse(databaseUrl);
        Properties props = new Properties();
        if (info.user() != null) {
            props.setProperty("user", info.user());
        }
        if (info.password() != null) {
            props.setProperty("password", info.password());
        }
        try (Connection c = DriverManager.getConnection(info.jdbcUrl(), props)) {
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
}
