#include "server.hpp"

#include "work.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/version.hpp>

#include <chrono>
#include <iostream>
#include <optional>
#include <string_view>

namespace nb {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// A connection that sends nothing for this long is closed (as in Beast's
// http_server_async example).
constexpr std::chrono::seconds kTimeout{30};

void set_common(response& res, http::status status, std::string_view content_type) {
    res.result(status);
    res.set(http::field::date, cached_http_date());
    res.set(http::field::server, BOOST_BEAST_VERSION_STRING);
    res.set(http::field::content_type, beast::string_view(content_type.data(), content_type.size()));
}

void text(response& res, http::status status, std::string_view body) {
    set_common(res, status, "text/plain");
    res.body().assign(body.data(), body.size());
}

// The routes. Req is a request as either parser gives it: http::request
// (HEADERS=all) or needed_parser (HEADERS=needed), each with method(),
// target(), version(), keep_alive() and body(), so both modes answer
// through this one code and their answers cannot drift apart.
template <class Req>
void route(const Req& req, response& res, root_mode mode) {
    res.version(req.version() == 10 ? 10 : 11);
    res.keep_alive(req.keep_alive());

    const beast::string_view target = req.target();
    const std::string_view full(target.data(), target.size());
    const std::string_view path = full.substr(0, full.find('?'));
    const http::verb method = req.method();

    enum class route { none, blank, work, echo } r = route::none;
    if (path == "/blank") {
        r = route::blank;
    } else if (path == "/work") {
        r = route::work;
    } else if (path.size() >= 6 && path.substr(0, 6) == "/echo/") {
        r = route::echo;
    } else if (path == "/") {
        r = mode == root_mode::blank ? route::blank
          : mode == root_mode::work  ? route::work
                                     : route::none;
    }

    const http::verb wanted = r == route::work ? http::verb::post : http::verb::get;
    if (r == route::none) {
        text(res, http::status::not_found, "not found");
    } else if (method != wanted) {
        text(res, http::status::method_not_allowed, "method not allowed");
        res.set(http::field::allow, r == route::work ? "POST" : "GET");
    } else if (r == route::blank) {
        text(res, http::status::ok, "OK");
    } else if (r == route::echo) {
        text(res, http::status::ok, path.substr(6));
    } else {
        const std::string& body = req.body();
        if (compute_work(body, res.body())) {
            set_common(res, http::status::ok, "application/json");
        } else {
            text(res, http::status::bad_request, "bad request");
        }
    }
    res.prepare_payload();  // Content-Length
}

}  // namespace

void handle_request(const request& req, response& res, root_mode mode) { route(req, res, mode); }

namespace {

// HEADERS=needed: a request parser that keeps only what route() reads.
// http::request_parser stores every field in the message's http::fields (a
// copy and an index entry each, most of them never looked at); this one
// drops every field as it is parsed, as a server that parses only the
// headers it needs would. Framing and keep-alive lose nothing: basic_parser
// itself reads Content-Length, Transfer-Encoding and Connection before it
// calls on_field_impl, refuses conflicting ones and enforces the body
// limit, so the same requests are accepted, refused, delimited and kept
// alive as with request_parser, and answered the same.
class needed_parser : public http::basic_parser<true> {
public:
    http::verb method() const { return method_; }
    beast::string_view target() const { return target_; }
    unsigned version() const { return version_; }
    const std::string& body() const { return body_; }
    // keep_alive() is basic_parser's own, from the version and Connection.

private:
    void on_request_impl(http::verb method, beast::string_view, beast::string_view target,
                         int version, beast::error_code&) override {
        // An unknown method stays verb::unknown, which every route answers
        // 405, as it does request_parser's message.
        method_ = method;
        // Copied: the target points into the read buffer, which the reads
        // of the rest of the request may move.
        target_.assign(target.data(), target.size());
        version_ = static_cast<unsigned>(version);
    }

    // Never called: this is a request parser.
    void on_response_impl(int, beast::string_view, int, beast::error_code&) override {}

    // The point of this parser: a field costs nothing past basic_parser's
    // own parsing of it.
    void on_field_impl(http::field, beast::string_view, beast::string_view,
                       beast::error_code&) override {}

    void on_header_impl(beast::error_code&) override {}

    void on_body_init_impl(const boost::optional<std::uint64_t>& length,
                           beast::error_code&) override {
        // As string_body's reader does: reserve a known length (basic_parser
        // has already refused one over the body limit).
        if (length) body_.reserve(static_cast<std::size_t>(*length));
    }

    std::size_t on_body_impl(beast::string_view body, beast::error_code&) override {
        body_.append(body.data(), body.size());
        return body.size();
    }

    // basic_parser checks each chunk's size against the body limit itself.
    // Chunk extensions are dropped, as request_parser drops them; trailer
    // fields come through on_field_impl, which request_parser stores with
    // the header's and this one drops.
    void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override {}

    std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view body,
                                   beast::error_code& ec) override {
        return on_body_impl(body, ec);
    }

    void on_finish_impl(beast::error_code&) override {}

    http::verb method_ = http::verb::unknown;
    std::string target_;
    unsigned version_ = 11;
    std::string body_;
};

// HEADERS=all: the message request_parser built, moved out as it always was.
void answer(http::request_parser<http::string_body>& parser, response& res, root_mode mode) {
    const request req = parser.release();
    handle_request(req, res, mode);
}

// HEADERS=needed: the parser itself holds what the routes read.
void answer(needed_parser& parser, response& res, root_mode mode) { route(parser, res, mode); }

// One connection: read a request, answer it, and again while keep-alive.
// The socket lives on its own strand, so with several threads running the
// io_context the session's handlers never run concurrently. Parser is how
// requests are read: http::request_parser<http::string_body> (HEADERS=all)
// or needed_parser. A template rather than a branch per request, so each
// mode runs only its own parser's code.
template <class Parser>
class session : public std::enable_shared_from_this<session<Parser>> {
public:
    session(tcp::socket&& socket, root_mode mode) : stream_(std::move(socket)), mode_(mode) {}

    void run() {
        net::dispatch(stream_.get_executor(),
                      beast::bind_front_handler(&session::do_read, this->shared_from_this()));
    }

private:
    void do_read() {
        parser_.emplace();
        parser_->body_limit(kBodyLimit);
        stream_.expires_after(kTimeout);
        http::async_read(stream_, buffer_, *parser_,
                         beast::bind_front_handler(&session::on_read, this->shared_from_this()));
    }

    void on_read(beast::error_code ec, std::size_t) {
        if (ec == http::error::end_of_stream) return do_close();
        if (ec) {
            // A request Beast could not parse gets an answer before the
            // connection is closed; I/O errors and timeouts just close it.
            if (ec == http::error::body_limit)
                return reply_error(http::status::payload_too_large, "body too large");
            if (&ec.category() == &http::make_error_code(http::error::bad_target).category() &&
                ec != http::error::partial_message)
                return reply_error(http::status::bad_request, "bad request");
            return;
        }
        res_ = response{};
        answer(*parser_, res_, mode_);
        do_write();
    }

    void reply_error(http::status status, std::string_view body) {
        res_ = response{};
        res_.version(11);
        text(res_, status, body);
        res_.keep_alive(false);
        res_.prepare_payload();
        do_write();
    }

    void do_write() {
        close_after_write_ = res_.need_eof();
        http::async_write(stream_, res_,
                          beast::bind_front_handler(&session::on_write, this->shared_from_this()));
    }

    void on_write(beast::error_code ec, std::size_t) {
        if (ec) return;
        if (close_after_write_) return do_close();
        do_read();
    }

    void do_close() {
        beast::error_code ec;
        stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    }

    beast::tcp_stream stream_;
    beast::flat_buffer buffer_;
    std::optional<Parser> parser_;  // a fresh one per request, as Beast requires
    response res_;
    root_mode mode_;
    bool close_after_write_ = false;
};

}  // namespace

class listener : public std::enable_shared_from_this<listener> {
public:
    listener(net::io_context& ioc, const tcp::endpoint& endpoint, root_mode mode,
             header_mode headers)
        : ioc_(ioc), acceptor_(net::make_strand(ioc)), mode_(mode), headers_(headers) {
        acceptor_.open(endpoint.protocol());
        acceptor_.set_option(net::socket_base::reuse_address(true));
        acceptor_.bind(endpoint);
        acceptor_.listen(net::socket_base::max_listen_connections);
    }

    void run() { do_accept(); }

    tcp::endpoint endpoint() const { return acceptor_.local_endpoint(); }

private:
    void do_accept() {
        // Each new connection gets its own strand on the shared io_context.
        acceptor_.async_accept(net::make_strand(ioc_),
                               beast::bind_front_handler(&listener::on_accept, shared_from_this()));
    }

    void on_accept(beast::error_code ec, tcp::socket socket) {
        if (ec == net::error::operation_aborted) return;  // shutting down
        if (ec) {
            std::cerr << "accept: " << ec.message() << "\n";  // e.g. EMFILE; keep accepting
        } else if (headers_ == header_mode::needed) {
            std::make_shared<session<needed_parser>>(std::move(socket), mode_)->run();
        } else {
            std::make_shared<session<http::request_parser<http::string_body>>>(std::move(socket),
                                                                              mode_)
                ->run();
        }
        do_accept();
    }

    net::io_context& ioc_;
    tcp::acceptor acceptor_;
    root_mode mode_;
    header_mode headers_;
};

std::shared_ptr<listener> start_listener(net::io_context& ioc, const tcp::endpoint& endpoint,
                                         root_mode mode, header_mode headers) {
    auto l = std::make_shared<listener>(ioc, endpoint, mode, headers);
    l->run();
    return l;
}

tcp::endpoint local_endpoint(const listener& l) { return l.endpoint(); }

}  // namespace nb
