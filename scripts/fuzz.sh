#!/usr/bin/env bash
# Fuzzes Courier's parsers with libFuzzer.
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]   fuzz for SECONDS seconds (each target for "all")
#   scripts/fuzz.sh --runs N TARGET [libFuzzer flags...]  CI: N inputs per target (each target for "all")
# TARGET: response json query-string multipart set-cookie www-authenticate certificate
#         resume-data base-url   (or "all")
# Builds Fuzz/ (its own package and scratch path) with libFuzzer coverage and AddressSanitizer.
# Timed runs keep a growing corpus in Fuzz/.work/TARGET beside the committed seeds in
# Fuzz/Corpus/TARGET. --runs (.ci/run) is repeatable: it reads the committed seeds only, runs N
# mutated inputs from a fixed seed (-seed=1) and keeps no new corpus entries. Any crashing,
# timing-out or out-of-memory input is written to Fuzz/Crashes/TARGET/ and, with --runs, also
# printed base64-encoded with the command that replays it. Exit status: 0 when no target found
# anything; otherwise libFuzzer's (one target) or 1.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,13p' "$0" >&2; exit 2; }
runs=""
if [ "${1:-}" = --runs ]; then
    [ $# -ge 3 ] || usage
    runs=$2
    target=$3
    shift 3
    [[ "$runs" =~ ^[0-9]+$ ]] || usage
else
    [ $# -ge 2 ] || usage
    target=$1
    seconds=$2
    shift 2
fi
all_targets=(response json query-string multipart set-cookie www-authenticate certificate resume-data base-url)

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
    build_log=$(mktemp)
    build_status=0
    swift build --package-path Fuzz --scratch-path "$scratch" --sanitize=fuzzer \
        -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address -Xcxx -fsanitize=address \
        --product courier-fuzz >"$build_log" 2>&1 || build_status=$?
    grep -E "error|warning: |Build complete" "$build_log" | grep -v "/.build/checkouts/" || true
    if [ "$build_status" -ne 0 ]; then
        echo "the fuzzer did not build (swift build exited $build_status); its last lines:" >&2
        tail -n 30 "$build_log" >&2
        rm -f "$build_log"
        exit 1
    fi
    rm -f "$build_log"
fi
[ -x "$binary" ] || { echo "the fuzzer did not build" >&2; exit 1; }

# Prints each file libFuzzer left in $1 (crash-*, timeout-*, oom-*, leak-*) base64-encoded,
# with the command that replays it, and copies it to Fuzz/Crashes/$2/.
report_artifacts() {
    local directory=$1 name=$2 file
    for file in "$directory"/*; do
        [ -f "$file" ] || continue
        cp "$file" "Fuzz/Crashes/$name/"
        echo "== $name: $(basename "$file") ($(wc -c <"$file") bytes), base64:"
        base64 -w 76 "$file"
        echo "== replay: save the lines above to input.b64, then"
        echo "   base64 -d input.b64 > input && COURIER_FUZZ_TARGET=$name $binary input"
    done
}

# Timed: new corpus entries go to Fuzz/.work (ignored); the committed seeds are read too.
run_timed() {
    local name=$1
    shift
    mkdir -p "Fuzz/Corpus/$name" "Fuzz/Crashes/$name" "Fuzz/.work/$name"
    echo "== $name: ${seconds}s"
    SWIFT_BACKTRACE=enable=no COURIER_FUZZ_TARGET=$name "$binary" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="Fuzz/Crashes/$name/" "$@" \
        "Fuzz/.work/$name" "Fuzz/Corpus/$name"
}

# Fixed runs: the committed seeds (read-only: new entries go to a scratch directory that is
# thrown away), then N mutations from -seed=1. Returns libFuzzer's status.
run_fixed() {
    local name=$1
    shift
    local work status=0 started=$SECONDS
    work=$(mktemp -d)
    mkdir -p "$work/corpus" "$work/artifacts" "Fuzz/Crashes/$name"
    local seeds=()
    [ -d "Fuzz/Corpus/$name" ] && seeds=("Fuzz/Corpus/$name")
    echo "== $name: $runs runs from $(find "${seeds[@]:-/dev/null}" -type f 2>/dev/null | wc -l) committed seeds"
    SWIFT_BACKTRACE=enable=no COURIER_FUZZ_TARGET=$name "$binary" \
        -runs="$runs" -seed=1 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" "$@" \
        "$work/corpus" "${seeds[@]}" >"$work/log" 2>&1 || status=$?
    # The statistics and anything that went wrong; libFuzzer's progress lines, new-coverage
    # notes and recommended dictionary are left out.
    awk '/^###### Recommended dictionary/ { skip = 1 } !skip && !/^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED|DONE|RELOAD)|^INFO: |^[[:space:]]+NEW_FUNC/ { print } /^###### End of recommended dictionary/ { skip = 0 }' "$work/log"
    grep -E "^#[0-9]+[[:space:]]+DONE" "$work/log" || true
    if [ "$status" -ne 0 ] || [ -n "$(ls -A "$work/artifacts")" ]; then
        echo "== $name: FAILED (libFuzzer exited $status) after $((SECONDS - started)) s"
        report_artifacts "$work/artifacts" "$name"
        [ "$status" -ne 0 ] || status=1
    else
        echo "== $name: ok, $((SECONDS - started)) s"
    fi
    rm -rf "$work"
    return "$status"
}

targets=("$target")
[ "$target" = all ] && targets=("${all_targets[@]}")
failed=()
last_status=0
for name in "${targets[@]}"; do
    status=0
    if [ -n "$runs" ]; then
        run_fixed "$name" "$@" || status=$?
    else
        run_timed "$name" "$@" || status=$?
    fi
    if [ "$status" -ne 0 ]; then
        failed+=("$name")
        last_status=$status
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: found something in: ${failed[*]}" >&2
    [ ${#targets[@]} -eq 1 ] && exit "$last_status"
    exit 1
fi
