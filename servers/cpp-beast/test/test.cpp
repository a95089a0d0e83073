// Tests of the cpp-beast server: the date parser, the /work computation
// against contract/fixtures, and the HTTP server itself (in-process, on a
// free port of 127.0.0.1), once with each way of reading requests (HEADERS
// all and needed). Usage: bin/test FIXTURES_DIR. Exits 1 on failure.
#include "server.hpp"
#include "work.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using json = nlohmann::json;

static int failures = 0;
static int checks = 0;
static std::string context;  // named in each failure: which parser the HTTP tests ran on

#define CHECK(cond, what)                                                        \
    do {                                                                         \
        ++checks;                                                                \
        if (!(cond)) {                                                           \
            ++failures;                                                          \
            std::cerr << "FAIL " << __FILE__ << ":" << __LINE__ << context       \
                      << ": " << what << "  [" #cond "]\n";                      \
        }                                                                        \
    } while (0)

static void test_dates() {
    // Valid: round trip through the timestamp, and a few known values.
    const char* good[] = {
        "2020-01-12T10:53:17.773Z", "1970-01-01T00:00:00.000Z", "2000-02-29T23:59:59.999Z",
        "1969-12-31T23:59:59.999Z", "2038-01-19T03:14:08.000Z", "2400-02-29T00:00:00.000Z",
        "0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2024-02-29T12:00:00.000Z",
        "1969-07-20T20:17:40.000Z", "2021-04-30T00:00:00.000Z",
    };
    for (const char* s : good) {
        std::int64_t ms = 0;
        const bool ok = nb::parse_iso_millis(s, ms);
        CHECK(ok, "valid date refused: " << s);
        if (ok) CHECK(nb::format_iso_millis(ms) == s, "round trip of " << s << " gave " << nb::format_iso_millis(ms));
    }
    std::int64_t ms = 0;
    CHECK(nb::parse_iso_millis("1970-01-01T00:00:01.500Z", ms) && ms == 1500, "1.5 s after the epoch");
    CHECK(nb::parse_iso_millis("1969-12-31T23:59:59.999Z", ms) && ms == -1, "1 ms before the epoch");
    CHECK(nb::parse_iso_millis("2020-01-12T10:53:17.773Z", ms) && ms == 1578826397773LL, "contract example date");

    const char* bad[] = {
        "2020-13-45T99:00:00.000Z",       // impossible
        "2021-02-29T00:00:00.000Z",       // 29 February of a common year
        "1900-02-29T00:00:00.000Z",       // century, not a leap year
        "2020-01-01T24:00:00.000Z",       // 24:00
        "2020-01-01T00:00:60.000Z",       // leap second
        "2020-01-01T00:60:00.000Z",       // minute 60
        "2020-01-01T00:00:00.+01Z",       // sign in the milliseconds
        "2020-01-01T00:00:00.-01Z",
        "2020-01-01T00:00:00.000+00:00",  // offset instead of Z
        "2020-01-01T00:00:00.000+0000",
        "2020-01-01T00:00:00Z",           // no milliseconds
        "2020-01-01T00:00:00.00Z",        // two digits of milliseconds
        "2020-01-01T00:00:00.0000Z",      // four
        "2020-1-01T00:00:00.000Z",        // one-digit month
        "2020-01-01 00:00:00.000Z",       // space instead of T
        "2020-01-01t00:00:00.000Z",       // lower-case t
        "2020-01-01T00:00:00.000z",       // lower-case z
        "2020-01-01T00:00:00,000Z",       // comma
        "2020-00-10T00:00:00.000Z",       // month 0
        "2020-04-31T00:00:00.000Z",       // 31 April
        "2020-01-00T00:00:00.000Z",       // day 0
        "+020-01-01T00:00:00.000Z",       // sign in the year
        "-020-01-01T00:00:00.000Z",
        " 2020-01-01T00:00:00.000Z",
        "2020-01-01T00:00:00.000Z ",
        "2020-01-01T0a:00:00.000Z",
        "2020-01-01T 1:00:00.000Z",
        "yesterday",
        "",
    };
    for (const char* s : bad) CHECK(!nb::parse_iso_millis(s, ms), "invalid date accepted: \"" << s << "\"");
    CHECK(!nb::parse_iso_millis(std::string_view("2020-01-01T00:00:00.000Z\0", 25), ms), "trailing NUL accepted");

    CHECK(nb::format_http_date(784111777) == "Sun, 06 Nov 1994 08:49:37 GMT", "IMF-fixdate: " << nb::format_http_date(784111777));
    CHECK(nb::format_http_date(0) == "Thu, 01 Jan 1970 00:00:00 GMT", "IMF-fixdate of 0");
    CHECK(nb::format_http_date(951782400) == "Tue, 29 Feb 2000 00:00:00 GMT", "IMF-fixdate of 2000-02-29: " << nb::format_http_date(951782400));
    CHECK(nb::cached_http_date().size() == 29, "cached Date: " << nb::cached_http_date());
}

static std::vector<json> read_jsonl(const std::string& path) {
    std::vector<json> out;
    std::ifstream in(path);
    if (!in) {
        ++failures;
        std::cerr << "FAIL cannot read " << path << "\n";
        return out;
    }
    std::string line;
    while (std::getline(in, line))
        if (!line.empty()) out.push_back(json::parse(line));
    return out;
}

static void test_fixtures(const std::string& dir) {
    const auto work = read_jsonl(dir + "/work.jsonl");
    CHECK(!work.empty(), "no cases in work.jsonl");
    for (const json& c : work) {
        std::string out;
        const bool ok = nb::compute_work(c.at("request").dump(), out);
        CHECK(ok, "work fixture refused: " << c.at("name"));
        if (ok) {
            const json got = json::parse(out, nullptr, false);
            CHECK(got == c.at("answer"), "work fixture " << c.at("name") << ": got " << out);
        }
    }
    const auto rejected = read_jsonl(dir + "/rejected.jsonl");
    CHECK(!rejected.empty(), "no cases in rejected.jsonl");
    for (const json& c : rejected) {
        std::string out;
        CHECK(!nb::compute_work(c.at("body").get<std::string>(), out), "rejected fixture accepted: " << c.at("name"));
    }
    // A few more: null counts as missing, balance spellings, a non-object group.
    std::string out;
    CHECK(!nb::compute_work(R"({"product":null,"requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-12T10:53:17.773Z"]}})", out), "null product");
    CHECK(!nb::compute_work(R"({"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":null,"dates":["2020-01-12T10:53:17.773Z"]}})", out), "null balance");
    CHECK(!nb::compute_work(R"({"product":"p","requestId":"r","group":[]})", out), "group is an array");
    CHECK(!nb::compute_work(R"({"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":"2020-01-12T10:53:17.773Z"}})", out), "dates is a string");
    CHECK(!nb::compute_work("", out), "empty body");
    CHECK(!nb::compute_work(R"({"product":"p"} x)", out), "trailing garbage");
    CHECK(nb::compute_work(R"({"product":"p\u00e9","requestId":"r","group":{"kind":"k","default":false,"balance":-1.23456e3,"dates":["2020-01-12T10:53:17.773Z","2020-01-12T10:53:17.772Z"]}})", out) &&
              json::parse(out) == json::parse(R"({"product":"pé","requestId":"r","client":{"balance":-1234.56,"minDate":"2020-01-12T10:53:17.772Z","maxDate":"2020-01-12T10:53:17.773Z"}})"),
          "exponent balance, unicode product: " << out);
}

// --- HTTP, against the real server on a free port --------------------------

struct client {
    net::io_context& ioc;
    tcp::socket sock;
    beast::flat_buffer buf;
    client(net::io_context& io, const tcp::endpoint& ep) : ioc(io), sock(io) { sock.connect(ep); }

    void send(const std::string& raw) { net::write(sock, net::buffer(raw)); }

    http::response<http::string_body> read() {
        http::response<http::string_body> res;
        beast::error_code ec;
        http::read(sock, buf, res, ec);
        if (ec) res.result(0);  // status 0 = nothing read
        return res;
    }

    http::response<http::string_body> roundtrip(const std::string& raw) {
        send(raw);
        return read();
    }

    bool closed_by_peer() {
        char c;
        beast::error_code ec;
        sock.read_some(net::buffer(&c, 1), ec);
        return ec == net::error::eof;
    }
};

static std::string get(const std::string& path, const std::string& extra = "") {
    return "GET " + path + " HTTP/1.1\r\nHost: t\r\n" + extra + "\r\n";
}

static std::string post(const std::string& path, const std::string& body) {
    return "POST " + path + " HTTP/1.1\r\nHost: t\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
}

static const char* kDoc = R"({"product":"WidgetPro-7","requestId":"5f0c","group":{"kind":"retail","default":true,"balance":1234.56,"dates":["2020-01-12T10:53:17.773Z","2019-03-01T00:00:00.000Z","2021-07-30T23:59:59.999Z"]}})";
static const json kAnswer = json::parse(R"({"product":"WidgetPro-7","requestId":"5f0c","client":{"balance":1234.56,"minDate":"2019-03-01T00:00:00.000Z","maxDate":"2021-07-30T23:59:59.999Z"}})");

static bool is_work_answer(const http::response<http::string_body>& r) {
    return r.result_int() == 200 && r[http::field::content_type] == "application/json" &&
           json::parse(r.body(), nullptr, false) == kAnswer;
}

static std::string hex(std::size_t n) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%zx", n);
    return buf;
}

// Every HTTP test runs once per header mode: both parsers must give the
// same answers, the same framing and the same keep-alive.
static void test_http(nb::header_mode headers) {
    net::io_context server_ioc{2};
    const auto any = [] { return tcp::endpoint{net::ip::make_address("127.0.0.1"), 0}; };
    auto l0 = nb::start_listener(server_ioc, any(), nb::root_mode::none, headers);
    auto l1 = nb::start_listener(server_ioc, any(), nb::root_mode::work, headers);
    auto l2 = nb::start_listener(server_ioc, any(), nb::root_mode::blank, headers);
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) threads.emplace_back([&] { server_ioc.run(); });

    net::io_context ioc;
    {
        client c(ioc, nb::local_endpoint(*l0));
        auto r = c.roundtrip(get("/blank"));
        CHECK(r.result_int() == 200 && r.body() == "OK" && r[http::field::content_type] == "text/plain", "blank: " << r);
        CHECK(r[http::field::content_length] == "2", "blank Content-Length");
        CHECK(r[http::field::date].size() == 29 && r[http::field::date].ends_with(" GMT"), "Date: " << r[http::field::date]);
        CHECK(r.keep_alive(), "keep-alive by default");

        r = c.roundtrip(post("/work", kDoc));
        CHECK(is_work_answer(r), "work: " << r);
        r = c.roundtrip(get("/echo/abc-._~XYZ09?x=1"));
        CHECK(r.result_int() == 200 && r.body() == "abc-._~XYZ09", "echo: " << r);
        CHECK(c.roundtrip(get("/echo")).result_int() == 404, "/echo without slash");
        CHECK(c.roundtrip(get("/")).result_int() == 404, "/ without a mode");
        CHECK(c.roundtrip(get("/nothing/here")).result_int() == 404, "unknown path");
        CHECK(c.roundtrip(get("/work")).result_int() == 405, "GET /work");
        CHECK(c.roundtrip(post("/work", "{\"product\": \"x\", ")).result_int() == 400, "bad JSON");
        CHECK(c.roundtrip(post("/work", R"({"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2021-02-29T00:00:00.000Z"]}})")).result_int() == 400, "bad date");

        // Chunked request body, in two chunks.
        const std::string doc = kDoc;
        const std::string a = doc.substr(0, 40), b = doc.substr(40);
        char hex[32];
        std::snprintf(hex, sizeof hex, "%zx", a.size());
        std::string chunked = "POST /work HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(hex) + "\r\n" + a + "\r\n";
        std::snprintf(hex, sizeof hex, "%zx", b.size());
        chunked += std::string(hex) + "\r\n" + b + "\r\n0\r\n\r\n";
        CHECK(is_work_answer(c.roundtrip(chunked)), "chunked body");

        // A request written in three pieces.
        const std::string whole = post("/work", kDoc);
        c.send(whole.substr(0, 10));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        c.send(whole.substr(10, 60));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        c.send(whole.substr(70));
        CHECK(is_work_answer(c.read()), "split request");

        // Pipelined requests on one connection, then Connection: close.
        c.send(get("/blank") + get("/echo/one") + get("/echo/two"));
        CHECK(c.read().body() == "OK" && c.read().body() == "one" && c.read().body() == "two", "pipelined answers");
        for (int i = 0; i < 100; ++i) {
            if (c.roundtrip(get("/blank")).body() != "OK") {
                CHECK(false, "keep-alive request " << i);
                break;
            }
        }
        r = c.roundtrip(get("/blank", "Connection: close\r\n"));
        CHECK(r.result_int() == 200 && !r.keep_alive(), "Connection: close answered: " << r);
        CHECK(c.closed_by_peer(), "connection closed after Connection: close");
    }
    {
        // Many header fields (a browser's, cookies, 40 more): the answers
        // are the same whether they are stored or dropped, and the
        // Content-Length among them still frames the body.
        std::string fields =
            "Host: t\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0\r\n"
            "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
            "Accept-Language: en-GB,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\n"
            "Cookie: session=0123456789abcdef; theme=dark; consent=yes\r\nReferer: http://t/\r\n"
            "Cache-Control: no-cache\r\nPragma: no-cache\r\nDNT: 1\r\nUpgrade-Insecure-Requests: 1\r\n";
        for (int i = 0; i < 40; ++i)
            fields += "X-Filler-" + std::to_string(i) + ": " + std::string(40, char('a' + i % 26)) + "\r\n";
        const std::string doc = kDoc;
        client c(ioc, nb::local_endpoint(*l0));
        for (int i = 0; i < 3; ++i) {
            auto r = c.roundtrip("POST /work HTTP/1.1\r\n" + fields + "Content-Type: application/json\r\nContent-Length: " +
                                 std::to_string(doc.size()) + "\r\n\r\n" + doc);
            CHECK(is_work_answer(r) && r.keep_alive(), "work with many headers, request " << i << ": " << r);
            r = c.roundtrip("GET /echo/many HTTP/1.1\r\n" + fields + "\r\n");
            CHECK(r.result_int() == 200 && r.body() == "many", "echo with many headers, request " << i << ": " << r);
        }
        auto r = c.roundtrip("GET /blank HTTP/1.1\r\n" + fields + "Connection: close\r\n\r\n");
        CHECK(r.result_int() == 200 && !r.keep_alive(), "Connection: close after many headers: " << r);
        CHECK(c.closed_by_peer(), "closed after many headers and Connection: close");
    }
    {
        // A chunked body with a chunk extension and a trailer field, then
        // the next request on the same connection.
        const std::string doc = kDoc;
        const std::string a = doc.substr(0, 7), b = doc.substr(7, 100), d = doc.substr(107);
        client c(ioc, nb::local_endpoint(*l0));
        auto r = c.roundtrip("POST /work HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n" +
                             hex(a.size()) + ";ext=1\r\n" + a + "\r\n" + hex(b.size()) + "\r\n" + b + "\r\n" +
                             hex(d.size()) + "\r\n" + d + "\r\n0\r\nX-Sum: 42\r\n\r\n");
        CHECK(is_work_answer(r) && r.keep_alive(), "chunked body with extension and trailer: " << r);
        CHECK(c.roundtrip(get("/blank")).body() == "OK", "request after a chunked one");
    }
    {
        // HTTP/1.0 with Connection: keep-alive stays open; keep-alive and
        // close spelled in any case, close winning.
        client c(ioc, nb::local_endpoint(*l0));
        auto r = c.roundtrip("GET /blank HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
        CHECK(r.result_int() == 200 && r.keep_alive() && r.version() == 10, "HTTP/1.0 keep-alive: " << r);
        r = c.roundtrip("GET /echo/again HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        CHECK(r.body() == "again" && r.keep_alive(), "HTTP/1.0 keep-alive, second request: " << r);
        r = c.roundtrip("GET /blank HTTP/1.1\r\nHost: t\r\nConnection: keep-alive, CLOSE\r\n\r\n");
        CHECK(r.result_int() == 200 && !r.keep_alive(), "Connection: keep-alive, CLOSE: " << r);
        CHECK(c.closed_by_peer(), "closed after Connection: keep-alive, CLOSE");
    }
    {
        // A body of exactly the limit (the document padded with spaces) is
        // read and answered.
        std::string doc = kDoc;
        doc.resize(nb::kBodyLimit, ' ');
        client c(ioc, nb::local_endpoint(*l0));
        CHECK(is_work_answer(c.roundtrip(post("/work", doc))), "body of exactly 1 MiB");
    }
    {
        // A chunked body that goes over the limit: 512 KiB sent, then a
        // chunk that would pass 1 MiB is refused from its size alone.
        client c(ioc, nb::local_endpoint(*l0));
        const std::size_t half = nb::kBodyLimit / 2;
        c.send("POST /work HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" + hex(half) + "\r\n" +
               std::string(half, ' ') + "\r\n" + hex(half + 1) + "\r\n");
        const auto r = c.read();
        CHECK(r.result_int() == 413 && !r.keep_alive(), "chunked body over the limit: " << r.result_int());
    }
    {
        // Framing the parser must refuse whichever way it keeps fields: 400.
        const char* bad[] = {
            "POST /work HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST /work HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
            "POST /work HTTP/1.1\r\nHost: t\r\nContent-Length: 5x\r\n\r\nhello",
            "GET /blank HTTP/1.1\r\nHost: t\r\nBad Name: x\r\n\r\n",
        };
        for (const char* raw : bad) {
            client c(ioc, nb::local_endpoint(*l0));
            CHECK(c.roundtrip(raw).result_int() == 400, "bad framing answered 400: " << raw);
        }
        // A header over Beast's 8 KiB limit: 400 too.
        client c(ioc, nb::local_endpoint(*l0));
        CHECK(c.roundtrip(get("/blank", "X-Big: " + std::string(9000, 'x') + "\r\n")).result_int() == 400,
              "header over 8 KiB");
    }
    {
        // A method Beast does not know is kept as unknown and answered 405.
        client c(ioc, nb::local_endpoint(*l0));
        auto r = c.roundtrip("BREW /blank HTTP/1.1\r\nHost: t\r\n\r\n");
        CHECK(r.result_int() == 405 && r[http::field::allow] == "GET", "unknown method: " << r);
        CHECK(c.roundtrip(get("/blank")).body() == "OK", "request after an unknown method");
    }
    {
        // HTTP/1.0 without keep-alive: answered, then closed.
        client c(ioc, nb::local_endpoint(*l0));
        auto r = c.roundtrip("GET /blank HTTP/1.0\r\n\r\n");
        CHECK(r.result_int() == 200 && r.body() == "OK", "HTTP/1.0: " << r);
        CHECK(c.closed_by_peer(), "HTTP/1.0 connection closed");
    }
    {
        // A body over 1 MiB: 413 (Beast refuses it from the Content-Length
        // header, so the body is not sent; the server closes the connection).
        client c(ioc, nb::local_endpoint(*l0));
        auto r = c.roundtrip("POST /work HTTP/1.1\r\nHost: t\r\nContent-Length: 1048577\r\n\r\n");
        CHECK(r.result_int() == 413, "oversized body: " << r.result_int());
    }
    {
        // Garbage instead of HTTP: 400.
        client c(ioc, nb::local_endpoint(*l0));
        CHECK(c.roundtrip("NOT HTTP AT ALL\r\n\r\n").result_int() == 400, "garbage request");
    }
    {
        client c(ioc, nb::local_endpoint(*l1));  // mode 1
        CHECK(is_work_answer(c.roundtrip(post("/", kDoc))), "mode 1: POST /");
        CHECK(c.roundtrip(get("/blank")).body() == "OK", "mode 1: /blank still there");
    }
    {
        client c(ioc, nb::local_endpoint(*l2));  // mode 0
        auto r = c.roundtrip(get("/"));
        CHECK(r.result_int() == 200 && r.body() == "OK", "mode 0: GET /");
    }

    server_ioc.stop();
    for (auto& t : threads) t.join();
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: " << argv[0] << " FIXTURES_DIR\n";
        return 2;
    }
    test_dates();
    test_fixtures(argv[1]);
    for (const auto headers : {nb::header_mode::all, nb::header_mode::needed}) {
        context = headers == nb::header_mode::all ? " (HEADERS=all)" : " (HEADERS=needed)";
        const int before = checks;
        test_http(headers);
        std::cout << "http" << context << ": " << checks - before << " checks\n";
    }
    context.clear();
    std::cout << checks << " checks, " << failures << " failed\n";
    return failures ? 1 : 0;
}
