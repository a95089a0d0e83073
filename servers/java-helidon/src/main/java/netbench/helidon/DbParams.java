package netbench.helidon;

import io.helidon.common.parameters.Parameters;

/**
 * The query parameters of {@code GET /db?id=N} and {@code GET /db/list?from=N&count=M}, as
 * Helidon decodes them ({@link io.helidon.webserver.http.ServerRequest#query()}), with the
 * contract's 400 rules: a missing, empty or non-integer value, a value outside 32 bits, or a
 * {@code count} outside 1..1000.
 */
final class DbParams {
    static final int DEFAULT_COUNT = 100;
    static final int MAX_COUNT = 1000;

    private DbParams() {}

    /** {@code id} of {@code /db}. */
    static int id(Parameters query) throws BadRequest {
        return requiredInt(query, "id");
    }

    /** {@code from} of {@code /db/list}. */
    static int from(Parameters query) throws BadRequest {
        return requiredInt(query, "from");
    }

    /** {@code count} of {@code /db/list}: optional, 1 to 1000. */
    static int count(Parameters query) throws BadRequest {
        if (!query.contains("count")) {
            return DEFAULT_COUNT;
        }
        int count = int32(query.get("count"), "count");
        if (count < 1 || count > MAX_COUNT) {
            throw new BadRequest("count: not from 1 to " + MAX_COUNT);
        }
        return count;
    }

    private static int requiredInt(Parameters query, String name) throws BadRequest {
        if (!query.contains(name)) {
            throw new BadRequest(name + ": missing");
        }
        return int32(query.get(name), name);
    }

    /**
     * Integer.parseInt refuses the empty string, fractions, letters and anything past 32 bits;
     * the loop first refuses the spellings it would take that are not plain decimal
     * ({@code +1}, digits of other scripts such as Arabic-Indic ones).
     */
    static int int32(String value, String name) throws BadRequest {
        if (value == null || value.isEmpty()) {
            throw new BadRequest(name + ": empty");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if ((c < '0' || c > '9') && !(c == '-' && i == 0)) {
                throw new BadRequest(name + ": not an integer");
            }
        }
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new BadRequest(name + ": not a 32-bit integer");
        }
    }
}
