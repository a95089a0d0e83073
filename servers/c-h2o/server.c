/* netbench server on libh2o's own event loop (evloop, epoll), see contract/CONTRACT.md.
 *
 * THREADS (environment): number of threads, each with its own h2o_evloop, its
 * own h2o_context and its own SO_REUSEPORT listening socket, so the kernel
 * spreads connections over the loops and a connection stays on the loop that
 * accepted it. Unset: one per CPU available to the process.
 * Optional first argument: "0" makes GET / act as /blank, "1" makes POST / act
 * as /work.
 *
 * Contract 1.5: TLS_PORT (with TLS_CERT and TLS_KEY) opens a TLS listener whose
 * OpenSSL context h2o drives, ALPN h2 or http/1.1 (h2o_alpn_protocols);
 * H2C_PORT opens another cleartext listener, where h2o's HTTP/1 handler hands a
 * connection that starts with the HTTP/2 preface to its HTTP/2 handler (prior
 * knowledge). Each loop gets its own SO_REUSEPORT socket on every port. */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <h2o.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "work.h"

/* Request bodies above this are refused by h2o with 413 (the contract allows
 * it above 1 MiB; netbench never sends more than 64 KiB). */
#define MAX_BODY (1024 * 1024)

static h2o_globalconf_t config;
static SSL_CTX *ssl_ctx; /* NULL without TLS_PORT */
static int root_mode = -1; /* -1: / is unknown; 0: / is /blank; 1: / is /work */

/* The ports a loop listens on; a port whose variable is unset has no socket. */
enum { LISTEN_HTTP, LISTEN_TLS, LISTEN_H2C, LISTEN_COUNT };

struct worker {
    pthread_t thread;
    int fds[LISTEN_COUNT]; /* this loop's listening sockets, -1 for a port not opened */
    h2o_evloop_t *loop;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept_ctx;     /* cleartext: HTTP/1.1, and HTTP/2 by prior knowledge */
    h2o_accept_ctx_t tls_accept_ctx; /* the same with the TLS context */
};

static int send_body(h2o_req_t *req, int status, const char *reason, const char *type, const char *body, size_t len)
{
    req->res.status = status;
    req->res.reason = reason;
    req->res.content_length = len; /* h2o_send_inline leaves it unset */
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, type, strlen(type));
    h2o_send_inline(req, body, len); /* copies the body into the request's pool */
    return 0;
}

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    (void)self;
    size_t plen = req->query_at != SIZE_MAX ? req->query_at : req->path.len;
    const char *path = req->path.base;
    int is_get = h2o_memis(req->method.base, req->method.len, H2O_STRLIT("GET"));
    int is_post = h2o_memis(req->method.base, req->method.len, H2O_STRLIT("POST"));
    int is_root = h2o_memis(path, plen, H2O_STRLIT("/"));

    if (is_get && (h2o_memis(path, plen, H2O_STRLIT("/blank")) || (is_root && root_mode == 0)))
        return send_body(req, 200, "OK", "text/plain", "OK", 2);
    if (is_get && plen >= 6 && memcmp(path, "/echo/", 6) == 0)
        return send_body(req, 200, "OK", "text/plain", path + 6, plen - 6);
    if (is_post && (h2o_memis(path, plen, H2O_STRLIT("/work")) || (is_root && root_mode == 1))) {
        /* h2o has read the whole body (chunked or not) before calling us. */
        char *out;
        size_t out_len;
        if (work_run(req->entity.base ? req->entity.base : "", req->entity.len, &out, &out_len) != 200)
            return send_body(req, 400, "Bad Request", "text/plain", "Bad Request", 11);
        send_body(req, 200, "OK", "application/json", out, out_len);
        free(out);
        return 0;
    }
    return send_body(req, 404, "Not Found", "text/plain", "Not Found", 9);
}

static void on_accept(h2o_socket_t *listener, const char *err)
{
    if (err != NULL)
        return;
    h2o_accept_ctx_t *accept_ctx = listener->data;
    /* Up to 16 connections per wake-up, as h2o's own server does. */
    for (int i = 0; i < 16; i++) {
        h2o_socket_t *sock = h2o_evloop_socket_accept(listener);
        if (sock == NULL)
            return;
        h2o_accept(accept_ctx, sock);
    }
}

static void *run_loop(void *arg)
{
    struct worker *w = arg;
    w->loop = h2o_evloop_create();
    h2o_context_init(&w->ctx, w->loop, &config);
    w->accept_ctx.ctx = &w->ctx;
    w->accept_ctx.hosts = config.hosts;
    w->tls_accept_ctx = w->accept_ctx;
    w->tls_accept_ctx.ssl_ctx = ssl_ctx;
    for (int i = 0; i < LISTEN_COUNT; i++) {
        if (w->fds[i] < 0)
            continue;
        h2o_socket_t *listener = h2o_evloop_socket_create(w->loop, w->fds[i], H2O_SOCKET_FLAG_DONT_READ);
        listener->data = i == LISTEN_TLS ? &w->tls_accept_ctx : &w->accept_ctx;
        h2o_socket_read_start(listener, on_accept);
    }
    while (h2o_evloop_run(w->loop, INT32_MAX) == 0)
        ;
    fprintf(stderr, "event loop failed: %s\n", strerror(errno));
    exit(1);
}

static int listen_on(const struct addrinfo *ai)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    int on = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* The TLS context for TLS_PORT: OpenSSL's defaults for a server, the
 * certificate chain and key the runner gave, and ALPN h2 or http/1.1 chosen by
 * h2o's own callback. NULL (after saying why) on failure. */
static SSL_CTX *make_ssl_ctx(const char *cert, const char *key)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL || SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
        fprintf(stderr, "TLS_CERT=%s, TLS_KEY=%s: ", cert, key);
        ERR_print_errors_fp(stderr);
        SSL_CTX_free(ctx);
        return NULL;
    }
    h2o_ssl_register_alpn_protocols(ctx, h2o_alpn_protocols);
    return ctx;
}

/* CPUs this process may run on (follows taskset/cgroup cpusets), else online CPUs. */
static int cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        if (strcmp(argv[1], "0") == 0)
            root_mode = 0;
        else if (strcmp(argv[1], "1") == 0)
            root_mode = 1;
        else {
            fprintf(stderr, "usage: %s [0|1]\n", argv[0]);
            return 2;
        }
    }
    const char *host = getenv("HOST"), *port = getenv("PORT"), *threads_env = getenv("THREADS");
    if (host == NULL || *host == '\0')
        host = "127.0.0.1";
    if (port == NULL || *port == '\0')
        port = "1234";
    int threads = cpu_count();
    if (threads_env != NULL && *threads_env != '\0') {
        threads = atoi(threads_env);
        if (threads < 1 || threads > 1024) {
            fprintf(stderr, "THREADS must be 1-1024, not %s\n", threads_env);
            return 2;
        }
    }
    /* The ports in the order of LISTEN_*; unset or empty: not opened. */
    const char *ports[LISTEN_COUNT] = {port, getenv("TLS_PORT"), getenv("H2C_PORT")};
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *addrs[LISTEN_COUNT] = {NULL};
    for (int l = 0; l < LISTEN_COUNT; l++) {
        if (ports[l] == NULL || *ports[l] == '\0')
            continue;
        int err = getaddrinfo(host, ports[l], &hints, &addrs[l]);
        if (err != 0) {
            fprintf(stderr, "cannot resolve %s:%s: %s\n", host, ports[l], gai_strerror(err));
            return 1;
        }
    }
    if (addrs[LISTEN_TLS] != NULL) {
        const char *cert = getenv("TLS_CERT"), *key = getenv("TLS_KEY");
        if (cert == NULL || *cert == '\0' || key == NULL || *key == '\0') {
            fprintf(stderr, "TLS_PORT needs TLS_CERT and TLS_KEY\n");
            return 2;
        }
        if ((ssl_ctx = make_ssl_ctx(cert, key)) == NULL)
            return 1;
    }

    signal(SIGPIPE, SIG_IGN);
    h2o_config_init(&config);
    config.max_request_entity_size = MAX_BODY;
    h2o_hostconf_t *hostconf = h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *pathconf = h2o_config_register_path(hostconf, "/", 0);
    h2o_handler_t *handler = h2o_create_handler(pathconf, sizeof(*handler));
    handler->on_req = on_req;

    struct worker *workers = calloc((size_t)threads, sizeof(*workers));
    for (int i = 0; i < threads; i++) {
        for (int l = 0; l < LISTEN_COUNT; l++) {
            workers[i].fds[l] = -1;
            if (addrs[l] != NULL && (workers[i].fds[l] = listen_on(addrs[l])) < 0) {
                fprintf(stderr, "cannot listen on %s:%s: %s\n", host, ports[l], strerror(errno));
                return 1;
            }
        }
    }
    for (int l = 0; l < LISTEN_COUNT; l++) {
        if (addrs[l] != NULL)
            freeaddrinfo(addrs[l]);
    }
    /* SIGTERM keeps its default action and ends the process: nothing to clean up. */
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&workers[i].thread, NULL, run_loop, &workers[i]) != 0) {
            fprintf(stderr, "cannot start thread %d\n", i);
            return 1;
        }
    }
    run_loop(&workers[0]);
    return 1;
}
