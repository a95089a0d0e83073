// Tests of the cpp-beast server: the date parser, the /work computation
// against contract/fixtures, and the HTTP server itself (in-process, on a
// free port of 127.0.0.1). Usage: bin/test FIXTURES_DIR. Exits 1 on failure.
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

#define CHECK(cond, what)                                                        \
    do {                                                                         \
        ++checks;                                                                \
        if (!(cond)) {                                                           \
            ++failures;                                                          \
            std::cerr << "FAIL " << __FILE__ << ":" << __LINE__ << ": " << what \
                      << "  [" #cond "]\n";                                      \
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

static void test_http() {
    net::io_context server_ioc{2};
    auto l0 = nb::start_listener(server_ioc, {net::ip::make_address("127.0.0.1"), 0}, nb::root_mode::none);
    auto l1 = nb::start_listener(server_ioc, {net::ip::make_address("127.0.0.1"), 0}, nb::root_mode::work);
    auto l2 = nb::start_listener(server_ioc, {net::ip::make_address("127.0.0.1"), 0}, nb::root_mode::blank);
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
    test_http();
    std::cout << checks << " checks, " << failures << " failed\n";
    return failures ? 1 : 0;
}
