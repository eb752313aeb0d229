#!/usr/bin/env bash
# The CPU build and its tests under AddressSanitizer and UndefinedBehaviorSanitizer:
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
# Leaks: ITK keeps singletons (object factories) alive to the end; only errors are findings here. The
# reports go to each test's output, which CTest keeps for every test in Testing/Temporary/LastTest.log.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=0
status=0
# CCAPipeline_memory_cpu runs its child under `ulimit -v`, where ASan cannot map its shadow memory.
ctest --test-dir "$build" -L cpu -LE python -E CCAPipeline_memory_cpu --output-on-failure -j"$jobs" "$@" || status=$?
cp "$build/Testing/Temporary/LastTest.log" "$log"
reports=$(grep -c "runtime error" "$log" || true)
ours=$(grep -E "runtime error|ERROR: AddressSanitizer" "$log" | grep -cE "$root/(src|include|cuda|test|examples)/" || true)
asan=$(grep -c "ERROR: AddressSanitizer" "$log" || true)
echo "== ASan: $asan error report(s)"
echo "== UBSan: $reports report(s) in all; reports located in this project's sources (src/, include/, cuda/, test/, examples/): $ours"
grep "runtime error" "$log" | sed 's/^[^ ]*\///' | sort | uniq -c | sort -rn | head -20 || true
exit $((status != 0 || ours != 0 || asan != 0))
