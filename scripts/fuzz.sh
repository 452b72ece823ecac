#!/usr/bin/env bash
# Fuzzes one of Courier's parsers with libFuzzer for SECONDS seconds.
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]
# TARGET: response json query-string multipart set-cookie www-authenticate certificate
#         resume-data base-url   (or "all": each target for SECONDS seconds)
# Builds Fuzz/ (its own package and scratch path) with libFuzzer coverage and AddressSanitizer,
# keeps a growing corpus in Fuzz/Corpus/TARGET (seeds are committed; new entries are not) and
# writes any crashing input to Fuzz/Crashes/TARGET/. Exit status: libFuzzer's (0: no crash).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 2 ]; then
    sed -n '2,8p' "$0" >&2
    exit 2
fi
target=$1
seconds=$2
shift 2

scratch=Fuzz/.build
# Built from a clean scratch directory whenever the sources are newer than the binary (a few
# minutes; incremental rebuilds of this package have misbehaved). COURIER_FUZZ_SKIP_BUILD=1
# reuses the binary as it is.
binary="$scratch/debug/courier-fuzz"
if [ "${COURIER_FUZZ_SKIP_BUILD:-0}" != 1 ]; then
    if [ -x "$binary" ] && [ -n "$(find Sources Fuzz/Sources Package.swift Fuzz/Package.swift -newer "$binary" -print -quit)" ]; then
        rm -rf "$scratch"
    fi
    # swiftc keeps only the last -sanitize= it is given: SwiftPM's `--sanitize=fuzzer
    # --sanitize=address` compiles Swift with AddressSanitizer and no coverage at all (libFuzzer
    # then sees ~91k counters, from the C targets only). One combined flag, passed last, keeps both.
    swift build --package-path Fuzz --scratch-path "$scratch" --sanitize=fuzzer \
        -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address -Xcxx -fsanitize=address \
        --product courier-fuzz 2>&1 | grep -E "error|warning: |Build complete" | grep -v "/.build/checkouts/" || true
fi
[ -x "$binary" ] || { echo "the fuzzer did not build" >&2; exit 1; }

run_one() {
    local name=$1
    shift
    mkdir -p "Fuzz/Corpus/$name" "Fuzz/Crashes/$name" "Fuzz/.work/$name"
    echo "== $name: ${seconds}s"
    # New corpus entries go to Fuzz/.work (ignored); the committed seeds are read too.
    SWIFT_BACKTRACE=enable=no COURIER_FUZZ_TARGET=$name "$binary" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="Fuzz/Crashes/$name/" "$@" \
        "Fuzz/.work/$name" "Fuzz/Corpus/$name"
}

if [ "$target" = all ]; then
    for name in response json query-string multipart set-cookie www-authenticate certificate resume-data base-url; do
        run_one "$name" "$@"
    done
else
    run_one "$target" "$@"
fi
