package netbench.netty;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One row of the contract's {@code world} table (contract/db/schema.sql), for
 * {@code GET /queries?queries=N} and {@code GET /updates?queries=N} (TechEmpower's multiple-queries
 * and updates tests): the parameter's clamp, the random ids and numbers, and the JSON answer.
 * The reads and writes are {@link Db#queries} and {@link Db#updates}.
 */
record World(int id, int randomNumber) {
    static final String READ = "SELECT id, randomnumber FROM world WHERE id = ?";
    static final String WRITE = "UPDATE world SET randomnumber = ? WHERE id = ?";
    /** Ids and random numbers run from 1 to this. */
    static final int ROWS = 10_000;
    static final int MAX_QUERIES = 500;

    private static final JsonFactory JSON = new JsonFactory();

    /**
     * {@code queries} of a raw query string, clamped as TechEmpower does: missing, empty, not an
     * integer (including one past 32 bits) or below 1 is 1; above 500 is 500.
     */
    static int count(String rawQuery) {
        String value;
        try {
            value = DbParams.param(rawQuery, "queries");
        } catch (BadRequest e) { // bad percent-encoding: not an integer either
            return 1;
        }
        if (value == null) {
            return 1;
        }
        int n;
        try {
            n = DbParams.int32(value, "queries");
        } catch (BadRequest e) {
            return 1;
        }
        return Math.max(1, Math.min(MAX_QUERIES, n));
    }

    /** A random id, or a random new number: 1 to 10,000. */
    static int random() {
        return 1 + ThreadLocalRandom.current().nextInt(ROWS);
    }

    /** {@code [{"id":4174,"randomNumber":331},...]}. */
    static byte[] render(World[] rows) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(2 + 32 * rows.length);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartArray();
            for (World w : rows) {
                g.writeStartObject();
                g.writeNumberField("id", w.id());
                g.writeNumberField("randomNumber", w.randomNumber());
                g.writeEndObject();
            }
            g.writeEndArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return out.toByteArray();
    }
}
