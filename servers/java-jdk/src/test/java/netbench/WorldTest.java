package netbench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** queries and updates without a database: the clamping of N, the random ids, the answer's JSON. */
class WorldTest {
    /** randomNumber of world row {@code id} as contract/db/schema.sql seeds it. */
    static int seeded(int id) {
        return 1 + (id * 7919 + 13) % 10000;
    }

    @ParameterizedTest
    @CsvSource({"queries=1,1", "queries=5,5", "queries=20,20", "queries=499,499", "queries=500,500",
        "queries=501,500", "queries=10000,500", "queries=2147483648,500", "queries=99999999999999999999,500",
        "queries=007,7", "x=3&queries=12,12", "queries=12&queries=3,12", "queries=%32,2"})
    void counts(String query, int n) {
        assertEquals(n, World.queries(query), query);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "queries", "queries=", "queries=0", "queries=-1", "queries=-600", "queries=-",
        "queries=foo", "queries=1.5", "queries=+5", "queries=1e3", "queries= 5", "queries=5x", "queries=%zz",
        "queries=\u0665", "query=5", "xqueries=5"})
    void clampedToOne(String query) {
        assertEquals(1, World.queries(query), query);
    }

    @Test
    void noQueryString() {
        assertEquals(1, World.queries(null));
    }

    @Test
    void randomIsFromOneToTenThousand() {
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 200_000; i++) {
            int r = World.random();
            assertTrue(r >= 1 && r <= 10_000, "drawn " + r);
            seen.add(r);
        }
        assertTrue(seen.contains(1) && seen.contains(10_000), "the ends are drawn too");
        assertTrue(seen.size() > 9_900, "about every value is drawn: " + seen.size());
    }

    @Test
    void json() {
        assertEquals("[]", new String(World.render(new World.Row[0]), StandardCharsets.UTF_8));
        assertEquals("[{\"id\":4174,\"randomNumber\":331}]",
                new String(World.render(new World.Row[] {new World.Row(4174, 331)}), StandardCharsets.UTF_8));
        assertEquals("[{\"id\":1,\"randomNumber\":7933},{\"id\":10000,\"randomNumber\":14}]",
                new String(World.render(new World.Row[] {new World.Row(1, seeded(1)), new World.Row(10000, seeded(10000))}),
                        StandardCharsets.UTF_8));
    }

    @Test
    void withoutDatabase() throws Exception {
        Server server = Server.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1, Router.Root.NOT_FOUND);
        try (RawHttp http = new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.address().getPort()))) {
            assertEquals(503, http.send(RawHttp.get("/queries?queries=5")).status);
            assertEquals(503, http.send(RawHttp.get("/updates")).status);
            assertEquals(405, http.send(RawHttp.post("/queries", "{}")).status);
            assertEquals(404, http.send(RawHttp.get("/queries/1")).status);
        } finally {
            server.stop();
        }
    }
}
