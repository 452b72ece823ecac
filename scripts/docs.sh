#!/usr/bin/env bash
# Builds the DocC documentation of Courier and CourierEngine with warnings treated as errors:
# an unresolved ``Symbol`` or <doc:Article> link, a topic group naming a symbol that does not
# exist, or any other DocC warning fails the script. The archives land in .build/docs/.
# The Swift examples in the articles are compiled and run by the test suite
# (DocumentationExamplesTests checks that each one appears in a test).
set -euo pipefail
cd "$(dirname "$0")/.."

out=.build/docs
mkdir -p "$out"
status=0
for target in Courier CourierEngine; do
    log=$(mktemp)
    echo "== $target"
    if ! swift package --disable-sandbox --allow-writing-to-directory "$out" \
        generate-documentation --target "$target" --warnings-as-errors \
        --output-path "$out/$target.doccarchive" 2>&1 | tee "$log"; then
        status=1
    fi
    # DocC prints its diagnostics as "warning:" / "error:" lines; any one of them fails the run,
    # even if a future plugin version stops turning warnings into a non-zero exit.
    if grep -E "^(warning|error): |: (warning|error): " "$log" | grep -v "/.build/checkouts/" \
        | grep -vE "^warning: 'swift-distributed-tracing': found [0-9]+ file\(s\) which are unhandled" >/dev/null; then
        echo "DocC reported problems for $target (zero allowed):" >&2
        grep -E "^(warning|error): |: (warning|error): " "$log" | grep -v "/.build/checkouts/" \
            | grep -vE "^warning: 'swift-distributed-tracing': found [0-9]+ file\(s\) which are unhandled" >&2 || true
        status=1
    fi
    rm -f "$log"
done
exit $status
