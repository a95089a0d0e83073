package netbench.ktor

import java.time.DateTimeException
import java.time.Instant
import java.time.ZoneOffset
import java.time.format.DateTimeFormatter
import java.time.format.ResolverStyle
import java.util.Locale
import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonObject

/** A request body that breaks the contract: answered with 400 and the message as its body. */
class BadRequest(message: String) : Exception(message, null, false, false)

/**
 * `POST /work`: parse the document into a kotlinx.serialization [JsonElement] tree, validate it,
 * find the earliest and latest date, serialize.
 */
object Work {
    /** Always three digits of milliseconds (ISO_INSTANT would drop ".000"). */
    val DATE_OUT: DateTimeFormatter = DateTimeFormatter
        .ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT)
        .withZone(ZoneOffset.UTC)

    private val DATE_IN: DateTimeFormatter = DateTimeFormatter
        .ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT)
        .withResolverStyle(ResolverStyle.STRICT)
        .withZone(ZoneOffset.UTC)
    private const val DATE_LENGTH = 24 // "2020-01-12T10:53:17.773Z"

    /**
     * The tree parser keeps a bare (unquoted) token as it was written, so a number is checked
     * against JSON's number grammar here (`abc`, `NaN`, `0x1p3` are not numbers).
     */
    private val JSON_NUMBER = Regex("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")

    /** The answer's body for a request body, or [BadRequest] with the reason. */
    fun answer(body: String): String {
        val root = try {
            Json.parseToJsonElement(body) // also rejects anything after the document
        } catch (e: SerializationException) {
            throw BadRequest("body is not JSON")
        } catch (e: IllegalArgumentException) {
            throw BadRequest("body is not JSON")
        }
        if (root !is JsonObject) throw BadRequest("body is not a JSON object")
        val product = text(root, "product")
        val requestId = text(root, "requestId")
        val group = root["group"] as? JsonObject ?: throw BadRequest("group: missing or not an object")
        text(group, "kind")
        val isDefault = group["default"]
        if (isDefault !is JsonPrimitive || isDefault.isString || isDefault.booleanOrNull == null) {
            throw BadRequest("group.default: missing or not a boolean")
        }
        val balance = number(group["balance"])
        val dates = group["dates"] as? JsonArray ?: throw BadRequest("group.dates: missing or not an array")
        if (dates.isEmpty()) throw BadRequest("group.dates: empty")
        var min: Instant? = null
        var max: Instant? = null
        for (date in dates) {
            if (date !is JsonPrimitive || !date.isString) throw BadRequest("group.dates: an element is not a string")
            val t = parseDate(date.content)
            if (min == null || t.isBefore(min)) min = t
            if (max == null || t.isAfter(max)) max = t
        }
        return buildJsonObject {
            put("product", product)
            put("requestId", requestId)
            putJsonObject("client") {
                put("balance", balance)
                put("minDate", DATE_OUT.format(min))
                put("maxDate", DATE_OUT.format(max))
            }
        }.toString()
    }

    /**
     * A contract timestamp, exactly `YYYY-MM-DDTHH:MM:SS.sssZ` in UTC. The STRICT resolver checks
     * the calendar and the clock (`2020-13-45T99:00:00.000Z`, February 30th, hour 24 and second 60
     * all fail).
     */
    fun parseDate(s: String): Instant {
        if (s.length != DATE_LENGTH) {
            throw BadRequest("group.dates: not a timestamp YYYY-MM-DDTHH:MM:SS.sssZ: ${abbreviate(s)}")
        }
        try {
            return DATE_IN.parse(s, Instant::from)
        } catch (e: DateTimeException) {
            throw BadRequest("group.dates: not a valid timestamp: ${abbreviate(s)}")
        }
    }

    /** The balance as a JSON number: integers stay integers, others become a finite double. */
    private fun number(value: JsonElement?): JsonPrimitive {
        if (value !is JsonPrimitive || value.isString || value is JsonNull || !JSON_NUMBER.matches(value.content)) {
            throw BadRequest("group.balance: missing or not a number")
        }
        value.content.toLongOrNull()?.let { return JsonPrimitive(it) }
        val d = value.content.toDouble()
        // 1e400 parses to Infinity, which JSON cannot carry back.
        if (!d.isFinite()) throw BadRequest("group.balance: out of range")
        return JsonPrimitive(d)
    }

    private fun text(parent: JsonObject, field: String): String {
        val value = parent[field]
        if (value !is JsonPrimitive || !value.isString) throw BadRequest("$field: missing or not a string")
        return value.content
    }

    private fun abbreviate(s: String) = if (s.length <= 40) s else s.substring(0, 40) + "..."
}
