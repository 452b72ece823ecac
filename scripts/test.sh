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

if [ $# -gt 0 ]; then
    swift test --skip-build "$@"
    exit
fi
# Three test processes, one after another, rather than one. Foundation's Process.run() on
# Linux (swift-corelibs-foundation before PR #5472; Swift 6.3.1 has it) copies 256 bytes past
# each /proc/self/fd entry it reads and crashes when the entries fill glibc's 32 KiB readdir
# buffer: about 1,350 open descriptors. All 1,200 tests in one process reached 1,600
# descriptors while the CLI suites spawned children, and crashed there now and then; split
# like this, each process peaks below 950 (measured), and the 2 cores are less oversubscribed.
# Each process runs at most COURIER_TEST_PARALLEL tests at once (default 16): with every test
# at once, the library process held over 1,200 descriptors (Process.run() refuses past that,
# see ProcessLauncher) and the CLI tests' children waited tens of seconds for the two cores.
width=${COURIER_TEST_PARALLEL:-16}
status=0
swift test --skip-build --experimental-maximum-parallelization-width "$width" --filter '^CourierCLITests\.' || status=1
swift test --skip-build --experimental-maximum-parallelization-width "$width" --filter '^CourierTests\.' || status=1
swift test --skip-build --experimental-maximum-parallelization-width "$width" --skip '^CourierCLITests\.' --skip '^CourierTests\.' || status=1
exit $status
