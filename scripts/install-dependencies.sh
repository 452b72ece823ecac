#!/usr/bin/env bash
# Installs the system packages Courier's build and tests need. Idempotent: installs only
# what is missing. zlib: NIOHTTPCompression and compress-nio link it. libcurl4:
# FoundationNetworking (used by the test server's tests as a plain peer client). time: the CLI
# tests read courier's peak memory from /usr/bin/time. iproute2: the reachability tests make
# network namespaces and veth links with `ip`. curl: the cURLDescription and `courier --curl`
# tests run the printed command with curl itself. python3 and python3-venv: the WebSocket
# interop tests run the Python `websockets` library and Hypercorn (PyPI, pinned) from a venv
# in .build/python-venv as peers that are not Courier. nginx: the Unix domain socket interop
# tests run it (Debian's) on a socket as a server that is not Courier.
set -euo pipefail
cd "$(dirname "$0")/.."

needed=()
for package in zlib1g-dev libcurl4 ca-certificates time iproute2 curl python3 python3-venv; do
    if ! dpkg -s "$package" >/dev/null 2>&1; then
        needed+=("$package")
    fi
done

# Checked by its binary: nginx-light or nginx-full serve as well as nginx.
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    needed+=(nginx)
fi

if [ ${#needed[@]} -gt 0 ]; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${needed[@]}"
fi

if ! command -v swift >/dev/null 2>&1; then
    echo "swift is not on PATH: install Swift 6.x (https://swift.org/install) first." >&2
    exit 1
fi

# The WebSocket interop peers, in the package's own venv: Python's websockets library, and
# Hypercorn (an ASGI server that serves WebSockets over HTTP/2 as RFC 8441 streams).
venv=.build/python-venv
websockets_version=15.0.1
hypercorn_version=0.18.0
# haralyzer: a HAR reader from PyPI that checks what `courier --har` writes.
haralyzer_version=2.4.0
if ! "$venv/bin/python" -c "
import sys, websockets
from importlib.metadata import version
sys.exit(websockets.__version__ != '$websockets_version' or version('hypercorn') != '$hypercorn_version'
         or version('haralyzer') != '$haralyzer_version')" >/dev/null 2>&1; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "websockets==$websockets_version" "hypercorn==$hypercorn_version" \
        "haralyzer==$haralyzer_version"
fi
