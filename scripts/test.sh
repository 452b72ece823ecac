#!/usr/bin/env bash
# The test command: builds everything with warnings treated as a failure, then runs every
# suite (Swift Testing) against the in-process test server on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-dependencies.sh

log=$(mktemp)
swift build --build-tests 2>&1 | tee "$log"
# A dependency's own manifest warnings (swift-distributed-tracing ships CMakeLists.txt files
# its targets don't declare) name the package, not a path; that one is excused by name, everything else counts.
ours=$(grep -E "warning:" "$log" | grep -v "/.build/checkouts/" \
    | grep -vE "^warning: 'swift-distributed-tracing': found [0-9]+ file\(s\) which are unhandled" | sort -u || true)
if [ -n "$ours" ]; then
    echo "Build produced warnings in Courier's own code (zero allowed):" >&2
    echo "$ours" >&2
    exit 1
fi
rm -f "$log"

swift test --skip-build "$@"
