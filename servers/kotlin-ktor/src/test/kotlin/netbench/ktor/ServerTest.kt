package netbench.ktor

import java.time.ZonedDateTime
import java.time.format.DateTimeFormatter
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

/** The server over real loopback connections on a free port. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServerTest {
    private val example = """
        {
          "product": "WidgetPro-7",
          "requestId": "5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59",
          "group": {
            "kind": "retail",
            "default": true,
            "balance": 1234.56,
            "dates": ["2020-01-12T10:53:17.773Z", "2019-03-01T00:00:00.000Z", "2021-07-30T23:59:59.999Z"]
          }
        }
    """.trimIndent()
    private val exampleAnswer = """{"product":"WidgetPro-7","requestId":"5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59",""" +
        """"client":{"balance":1234.56,"minDate":"2019-03-01T00:00:00.000Z","maxDate":"2021-07-30T23:59:59.999Z"}}"""

    private lateinit var server: Server
    private lateinit var blankRoot: Server
    private lateinit var workRoot: Server

    private fun startOnFreePort(root: Root): Server = server("127.0.0.1", 0, root).start(wait = false)

    private fun port(s: Server): Int = runBlocking { s.engine.resolvedConnectors().first().port }

    @BeforeAll
    fun start() {
        server = startOnFreePort(Root.NOT_FOUND)
        blankRoot = startOnFreePort(Root.BLANK)
        workRoot = startOnFreePort(Root.WORK)
    }

    @AfterAll
    fun stop() {
        for (s in listOf(server, blankRoot, workRoot)) s.stop(0, 1000)
    }

    private fun json(text: String): JsonElement = Json.parseToJsonElement(text)

    private fun request(raw: String, s: Server = server): RawHttp.Response = RawHttp(port(s)).use { it.send(raw) }

    private fun assertFramedAndDated(r: RawHttp.Response) {
        val length = r.header("content-length")
        if (length != null) {
            assertEquals(r.body.size, length.toInt())
        } else {
            assertEquals("chunked", r.header("transfer-encoding"), "framing")
        }
        val date = r.header("date")
        assertNotNull(date, "Date header")
        ZonedDateTime.parse(date, DateTimeFormatter.RFC_1123_DATE_TIME) // an IMF-fixdate
        assertTrue(date!!.endsWith(" GMT"), date)
    }

    /** Ktor names the charset: text/plain; charset=UTF-8. */
    private fun assertTextPlain(r: RawHttp.Response) {
        assertTrue(r.header("content-type")!!.startsWith("text/plain"), r.header("content-type"))
    }

    @Test
    fun blank() {
        val r = request(RawHttp.get("/blank"))
        assertEquals(200, r.status)
        assertTextPlain(r)
        assertEquals("OK", r.text())
        assertFramedAndDated(r)
    }

    @Test
    fun work() {
        val r = request(RawHttp.post("/work", example))
        assertEquals(200, r.status)
        assertTrue(r.header("content-type")!!.startsWith("application/json"), r.header("content-type"))
        assertEquals(json(exampleAnswer), json(r.text()))
        assertFramedAndDated(r)
    }

    @Test
    fun workKeepsZeroMilliseconds() {
        val doc = """{"product":"a","requestId":"b","group":{"kind":"c","default":false,"balance":-3.5,""" +
            """"dates":["2022-05-05T05:05:05.000Z","2001-01-01T00:00:00.000Z"]}}"""
        val body = request(RawHttp.post("/work", doc)).text()
        assertTrue(body.contains(""""minDate":"2001-01-01T00:00:00.000Z""""), body)
        assertTrue(body.contains(""""maxDate":"2022-05-05T05:05:05.000Z""""), body)
        assertTrue(body.contains(""""balance":-3.5"""), body)
    }

    @Test
    fun workWithChunkedBody() {
        val doc = example.encodeToByteArray()
        val half = doc.size / 2
        val chunked = "POST /work HTTP/1.1\r\nHost: test\r\nContent-Type: application/json; charset=utf-8\r\n" +
            "Transfer-Encoding: chunked\r\n\r\n" +
            "${Integer.toHexString(half)}\r\n${doc.copyOfRange(0, half).decodeToString()}\r\n" +
            "${Integer.toHexString(doc.size - half)}\r\n${doc.copyOfRange(half, doc.size).decodeToString()}\r\n0\r\n\r\n"
        val r = request(chunked)
        assertEquals(200, r.status)
        assertEquals(json(exampleAnswer), json(r.text()))
    }

    @Test
    fun requestSplitAcrossWrites() {
        val raw = RawHttp.post("/work", example)
        RawHttp(port(server)).use { http ->
            http.write(raw.substring(0, 7))
            Thread.sleep(50)
            http.write(raw.substring(7, 90))
            Thread.sleep(50)
            http.write(raw.substring(90))
            val r = http.read()
            assertEquals(200, r.status)
            assertEquals(json(exampleAnswer), json(r.text()))
        }
    }

    @ParameterizedTest
    @ValueSource(
        strings = [
            "this is not JSON",
            "[1,2,3]",
            """{"requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":"yes","balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":"1","dates":["2020-01-01T00:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":[]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-13-45T99:00:00.000Z"]}}""",
            """{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["yesterday"]}}""",
        ],
    )
    fun badRequests(body: String) {
        val r = request(RawHttp.post("/work", body))
        assertEquals(400, r.status, body)
        assertFramedAndDated(r)
    }

    @Test
    fun echo() {
        for (text in listOf("abc-1.2_x~y", "a", "Z9")) {
            val r = request(RawHttp.get("/echo/$text"))
            assertEquals(200, r.status)
            assertTextPlain(r)
            assertEquals(text, r.text())
        }
        assertEquals("q", request(RawHttp.get("/echo/q?x=1&y=2")).text())
    }

    @Test
    fun notFound() {
        for (path in listOf("/nope", "/", "/blank/x", "/echo", "/workx")) {
            val r = request(RawHttp.get(path))
            assertEquals(404, r.status, path)
            assertFramedAndDated(r)
        }
    }

    /** Ktor's routing answers a known path with another method with 405. */
    @Test
    fun wrongMethod() {
        assertEquals(405, request(RawHttp.get("/work")).status)
        assertEquals(405, request(RawHttp.post("/blank", "{}")).status)
    }

    @Test
    fun keepAlive() {
        RawHttp(port(server)).use { http ->
            for (i in 0 until 100) {
                if (i % 2 == 0) {
                    val r = http.send(RawHttp.get("/blank"))
                    assertEquals(200, r.status, "request $i")
                    assertEquals("OK", r.text())
                } else {
                    val r = http.send(RawHttp.post("/work", example))
                    assertEquals(200, r.status, "request $i")
                    assertEquals(json(exampleAnswer), json(r.text()))
                }
            }
        }
    }

    @Test
    fun connectionClose() {
        RawHttp(port(server)).use { http ->
            val r = http.send("GET /blank HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
            assertEquals("OK", r.text())
            assertTrue(http.closedByPeer())
        }
    }

    @Test
    fun rootModes() {
        assertEquals("OK", request(RawHttp.get("/"), blankRoot).text())
        RawHttp(port(workRoot)).use { http ->
            val r = http.send(RawHttp.post("/", example))
            assertEquals(200, r.status)
            assertEquals(json(exampleAnswer), json(r.text()))
            assertEquals("OK", http.send(RawHttp.get("/blank")).text())
        }
    }
}
