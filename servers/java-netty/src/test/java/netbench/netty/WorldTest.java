package netbench.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** queries and updates without a database: the parameter's clamp, the random ids, the answer's shape. */
class WorldTest {
    /** contract/db/schema.sql: the seeded random number of row {@code id}. */
    static int seeded(int id) {
        return 1 + (id * 7919 + 13) % 10000;
    }

    @Test
    void clampedAsTechEmpowerDoes() {
        assertEquals(1, World.count(""));
        assertEquals(1, World.count(null));
        assertEquals(1, World.count("queries"));
        assertEquals(1, World.count("queries="));
        assertEquals(1, World.count("queries=foo"));
        assertEquals(1, World.count("queries=0"));
        assertEquals(1, World.count("queries=-5"));
        assertEquals(1, World.count("queries=1.5"));
        assertEquals(1, World.count("queries=%zz"));
        assertEquals(1, World.count("queries=99999999999")); // not a 32-bit integer: not an integer, as parseInt says
        assertEquals(1, World.count("other=20"));
        assertEquals(1, World.count("queries=1"));
        assertEquals(20, World.count("queries=20"));
        assertEquals(20, World.count("x=1&queries=20"));
        assertEquals(500, World.count("queries=500"));
        assertEquals(500, World.count("queries=501"));
        assertEquals(500, World.count("queries=2147483647"));
    }

    @Test
    void randomIdsCoverTheTable() {
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 200_000; i++) {
            int id = World.random();
            assertTrue(id >= 1 && id <= World.ROWS, Integer.toString(id));
            seen.add(id);
        }
        assertTrue(seen.contains(1) && seen.contains(World.ROWS), "both ends drawn");
        assertTrue(seen.size() > 9_900, seen.size() + " distinct ids");
    }

    @Test
    void answer() {
        assertEquals("[{\"id\":4174,\"randomNumber\":331},{\"id\":1,\"randomNumber\":7933}]",
                new String(World.render(new World[] {new World(4174, 331), new World(1, seeded(1))}), StandardCharsets.UTF_8));
        assertEquals("[]", new String(World.render(new World[0]), StandardCharsets.UTF_8));
    }

    @Test
    void withoutDatabase() throws Exception {
        Server server = Server.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Handler.Root.NOT_FOUND);
        try (RawHttp http = new RawHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.address().getPort()))) {
            for (String path : new String[] {"/queries", "/queries?queries=5", "/updates?queries=foo"}) {
                assertEquals(503, http.send(RawHttp.get(path)).status, path);
            }
            assertEquals(405, http.send(RawHttp.post("/queries", "{}")).status);
            assertEquals(405, http.send(RawHttp.post("/updates", "{}")).status);
        } finally {
            server.stop();
        }
    }
}
