package netbench.ktor

import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

/** The pure parse, compute and serialize step, without HTTP. */
class WorkTest {
    private fun answer(body: String): JsonObject = Json.parseToJsonElement(Work.answer(body)).jsonObject

    private fun client(answer: JsonObject, field: String): String =
        answer["client"]!!.jsonObject[field]!!.jsonPrimitive.content

    private fun doc(balance: String, dates: String) =
        """{"product":"WidgetPro-7","requestId":"5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59",""" +
            """"group":{"kind":"retail","default":true,"balance":$balance,"dates":[$dates]}}"""

    @Test
    fun contractExample() {
        val got: JsonElement = answer(doc("1234.56",
            """"2020-01-12T10:53:17.773Z", "2019-03-01T00:00:00.000Z", "2021-07-30T23:59:59.999Z""""))
        val want = Json.parseToJsonElement("""{"product":"WidgetPro-7","requestId":"5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59",""" +
            """"client":{"balance":1234.56,"minDate":"2019-03-01T00:00:00.000Z","maxDate":"2021-07-30T23:59:59.999Z"}}""")
        assertEquals(want, got)
    }

    @Test
    fun balanceKeepsItsValue() {
        assertEquals(1234.56, client(answer(doc("1.23456e3", "\"2020-01-01T00:00:00.000Z\"")), "balance").toDouble())
        assertEquals("-7", client(answer(doc("-7", "\"2020-01-01T00:00:00.000Z\"")), "balance"))
        assertEquals("0.1", client(answer(doc("0.1", "\"2020-01-01T00:00:00.000Z\"")), "balance"))
    }

    @Test
    fun oneDateIsBothMinAndMax() {
        val got = answer(doc("1", "\"2000-02-29T12:00:00.000Z\""))
        assertEquals("2000-02-29T12:00:00.000Z", client(got, "minDate"))
        assertEquals("2000-02-29T12:00:00.000Z", client(got, "maxDate"))
    }

    @ParameterizedTest
    @ValueSource(
        strings = [
            "2019-03-01T00:00:00.000Z", "2021-07-30T23:59:59.999Z", "1970-01-01T00:00:00.010Z",
            "2000-02-29T12:34:56.789Z", "0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z",
        ],
    )
    fun datesRoundTrip(date: String) {
        assertEquals(date, Work.DATE_OUT.format(Work.parseDate(date)))
    }

    @Test
    fun extraFieldsAreIgnored() {
        val got = answer("""{"x":[1,{}],"product":"p","requestId":"r","group":{"kind":"k",""" +
            """"default":false,"balance":0,"dates":["2020-01-01T00:00:00.001Z"],"extra":null}}""")
        assertEquals(3, got.size)
        assertEquals("2020-01-01T00:00:00.001Z", client(got, "maxDate"))
    }

    @ParameterizedTest
    @ValueSource(
        strings = [
            "", "not json", "[]", "42", "null", "{\"product\":",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.000Z"]}} trailing""",
            """{"requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":1,"requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":null,"requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":p,"requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r"}""",
            """{"product":"p","requestId":"r","group":[]}""",
            """{"product":"p","requestId":"r","group":{"default":true,"balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":"yes","balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":"true","balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":yes,"balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":"1","dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":true,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":null,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":NaN,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":0x1p3,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":[]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":"2020-01-01T00:00:00.000Z"}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":[1577836800000]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-13-45T99:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["yesterday"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2019-02-29T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.000+01:00"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.000"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.000Z",""]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2016-12-31T23:59:60.500Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.5Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.0000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01t00:00:00.000z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T24:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2021-02-30T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01 00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["+2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1e400,"dates":["2020-01-01T00:00:00.000Z"]}}""",
        ],
    )
    fun badDocumentsAreRejected(body: String) {
        assertThrows(BadRequest::class.java) { Work.answer(body) }
    }
}
