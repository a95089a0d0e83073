package netbench.netty;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * The query parameters of {@code GET /db?id=N} and {@code GET /db/list?from=N&count=M}, with the
 * contract's 400 rules: a missing, empty or non-integer value, a value outside 32 bits, or a
 * {@code count} outside 1..1000.
 */
final class DbParams {
    static final int DEFAULT_COUNT = 100;
    static final int MAX_COUNT = 1000;

    private DbParams() {}

    /** {@code id} of {@code /db}. */
    static int id(String rawQuery) throws BadRequest {
        return requiredInt(rawQuery, "id");
    }

    /** {@code from} of {@code /db/list}. */
    static int from(String rawQuery) throws BadRequest {
        return requiredInt(rawQuery, "from");
    }

    /** {@code count} of {@code /db/list}: optional, 1 to 1000. */
    static int count(String rawQuery) throws BadRequest {
        String value = param(rawQuery, "count");
        if (value == null) {
            return DEFAULT_COUNT;
        }
        int count = int32(value, "count");
        if (count < 1 || count > MAX_COUNT) {
            throw new BadRequest("count: not from 1 to " + MAX_COUNT);
        }
        return count;
    }

    private static int requiredInt(String rawQuery, String name) throws BadRequest {
        String value = param(rawQuery, name);
        if (value == null) {
            throw new BadRequest(name + ": missing");
        }
        return int32(value, name);
    }

    /**
     * Integer.parseInt refuses the empty string, fractions, letters and anything past 32 bits;
     * the loop first refuses the spellings it would take that are not plain decimal
     * ({@code +1}, digits of other scripts such as Arabic-Indic ones).
     */
    static int int32(String value, String name) throws BadRequest {
        if (value.isEmpty()) {
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

    /**
     * The first value of {@code name} in a raw query string ({@code ""} for {@code name=} or a bare
     * {@code name}), or null when it is absent.
     */
    static String param(String rawQuery, String name) throws BadRequest {
        if (rawQuery == null) {
            return null;
        }
        int start = 0;
        while (start <= rawQuery.length()) {
            int end = rawQuery.indexOf('&', start);
            if (end < 0) {
                end = rawQuery.length();
            }
            int eq = rawQuery.indexOf('=', start);
            int keyEnd = eq >= 0 && eq < end ? eq : end;
            if (rawQuery.regionMatches(start, name, 0, name.length()) && keyEnd - start == name.length()) {
                String raw = keyEnd == end ? "" : rawQuery.substring(keyEnd + 1, end);
                try {
                    return URLDecoder.decode(raw, StandardCharsets.UTF_8);
                } catch (IllegalArgumentException e) {
                    throw new BadRequest(name + ": bad percent-encoding");
                }
            }
            start = end + 1;
        }
        return null;
    }
}
