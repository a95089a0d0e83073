#!/bin/sh
# Runs PHP-FPM behind nginx over FastCGI as the netbench server
# (contract/CONTRACT.md): the normal PHP deployment.
#
#   HOST=127.0.0.1 PORT=1234 [PHP_CHILDREN=5] [WORKERS=auto] sh run.sh [0|1]
#
# Writes php-fpm.conf and nginx.conf into a private temporary directory (pid
# files, the FastCGI unix socket and nginx's temp paths too, so it runs as
# root or not), starts php-fpm (-F, in the background) and, once its socket
# exists, nginx (daemon off) and waits for nginx. SIGTERM, SIGINT or SIGHUP to
# this shell goes to both masters, which stop their workers; the shell waits
# for both and removes the directory. If nginx ends on its own, php-fpm is
# stopped too.
#
# The optional argument 0 makes GET / answer as /blank, 1 makes POST / answer
# as /work (index.php reads it from the FastCGI parameter NETBENCH_ROOT).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
host=${HOST:-127.0.0.1}
port=${PORT:-1234}
children=${PHP_CHILDREN:-5}     # the size of the pool Debian ships (www.conf: pm.max_children = 5)
workers=${WORKERS:-auto}
connections=${WORKER_CONNECTIONS:-768}   # Debian's shipped /etc/nginx/nginx.conf

case "${1-}" in
    ''|0|1) root=${1-} ;;
    *) echo "run.sh: unknown argument '$1' (expected 0 or 1)" >&2; exit 2 ;;
esac

case "$host" in
    \[*) listen="$host:$port" ;;
    *:*) listen="[$host]:$port" ;;   # an IPv6 address
    *) listen="$host:$port" ;;
esac

# As root: nginx's workers drop to nobody:nogroup (nginx's compiled-in default
# user is nobody:nobody, and Debian has no group "nobody"); the socket belongs
# to them, as Debian's www.conf gives it to www-data. The PHP workers run as
# root (php-fpm -R): they read index.php from the checkout, which may sit
# where other users cannot read (under /root, say). The directory gets o+x so
# that nginx's workers reach the socket and their body temp path.
fpm_root_opt=
nginx_user=
fpm_user=
if [ "$(id -u)" = 0 ]; then
    fpm_root_opt=-R
    nginx_user="user nobody nogroup;"
    fpm_user="user = root
group = root
listen.owner = nobody
listen.group = nogroup
listen.mode = 0660"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/php-fpm.XXXXXX")
fpid=
npid=
stopping=
caught=
cleanup() {
    rm -rf "$tmp"
}
stop() {
    stopping=1
    caught=1
    for p in $npid $fpid; do
        kill -TERM "$p" 2>/dev/null || :
    done
}
trap cleanup EXIT
trap stop TERM INT HUP
chmod 711 "$tmp"

cat >"$tmp/php-fpm.conf" <<EOF
[global]
pid = $tmp/php-fpm.pid
error_log = /proc/self/fd/2
daemonize = no
; no systemd here: no sd_notify status timer
systemd_interval = 0

[netbench]
listen = $tmp/php-fpm.sock
$fpm_user
pm = static
pm.max_children = $children
; no access.log: no request logging. clear_env = yes and
; catch_workers_output = no, as shipped: PHP needs no environment, and
; workers write nothing.
clear_env = yes
catch_workers_output = no
EOF

cat >"$tmp/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes $workers;
$nginx_user
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

    server {
        listen $listen;

        # Every request goes to the front controller.
        location / {
            include /etc/nginx/fastcgi_params;
            fastcgi_param SCRIPT_FILENAME "$here/index.php";
            fastcgi_param NETBENCH_ROOT "$root";
            fastcgi_pass unix:$tmp/php-fpm.sock;
        }
    }
}
EOF

# wait_for PID: waits until PID has exited, also when a trapped signal
# interrupts wait (status > 128), and sets $status to its exit status.
wait_for() {
    while :; do
        caught=
        status=0
        wait "$1" || status=$?
        if [ -z "$caught" ] || [ "$status" -le 128 ]; then
            return 0
        fi
    done
}

php-fpm8.2 -F -y "$tmp/php-fpm.conf" $fpm_root_opt &
fpid=$!
i=0
while [ ! -S "$tmp/php-fpm.sock" ] && [ -z "$stopping" ]; do
    if ! kill -0 "$fpid" 2>/dev/null || [ $i -ge 200 ]; then
        echo "run.sh: php-fpm did not start" >&2
        stop
        wait_for "$fpid"
        exit 1
    fi
    sleep 0.05
    i=$((i + 1))
done

if [ -z "$stopping" ]; then
    nginx -e stderr -p "$tmp/" -c "$tmp/nginx.conf" &
    npid=$!
    wait_for "$npid"
    nstatus=$status
else
    nstatus=0
fi
kill -TERM "$fpid" 2>/dev/null || :
wait_for "$fpid"
[ "$nstatus" = 0 ] || exit "$nstatus"
exit "$status"
