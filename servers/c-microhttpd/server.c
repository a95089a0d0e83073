/* netbench server on GNU libmicrohttpd (see contract/CONTRACT.md).
 *
 * MODE (environment) picks MHD's threading:
 *   unset or "pool-per-cpu"  internal epoll, MHD_OPTION_THREAD_POOL_SIZE = CPUs
 *                            available to the process (each pool thread runs its
 *                            own epoll loop and keeps the connections it accepts)
 *   "pool-1"                 internal epoll, one thread
 *   "select"                 internal select() polling thread, one thread
 *   "thread-per-connection"  MHD_USE_THREAD_PER_CONNECTION: a listening thread
 *                            (poll) and one thread per connection
 * Optional first argument: "0" makes GET / act as /blank, "1" makes POST / act
 * as /work. */
#define _GNU_SOURCE
#include <microhttpd.h>
#include <netdb.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "work.h"

/* Request bodies above this are refused with 413 (the contract allows it
 * above 1 MiB; netbench never sends more than 64 KiB). */
#define MAX_BODY (1024 * 1024)

static int root_mode = -1; /* -1: / is unknown; 0: / is /blank; 1: / is /work */

/* The per-request state of every request but a POST /work. */
static char not_work;

/* The body of a POST /work, gathered from the upload_data calls. */
struct upload {
    char *buf;
    size_t len, cap;
    int too_big;
};

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, const char *type, const char *body,
                             size_t len, enum MHD_ResponseMemoryMode mem, int close)
{
    struct MHD_Response *res = MHD_create_response_from_buffer(len, (void *)body, mem);
    if (res == NULL) {
        if (mem == MHD_RESPMEM_MUST_FREE)
            free((void *)body);
        return MHD_NO;
    }
    MHD_add_response_header(res, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (close)
        MHD_add_response_header(res, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result r = MHD_queue_response(conn, status, res);
    MHD_destroy_response(res);
    return r;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned int status, const char *body)
{
    return reply(conn, status, "text/plain", body, strlen(body), MHD_RESPMEM_PERSISTENT, 0);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)cls;
    (void)version;
    int is_work = strcmp(method, MHD_HTTP_METHOD_POST) == 0 &&
                  (strcmp(url, "/work") == 0 || (root_mode == 1 && strcmp(url, "/") == 0));
    if (*con_cls == NULL) {
        /* First call: the headers are in, no body yet. Nothing is answered here:
         * libmicrohttpd closes the connection after a response queued this early
         * (except a 413 that refuses a body, where that is wanted). */
        if (!is_work) {
            *con_cls = &not_work;
            return MHD_YES;
        }
        struct upload *up = calloc(1, sizeof(*up));
        if (up == NULL)
            return MHD_NO;
        *con_cls = up;
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl != NULL) {
            unsigned long long n = strtoull(cl, NULL, 10);
            if (n > MAX_BODY) /* answered before the body is read; MHD then closes */
                return text(conn, MHD_HTTP_CONTENT_TOO_LARGE, "body too large");
            if (n > 0 && (up->buf = malloc(n)) != NULL)
                up->cap = n;
        }
        return MHD_YES;
    }

    if (!is_work) {
        if (*upload_data_size != 0) { /* a body nobody wants */
            *upload_data_size = 0;
            return MHD_YES;
        }
        int is_get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;
        if (is_get && (strcmp(url, "/blank") == 0 || (root_mode == 0 && strcmp(url, "/") == 0)))
            return text(conn, MHD_HTTP_OK, "OK");
        if (is_get && strncmp(url, "/echo/", 6) == 0)
            return reply(conn, MHD_HTTP_OK, "text/plain", url + 6, strlen(url + 6), MHD_RESPMEM_MUST_COPY, 0);
        return text(conn, MHD_HTTP_NOT_FOUND, "Not Found");
    }

    struct upload *up = *con_cls;
    if (*upload_data_size != 0) {
        /* A piece of the body (MHD has already decoded chunked framing). */
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (up->too_big || n > MAX_BODY - up->len) {
            up->too_big = 1; /* keep reading and dropping; 413 at the end */
            return MHD_YES;
        }
        if (up->len + n > up->cap) {
            size_t cap = up->cap ? up->cap : 1024;
            while (cap < up->len + n)
                cap *= 2;
            char *p = realloc(up->buf, cap);
            if (p == NULL)
                return MHD_NO;
            up->buf = p;
            up->cap = cap;
        }
        memcpy(up->buf + up->len, upload_data, n);
        up->len += n;
        return MHD_YES;
    }

    /* Last call: the whole body is in. */
    if (up->too_big)
        return reply(conn, MHD_HTTP_CONTENT_TOO_LARGE, "text/plain", "body too large", 14, MHD_RESPMEM_PERSISTENT,
                     1);
    char *out;
    size_t out_len;
    if (work_run(up->buf ? up->buf : "", up->len, &out, &out_len) != 200)
        return text(conn, MHD_HTTP_BAD_REQUEST, "Bad Request");
    return reply(conn, MHD_HTTP_OK, "application/json", out, out_len, MHD_RESPMEM_MUST_FREE, 0);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct upload *up = *con_cls;
    if (up != NULL && (void *)up != (void *)&not_work) {
        free(up->buf);
        free(up);
    }
    *con_cls = NULL;
}

/* CPUs this process may run on (follows taskset/cgroup cpusets), else online CPUs. */
static unsigned int cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned int)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned int)n : 1;
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
    const char *host = getenv("HOST"), *port = getenv("PORT");
    if (host == NULL || *host == '\0')
        host = "127.0.0.1";
    if (port == NULL || *port == '\0')
        port = "1234";
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai;
    int err = getaddrinfo(host, port, &hints, &ai);
    if (err != 0) {
        fprintf(stderr, "cannot resolve %s:%s: %s\n", host, port, gai_strerror(err));
        return 1;
    }

    const char *mode = getenv("MODE");
    if (mode == NULL || *mode == '\0')
        mode = "pool-per-cpu";
    unsigned int flags = MHD_USE_ERROR_LOG | MHD_USE_INTERNAL_POLLING_THREAD;
    unsigned int pool = 0;
    if (strcmp(mode, "pool-per-cpu") == 0) {
        flags |= MHD_USE_EPOLL;
        pool = cpu_count();
    } else if (strcmp(mode, "pool-1") == 0) {
        flags |= MHD_USE_EPOLL;
    } else if (strcmp(mode, "select") == 0) {
        /* no poll/epoll flag: MHD's internal thread uses select() */
    } else if (strcmp(mode, "thread-per-connection") == 0) {
        flags |= MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL;
    } else {
        fprintf(stderr, "unknown MODE %s (pool-per-cpu, pool-1, select, thread-per-connection)\n", mode);
        return 2;
    }
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;

    signal(SIGPIPE, SIG_IGN);
    struct MHD_Daemon *d;
    if (pool > 1)
        d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                             MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_THREAD_POOL_SIZE, pool,
                             MHD_OPTION_END);
    else
        d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                             MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
    if (d == NULL) {
        fprintf(stderr, "cannot start libmicrohttpd on %s:%s (MODE %s)\n", host, port, mode);
        return 1;
    }
    freeaddrinfo(ai);
    /* MHD's threads do all the work; SIGTERM's default action ends the process
     * (nothing to clean up). */
    for (;;)
        pause();
}
