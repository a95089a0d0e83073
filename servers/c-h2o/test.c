/* Tests: the date rules and the /work computation (against contract/fixtures),
 * then bin/server itself, started on a free port in every variant, over raw
 * sockets. Ends with "N passed, N failed"; exit status 1 on any failure. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "date.h"
#include "work.h"

/* The server's variants: the environment variable that selects each (NULL value: unset). */
#define VARIANT_VAR "THREADS"
static const char *variants[] = {NULL, "1"};

static int passed, failed;

static void check(int ok, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    va_list ap;
    va_start(ap, fmt);
    fputs("FAIL: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- dates ---- */

static void test_dates(void)
{
    static const struct {
        const char *s;
        int64_t ms;
    } good[] = {
        {"1970-01-01T00:00:00.000Z", 0},
        {"1969-12-31T23:59:59.999Z", -1},
        {"2020-01-12T10:53:17.773Z", 1578826397773LL},
        {"2000-02-29T12:00:00.000Z", 951825600000LL},
        {"2024-02-29T23:59:59.999Z", 1709251199999LL},
        {"1969-07-20T20:17:40.000Z", -14182940000LL},
        {"0000-01-01T00:00:00.000Z", -62167219200000LL},
        {"9999-12-31T23:59:59.999Z", 253402300799999LL},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        int64_t ms = 42;
        int r = date_parse(good[i].s, strlen(good[i].s), &ms);
        check(r == 0 && ms == good[i].ms, "date %s: r=%d ms=%lld, want %lld", good[i].s, r, (long long)ms,
              (long long)good[i].ms);
        char out[DATE_LEN + 1];
        date_format(good[i].ms, out);
        check(strcmp(out, good[i].s) == 0, "format %lld: %s, want %s", (long long)good[i].ms, out, good[i].s);
    }
    static const char *bad[] = {
        "2020-13-45T99:00:00.000Z",      /* impossible */
        "2021-02-29T00:00:00.000Z",      /* 29 February in a common year */
        "1900-02-29T00:00:00.000Z",      /* 1900 is not a leap year */
        "2020-04-31T00:00:00.000Z",      /* April has 30 days */
        "2020-00-10T00:00:00.000Z",      /* month 0 */
        "2020-01-00T00:00:00.000Z",      /* day 0 */
        "2020-01-01T24:00:00.000Z",      /* 24:00 */
        "2020-01-01T00:60:00.000Z",      /* minute 60 */
        "2020-01-01T00:00:60.000Z",      /* leap second */
        "2020-01-01T00:00:00.+01Z",      /* sign in the milliseconds */
        "2020-01-01T00:00:00.-01Z",      /* sign in the milliseconds */
        "2020-01-01T00:00:00.000+00:00", /* offset instead of Z */
        "2020-01-01T00:00:00.000+0000",  /* offset instead of Z */
        "2020-01-01T00:00:00Z",          /* no milliseconds */
        "2020-01-01T00:00:00.00Z",       /* two digits of milliseconds */
        "2020-01-01T00:00:00.0000Z",     /* four digits of milliseconds */
        "2020-1-01T00:00:00.000Z",       /* one-digit month */
        "2020-01-01 00:00:00.000Z",      /* space instead of T */
        "2020-01-01t00:00:00.000Z",      /* lower-case t */
        "2020-01-01T00:00:00.000z",      /* lower-case z */
        "2020-01-01T00:00:00.000",       /* no zone */
        "+020-01-01T00:00:00.000Z",      /* sign in the year */
        " 2020-01-01T00:00:00.000Z",     /* leading space */
        "2020-01-01T00:00:00.000Z ",     /* trailing space */
        "2020-01-01T0 :00:00.000Z",      /* space in a field */
        "yesterday",
        "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t ms;
        check(date_parse(bad[i], strlen(bad[i]), &ms) != 0, "date %s accepted", bad[i]);
    }
    int64_t ms;
    check(date_parse("2020-01-01T00:00:00.000Z\0", 25, &ms) != 0, "date with a trailing NUL accepted");
}

/* ---- /work ---- */

/* JSON-equal, with every number read as a double (1e3 == 1000 == 1000.0). */
static int json_text_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    json_t *x = json_loadb(a, alen, JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY, NULL);
    json_t *y = json_loadb(b, blen, JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY, NULL);
    int eq = x != NULL && y != NULL && json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return eq;
}

struct fixture {
    char *name, *body, *answer; /* answer NULL: must be rejected with 400 */
};
static struct fixture fixtures[64];
static size_t nfixtures;

static void load_fixtures(void)
{
    const char *dir = getenv("FIXTURES");
    if (dir == NULL)
        dir = "../../contract/fixtures";
    static const char *files[] = {"work.jsonl", "rejected.jsonl"};
    for (int f = 0; f < 2; f++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, files[f]);
        FILE *fp = fopen(path, "r");
        check(fp != NULL, "cannot open %s: %s", path, strerror(errno));
        if (fp == NULL)
            continue;
        char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, fp) > 0 && nfixtures < sizeof(fixtures) / sizeof(fixtures[0])) {
            json_t *o = json_loads(line, 0, NULL);
            if (o == NULL)
                continue;
            struct fixture *fx = &fixtures[nfixtures++];
            fx->name = strdup(json_string_value(json_object_get(o, "name")));
            if (f == 0) {
                fx->body = json_dumps(json_object_get(o, "request"), JSON_COMPACT);
                fx->answer = json_dumps(json_object_get(o, "answer"), JSON_COMPACT);
            } else {
                fx->body = strdup(json_string_value(json_object_get(o, "body")));
                fx->answer = NULL;
            }
            json_decref(o);
        }
        free(line);
        fclose(fp);
    }
    check(nfixtures >= 20, "only %zu fixtures loaded", nfixtures);
}

static void test_work(void)
{
    for (size_t i = 0; i < nfixtures; i++) {
        struct fixture *fx = &fixtures[i];
        char *out;
        size_t len;
        int status = work_run(fx->body, strlen(fx->body), &out, &len);
        if (fx->answer != NULL)
            check(status == 200 && json_text_equal(out, len, fx->answer, strlen(fx->answer)), "work %s: %d %.*s",
                  fx->name, status, out ? (int)len : 0, out ? out : "");
        else
            check(status == 400 && out == NULL, "rejected %s: %d", fx->name, status);
        free(out);
    }
    static const char *more_bad[] = {
        "",
        "null",
        "{\"product\":null,\"requestId\":\"r\",\"group\":{\"kind\":\"k\",\"default\":true,\"balance\":1,\"dates\":"
        "[\"2020-01-12T10:53:17.773Z\"]}}",
        "{\"product\":\"p\",\"requestId\":\"r\",\"group\":{\"kind\":\"k\",\"default\":null,\"balance\":1,\"dates\":"
        "[\"2020-01-12T10:53:17.773Z\"]}}",
        "{\"product\":\"p\",\"requestId\":\"r\",\"group\":{\"kind\":7,\"default\":true,\"balance\":1,\"dates\":"
        "[\"2020-01-12T10:53:17.773Z\"]}}",
        "{\"product\":\"p\",\"requestId\":\"r\",\"group\":{\"kind\":\"k\",\"default\":true,\"balance\":1,\"dates\":"
        "\"2020-01-12T10:53:17.773Z\"}}",
        "{\"product\":\"p\",\"requestId\":\"r\",\"group\":[]}",
    };
    for (size_t i = 0; i < sizeof(more_bad) / sizeof(more_bad[0]); i++) {
        char *out;
        size_t len;
        check(work_run(more_bad[i], strlen(more_bad[i]), &out, &len) == 400 && out == NULL, "accepted %s",
              more_bad[i]);
    }
}

/* ---- the running server ---- */

struct conn {
    int fd;
    char buf[1 << 17];
    size_t len;
};

struct resp {
    int status;
    char head[8192];
    char body[1 << 16];
    size_t body_len;
};

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof(a);
    bind(fd, (struct sockaddr *)&a, sizeof(a));
    getsockname(fd, (struct sockaddr *)&a, &n);
    close(fd);
    return ntohs(a.sin_port);
}

static int dial(int port, struct conn *c)
{
    c->len = 0;
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct timeval tv = {.tv_sec = 5};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    return 0;
}

static void put(struct conn *c, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = send(c->fd, s, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/* Value of a header in r->head (case-insensitive name), copied into out; 0 if absent. */
static int header(const struct resp *r, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(r->head, "\r\n"); p != NULL; p = strstr(p + 2, "\r\n")) {
        const char *h = p + 2;
        if (strncasecmp(h, name, nl) == 0 && h[nl] == ':') {
            h += nl + 1;
            while (*h == ' ' || *h == '\t')
                h++;
            const char *e = strstr(h, "\r\n");
            size_t n = e ? (size_t)(e - h) : strlen(h);
            if (n >= cap)
                n = cap - 1;
            memcpy(out, h, n);
            out[n] = '\0';
            return 1;
        }
    }
    return 0;
}

/* Reads one response framed by Content-Length. Returns 0, or -1 on EOF/timeout/bad framing. */
static int get(struct conn *c, struct resp *r)
{
    memset(r, 0, offsetof(struct resp, body));
    r->body[0] = '\0';
    r->body_len = 0;
    char *end;
    for (;;) {
        c->buf[c->len] = '\0';
        if ((end = strstr(c->buf, "\r\n\r\n")) != NULL)
            break;
        if (c->len >= sizeof(c->buf) - 1)
            return -1;
        ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
        if (n <= 0)
            return -1;
        c->len += (size_t)n;
    }
    size_t hl = (size_t)(end - c->buf) + 2; /* keep the last header's CRLF */
    if (hl >= sizeof(r->head))
        return -1;
    memcpy(r->head, c->buf, hl);
    r->head[hl] = '\0';
    if (sscanf(r->head, "HTTP/1.%*d %d", &r->status) != 1)
        return -1;
    char v[64];
    if (!header(r, "Content-Length", v, sizeof(v)))
        return -1;
    size_t want = strtoul(v, NULL, 10), start = hl + 2;
    if (want >= sizeof(r->body))
        return -1;
    while (c->len < start + want) {
        ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
        if (n <= 0)
            return -1;
        c->len += (size_t)n;
    }
    memcpy(r->body, c->buf + start, want);
    r->body[want] = '\0';
    r->body_len = want;
    memmove(c->buf, c->buf + start + want, c->len - start - want);
    c->len -= start + want;
    return 0;
}

static int roundtrip(struct conn *c, const char *req, struct resp *r)
{
    put(c, req, strlen(req));
    return get(c, r);
}

static int is_imf_fixdate(const char *s)
{
    struct tm tm;
    const char *e = strptime(s, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    return strlen(s) == 29 && e != NULL && *e == '\0';
}

static pid_t start(int port, const char *variant, const char *arg)
{
    pid_t pid = fork();
    if (pid == 0) {
        char p[16];
        snprintf(p, sizeof(p), "%d", port);
        setenv("HOST", "127.0.0.1", 1);
        setenv("PORT", p, 1);
        if (variant != NULL)
            setenv(VARIANT_VAR, variant, 1);
        else
            unsetenv(VARIANT_VAR);
        execl("./bin/server", "./bin/server", arg, (char *)NULL);
        _exit(127);
    }
    struct conn *c = malloc(sizeof(*c));
    for (int i = 0; i < 100; i++) {
        if (dial(port, c) == 0) {
            close(c->fd);
            break;
        }
        usleep(50000);
    }
    free(c);
    return pid;
}

static void stop(pid_t pid, const char *what)
{
    kill(pid, SIGTERM);
    int status, gone = 0;
    for (int i = 0; i < 100 && !gone; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            gone = 1;
        else
            usleep(30000);
    }
    check(gone, "%s: still running 3 s after SIGTERM", what);
    if (!gone) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
}

static void test_server(const char *variant)
{
    const char *name = variant ? variant : "default";
    int port = free_port();
    pid_t pid = start(port, variant, NULL);
    struct conn *c = malloc(sizeof(*c));
    struct resp *r = malloc(sizeof(*r));
    char v[256], req[70000];
    if (dial(port, c) != 0) {
        check(0, "%s: server does not accept connections", name);
        goto out;
    }

    int ok = roundtrip(c, "GET /blank HTTP/1.1\r\nHost: t\r\n\r\n", r) == 0;
    check(ok && r->status == 200 && strcmp(r->body, "OK") == 0, "%s: GET /blank", name);
    check(ok && header(r, "Content-Type", v, sizeof(v)) && strncmp(v, "text/plain", 10) == 0,
          "%s: /blank Content-Type", name);
    check(ok && header(r, "Date", v, sizeof(v)) && is_imf_fixdate(v), "%s: Date header", name);

    ok = roundtrip(c, "GET /echo/Hello-1.2_x~?q=1 HTTP/1.1\r\nHost: t\r\n\r\n", r) == 0;
    check(ok && r->status == 200 && strcmp(r->body, "Hello-1.2_x~") == 0, "%s: echo: %s", name, r->body);
    check(roundtrip(c, "GET /echo HTTP/1.1\r\nHost: t\r\n\r\n", r) == 0 && r->status == 404, "%s: /echo is 404",
          name);
    check(roundtrip(c, "GET /nope HTTP/1.1\r\nHost: t\r\n\r\n", r) == 0 && r->status == 404, "%s: /nope is 404",
          name);
    check(roundtrip(c, "GET / HTTP/1.1\r\nHost: t\r\n\r\n", r) == 0 && r->status == 404,
          "%s: / is 404 without mode", name);

    for (size_t i = 0; i < nfixtures; i++) {
        struct fixture *fx = &fixtures[i];
        snprintf(req, sizeof(req),
                 "POST /work HTTP/1.1\r\nHost: t\r\nContent-Type: application/json; charset=utf-8\r\n"
                 "Content-Length: %zu\r\n\r\n%s",
                 strlen(fx->body), fx->body);
        ok = roundtrip(c, req, r) == 0;
        if (fx->answer != NULL) {
            check(ok && r->status == 200 && json_text_equal(r->body, r->body_len, fx->answer, strlen(fx->answer)),
                  "%s: work %s: %d %s", name, fx->name, r->status, r->body);
            check(ok && header(r, "Content-Type", v, sizeof(v)) && strncmp(v, "application/json", 16) == 0,
                  "%s: work Content-Type", name);
        } else {
            check(ok && r->status == 400, "%s: rejected %s: %d", name, fx->name, r->status);
        }
    }

    /* A chunked body, the request written in three pieces. */
    const char *body = fixtures[0].body;
    size_t bl = strlen(body), half = bl / 2;
    int n = snprintf(req, sizeof(req),
                     "POST /work HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n%zx\r\n%.*s\r\n%zx\r\n%s\r\n0\r\n\r\n",
                     half, (int)half, body, bl - half, body + half);
    put(c, req, 20);
    usleep(50000);
    put(c, req + 20, (size_t)n / 2 - 20);
    usleep(50000);
    put(c, req + n / 2, (size_t)n - (size_t)n / 2);
    ok = get(c, r) == 0;
    check(ok && r->status == 200 && fixtures[0].answer &&
              json_text_equal(r->body, r->body_len, fixtures[0].answer, strlen(fixtures[0].answer)),
          "%s: chunked split work: %d %s", name, r->status, r->body);

    int good = 0;
    for (int i = 0; i < 100; i++)
        good += roundtrip(c, "GET /blank HTTP/1.1\r\nHost: t\r\n\r\n", r) == 0 && r->status == 200 &&
                strcmp(r->body, "OK") == 0;
    check(good == 100, "%s: keep-alive: %d of 100", name, good);

    ok = roundtrip(c, "GET /blank HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", r) == 0;
    check(ok && r->status == 200, "%s: Connection: close answered", name);
    check(ok && recv(c->fd, v, 1, 0) == 0, "%s: Connection: close closes", name);
    close(c->fd);

    /* Too big a body is refused up front. */
    if (dial(port, c) == 0) {
        ok = roundtrip(c, "POST /work HTTP/1.1\r\nHost: t\r\nContent-Length: 2097152\r\n\r\n", r) == 0;
        check(ok && r->status == 413, "%s: 2 MiB body: %d", name, r->status);
        close(c->fd);
    }
out:
    stop(pid, name);
    free(c);
    free(r);
}

static void test_modes(void)
{
    struct conn *c = malloc(sizeof(*c));
    struct resp *r = malloc(sizeof(*r));
    char req[70000];
    int port = free_port();
    pid_t pid = start(port, NULL, "0");
    check(dial(port, c) == 0 && roundtrip(c, "GET / HTTP/1.1\r\nHost: t\r\n\r\n", r) == 0 && r->status == 200 &&
              strcmp(r->body, "OK") == 0,
          "mode 0: GET /");
    close(c->fd);
    stop(pid, "mode 0");

    port = free_port();
    pid = start(port, NULL, "1");
    snprintf(req, sizeof(req), "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: %zu\r\n\r\n%s", strlen(fixtures[0].body),
             fixtures[0].body);
    check(dial(port, c) == 0 && roundtrip(c, req, r) == 0 && r->status == 200 && fixtures[0].answer &&
              json_text_equal(r->body, r->body_len, fixtures[0].answer, strlen(fixtures[0].answer)),
          "mode 1: POST /");
    close(c->fd);
    stop(pid, "mode 1");
    free(c);
    free(r);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    test_dates();
    load_fixtures();
    test_work();
    if (nfixtures > 0 && fixtures[0].answer != NULL) {
        for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
            test_server(variants[i]);
        test_modes();
    } else {
        check(0, "no work fixture: server tests not run");
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
