/* Tests: the date rules and the /work computation (against contract/fixtures),
 * then bin/server itself, started on free ports in every variant, over raw
 * sockets: HTTP/1.1 in the clear and over TLS (OpenSSL, a certificate made by
 * the openssl tool for the run), HTTP/2 over TLS and with prior knowledge
 * (frames written and read here, many streams at once). Ends with "N passed,
 * N failed"; exit status 1 on any failure. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/ssl.h>
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
    SSL *ssl; /* NULL in the clear */
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
    c->ssl = NULL;
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

/* Reads what is there (at most n bytes): > 0, or <= 0 on EOF, error or timeout. */
static ssize_t rd(struct conn *c, void *buf, size_t n)
{
    return c->ssl ? SSL_read(c->ssl, buf, (int)n) : recv(c->fd, buf, n, 0);
}

static void hangup(struct conn *c)
{
    if (c->ssl != NULL) {
        SSL_free(c->ssl);
        c->ssl = NULL;
    }
    close(c->fd);
}

static void put(struct conn *c, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = c->ssl ? SSL_write(c->ssl, s, (int)n) : send(c->fd, s, n, MSG_NOSIGNAL);
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
        ssize_t n = rd(c, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
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
        ssize_t n = rd(c, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
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

/* The certificate and key the server is given (contract 1.5: PEM, the key PKCS#8). */
static char tls_dir[64], cert_file[96], key_file[96];

/* The TLS and h2c ports the next start() opens besides PORT (0: none). */
static int tls_port, h2c_port;

static void set_port(const char *name, int port)
{
    char p[16];
    snprintf(p, sizeof(p), "%d", port);
    if (port > 0)
        setenv(name, p, 1);
    else
        unsetenv(name);
}

static pid_t start(int port, const char *variant, const char *arg)
{
    pid_t pid = fork();
    if (pid == 0) {
        setenv("HOST", "127.0.0.1", 1);
        set_port("PORT", port);
        set_port("TLS_PORT", tls_port);
        set_port("H2C_PORT", h2c_port);
        setenv("TLS_CERT", cert_file, 1);
        setenv("TLS_KEY", key_file, 1);
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

/* ---- TLS and HTTP/2 ---- */

static SSL_CTX *client_ctx;

/* A self-signed certificate for localhost and 127.0.0.1 in a temporary folder,
 * made by the openssl tool, and a client context that trusts only it. */
static int make_certificate(void)
{
    strcpy(tls_dir, "/tmp/c-h2o-test.XXXXXX");
    if (mkdtemp(tls_dir) == NULL)
        return -1;
    snprintf(cert_file, sizeof(cert_file), "%s/cert.pem", tls_dir);
    snprintf(key_file, sizeof(key_file), "%s/key.pem", tls_dir);
    char cmd[512];
    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout %s -out %s "
             "-days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 "
             "-addext basicConstraints=critical,CA:FALSE 2>/dev/null",
             key_file, cert_file);
    if (system(cmd) != 0)
        return -1;
    client_ctx = SSL_CTX_new(TLS_client_method());
    if (client_ctx == NULL || SSL_CTX_load_verify_locations(client_ctx, cert_file, NULL) != 1)
        return -1;
    SSL_CTX_set_verify(client_ctx, SSL_VERIFY_PEER, NULL);
    return 0;
}

static void remove_certificate(void)
{
    unlink(cert_file);
    unlink(key_file);
    rmdir(tls_dir);
    SSL_CTX_free(client_ctx);
}

/* Dials the TLS port and shakes hands as "localhost", offering the ALPN list
 * `alpn` (wire format; NULL: no ALPN). The protocol the server chose goes to
 * `chosen` ("" for none). */
static int dial_tls(int port, struct conn *c, const char *alpn, size_t alpn_len, char *chosen, size_t cap)
{
    if (dial(port, c) != 0)
        return -1;
    c->ssl = SSL_new(client_ctx);
    SSL_set_fd(c->ssl, c->fd);
    SSL_set_tlsext_host_name(c->ssl, "localhost");
    SSL_set1_host(c->ssl, "localhost");
    if (alpn != NULL)
        SSL_set_alpn_protos(c->ssl, (const unsigned char *)alpn, (unsigned)alpn_len);
    if (SSL_connect(c->ssl) != 1 || SSL_get_verify_result(c->ssl) != X509_V_OK) {
        hangup(c);
        return -1;
    }
    const unsigned char *p;
    unsigned n;
    SSL_get0_alpn_selected(c->ssl, &p, &n);
    snprintf(chosen, cap, "%.*s", (int)n, p ? (const char *)p : "");
    return 0;
}

static int read_full(struct conn *c, unsigned char *buf, size_t n)
{
    while (n > 0) {
        ssize_t r = rd(c, buf, n);
        if (r <= 0)
            return -1;
        buf += r;
        n -= (size_t)r;
    }
    return 0;
}

enum { H2_DATA = 0, H2_HEADERS = 1, H2_RST_STREAM = 3, H2_SETTINGS = 4, H2_PING = 6, H2_GOAWAY = 7 };
enum { H2_END_STREAM = 0x1, H2_ACK = 0x1, H2_END_HEADERS = 0x4, H2_PADDED = 0x8, H2_PRIORITY = 0x20 };

static void h2_frame(struct conn *c, int type, int flags, unsigned id, const void *payload, size_t n)
{
    unsigned char h[9] = {n >> 16, n >> 8, n, type, flags, (id >> 24) & 0x7f, id >> 16, id >> 8, id};
    put(c, (const char *)h, 9);
    put(c, payload, n);
}

/* A header field as an HPACK literal without indexing whose name is static
 * table entry `index` (below 15), its value raw (shorter than 127 bytes). */
static size_t hpack_literal(unsigned char *p, int index, const char *value)
{
    size_t n = strlen(value);
    p[0] = (unsigned char)index;
    p[1] = (unsigned char)n;
    memcpy(p + 2, value, n);
    return n + 2;
}

/* :status from the start of a response's header block: h2o writes it first,
 * indexed from the static table or as a literal of three raw digits. */
static int hpack_status(const unsigned char *p, size_t n)
{
    static const int indexed[15] = {[8] = 200, [9] = 204, [10] = 206, [11] = 304, [12] = 400, [13] = 404, [14] = 500};
    if (n >= 1 && (p[0] & 0x80) && (p[0] & 0x7f) >= 8 && (p[0] & 0x7f) <= 14)
        return indexed[p[0] & 0x7f];
    if (n >= 5 && (p[0] == 0x08 || p[0] == 0x18 || p[0] == 0x48) && p[1] == 3)
        return (p[2] - '0') * 100 + (p[3] - '0') * 10 + (p[4] - '0');
    return -1;
}

struct h2_call {
    const char *path;
    const char *body; /* NULL: GET */
    int status;       /* the answer: -1 until its headers come, -2 when reset */
    char answer[4096];
    size_t answer_len;
    int done;
};

/* Opens an HTTP/2 connection on c (the preface and an empty SETTINGS), sends
 * every call at once, each on its own stream, then reads frames until all are
 * answered. The server's SETTINGS_MAX_CONCURRENT_STREAMS goes to *max_streams
 * (0 when it sent none). Returns 0, or -1 when the connection failed first. */
static int h2_calls(struct conn *c, int tls, struct h2_call *calls, int n, unsigned *max_streams)
{
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    put(c, preface, sizeof(preface) - 1);
    h2_frame(c, H2_SETTINGS, 0, 0, NULL, 0);
    for (int i = 0; i < n; i++) {
        unsigned char block[256];
        size_t len = 0;
        block[len++] = calls[i].body ? 0x83 : 0x82; /* :method POST or GET */
        block[len++] = tls ? 0x87 : 0x86;           /* :scheme https or http */
        len += hpack_literal(block + len, 4, calls[i].path);
        len += hpack_literal(block + len, 1, "localhost"); /* :authority */
        unsigned id = 2 * (unsigned)i + 1;
        h2_frame(c, H2_HEADERS, H2_END_HEADERS | (calls[i].body ? 0 : H2_END_STREAM), id, block, len);
        if (calls[i].body)
            h2_frame(c, H2_DATA, H2_END_STREAM, id, calls[i].body, strlen(calls[i].body));
        calls[i].status = -1;
        calls[i].answer_len = 0;
        calls[i].done = 0;
    }
    *max_streams = 0;
    int open = n;
    unsigned char h[9], payload[1 << 14];
    while (open > 0) {
        if (read_full(c, h, 9) != 0)
            return -1;
        size_t len = (size_t)h[0] << 16 | (size_t)h[1] << 8 | h[2];
        int type = h[3], flags = h[4];
        unsigned id = ((unsigned)h[5] & 0x7f) << 24 | (unsigned)h[6] << 16 | (unsigned)h[7] << 8 | h[8];
        if (len > sizeof(payload) || read_full(c, payload, len) != 0)
            return -1;
        if (type == H2_SETTINGS && !(flags & H2_ACK)) {
            for (size_t at = 0; at + 6 <= len; at += 6) {
                if ((payload[at] << 8 | payload[at + 1]) == 3) /* SETTINGS_MAX_CONCURRENT_STREAMS */
                    *max_streams = (unsigned)payload[at + 2] << 24 | (unsigned)payload[at + 3] << 16 |
                                   (unsigned)payload[at + 4] << 8 | payload[at + 5];
            }
            h2_frame(c, H2_SETTINGS, H2_ACK, 0, NULL, 0);
            continue;
        }
        if (type == H2_PING && !(flags & H2_ACK)) {
            h2_frame(c, H2_PING, H2_ACK, 0, payload, len);
            continue;
        }
        if (type == H2_GOAWAY)
            return -1;
        if (id == 0 || id % 2 == 0 || (id - 1) / 2 >= (unsigned)n)
            continue;
        struct h2_call *call = &calls[(id - 1) / 2];
        if (call->done)
            continue;
        if (type == H2_HEADERS && call->status == -1) {
            const unsigned char *p = payload;
            size_t pl = len;
            if (flags & H2_PADDED) {
                size_t pad = p[0] + 1u;
                if (pad > pl)
                    return -1;
                p++;
                pl -= pad;
            }
            if (flags & H2_PRIORITY) {
                p += 5;
                pl -= 5;
            }
            call->status = hpack_status(p, pl);
        } else if (type == H2_DATA) {
            size_t take = len < sizeof(call->answer) - 1 - call->answer_len ? len : 0;
            memcpy(call->answer + call->answer_len, payload, take);
            call->answer_len += take;
            call->answer[call->answer_len] = '\0';
        } else if (type == H2_RST_STREAM) {
            call->status = -2;
            flags = H2_END_STREAM;
        }
        if ((type == H2_HEADERS || type == H2_DATA || type == H2_RST_STREAM) && (flags & H2_END_STREAM)) {
            call->done = 1;
            open--;
        }
    }
    return 0;
}

/* Many streams at once on one HTTP/2 connection (already dialled): /blank,
 * /echo and every work fixture, each answered right. */
static void test_h2(struct conn *c, int tls, const char *name)
{
    enum { ROUNDS = 4 };
    size_t per_round = 2 + nfixtures, n = ROUNDS * per_round;
    struct h2_call *calls = calloc(n, sizeof(*calls));
    char(*paths)[32] = calloc(n, sizeof(*paths));
    for (size_t r = 0; r < ROUNDS; r++) {
        struct h2_call *at = calls + r * per_round;
        at[0].path = "/blank";
        snprintf(paths[r], sizeof(paths[r]), "/echo/stream-%zu", r);
        at[1].path = paths[r];
        for (size_t i = 0; i < nfixtures; i++) {
            at[2 + i].path = "/work";
            at[2 + i].body = fixtures[i].body;
        }
    }
    unsigned max_streams;
    int ok = h2_calls(c, tls, calls, (int)n, &max_streams) == 0;
    check(ok, "%s: %zu streams at once answered", name, n);
    check(ok && max_streams >= 100, "%s: SETTINGS_MAX_CONCURRENT_STREAMS %u", name, max_streams);
    for (size_t r = 0; ok && r < ROUNDS; r++) {
        struct h2_call *at = calls + r * per_round;
        check(at[0].status == 200 && strcmp(at[0].answer, "OK") == 0, "%s: /blank: %d %s", name, at[0].status,
              at[0].answer);
        check(at[1].status == 200 && strcmp(at[1].answer, paths[r] + 6) == 0, "%s: %s: %d %s", name, paths[r],
              at[1].status, at[1].answer);
        for (size_t i = 0; i < nfixtures; i++) {
            struct h2_call *w = &at[2 + i];
            if (fixtures[i].answer != NULL)
                check(w->status == 200 &&
                          json_text_equal(w->answer, w->answer_len, fixtures[i].answer, strlen(fixtures[i].answer)),
                      "%s: work %s: %d %s", name, fixtures[i].name, w->status, w->answer);
            else
                check(w->status == 400, "%s: rejected %s: %d", name, fixtures[i].name, w->status);
        }
    }
    free(paths);
    free(calls);
}

/* HTTP/1.1 over TLS (ALPN http/1.1, then no ALPN), and h2 by ALPN. */
static void test_tls(int port, const char *name)
{
    struct conn *c = malloc(sizeof(*c));
    struct resp *r = malloc(sizeof(*r));
    char chosen[32], v[256], req[70000];
    if (dial_tls(port, c, "\x08http/1.1", 9, chosen, sizeof(chosen)) != 0) {
        check(0, "%s: TLS handshake (ALPN http/1.1)", name);
        goto out;
    }
    check(strcmp(chosen, "http/1.1") == 0, "%s: ALPN http/1.1 chosen, not '%s'", name, chosen);
    int ok = roundtrip(c, "GET /blank HTTP/1.1\r\nHost: localhost\r\n\r\n", r) == 0;
    check(ok && r->status == 200 && strcmp(r->body, "OK") == 0, "%s: GET /blank over TLS", name);
    check(ok && header(r, "Date", v, sizeof(v)) && is_imf_fixdate(v), "%s: Date header over TLS", name);
    snprintf(req, sizeof(req), "POST /work HTTP/1.1\r\nHost: localhost\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(fixtures[0].body), fixtures[0].body);
    ok = roundtrip(c, req, r) == 0;
    check(ok && r->status == 200 &&
              json_text_equal(r->body, r->body_len, fixtures[0].answer, strlen(fixtures[0].answer)),
          "%s: work over TLS: %d %s", name, r->status, r->body);
    int good = 0;
    for (int i = 0; i < 20; i++)
        good += roundtrip(c, "GET /blank HTTP/1.1\r\nHost: localhost\r\n\r\n", r) == 0 && r->status == 200;
    check(good == 20, "%s: keep-alive over TLS: %d of 20", name, good);
    hangup(c);

    if (dial_tls(port, c, NULL, 0, chosen, sizeof(chosen)) != 0) {
        check(0, "%s: TLS handshake without ALPN", name);
        goto out;
    }
    check(chosen[0] == '\0', "%s: no ALPN offered, '%s' chosen", name, chosen);
    check(roundtrip(c, "GET /echo/no-alpn HTTP/1.1\r\nHost: localhost\r\n\r\n", r) == 0 && r->status == 200 &&
              strcmp(r->body, "no-alpn") == 0,
          "%s: HTTP/1.1 without ALPN", name);
    hangup(c);

    if (dial_tls(port, c, "\x02h2\x08http/1.1", 12, chosen, sizeof(chosen)) != 0) {
        check(0, "%s: TLS handshake (ALPN h2)", name);
        goto out;
    }
    check(strcmp(chosen, "h2") == 0, "%s: ALPN h2 chosen, not '%s'", name, chosen);
    char what[64];
    snprintf(what, sizeof(what), "%s: h2", name);
    test_h2(c, 1, what);
    hangup(c);
out:
    free(c);
    free(r);
}

static void test_server(const char *variant)
{
    const char *name = variant ? variant : "default";
    int port = free_port(), tport = free_port(), hport = free_port();
    tls_port = tport;
    h2c_port = hport;
    pid_t pid = start(port, variant, NULL);
    tls_port = h2c_port = 0;
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

    test_tls(tport, name);
    if (dial(hport, c) == 0) {
        char what[64];
        snprintf(what, sizeof(what), "%s: h2c", name);
        test_h2(c, 0, what);
        close(c->fd);
    } else {
        check(0, "%s: h2c port does not accept connections", name);
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
    if (make_certificate() != 0) {
        fprintf(stderr, "cannot make a test certificate with openssl\n");
        return 1;
    }
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
    remove_certificate();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
