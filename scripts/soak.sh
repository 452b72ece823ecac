#!/usr/bin/env bash
# The soak (.ci/run runs it after scripts/test.sh): 200,000 small GETs with 64 in flight, then a
# 256 MiB upload and a 256 MiB download, all through the session layer (URLSessionManager)
# against the in-process test server on loopback. Prints the numbers; fails when any request
# fails, when the peak RSS of the GETs' last quarter is more than 10 % above their first
# quarter's, when open descriptors grow, or when a transfer was not streamed.
#
#   scripts/soak.sh [courier-soak options]     e.g. --requests 1000000, --transfer-mib 0; --help lists them
#
# courier-soak is an executable target of the main package (Sources/courier-soak). It is built
# with scripts/test.sh's own command (swift build --build-tests): after test.sh, as in .ci/run,
# that finds nothing left to do.
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
if ! swift build --build-tests >"$log" 2>&1; then
    echo "courier-soak did not build:" >&2
    tail -n 30 "$log" >&2
    rm -f "$log"
    exit 1
fi
rm -f "$log"
binary=.build/debug/courier-soak
exec "$binary" "$@"
