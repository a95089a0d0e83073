// The HTTP side: routing and the Beast async server (acceptor + sessions).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <memory>

namespace nb {

// What "/" answers: the optional first argument "0" or "1" of the older
// NetBenchmarks suite.
enum class root_mode { none, blank, work };

// How requests are read (HEADERS at start-up): all, Beast's usual
// http::request_parser storing every field in http::fields (the default);
// or needed, a parser on http::basic_parser<true> that keeps only the
// method, target, version and body (seed 000's "parse only what you need").
enum class header_mode { all, needed };

// Request bodies over this are answered 413 (the contract allows it).
constexpr std::uint64_t kBodyLimit = 1 << 20;

using request = boost::beast::http::request<boost::beast::http::string_body>;
using response = boost::beast::http::response<boost::beast::http::string_body>;

// Fills res (status, headers, body, keep-alive) for req.
void handle_request(const request& req, response& res, root_mode mode);

// Opens, binds and listens on endpoint (throws boost::system::system_error),
// then accepts connections on ioc, each served by its own session whose
// requests are read as headers says.
class listener;
std::shared_ptr<listener> start_listener(boost::asio::io_context& ioc,
                                         const boost::asio::ip::tcp::endpoint& endpoint,
                                         root_mode mode,
                                         header_mode headers = header_mode::all);
// The address the listener is bound to (for a port 0 endpoint in tests).
boost::asio::ip::tcp::endpoint local_endpoint(const listener& l);

}  // namespace nb
