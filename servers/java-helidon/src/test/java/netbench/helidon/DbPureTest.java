package netbench.helidon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import io.helidon.common.uri.UriQuery;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The db part without a database: parameters, a row's JSON, DATABASE_URL. */
class DbPureTest {
    /** contract/CONTRACT.md, "db": the example row, byte for byte as Jackson writes it. */
    static final String ROW_1 = "{\"id\":1,\"name\":\"item-1\",\"description\":\"Row 1 of the netbench items table: "
            + "\\\"seeded\\\", fixed & checked.\",\"quantity\":31,\"price\":79.19,\"updated\":\"2020-01-01T00:20:34.567Z\"}";

    /** Row i as contract/db/schema.sql seeds it. */
    static Item seeded(int i) {
        return new Item(i, "item-" + i,
                "Row " + i + " of the netbench items table: \"seeded\", fixed & checked.",
                (i * 31) % 1000,
                BigDecimal.valueOf((i * 7919L) % 100000, 2),
                Instant.parse("2020-01-01T00:00:00.000Z").plusMillis(i * 1_234_567L));
    }

    private static String json(Item item) {
        return new String(Db.render(List.of(item), false), StandardCharsets.UTF_8);
    }

    @Test
    void contractExampleRow() {
        assertEquals(ROW_1, json(seeded(1)));
    }

    @Test
    void zeroMillisecondsAndTrailingZeroPriceKeepTheirDigits() {
        Item item = new Item(7, "x", "y", 0, new BigDecimal("79.10"), Instant.parse("2021-03-04T05:06:07Z"));
        assertEquals("{\"id\":7,\"name\":\"x\",\"description\":\"y\",\"quantity\":0,\"price\":79.10,"
                + "\"updated\":\"2021-03-04T05:06:07.000Z\"}", json(item));
    }

    @Test
    void priceIsNeverInExponentForm() {
        Item item = new Item(1, "x", "y", 0, new BigDecimal("1E+2"), Instant.EPOCH);
        String json = json(item);
        assertTrue(json.contains("\"price\":100,"), json);
    }

    @Test
    void list() {
        assertEquals("[]", new String(Db.render(List.of(), true), StandardCharsets.UTF_8));
        assertEquals("[" + ROW_1 + "," + json(seeded(2)) + "]",
                new String(Db.render(List.of(seeded(1), seeded(2)), true), StandardCharsets.UTF_8));
    }

    @Test
    void lastSeededRow() {
        assertEquals("{\"id\":10000,\"name\":\"item-10000\",\"description\":\"Row 10000 of the netbench items table: "
                + "\\\"seeded\\\", fixed & checked.\",\"quantity\":0,\"price\":900.00,"
                + "\"updated\":\"2020-05-22T21:21:10.000Z\"}", json(seeded(10000)));
    }

    /** A query string as Helidon's routing hands it to a handler: {@code ServerRequest#query()}. */
    private static UriQuery q(String raw) {
        return raw == null ? UriQuery.empty() : UriQuery.create(raw);
    }

    @Test
    void goodParameters() throws Exception {
        assertEquals(1, DbParams.id(q("id=1")));
        assertEquals(10000, DbParams.id(q("id=10000")));
        assertEquals(2147483647, DbParams.id(q("id=2147483647")));
        assertEquals(5, DbParams.id(q("x=1&id=5&id=6")));
        assertEquals(17, DbParams.from(q("from=17&count=3")));
        assertEquals(3, DbParams.count(q("from=17&count=3")));
        assertEquals(100, DbParams.count(q("from=17")));
        assertEquals(1, DbParams.count(q("from=1&count=1")));
        assertEquals(1000, DbParams.count(q("from=1&count=1000")));
        assertEquals(0, DbParams.id(q("id=0")));
        assertEquals(12, DbParams.id(q("identity=3&id=12")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "id=", "id", "id=abc", "id=1.5", "id=2147483648", "id=99999999999", "id=+1",
        "id=1e3", "id= 1", "ids=1", "id=%zz", "from=1"})
    void badId(String query) {
        assertThrows(BadRequest.class, () -> DbParams.id(q(query)), query);
    }

    @Test
    void noQueryAtAll() {
        assertThrows(BadRequest.class, () -> DbParams.id(q(null)));
        assertThrows(BadRequest.class, () -> DbParams.from(q(null)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"from=1&count=0", "from=1&count=1001", "from=1&count=", "from=1&count=abc",
        "from=1&count=-1", "from=1&count=2147483648"})
    void badCount(String query) {
        assertThrows(BadRequest.class, () -> DbParams.count(q(query)), query);
    }

    @ParameterizedTest
    @ValueSource(strings = {"count=5", "from=", "from=x", "from=2147483648"})
    void badFrom(String query) {
        assertThrows(BadRequest.class, () -> DbParams.from(q(query)), query);
    }

    @Test
    void databaseUrl() {
        Db.ConnectionInfo info = Db.ConnectionInfo.parse("postgres://netbench@127.0.0.1:54321/netbench");
        assertEquals("jdbc:postgresql://127.0.0.1:54321/netbench", info.jdbcUrl());
        assertEquals("netbench", info.user());
        assertNull(info.password());

        info = Db.ConnectionInfo.parse("postgresql://u%40x:p%3Aa+ss@[::1]/db?sslmode=disable");
        assertEquals("jdbc:postgresql://[::1]/db?sslmode=disable", info.jdbcUrl());
        assertEquals("u@x", info.user());
        assertEquals("p:a+ss", info.password());

        info = Db.ConnectionInfo.parse("postgres://localhost:5432/db");
        assertEquals("jdbc:postgresql://localhost:5432/db", info.jdbcUrl());
        assertNull(info.user());
    }

    @ParameterizedTest
    @ValueSource(strings = {"mysql://u@h/db", "not a url", "postgres:///db"})
    void badDatabaseUrl(String url) {
        assertThrows(IllegalArgumentException.class, () -> Db.ConnectionInfo.parse(url), url);
    }

    @Test
    void poolSize() {
        HikariConfig config = Db.config("postgres://netbench:secret@127.0.0.1:5432/netbench", null);
        assertEquals(4, config.getMaximumPoolSize());
        assertEquals("netbench", config.getUsername());
        assertEquals("secret", config.getPassword());
        assertEquals(4, Db.config("postgres://netbench@127.0.0.1:5432/netbench", "").getMaximumPoolSize());
        assertEquals(8, Db.config("postgres://netbench@127.0.0.1:5432/netbench", "8").getMaximumPoolSize());
        assertThrows(IllegalArgumentException.class, () -> Db.poolSize("0"));
        assertThrows(IllegalArgumentException.class, () -> Db.poolSize("many"));
    }
}
