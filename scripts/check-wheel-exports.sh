#!/usr/bin/env bash
# Checks that a cudacca wheel's extension exports its module init function alone (python/CMakeLists.txt: a
# static C++ runtime inside must stay private to it; a toolchain without a shared libstdc++ links one in unasked).
#   scripts/check-wheel-exports.sh WHEEL [PYTHON]
# Exit 0 and one line when it does; 1 and what else it exports when not.
set -euo pipefail
wheel=$1
python=${2:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
name = [m for m in z.namelist() if m.startswith("cudacca/_core") and m.endswith(".so")][0]
open(sys.argv[2], "wb").write(z.read(name))' "$wheel" "$tmp/_core.so"
exported=$(readelf --dyn-syms -W "$tmp/_core.so" | awk '$7 != "UND" && $5 != "LOCAL" && NR > 3 {print $8}' | sort -u | tr '\n' ' ')
if [ "$exported" != "PyInit__core " ]; then
  echo "$(basename "$wheel") exports more than PyInit__core: ${exported:0:300}"
  exit 1
fi
echo "$(basename "$wheel"): exports PyInit__core alone; libstdc++ $(readelf -d "$tmp/_core.so" | grep -q 'libstdc++' && echo shared || echo 'linked in (kept private)')"
