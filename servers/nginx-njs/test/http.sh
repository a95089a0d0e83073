#!/bin/sh
# End-to-end test: starts `sh run.sh [0|1]` on a free loopback port, checks
# answers with curl, stops it with SIGTERM and checks that nginx and its
# workers are gone and the temporary directory removed. Run from anywhere.
# The first start also opens TLS_PORT and H2C_PORT (a certificate made by
# openssl for the run): HTTP/1.1 over TLS by curl, HTTP/2 over TLS and with
# prior knowledge by curl and h2load (many streams at once).
set -u
cd "$(dirname "$0")/.."

fails=0
checks=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

ok() {  # ok CONDITION-STATUS WHAT
    checks=$((checks + 1))
    if [ "$1" != 0 ]; then
        fails=$((fails + 1))
        echo "FAIL $2"
    fi
}

# free PORT: nothing listens on 127.0.0.1:PORT.
free() {
    curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$1/"
    [ $? = 7 ]
}

# start [ARG]: the server on a free port; sets $port and $spid. With
# protocols=1 also on TLS_PORT $tport and H2C_PORT $hport, the two ports after.
protocols=
start() {
    try=0
    while [ $try -lt 10 ]; do
        try=$((try + 1))
        # Below Linux's ephemeral port range (32768-60999), where a client
        # connection may hold the port.
        port=$((20000 + ($$ * 13 + try * 2477 + $(date +%N | sed 's/^0*//;s/^$/0/') % 1000) % 12000))
        tport=$((port + 1)) hport=$((port + 2))
        free $port || continue  # something listens there
        if [ -n "$protocols" ]; then
            free $tport && free $hport || continue
            TLS_PORT=$tport H2C_PORT=$hport TLS_CERT="$out/cert.pem" TLS_KEY="$out/key.pem" \
                HOST=127.0.0.1 PORT=$port sh run.sh "$@" 2>"$out/log" &
        else
            HOST=127.0.0.1 PORT=$port sh run.sh "$@" 2>"$out/log" &
        fi
        spid=$!
        i=0
        while [ $i -lt 200 ]; do
            if curl -s -o /dev/null "http://127.0.0.1:$port/blank"; then
                return 0
            fi
            kill -0 "$spid" 2>/dev/null || break
            sleep 0.05
            i=$((i + 1))
        done
        # Not started (the port taken, most likely): try another.
        kill -TERM "$spid" 2>/dev/null
        wait "$spid"
    done
    echo "FAIL the server did not start"; cat "$out/log"
    exit 1
}

# stop: SIGTERM to run.sh; nginx's master and workers and the directory go.
stop() {
    master=$(pgrep -P "$spid" nginx)
    workers=$(for m in $master; do pgrep -P "$m"; done)
    dir=$(for m in $master; do ps -o args= -p "$m"; done | sed -n 's/.* -p \([^ ]*\)\/ .*/\1/p')
    kill -TERM "$spid"
    wait "$spid"
    ok $? "run.sh exits with status 0 on SIGTERM"
    sleep 0.2
    left=
    for p in $master $workers; do
        kill -0 "$p" 2>/dev/null && left="$left $p"
    done
    [ -z "$left" ]; ok $? "nothing left after SIGTERM (left:$left)"
    [ -n "$dir" ] && [ ! -e "$dir" ]; ok $? "temporary directory '$dir' removed"
}

# req NAME EXPECTED-STATUS EXPECTED-BODY CURL-ARGS...: one request.
req() {
    name=$1 want_status=$2 want_body=$3
    shift 3
    status=$(curl -s -D "$out/head" -o "$out/body" -w '%{http_code}' "$@")
    [ "$status" = "$want_status" ]; ok $? "$name: status $status, want $want_status"
    if [ -n "$want_body" ]; then
        [ "$(cat "$out/body")" = "$want_body" ]; ok $? "$name: body '$(cat "$out/body")', want '$want_body'"
    fi
    grep -qi '^Date: [A-Z][a-z][a-z], [0-9][0-9] [A-Z][a-z][a-z] [0-9]\{4\} [0-9:]\{8\} GMT' "$out/head"
    ok $? "$name: a Date header"
}

type_is() {
    grep -qi "^Content-Type: $1" "$out/head"; ok $? "Content-Type $1"
}

EXAMPLE='{"product":"WidgetPro-7","requestId":"5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59","group":{"kind":"retail","default":true,"balance":1234.56,"dates":["2020-01-12T10:53:17.773Z","2019-03-01T00:00:00.000Z","2021-07-30T23:59:59.999Z"]}}'
ANSWER='{"product":"WidgetPro-7","requestId":"5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59","client":{"balance":1234.56,"minDate":"2019-03-01T00:00:00.000Z","maxDate":"2021-07-30T23:59:59.999Z"}}'
JSON='Content-Type: application/json'

# A document of about 64 KiB (2,600 dates), larger than nginx's default
# 16 KiB body buffer.
{
    printf '{"product":"big","requestId":"b","group":{"kind":"k","default":false,"balance":-0.5,"dates":["1999-12-31T23:59:59.999Z"'
    i=0
    while [ $i -lt 2600 ]; do printf ',"2010-06-15T12:30:45.%03dZ"' $((i % 1000)); i=$((i + 1)); done
    printf ',"2030-01-01T00:00:00.000Z"]}}'
} >"$out/big.json"
BIG='{"product":"big","requestId":"b","client":{"balance":-0.5,"minDate":"1999-12-31T23:59:59.999Z","maxDate":"2030-01-01T00:00:00.000Z"}}'

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$out/key.pem" \
    -out "$out/cert.pem" -days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -addext basicConstraints=critical,CA:FALSE 2>/dev/null
ok $? "a test certificate made by openssl"

protocols=1 start
protocols=
base="http://127.0.0.1:$port"
req blank 200 OK "$base/blank"; type_is text/plain
req "blank with a query" 200 OK "$base/blank?x=1"
req "HEAD blank" 200 "" -I "$base/blank"
req work 200 "$ANSWER" -H "$JSON" --data-binary "$EXAMPLE" "$base/work"; type_is application/json
req "work, media type with parameters" 200 "$ANSWER" -H "$JSON; charset=utf-8" --data-binary "$EXAMPLE" "$base/work"
req "work, chunked body" 200 "$ANSWER" -H "$JSON" -H 'Transfer-Encoding: chunked' --data-binary "$EXAMPLE" "$base/work"
req "work, 64 KiB body" 200 "$BIG" -H "$JSON" --data-binary @"$out/big.json" "$base/work"
req "work, 64 KiB chunked body" 200 "$BIG" -H "$JSON" -H 'Transfer-Encoding: chunked' --data-binary @"$out/big.json" "$base/work"
req "work, 2 MiB body" 413 "" -H "$JSON" --data-binary x -H 'Content-Length: 2097152' "$base/work"
for bad in '{"product": "x", ' '[1, 2, 3]' '' 'null' \
    '{"product":"p","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-12T10:53:17.773Z"]}}' \
    '{"product":"p","requestId":"r","group":{"kind":"k","default":"yes","balance":1,"dates":["2020-01-12T10:53:17.773Z"]}}' \
    '{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":NaN,"dates":["2020-01-12T10:53:17.773Z"]}}' \
    '{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":[]}}' \
    '{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2021-02-29T00:00:00.000Z"]}}' \
    '{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-01T24:00:00.000Z"]}}' \
    '{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2016-12-31T23:59:60.000Z"]}}'; do
    req "work rejects $bad" 400 "" -H "$JSON" --data-binary "$bad" "$base/work"
done
req echo 200 abc-1.2_x~y "$base/echo/abc-1.2_x~y"; type_is text/plain
req "echo, query dropped" 200 hello "$base/echo/hello?q=1"
for path in / /nope /echo /blank/x /workx; do
    req "404 for $path" 404 "" "$base$path"
done
req "GET /work" 405 "" "$base/work"
# keep-alive: curl reuses the connection for the second URL (0 new connects).
connects=$(curl -s -o /dev/null -o /dev/null -w '%{num_connects}' "$base/blank" "$base/echo/x" | tr -d '\n')
[ "$connects" = 10 ]; ok $? "keep-alive: connects per request '$connects', want '10'"
req "Connection: close" 200 OK -H 'Connection: close' "$base/blank"
grep -qi '^Connection: close' "$out/head"; ok $? "Connection: close answered with Connection: close"

# version WANT CURL-ARGS...: the last request's HTTP version as curl saw it.
version() {
    want=$1
    shift
    got=$(curl -s -o /dev/null -w '%{http_version}' "$@")
    [ "$got" = "$want" ]; ok $? "HTTP version $got, want $want: $*"
}

# h2load-ok N CLIENT-ARGS...: N requests, 20 streams at once on one
# connection, every one answered 2xx.
h2load_ok() {
    n=$1
    shift
    h2load -n "$n" -c 1 -m 20 "$@" >"$out/h2load" 2>&1
    grep -q "^requests: $n total, $n started, $n done, $n succeeded" "$out/h2load" &&
        grep -q "^status codes: $n 2xx" "$out/h2load"
    ok $? "h2load, $n requests 20 at a time: $* ($(grep -E '^(requests|status codes):' "$out/h2load" | tr '\n' ' '))"
}

tls="https://127.0.0.1:$tport"
CA="--cacert $out/cert.pem"
req "TLS, HTTP/1.1" 200 OK $CA --http1.1 "$tls/blank"; type_is text/plain
version 1.1 $CA --http1.1 "$tls/blank"
req "TLS without ALPN" 200 OK $CA --no-alpn "$tls/blank"
req "TLS, work" 200 "$ANSWER" $CA --http1.1 -H "$JSON" --data-binary "$EXAMPLE" "$tls/work"
req "TLS 1.3" 200 OK $CA --tlsv1.3 "$tls/blank"
req "h2, blank" 200 OK $CA --http2 "$tls/blank"
version 2 $CA --http2 "$tls/blank"
req "h2, work" 200 "$ANSWER" $CA --http2 -H "$JSON" --data-binary "$EXAMPLE" "$tls/work"
req "h2, 64 KiB work" 200 "$BIG" $CA --http2 -H "$JSON" --data-binary @"$out/big.json" "$tls/work"
req "h2, bad work" 400 "" $CA --http2 -H "$JSON" --data-binary '[1]' "$tls/work"
req "h2, 404" 404 "" $CA --http2 "$tls/nope"
# 20 streams of one connection (curl multiplexes --parallel over HTTP/2).
mkdir "$out/par"
connects=$(cd "$out/par" && curl -s $CA --http2 --parallel --parallel-max 20 -o 'echo-#1' \
    -w '%{num_connects}\n' "$tls/echo/stream-[1-20]" 2>/dev/null | awk '{ n += $1 } END { print n }')
[ "$connects" = 1 ]; ok $? "h2: 20 parallel requests on $connects connections, want 1"
i=1
while [ $i -le 20 ]; do
    [ "$(cat "$out/par/echo-$i" 2>/dev/null)" = "stream-$i" ]; ok $? "h2: parallel echo $i"
    i=$((i + 1))
done
printf '%s' "$EXAMPLE" >"$out/example.json"
h2load_ok 200 "$tls/blank"
h2load_ok 200 -d "$out/example.json" -H "$JSON" "$tls/work"

h2c="http://127.0.0.1:$hport"
req "h2c, blank" 200 OK --http2-prior-knowledge "$h2c/blank"; type_is text/plain
version 2 --http2-prior-knowledge "$h2c/blank"
req "h2c, echo" 200 abc --http2-prior-knowledge "$h2c/echo/abc"
req "h2c, work" 200 "$ANSWER" --http2-prior-knowledge -H "$JSON" --data-binary "$EXAMPLE" "$h2c/work"
req "h2c, bad date" 400 "" --http2-prior-knowledge -H "$JSON" \
    --data-binary '{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2021-02-29T00:00:00.000Z"]}}' \
    "$h2c/work"
h2load_ok 200 "$h2c/blank"
h2load_ok 200 -d "$out/example.json" -H "$JSON" "$h2c/work"
stop

start 0
req "mode 0: GET /" 200 OK "http://127.0.0.1:$port/"
req "mode 0: /work still there" 200 "$ANSWER" -H "$JSON" --data-binary "$EXAMPLE" "http://127.0.0.1:$port/work"
stop

start 1
req "mode 1: POST /" 200 "$ANSWER" -H "$JSON" --data-binary "$EXAMPLE" "http://127.0.0.1:$port/"
req "mode 1: /blank still there" 200 OK "http://127.0.0.1:$port/blank"
stop

HOST=127.0.0.1 PORT=1 sh run.sh 2 2>/dev/null
[ $? != 0 ]; ok $? "an unknown argument is refused"

echo "$checks checks, $fails failed"
[ $fails = 0 ]
