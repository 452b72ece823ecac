#!/bin/sh
# Issue 14's benchmark: 1,000 image requests over 100 distinct URLs through ImageDownloader,
# against the in-process test server on loopback; prints requests reaching the server, wall time
# and the test process's peak RSS (VmHWM), with and without the image cache.
# Usage: scripts/image-benchmark.sh   (after `swift build --build-tests`; use -c release builds
# by setting COURIER_TEST_BINARY to a release test bundle if you have one)
set -eu
cd "$(dirname "$0")/.."
binary="${COURIER_TEST_BINARY:-.build/debug/CourierPackageTests.xctest}"
COURIER_IMAGE_BENCH=1 "$binary" --testing-library swift-testing --filter ImageDownloaderBenchmark 2>&1 | grep -E "image-bench|✘|passed|failed"
