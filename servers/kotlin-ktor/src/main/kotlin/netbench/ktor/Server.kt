package netbench.ktor

import io.ktor.http.ContentType
import io.ktor.http.HttpStatusCode
import io.ktor.server.application.Application
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.install
import io.ktor.server.cio.CIO
import io.ktor.server.cio.CIOApplicationEngine
import io.ktor.server.engine.EmbeddedServer
import io.ktor.server.engine.embeddedServer
import io.ktor.server.plugins.defaultheaders.DefaultHeaders
import io.ktor.server.request.receive
import io.ktor.server.response.respondText
import io.ktor.server.routing.get
import io.ktor.server.routing.post
import io.ktor.server.routing.routing
import kotlin.system.exitProcess

/** What `/` answers, chosen by the optional first command-line argument. */
enum class Root { NOT_FOUND, BLANK, WORK }

typealias Server = EmbeddedServer<CIOApplicationEngine, CIOApplicationEngine.Configuration>

/**
 * netbench reference server on Ktor with the CIO engine (Ktor's own coroutine-based HTTP/1.1
 * engine), default engine settings.
 *
 * Environment: `HOST` (default 127.0.0.1), `PORT` (default 1234). Optional first argument `0`
 * or `1`: `/` answers as `/blank` or `/work`.
 */
fun main(args: Array<String>) {
    val root = when (args.firstOrNull()) {
        null -> Root.NOT_FOUND
        "0" -> Root.BLANK
        "1" -> Root.WORK
        else -> {
            System.err.println("usage: java -jar server.jar [0|1]  (0: / is /blank, 1: / is /work)")
            exitProcess(2)
        }
    }
    val host = System.getenv("HOST")?.ifEmpty { null } ?: "127.0.0.1"
    val port = (System.getenv("PORT")?.ifEmpty { null } ?: "1234").toIntOrNull() ?: run {
        System.err.println("PORT must be an integer")
        exitProcess(2)
    }
    // Blocks; SIGTERM runs Ktor's shutdown hook, which stops the engine.
    server(host, port, root).start(wait = true)
}

/** The server, not started yet; port 0 picks a free port. */
fun server(host: String, port: Int, root: Root): Server =
    embeddedServer(CIO, port = port, host = host) { module(root) }

fun Application.module(root: Root) {
    // The CIO engine writes no Date header of its own: DefaultHeaders adds Date (cached, refreshed
    // every second) and Server, as Ktor's documentation and project generator do.
    install(DefaultHeaders)
    routing {
        get("/blank") { blank(call) }
        post("/work") { work(call) }
        get("/echo/{text}") {
            call.respondText(call.parameters["text"]!!, ContentType.Text.Plain)
        }
        when (root) {
            Root.BLANK -> get("/") { blank(call) }
            Root.WORK -> post("/") { work(call) }
            Root.NOT_FOUND -> {}
        }
    }
}

private suspend fun blank(call: ApplicationCall) {
    call.respondText("OK", ContentType.Text.Plain)
}

/** The whole body (Content-Length or chunked, decoded by CIO) as UTF-8, then the work. */
private suspend fun work(call: ApplicationCall) {
    val body = call.receive<ByteArray>().decodeToString()
    val answer = try {
        Work.answer(body)
    } catch (e: BadRequest) {
        call.respondText(e.message ?: "bad request", ContentType.Text.Plain, HttpStatusCode.BadRequest)
        return
    }
    call.respondText(answer, ContentType.Application.Json)
}
