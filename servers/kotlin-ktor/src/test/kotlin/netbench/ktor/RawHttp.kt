package netbench.ktor

import java.io.ByteArrayOutputStream
import java.io.IOException
import java.io.InputStream
import java.net.InetAddress
import java.net.Socket

/** A minimal HTTP/1.1 client over one socket, so tests see the exact status, headers and framing. */
class RawHttp(port: Int) : AutoCloseable {
    /** One answer: header names are lower-cased. */
    class Response(val status: Int, val headers: Map<String, String>, val body: ByteArray) {
        fun header(name: String): String? = headers[name.lowercase()]
        fun text(): String = body.decodeToString()
    }

    private val socket = Socket(InetAddress.getLoopbackAddress(), port).apply {
        soTimeout = 10_000
        tcpNoDelay = true
    }
    private val input: InputStream = socket.getInputStream()
    private val output = socket.getOutputStream()

    fun write(raw: String) {
        output.write(raw.encodeToByteArray())
        output.flush()
    }

    fun send(raw: String): Response {
        write(raw)
        return read()
    }

    /** Reads one answer, framed by Content-Length or by chunked transfer coding. */
    fun read(): Response {
        val statusLine = line()
        val parts = statusLine.split(" ", limit = 3)
        if (parts.size < 2 || !parts[0].startsWith("HTTP/1.")) throw IOException("bad status line: $statusLine")
        val headers = LinkedHashMap<String, String>()
        while (true) {
            val h = line()
            if (h.isEmpty()) break
            val colon = h.indexOf(':')
            headers[h.substring(0, colon).trim().lowercase()] = h.substring(colon + 1).trim()
        }
        if (headers["transfer-encoding"]?.lowercase()?.endsWith("chunked") == true) {
            val body = ByteArrayOutputStream()
            while (true) {
                val size = line().substringBefore(';').trim().toInt(16)
                if (size == 0) break
                body.write(input.readNBytes(size))
                line()
            }
            while (line().isNotEmpty()) { /* trailers are ignored */ }
            return Response(parts[1].toInt(), headers, body.toByteArray())
        }
        val length = headers["content-length"] ?: throw IOException("answer framed by neither Content-Length nor chunked: $headers")
        return Response(parts[1].toInt(), headers, input.readNBytes(length.toInt()))
    }

    private fun line(): String {
        val buf = ByteArrayOutputStream()
        while (true) {
            val c = input.read()
            if (c < 0) throw IOException("connection closed")
            if (c == '\n'.code) break
            if (c != '\r'.code) buf.write(c)
        }
        return buf.toString(Charsets.ISO_8859_1)
    }

    /** True when the server has closed the connection (reads end of stream). */
    fun closedByPeer(): Boolean = input.read() < 0

    override fun close() = socket.close()

    companion object {
        fun get(path: String) = "GET $path HTTP/1.1\r\nHost: test\r\n\r\n"

        fun post(path: String, body: String) =
            "POST $path HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n" +
                "Content-Length: ${body.encodeToByteArray().size}\r\n\r\n$body"
    }
}
