#!/bin/sh
# The image benchmark: 1,000 image requests over 100 distinct URLs through ImageDownloader,
# against the in-process test server on loopback. For each mode (one process each, so the peak
# RSS is that mode's): requests reaching the server, merges, image-cache hits, wall time and the
# test process's peak RSS (VmHWM).
#   burst          all 1,000 asked for at once (image cache on): merging does the work
#   waves          ten waves of the 100 URLs, each after the previous finished (image cache on)
#   waves-nocache  the same without an image cache: every wave goes to the network
# Usage: swift build --build-tests && scripts/image-benchmark.sh
# (COURIER_TEST_BINARY=path/to/CourierPackageTests.xctest for another build)
set -eu
cd "$(dirname "$0")/.."
binary="${COURIER_TEST_BINARY:-.build/debug/CourierPackageTests.xctest}"
for mode in burst waves waves-nocache; do
    COURIER_IMAGE_BENCH=$mode "$binary" --testing-library swift-testing --filter ImageDownloaderBenchmark 2>&1 | grep -E "image-bench|✘"
done
