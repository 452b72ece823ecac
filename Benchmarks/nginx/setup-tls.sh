#!/usr/bin/env bash
# nginx with TLS and HTTP/2 on loopback for `courier-bench https` and
# `courier-connections-bench coalescing nginx`: 1 worker,
# access log off, keep-alive up to 10,000,000 requests per connection, `listen ... ssl http2`
# (nginx 1.22 syntax) with ALPN offering h2 and http/1.1. Serves /json (~300 bytes, the same
# document as setup.sh), /nginx_status (connections accepted) and /download-256m when setup.sh
# made it.
#
# The certificate: a throwaway CA and a leaf for 127.0.0.1, localhost and h1…h8.courier.test
# (the host names `courier-connections-bench coalescing` spreads its requests over), made once
# with openssl in $DIR/tls (ca.pem is what clients trust: `courier-bench https --ca $DIR/tls/ca.pem`).
#
# Usage: Benchmarks/nginx/setup-tls.sh start|stop|status
# Environment: COURIER_BENCH_TLS_PORT (default 8443), COURIER_BENCH_NGINX_TLS_DIR
#              (default /tmp/courier-bench-nginx-tls).
set -euo pipefail

PORT="${COURIER_BENCH_TLS_PORT:-8443}"
DIR="${COURIER_BENCH_NGINX_TLS_DIR:-/tmp/courier-bench-nginx-tls}"
CONF="$DIR/nginx.conf"
PIDFILE="$DIR/nginx.pid"
NGINX="$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)"

make_certificates() {
    mkdir -p "$DIR/tls"
    local names=""
    for index in 1 2 3 4 5 6 7 8; do names="$names,DNS:h$index.courier.test"; done
    # Made again when an older leaf lacks the coalescing names.
    [ -f "$DIR/tls/leaf.pem" ] && grep -q courier.test "$DIR/tls/ext.cnf" 2>/dev/null && return
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
        -subj "/CN=courier-bench CA" -keyout "$DIR/tls/ca.key" -out "$DIR/tls/ca.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
        -keyout "$DIR/tls/leaf.key" -out "$DIR/tls/leaf.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$names" >"$DIR/tls/ext.cnf"
    openssl x509 -req -in "$DIR/tls/leaf.csr" -CA "$DIR/tls/ca.pem" -CAkey "$DIR/tls/ca.key" -CAcreateserial \
        -days 3650 -extfile "$DIR/tls/ext.cnf" -out "$DIR/tls/leaf.pem" 2>/dev/null
}

write_files() {
    mkdir -p "$DIR/www" "$DIR/temp"
    if [ ! -f "$DIR/www/json" ]; then
        cat >"$DIR/www/json" <<'JSON'
{"id":1042,"name":"Courier benchmark document","active":true,"score":98.25,"tags":["http","nio","swift","linux"],"owner":{"login":"courier","id":7,"site_admin":false},"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-02T03:04:05Z","description":"A small JSON body for rate tests"}
JSON
    fi
    if [ -f /tmp/courier-bench-nginx/www/download-256m ] && [ ! -e "$DIR/www/download-256m" ]; then
        ln -s /tmp/courier-bench-nginx/www/download-256m "$DIR/www/download-256m"
    fi
    cat >"$CONF" <<CONF
worker_processes 1;
pid $PIDFILE;
error_log $DIR/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    keepalive_requests 10000000;
    keepalive_timeout 300s;
    http2_max_concurrent_streams 128;
    client_body_temp_path $DIR/temp;
    proxy_temp_path $DIR/temp;
    fastcgi_temp_path $DIR/temp;
    uwsgi_temp_path $DIR/temp;
    scgi_temp_path $DIR/temp;
    server {
        listen 127.0.0.1:$PORT ssl http2;
        ssl_certificate $DIR/tls/leaf.pem;
        ssl_certificate_key $DIR/tls/leaf.key;
        ssl_protocols TLSv1.3;
        root $DIR/www;
        location = /json { default_type application/json; }
        location = /nginx_status { stub_status; }
    }
}
CONF
}

case "${1:-start}" in
start)
    make_certificates
    write_files
    if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
        echo "setup-tls.sh: nginx already running on https://127.0.0.1:$PORT"
        exit 0
    fi
    "$NGINX" -c "$CONF" -p "$DIR"
    echo "setup-tls.sh: nginx on https://127.0.0.1:$PORT (h2 and http/1.1); trust $DIR/tls/ca.pem"
    ;;
stop)
    if [ -f "$PIDFILE" ]; then kill "$(cat "$PIDFILE")" 2>/dev/null || true; rm -f "$PIDFILE"; fi
    ;;
status)
    if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then echo running; else echo stopped; exit 1; fi
    ;;
*)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
