package netbench.netty;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.ResolverStyle;
import java.util.Locale;
import netbench.WorkOuterClass.Client;
import netbench.WorkOuterClass.Group;
import netbench.WorkOuterClass.WorkReply;
import netbench.WorkOuterClass.WorkRequest;

/** {@code POST /work}: parse the document, validate it, find the earliest and latest date, serialize. */
final class Work {
    /** Thread-safe once configured; shared by every request. */
    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

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
    static byte[] answer(byte[] body) throws BadRequest {
        JsonNode root;
        try {
            root = MAPPER.readTree(body);
        } catch (JacksonException e) {
            throw new BadRequest("body is not JSON");
        } catch (IOException e) {
            throw new BadRequest("body is not readable");
        }
        if (root == null || !root.isObject()) {
            throw new BadRequest("body is not a JSON object");
        }
        JsonNode product = text(root, "product");
        JsonNode requestId = text(root, "requestId");
        JsonNode group = root.get("group");
        if (group == null || !group.isObject()) {
            throw new BadRequest("group: missing or not an object");
        }
        text(group, "kind");
        JsonNode isDefault = group.get("default");
        if (isDefault == null || !isDefault.isBoolean()) {
            throw new BadRequest("group.default: missing or not a boolean");
        }
        JsonNode balance = group.get("balance");
        if (balance == null || !balance.isNumber()) {
            throw new BadRequest("group.balance: missing or not a number");
        }
        if (balance.isFloatingPointNumber() && !Double.isFinite(balance.doubleValue())) {
            // 1e400 parses to Infinity, which JSON cannot carry back.
            throw new BadRequest("group.balance: out of range");
        }
        JsonNode dates = group.get("dates");
        if (dates == null || !dates.isArray()) {
            throw new BadRequest("group.dates: missing or not an array");
        }
        if (dates.isEmpty()) {
            throw new BadRequest("group.dates: empty");
        }
        Instant min = null;
        Instant max = null;
        for (JsonNode date : dates) {
            if (!date.isTextual()) {
                throw new BadRequest("group.dates: an element is not a string");
            }
            Instant t = parseDate(date.textValue());
            if (min == null || t.isBefore(min)) {
                min = t;
            }
            if (max == null || t.isAfter(max)) {
                max = t;
            }
        }

        ObjectNode out = MAPPER.createObjectNode();
        out.set("product", product);
        out.set("requestId", requestId);
        ObjectNode client = out.putObject("client");
        client.set("balance", balance); // the parsed number as it is: 1234.56 stays 1234.56
        client.put("minDate", DATE_OUT.format(min));
        client.put("maxDate", DATE_OUT.format(max));
        try {
            return MAPPER.writeValueAsBytes(out);
        } catch (JacksonException e) {
            throw new IllegalStateException("cannot serialize the answer", e);
        }
    }

    /**
     * gRPC's Compute, the same computation on the decoded message. proto3 cannot tell a missing
     * string, bool or number from its zero value, so only what the wire can show is checked: the
     * group is there, it has at least one date, and every date is valid.
     */
    static WorkReply reply(WorkRequest request) throws BadRequest {
        if (!request.hasGroup()) {
            throw new BadRequest("group: missing");
        }
        Group group = request.getGroup();
        if (group.getDatesCount() == 0) {
            throw new BadRequest("group.dates: empty");
        }
        Instant min = null;
        Instant max = null;
        for (String date : group.getDatesList()) {
            Instant t = parseDate(date);
            if (min == null || t.isBefore(min)) {
                min = t;
            }
            if (max == null || t.isAfter(max)) {
                max = t;
            }
        }
        return WorkReply.newBuilder()
                .setProduct(request.getProduct())
                .setRequestId(request.getRequestId())
                .setClient(Client.newBuilder()
                        .setBalance(group.getBalance())
                        .setMinDate(DATE_OUT.format(min))
                        .setMaxDate(DATE_OUT.format(max)))
                .build();
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

    private static JsonNode text(JsonNode parent, String field) throws BadRequest {
        JsonNode node = parent.get(field);
        if (node == null || !node.isTextual()) {
            throw new BadRequest(field + ": missing or not a string");
        }
        return node;
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }
}
