package netbench.vertx;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.ResolverStyle;
import java.util.Locale;

/**
 * {@code POST /work}: parse the document with Vert.x's own JSON ({@link JsonObject}, on
 * jackson-core), validate it, find the earliest and latest date, serialize.
 */
final class Work {
    /** Always three digits of milliseconds (ISO_INSTANT would drop ".000"). */
    static final DateTimeFormatter DATE_OUT = DateTimeFormatter
            .ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    private static final DateTimeFormatter DATE_IN = DateTimeFormatter
            .ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT)
            .withResolverStyle(ResolverStyle.STRICT)
            .withZone(ZoneOffset.UTC);
    private static final int DATE_LENGTH = "2020-01-12T10:53:17.773Z".length();

    private Work() {}

    /** The answer's body for a request body, or {@link BadRequest} with the reason. */
    static Buffer answer(Buffer body) throws BadRequest {
        Object parsed;
        try {
            parsed = Json.decodeValue(body); // also rejects trailing tokens after the document
        } catch (DecodeException e) {
            throw new BadRequest("body is not JSON");
        }
        if (!(parsed instanceof JsonObject)) {
            throw new BadRequest("body is not a JSON object");
        }
        JsonObject root = (JsonObject) parsed;
        String product = text(root, "product");
        String requestId = text(root, "requestId");
        Object groupValue = root.getValue("group");
        if (!(groupValue instanceof JsonObject)) {
            throw new BadRequest("group: missing or not an object");
        }
        JsonObject group = (JsonObject) groupValue;
        text(group, "kind");
        if (!(group.getValue("default") instanceof Boolean)) {
            throw new BadRequest("group.default: missing or not a boolean");
        }
        Object balance = group.getValue("balance");
        if (!(balance instanceof Number)) {
            throw new BadRequest("group.balance: missing or not a number");
        }
        if ((balance instanceof Double || balance instanceof Float)
                && !Double.isFinite(((Number) balance).doubleValue())) {
            // 1e400 parses to Infinity, which JSON cannot carry back.
            throw new BadRequest("group.balance: out of range");
        }
        Object datesValue = group.getValue("dates");
        if (!(datesValue instanceof JsonArray)) {
            throw new BadRequest("group.dates: missing or not an array");
        }
        JsonArray dates = (JsonArray) datesValue;
        if (dates.isEmpty()) {
            throw new BadRequest("group.dates: empty");
        }
        Instant min = null;
        Instant max = null;
        for (int i = 0; i < dates.size(); i++) {
            Object date = dates.getValue(i);
            if (!(date instanceof String)) {
                throw new BadRequest("group.dates: an element is not a string");
            }
            Instant t = parseDate((String) date);
            if (min == null || t.isBefore(min)) {
                min = t;
            }
            if (max == null || t.isAfter(max)) {
                max = t;
            }
        }

        JsonObject client = new JsonObject()
                .put("balance", balance) // the parsed number as it is: 1234.56 stays 1234.56
                .put("minDate", DATE_OUT.format(min))
                .put("maxDate", DATE_OUT.format(max));
        return new JsonObject()
                .put("product", product)
                .put("requestId", requestId)
                .put("client", client)
                .toBuffer();
    }

    /**
     * A contract timestamp, exactly {@code YYYY-MM-DDTHH:MM:SS.sssZ} in UTC. The STRICT
     * resolver checks the calendar and the clock ({@code 2020-13-45T99:00:00.000Z},
     * February 30th, hour 24 and second 60 all fail).
     */
    static Instant parseDate(String s) throws BadRequest {
        if (s.length() != DATE_LENGTH) {
            throw new BadRequest("group.dates: not a timestamp YYYY-MM-DDTHH:MM:SS.sssZ: " + abbreviate(s));
        }
        try {
            return DATE_IN.parse(s, Instant::from);
        } catch (DateTimeException e) {
            throw new BadRequest("group.dates: not a valid timestamp: " + abbreviate(s));
        }
    }

    private static String text(JsonObject parent, String field) throws BadRequest {
        Object value = parent.getValue(field);
        if (!(value instanceof String)) {
            throw new BadRequest(field + ": missing or not a string");
        }
        return (String) value;
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }
}
