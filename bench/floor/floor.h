/* floor.h: what the two floor clients share and what is not their hot loop:
 * the arguments, the probe that learns the fixed answer length, the
 * connections, and the one line of JSON at the end.
 *
 * A floor client is the least a client can do for a keep-alive GET loop:
 * one request in flight per connection, no parsing, no checks, no
 * statistics. It counts answers by bytes, which is honest only against a
 * server whose every answer has the same length (nginx `return 200 "OK"`:
 * its Date header has a fixed width); the probe checks that two answers on
 * one connection have equal length and refuses to run otherwise.
 */
#ifndef FLOOR_H
#define FLOOR_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strcasestr */
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Exit statuses: 0 ran, 2 bad arguments or the target misbehaved in the
 * probe, 3 this kernel or library lacks what the client needs (the bench
 * script shows that as "n/a" with the message). */
enum { FLOOR_OK = 0, FLOOR_USAGE = 2, FLOOR_UNSUPPORTED = 3 };

struct floor_plan {
    const char *name;        /* floor_epoll or floor_uring, for messages and JSON */
    struct sockaddr_in addr; /* IPv4 only: the bench talks to 127.0.0.1 */
    int connections;
    int seconds;
    char request[256];       /* the one request every connection repeats */
    size_t request_len;
    size_t answer_len;       /* bytes of one whole answer, learned by the probe */
};

static void floor_die(const struct floor_plan *p, int status, const char *what)
{
    fprintf(stderr, "%s: %s\n", p->name, what);
    exit(status);
}

/* For a failed system call: says which, and errno's text. */
static void floor_die_sys(const struct floor_plan *p, int status, const char *call)
{
    fprintf(stderr, "%s: %s: %s\n", p->name, call, strerror(errno));
    exit(status);
}

static double floor_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct timespec floor_timespec(double t)
{
    struct timespec ts = {.tv_sec = (time_t)t};
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    return ts;
}

/* Blocking read of one whole answer: headers, then Content-Length bytes.
 * Returns its length; dies on anything but a 200 with a length. */
static size_t floor_read_answer(const struct floor_plan *p, int fd)
{
    char buf[8192];
    size_t got = 0;
    for (;;) {
        ssize_t r = read(fd, buf + got, sizeof buf - 1 - got);
        if (r <= 0)
            floor_die(p, FLOOR_USAGE, "probe: the server closed or failed before a whole answer");
        got += (size_t)r;
        buf[got] = 0;
        char *end = strstr(buf, "\r\n\r\n");
        if (!end) {
            if (got == sizeof buf - 1)
                floor_die(p, FLOOR_USAGE, "probe: answer head longer than 8 KiB");
            continue;
        }
        if (strncmp(buf, "HTTP/1.1 200 ", 13) != 0)
            floor_die(p, FLOOR_USAGE, "probe: the answer is not HTTP/1.1 200");
        char *cl = strcasestr(buf, "\r\ncontent-length:");
        if (!cl || cl > end)
            floor_die(p, FLOOR_USAGE, "probe: the answer has no Content-Length (chunked?)");
        size_t total = (size_t)(end + 4 - buf) + strtoul(cl + 17, NULL, 10);
        if (total >= sizeof buf)
            floor_die(p, FLOOR_USAGE, "probe: answer longer than 8 KiB");
        while (got < total) {
            r = read(fd, buf + got, total - got);
            if (r <= 0)
                floor_die(p, FLOOR_USAGE, "probe: the server closed in the body");
            got += (size_t)r;
        }
        if (got != total)
            floor_die(p, FLOOR_USAGE, "probe: more bytes than one answer");
        return total;
    }
}

static int floor_connect(const struct floor_plan *p)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    if (fd < 0)
        floor_die_sys(p, FLOOR_USAGE, "socket (raise the open-files limit?)");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (const struct sockaddr *)&p->addr, sizeof p->addr) != 0)
        floor_die_sys(p, FLOOR_USAGE, "connect");
    return fd;
}

/* HOST PORT CONNECTIONS SECONDS, then the probe: two requests on one
 * connection must get two answers of one length, kept alive. */
static struct floor_plan floor_plan(const char *name, int argc, char **argv)
{
    struct floor_plan p = {.name = name};
    if (argc != 5) {
        fprintf(stderr, "usage: %s HOST PORT CONNECTIONS SECONDS\n"
                        "  keeps CONNECTIONS keep-alive connections busy with GET / for SECONDS,\n"
                        "  then prints one line of JSON with the count of whole answers\n", name);
        exit(FLOOR_USAGE);
    }
    p.addr.sin_family = AF_INET;
    p.addr.sin_port = htons((uint16_t)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &p.addr.sin_addr) != 1) {
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
        if (getaddrinfo(argv[1], NULL, &hints, &ai) != 0)
            floor_die(&p, FLOOR_USAGE, "HOST is neither an IPv4 address nor a name with one");
        p.addr.sin_addr = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
        freeaddrinfo(ai);
    }
    p.connections = atoi(argv[3]);
    p.seconds = atoi(argv[4]);
    if (p.connections < 1 || p.seconds < 1)
        floor_die(&p, FLOOR_USAGE, "CONNECTIONS and SECONDS must be positive integers");
    p.request_len = (size_t)snprintf(p.request, sizeof p.request,
                                     "GET / HTTP/1.1\r\nHost: %s:%s\r\n\r\n", argv[1], argv[2]);

    /* Each connection is a file: soft limit up to the hard one. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }

    int fd = floor_connect(&p);
    size_t len[2];
    for (int i = 0; i < 2; i++) {
        if (write(fd, p.request, p.request_len) != (ssize_t)p.request_len)
            floor_die_sys(&p, FLOOR_USAGE, "probe: write");
        len[i] = floor_read_answer(&p, fd);
    }
    close(fd);
    if (len[0] != len[1])
        floor_die(&p, FLOOR_USAGE, "probe: two answers differ in length; this client counts "
                                   "answers by length and needs a server with fixed-size answers");
    p.answer_len = len[0];
    return p;
}

/* All connections, blocking connects (loopback: each returns once the
 * handshake is done), TCP_NODELAY like every other client. */
static int *floor_connect_all(const struct floor_plan *p)
{
    int *fds = malloc(sizeof *fds * (size_t)p->connections);
    if (!fds)
        floor_die_sys(p, FLOOR_USAGE, "malloc");
    for (int i = 0; i < p->connections; i++)
        fds[i] = floor_connect(p);
    return fds;
}

static void floor_report(const struct floor_plan *p, const char *io, double elapsed_s,
                         uint64_t answers, uint64_t bytes, uint64_t errors)
{
    printf("{\"client\":\"%s\",\"io\":\"%s\",\"connections\":%d,\"seconds\":%d,"
           "\"elapsed_s\":%.6f,\"answers\":%llu,\"rps\":%.1f,\"bytes\":%llu,"
           "\"answer_bytes\":%zu,\"errors\":%llu}\n",
           p->name, io, p->connections, p->seconds, elapsed_s, (unsigned long long)answers,
           elapsed_s > 0 ? answers / elapsed_s : 0.0, (unsigned long long)bytes, p->answer_len,
           (unsigned long long)errors);
    fflush(stdout);
}

#endif
