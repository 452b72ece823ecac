#!/usr/bin/env bash
# Installs the system packages Courier's build and tests need. Idempotent: installs only
# what is missing. zlib: NIOHTTPCompression and compress-nio link it. libcurl4:
# FoundationNetworking (used by the test server's tests as a plain peer client). time: the CLI
# tests read courier's peak memory from /usr/bin/time. iproute2: the reachability tests make
# network namespaces and veth links with `ip`. curl: the cURLDescription and `courier --curl`
# tests run the printed command with curl itself.
set -euo pipefail

needed=()
for package in zlib1g-dev libcurl4 ca-certificates time iproute2 curl; do
    if ! dpkg -s "$package" >/dev/null 2>&1; then
        needed+=("$package")
    fi
done

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
