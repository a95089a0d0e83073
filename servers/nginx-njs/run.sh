#!/bin/sh
# Runs nginx with the njs module as the netbench server (contract/CONTRACT.md).
#
#   HOST=127.0.0.1 PORT=1234 [WORKERS=auto] [WORKER_CONNECTIONS=768] \
#   [TLS_PORT=8443 TLS_CERT=cert.pem TLS_KEY=key.pem] [H2C_PORT=8080] sh run.sh [0|1]
#
# Contract 1.5: TLS_PORT adds `listen ... ssl http2` (nginx 1.22's spelling)
# to the one server block: TLS with the given chain and key, ALPN h2 or
# http/1.1; H2C_PORT adds `listen ... http2`, which in nginx 1.22 is HTTP/2
# with prior knowledge only on a cleartext port. Each is opened only when its
# variable is set.
#
# Writes nginx.conf into a private temporary directory (pid file and every
# temp path in there too, so it runs as root or not), starts nginx in the
# foreground (daemon off, master process on) and waits for it. SIGTERM, SIGINT
# or SIGHUP to this shell is passed to the nginx master, which stops its
# workers and exits; the directory is removed when nginx has gone. (A plain
# `exec nginx` could not remove the directory afterwards.)
#
# The optional argument 0 makes GET / answer as /blank, 1 makes POST / answer
# as /work.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
host=${HOST:-127.0.0.1}
port=${PORT:-1234}
workers=${WORKERS:-auto}
connections=${WORKER_CONNECTIONS:-768}   # Debian's shipped /etc/nginx/nginx.conf

root_location=
case "${1-}" in
    '') ;;
    0) root_location="location = / { js_content netbench.blank; }" ;;
    1) root_location="location = / { js_content netbench.work; }" ;;
    *) echo "run.sh: unknown argument '$1' (expected 0 or 1)" >&2; exit 2 ;;
esac

# address PORT: HOST:PORT as `listen` takes it.
address() {
    case "$host" in
        \[*) echo "$host:$1" ;;
        *:*) echo "[$host]:$1" ;;   # an IPv6 address
        *) echo "$host:$1" ;;
    esac
}
listen="listen $(address "$port");"

# nginx reads relative paths from its prefix (the temporary directory).
absolute() {
    case "$1" in
        /*) echo "$1" ;;
        *) echo "$PWD/$1" ;;
    esac
}
if [ -n "${TLS_PORT-}" ]; then
    if [ -z "${TLS_CERT-}" ] || [ -z "${TLS_KEY-}" ]; then
        echo "run.sh: TLS_PORT needs TLS_CERT and TLS_KEY" >&2
        exit 2
    fi
    # The protocols as Debian's /etc/nginx/nginx.conf ships them: nginx 1.22's
    # own default leaves TLS 1.3 out (1.23.4 added it), and the contract
    # wants it. OpenSSL's security level refuses TLS 1 and 1.1 regardless.
    listen="$listen
        listen $(address "$TLS_PORT") ssl http2;
        ssl_certificate \"$(absolute "$TLS_CERT")\";
        ssl_certificate_key \"$(absolute "$TLS_KEY")\";
        ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;
        ssl_prefer_server_ciphers on;"
fi
if [ -n "${H2C_PORT-}" ]; then
    listen="$listen
        listen $(address "$H2C_PORT") http2;"
fi

# As root, nginx's workers drop to nobody:nogroup (nginx's compiled-in
# default user is nobody:nobody, and Debian has no group "nobody"). They need
# nothing from the checkout: the master reads netbench.js while loading the
# configuration. The directory gets o+x only so that they could reach the
# body temp path, which this configuration never uses.
user=
if [ "$(id -u)" = 0 ]; then
    user="user nobody nogroup;"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nginx-njs.XXXXXX")
pid=
stopping=
caught=
cleanup() {
    rm -rf "$tmp"
}
stop() {
    stopping=1
    caught=1
    if [ -n "$pid" ]; then
        kill -TERM "$pid" 2>/dev/null || :
    fi
}
trap cleanup EXIT
trap stop TERM INT HUP
chmod 711 "$tmp"

cat >"$tmp/nginx.conf" <<EOF
load_module /usr/lib/nginx/modules/ngx_http_js_module.so;

daemon off;
master_process on;
worker_processes $workers;
$user
error_log stderr warn;
pid $tmp/nginx.pid;

events {
    worker_connections $connections;
}

http {
    access_log off;
    sendfile on;     # as Debian ships it; no file is served here
    tcp_nopush on;

    client_body_temp_path $tmp/client_body;
    proxy_temp_path $tmp/proxy;
    fastcgi_temp_path $tmp/fastcgi;
    uwsgi_temp_path $tmp/uwsgi;
    scgi_temp_path $tmp/scgi;

    # r.requestText only sees a body held in memory: one buffer as large as
    # the largest body accepted (the contract allows 413 above 1 MiB).
    client_max_body_size 1m;
    client_body_buffer_size 1m;
    client_body_in_single_buffer on;

    js_path "$here";
    js_import netbench.js;

    server {
        $listen

        location = /blank { js_content netbench.blank; }
        location = /work { js_content netbench.work; }
        location /echo/ { js_content netbench.echo; }
        $root_location
        location / { return 404; }
    }
}
EOF

nginx -e stderr -p "$tmp/" -c "$tmp/nginx.conf" &
pid=$!
if [ -n "$stopping" ]; then
    kill -TERM "$pid" 2>/dev/null || :
fi
# A trapped signal interrupts wait (status > 128) while nginx is still
# stopping: wait again, for nginx's own exit status.
while :; do
    caught=
    status=0
    wait "$pid" || status=$?
    if [ -z "$caught" ] || [ "$status" -le 128 ]; then
        break
    fi
done
exit "$status"
