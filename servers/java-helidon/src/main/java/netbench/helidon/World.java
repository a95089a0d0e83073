package netbench.helidon;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * {@code GET /queries} and {@code GET /updates} (TechEmpower's multiple queries and updates): the
 * {@code queries} parameter as TechEmpower clamps it, and the answer's JSON.
 */
final class World {
    static final int ROWS = 10_000;
    static final int MAX_QUERIES = 500;
    static final String SELECT = "SELECT id, randomnumber FROM world WHERE id = ?";
    static final String UPDATE = "UPDATE world SET randomnumber = ? WHERE id = ?";

    /** One row; {@code randomNumber} is the answer's spelling of the column {@code randomnumber}. */
    record Row(int id, int randomNumber) {}

    private World() {}

    /**
     * The {@code queries} parameter clamped as TechEmpower does: missing (null), empty, not an
     * integer, or below 1 is 1; above 500 is 500.
     */
    static int count(String value) {
        if (value == null || value.isEmpty()) {
            return 1;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if ((c < '0' || c > '9') && !(c == '-' && i == 0)) {
                return 1; // not an integer (Integer.parseInt would also take "+5" and other scripts' digits)
            }
        }
        int n;
        try {
            n = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            // an integer past 32 bits: a huge one is above 500, a huge negative one below 1
            return value.charAt(0) == '-' || value.length() == 1 ? 1 : MAX_QUERIES;
        }
        return n < 1 ? 1 : Math.min(n, MAX_QUERIES);
    }

    /** {@code [{"id":4174,"randomNumber":331},...]}: two integer keys each. */
    static byte[] json(List<Row> rows) {
        StringBuilder out = new StringBuilder(2 + rows.size() * 32);
        out.append('[');
        for (int i = 0; i < rows.size(); i++) {
            Row row = rows.get(i);
            if (i > 0) {
                out.append(',');
            }
            out.append("{\"id\":").append(row.id()).append(",\"randomNumber\":").append(row.randomNumber()).append('}');
        }
        return out.append(']').toString().getBytes(StandardCharsets.US_ASCII);
    }
}
