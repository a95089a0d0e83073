package netbench.helidon;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code queries=N} clamped as TechEmpower does, and the answer's JSON, without a database. */
class WorldTest {
    @ParameterizedTest
    @CsvSource(nullValues = "NULL", value = {
        "NULL, 1", "'', 1", "foo, 1", "0, 1", "-5, 1", "1, 1", "5, 5", "20, 20", "500, 500", "501, 500",
        "99999999999, 500", "-99999999999, 1", "1.5, 1", "+5, 1", "5x, 1", "-, 1"})
    void count(String value, int expected) {
        assertEquals(expected, World.count(value), value);
    }

    @Test
    void json() {
        assertEquals("[]", new String(World.json(List.of()), StandardCharsets.US_ASCII));
        assertEquals("[{\"id\":4174,\"randomNumber\":331},{\"id\":1,\"randomNumber\":10000}]",
                new String(World.json(List.of(new World.Row(4174, 331), new World.Row(1, 10000))), StandardCharsets.US_ASCII));
    }

    /** contract/db/schema.sql's seeded value of row i. */
    static int seeded(int id) {
        return 1 + (id * 7919 + 13) % 10000;
    }
}
