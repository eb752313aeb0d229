#!/usr/bin/env bash
# The CPU build and its tests under AddressSanitizer and UndefinedBehaviorSanitizer (issue 8):
# a CPU-only build in build-asan/ against Debian's ITK, every cpu-labelled test, and a report of every
# sanitizer finding, split into those in this project's code and those inside ITK's own headers
# (ITK 5.2's neighbourhood iterators, used by the reference filters the tests compare with).
# Usage: scripts/sanitize.sh [ctest arguments]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR_ASAN:-$root/build-asan}
jobs=${JOBS:-$(nproc)}
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=address"
cmake -S "$root" -B "$build" -DCCA_ENABLE_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" -j"$jobs" >/dev/null
log=$build/sanitizer.log
: >"$log"
# Leaks: ITK keeps singletons (object factories) alive to the end; only errors are findings here.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=0:log_path=$build/ubsan
rm -f "$build"/ubsan.*
status=0
ctest --test-dir "$build" -L cpu -LE python --output-on-failure -j"$jobs" "$@" || status=$?
cat "$build"/ubsan.* >"$log" 2>/dev/null || true
reports=$(grep -c "runtime error" "$log" || true)
ours=$(grep -A3 "runtime error" "$log" | grep -cE "$root/(src|include|cuda)/" || true)
echo "== UBSan: $reports report(s) in all; in this project's sources (src/, include/, cuda/): $ours"
grep "runtime error" "$log" | sed 's/^[^ ]*\///' | sort | uniq -c | sort -rn | head -20 || true
exit $((status != 0 || ours != 0))
