#!/bin/sh
# End-to-end test: starts `sh run.sh [0|1]` on a free loopback port, checks
# answers with curl, stops it with SIGTERM and checks that nginx, php-fpm and
# all their workers are gone and the temporary directory removed. Run from
# anywhere.
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

# start [ARG]: the server on a free port; sets $port and $spid.
start() {
    try=0
    while [ $try -lt 10 ]; do
        try=$((try + 1))
        # Below Linux's ephemeral port range (32768-60999), where a client
        # connection may hold the port.
        port=$((20000 + ($$ * 13 + try * 2477 + $(date +%N | sed 's/^0*//;s/^$/0/') % 1000) % 12000))
        curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"
        [ $? = 7 ] || continue  # something listens there
        HOST=127.0.0.1 PORT=$port sh run.sh "$@" 2>"$out/log" &
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

# descendants PID: the processes under PID, at any depth.
descendants() {
    for c in $(pgrep -P "$1"); do
        echo "$c"
        descendants "$c"
    done
}

# stop: SIGTERM to run.sh; nginx, php-fpm, their workers and the directory go.
stop() {
    procs=$(descendants "$spid")
    dir=$(for p in $procs; do ps -o args= -p "$p"; done | sed -n 's/^nginx: master .* -p \([^ ]*\)\/ .*/\1/p')
    n=$(echo $procs | wc -w)
    [ "$n" -ge 4 ]; ok $? "two masters and their workers ran under run.sh (found $n)"
    kill -TERM "$spid"
    wait "$spid"
    ok $? "run.sh exits with status 0 on SIGTERM"
    i=0
    while :; do
        left=
        for p in $procs; do
            kill -0 "$p" 2>/dev/null && left="$left $p"
        done
        [ -z "$left" ] || [ $i -ge 50 ] && break
        sleep 0.1
        i=$((i + 1))
    done
    [ -z "$left" ]; ok $? "nothing left after SIGTERM (left:$left)"
    # What was left, and whose (a zombie names the parent that failed to reap it).
    [ -z "$left" ] || ps -o pid,ppid,pgid,stat,args -p "$(echo $left | tr ' ' ,)"
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

start
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
