// netbench server on Boost.Beast / Boost.Asio: see contract/CONTRACT.md.
//
// HOST and PORT (defaults 127.0.0.1 and 1234) say where to listen; THREADS
// how many threads run the one io_context (default: one per online CPU).
// HEADERS says how requests are read: "all" (the default), Beast's usual
// http::request_parser, every header field stored in http::fields; or
// "needed", a parser that keeps only the method, target, version and body
// (seed 000's comparison of full and needed-only header parsing).
// An optional argument "0" or "1" makes "/" answer as /blank or /work.
// SIGTERM (or SIGINT) stops the io_context and the process exits 0.
#include "server.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace net = boost::asio;

namespace {

std::string getenv_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

// A whole decimal number in [lo, hi], or -1.
long parse_number(const std::string& s, long lo, long hi) {
    if (s.empty() || s.size() > 9) return -1;
    long v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return -1;
        v = v * 10 + (c - '0');
    }
    return v >= lo && v <= hi ? v : -1;
}

}  // namespace

int main(int argc, char** argv) {
    nb::root_mode mode = nb::root_mode::none;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "0") {
            mode = nb::root_mode::blank;
        } else if (a == "1") {
            mode = nb::root_mode::work;
        } else {
            std::cerr << "server: unknown argument \"" << a << "\" (expected 0 or 1)\n";
            return 2;
        }
    }

    const std::string host = getenv_or("HOST", "127.0.0.1");
    const long port = parse_number(getenv_or("PORT", "1234"), 0, 65535);
    if (port < 0) {
        std::cerr << "server: bad PORT\n";
        return 2;
    }
    long threads = 0;
    if (const char* t = std::getenv("THREADS"); t && *t) {
        threads = parse_number(t, 1, 4096);
        if (threads < 0) {
            std::cerr << "server: bad THREADS (a number from 1)\n";
            return 2;
        }
    } else {
        threads = static_cast<long>(std::thread::hardware_concurrency());
        if (threads < 1) threads = 1;
    }

    nb::header_mode headers = nb::header_mode::all;
    if (const std::string h = getenv_or("HEADERS", "all"); h == "needed") {
        headers = nb::header_mode::needed;
    } else if (h != "all") {
        std::cerr << "server: bad HEADERS \"" << h << "\" (all or needed)\n";
        return 2;
    }

    try {
        boost::system::error_code ec;
        const auto address = net::ip::make_address(host, ec);
        if (ec) {
            std::cerr << "server: bad HOST \"" << host << "\": " << ec.message() << "\n";
            return 2;
        }

        // The concurrency hint tells Asio how many threads will run it (1
        // lets it skip locking).
        net::io_context ioc{static_cast<int>(threads)};
        auto l = nb::start_listener(ioc, {address, static_cast<unsigned short>(port)}, mode, headers);

        net::signal_set signals(ioc, SIGTERM, SIGINT);
        signals.async_wait([&ioc](const boost::system::error_code&, int) { ioc.stop(); });

        std::vector<std::thread> pool;
        pool.reserve(static_cast<std::size_t>(threads - 1));
        for (long i = 1; i < threads; ++i) pool.emplace_back([&ioc] { ioc.run(); });
        ioc.run();  // the main thread is one of the threads
        for (auto& t : pool) t.join();
    } catch (const std::exception& e) {
        std::cerr << "server: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
