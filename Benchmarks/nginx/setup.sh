#!/usr/bin/env bash
# nginx on loopback for courier-bench: 1 worker, access log off, keep-alive up to 10,000,000
# requests per connection. Serves
#   /json           a ~300-byte JSON document
#   /download-256m  a 256 MiB file of random bytes (made once, checked by courier-bench)
#   /nginx_status   stub_status (courier-bench reads "accepts" to count TCP connections)
# on 127.0.0.1:PORT and on the Unix socket DIR/nginx.sock (courier-connections-bench).
# Sized for `courier-bench scaling` (up to 4,096 client connections at once, and wrk's as
# many): worker_connections 16384, worker_rlimit_nofile 65536, a listen backlog of 4096 (the
# default 511 drops SYNs when thousands connect at once: 1 s retransmits), and `start` raises
# the shell's `ulimit -n` as far as the hard limit allows before starting the master. A
# running nginx keeps its old config: `restart` after changing this script.
# The upload case does NOT use nginx: a `return 204` location answers before reading the
# body (see shared/BENCHMARKING.md), so courier-bench always uploads to the test server's
# /upload, which reads, counts and hashes the whole body.
#
# Usage: Benchmarks/nginx/setup.sh start|stop|restart|status|install
#   install: only the packages (nginx, curl, wrk), without starting anything.
# Environment: COURIER_BENCH_NGINX_PORT (default 8089),
#              COURIER_BENCH_NGINX_DIR  (default /tmp/courier-bench-nginx).
# Idempotent: installs nginx, curl and wrk (courier-bench's reference clients) with apt-get
# only when missing, writes the files only when missing, and `start` on a running server
# leaves it running.
set -euo pipefail

PORT="${COURIER_BENCH_NGINX_PORT:-8089}"
DIR="${COURIER_BENCH_NGINX_DIR:-/tmp/courier-bench-nginx}"
CONF="$DIR/nginx.conf"
PIDFILE="$DIR/nginx.pid"
DOWNLOAD_BYTES=$((256 * 1024 * 1024))

# Installs, with apt-get and only when missing, nginx and the reference clients courier-bench
# runs next to Courier (`--clients curl,wrk`): curl's CLI and wrk, from Debian's packages.
install_packages() {
    local missing=()
    if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then missing+=(nginx); fi
    if ! command -v curl >/dev/null 2>&1; then missing+=(curl); fi
    if ! command -v wrk >/dev/null 2>&1; then missing+=(wrk); fi
    if [ "${#missing[@]}" -eq 0 ]; then
        return
    fi
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    echo "setup.sh: installing ${missing[*]} (apt-get)" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    # The nginx package may start the distribution's own server on port 80; ours is separate.
}

nginx_bin() {
    command -v nginx 2>/dev/null || echo /usr/sbin/nginx
}

write_files() {
    mkdir -p "$DIR/www" "$DIR/temp"
    if [ ! -f "$DIR/www/json" ]; then
        # 300 bytes with the final newline, like a small API answer.
        cat >"$DIR/www/json" <<'JSON'
{"id":1042,"name":"Courier benchmark document","active":true,"score":98.25,"tags":["http","nio","swift","linux"],"owner":{"login":"courier","id":7,"site_admin":false},"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-02T03:04:05Z","description":"A small JSON body for rate tests"}
JSON
    fi
    local size=0
    if [ -f "$DIR/www/download-256m" ]; then size=$(stat -c %s "$DIR/www/download-256m"); fi
    if [ "$size" -ne "$DOWNLOAD_BYTES" ]; then
        echo "setup.sh: writing $DIR/www/download-256m (256 MiB of random bytes)" >&2
        head -c "$DOWNLOAD_BYTES" /dev/urandom >"$DIR/www/download-256m.tmp"
        mv "$DIR/www/download-256m.tmp" "$DIR/www/download-256m"
    fi
    cat >"$CONF" <<EOF
# Written by Benchmarks/nginx/setup.sh; edit the script, not this file.
daemon on;
worker_processes 1;
pid $PIDFILE;
error_log $DIR/error.log warn;
worker_rlimit_nofile 65536;

events {
    worker_connections 16384;
}

http {
    access_log off;
    keepalive_requests 10000000;
    keepalive_timeout 75s;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    gzip off;
    client_body_temp_path $DIR/temp/body;
    proxy_temp_path $DIR/temp/proxy;
    fastcgi_temp_path $DIR/temp/fastcgi;
    uwsgi_temp_path $DIR/temp/uwsgi;
    scgi_temp_path $DIR/temp/scgi;

    server {
        listen 127.0.0.1:$PORT backlog=4096;
        listen unix:$DIR/nginx.sock;
        root $DIR/www;
        location = /json { default_type application/json; }
        location = /download-256m { default_type application/octet-stream; }
        location = /nginx_status { stub_status; }
    }
}
EOF
}

is_running() {
    [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null
}

start() {
    install_packages
    write_files
    if is_running; then
        echo "setup.sh: nginx already running (pid $(cat "$PIDFILE")) on 127.0.0.1:$PORT"
        return
    fi
    # Descriptors: worker_rlimit_nofile covers the worker; the master (and a worker that
    # cannot raise its own limit) inherits this shell's.
    ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    "$(nginx_bin)" -t -q -c "$CONF" -p "$DIR"
    "$(nginx_bin)" -c "$CONF" -p "$DIR"
    for _ in $(seq 1 50); do
        if is_running; then break; fi
        sleep 0.1
    done
    is_running || { echo "setup.sh: nginx did not start; see $DIR/error.log" >&2; exit 1; }
    echo "setup.sh: nginx running (pid $(cat "$PIDFILE")) on http://127.0.0.1:$PORT (root $DIR/www)"
}

stop() {
    if is_running; then
        "$(nginx_bin)" -c "$CONF" -p "$DIR" -s quit
        for _ in $(seq 1 50); do
            if ! is_running; then break; fi
            sleep 0.1
        done
        echo "setup.sh: nginx stopped"
    else
        echo "setup.sh: nginx not running"
    fi
}

case "${1:-}" in
start) start ;;
stop) stop ;;
restart) stop; start ;;
install) install_packages ;;
status)
    if is_running; then
        echo "running (pid $(cat "$PIDFILE")) on http://127.0.0.1:$PORT"
    else
        echo "not running"
        exit 1
    fi
    ;;
*)
    echo "usage: $0 start|stop|restart|status|install" >&2
    exit 2
    ;;
esac
