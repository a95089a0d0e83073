#!/bin/sh
# Runs PHP-FPM behind nginx over FastCGI as the netbench server
# (contract/CONTRACT.md): the normal PHP deployment.
#
#   HOST=127.0.0.1 PORT=1234 [PHP_CHILDREN=5] [WORKERS=auto] sh run.sh [0|1]
#
# Writes php-fpm.conf and nginx.conf into a private temporary directory (pid
# files, the FastCGI unix socket and nginx's temp paths too, so it runs as
# root or not), then becomes php-fpm (exec php-fpm8.2 -F), leaving behind a
# supervisor subshell that starts nginx (daemon off) once php-fpm's socket
# exists.
#
# Why php-fpm is exec'd rather than started in the background: its master
# calls setsid() at start-up, always, and so leaves the caller's process group
# (and session), unless it already leads its group, where setsid() fails. The
# runner starts `exec sh run.sh` as the leader of a new process group,
# samples that group's CPU and memory, and signals that group; by taking over
# this shell's pid, php-fpm leads the group and stays in it, with its workers,
# nginx and the supervisor.
#
# Stopping: SIGTERM to the group reaches everyone. SIGTERM to this process
# alone (php-fpm's master) stops php-fpm and its workers; the supervisor sees
# that (end of file on a FIFO whose write end only php-fpm's processes hold),
# stops nginx and waits for it. If nginx ends on its own, the supervisor
# stops php-fpm. Either way the supervisor removes the directory once php-fpm
# and nginx have both exited, and ends last.
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
    # Request bodies with nginx's defaults: 413 above client_max_body_size
    # (1m); bodies above client_body_buffer_size (16k) go through a file in
    # client_body_temp_path, with a [warn] line (netbench's documents are
    # about half a kilobyte).

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

mkfifo "$tmp/php-fpm.alive"
fpm=$$   # this shell's pid, php-fpm's master once exec'd below

# The supervisor.
(
    npid=
    stopping=
    caught=
    gone=   # set when php-fpm has exited: its pid is not signalled again
    stop() {
        stopping=1
        caught=1
        if [ -z "$gone" ]; then
            kill -TERM "$fpm" 2>/dev/null || :
        fi
        if [ -n "$npid" ]; then
            kill -TERM "$npid" 2>/dev/null || :
        fi
    }
    # wait_for PID: waits until the child PID has exited, also when a
    # trapped signal interrupts wait (status > 128).
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
    trap stop TERM INT HUP
    trap 'gone=1; stop' USR1
    # This subshell's pid: the parent of a command it runs.
    sh -c 'echo "$PPID"' >"$tmp/supervisor.pid"
    read -r self <"$tmp/supervisor.pid"
    # Ends when php-fpm's master and workers have all exited: they alone hold
    # the FIFO's write end (its open pairs with the exec 3> below). It ignores
    # SIGTERM, so that the supervisor outlives php-fpm's master.
    (
        trap '' TERM INT HUP
        cat <"$tmp/php-fpm.alive" >/dev/null
        kill -USR1 "$self" 2>/dev/null || :
    ) &
    alive=$!

    i=0
    while [ ! -S "$tmp/php-fpm.sock" ]; do
        if [ -n "$stopping" ] || [ $i -ge 200 ]; then
            [ -n "$stopping" ] || echo "run.sh: php-fpm did not start" >&2
            break
        fi
        sleep 0.05
        i=$((i + 1))
    done
    if [ -z "$stopping" ]; then
        nginx -e stderr -p "$tmp/" -c "$tmp/nginx.conf" &
        npid=$!
        wait_for "$npid"
    fi
    # nginx has ended (or never started): php-fpm goes too, and the
    # directory once php-fpm has gone.
    if [ -z "$gone" ]; then
        kill -TERM "$fpm" 2>/dev/null || :
    fi
    wait_for "$alive"
    rm -rf "$tmp"
) </dev/null &

exec 3>"$tmp/php-fpm.alive"
exec php-fpm8.2 -F -y "$tmp/php-fpm.conf" $fpm_root_opt
