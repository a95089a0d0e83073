package netbench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The {@code world} table of {@code GET /queries?queries=N} and {@code GET /updates?queries=N}
 * (TechEmpower's multiple-queries and updates tests): the parameter's clamping, the random ids and
 * numbers, and the answer's JSON. The database side is in {@link Db}.
 */
final class World {
    static final String QUERY = "SELECT id, randomnumber FROM world WHERE id = ?";
    static final String UPDATE = "UPDATE world SET randomnumber = ? WHERE id = ?";
    /** The table's ids are 1..ROWS, and a new random number is drawn from the same range. */
    static final int ROWS = 10_000;
    static final int MAX_QUERIES = 500;

    private static final JsonFactory JSON = new JsonFactory();

    private World() {}

    /** One row as answered: {@code {"id":..,"randomNumber":..}}. */
    record Row(int id, int randomNumber) {}

    /**
     * {@code queries} of a raw query string, clamped as TechEmpower does: missing, empty, not an
     * integer (or not decodable) or below 1 is 1; above 500 is 500, however many digits it has.
     */
    static int queries(String rawQuery) {
        String value;
        try {
            value = DbParams.param(rawQuery, "queries");
        } catch (BadRequest e) { // bad percent-encoding: not an integer either
            return 1;
        }
        if (value == null || value.isEmpty()) {
            return 1;
        }
        boolean negative = value.charAt(0) == '-';
        int start = negative ? 1 : 0;
        if (start == value.length()) {
            return 1;
        }
        long n = 0;
        for (int i = start; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                return 1; // 1.5, abc, +5, 1e3, other scripts' digits
            }
            n = Math.min(n * 10 + (c - '0'), MAX_QUERIES + 1L); // stays small past 500
        }
        if (negative || n < 1) {
            return 1;
        }
        return (int) Math.min(n, MAX_QUERIES);
    }

    /** A random id, or a random new number: 1 to 10,000. */
    static int random() {
        return ThreadLocalRandom.current().nextInt(1, ROWS + 1);
    }

    static byte[] render(Row[] rows) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(16 + 32 * rows.length);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartArray();
            for (Row row : rows) {
                g.writeStartObject();
                g.writeNumberField("id", row.id());
                g.writeNumberField("randomNumber", row.randomNumber());
                g.writeEndObject();
            }
            g.writeEndArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return out.toByteArray();
    }
}
