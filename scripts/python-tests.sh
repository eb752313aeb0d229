#!/usr/bin/env bash
# The Python package cudacca (python/), as a user gets it: `pip install .` into fresh virtual environments,
# then its tests. Called by run-tests.sh; needs python3 with venv and headers (installed here if missing)
# and PyPI (the pinned test requirements in python/requirements-test.txt).
#  1. the wheel as this machine builds it (with the CUDA engine where nvcc is found): the whole pytest suite
#     (CPU engine without a GPU; CUDA engine and CuPy/PyTorch inputs too where a GPU and those are usable);
#  2. the wheel built with clang as the C++ and CUDA host compiler: the pytest suite again;
#  3. a CPU-only wheel (CCA_ENABLE_CUDA=OFF, as on a machine without nvcc): installed, imported and used.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${PYTHON_BUILD_DIR:-$root/build-python}
python=${PYTHON:-python3}

if ! "$python" -c 'import venv, ensurepip, sysconfig, os; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null; then
  "$root/scripts/install-missing.sh" python-tests python3-venv python3-dev
fi
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# Each wheel's extension exports its module init function alone (scripts/check-wheel-exports.sh).
check_exports() { # wheel
  "$root/scripts/check-wheel-exports.sh" "$1" "$python" | sed 's/^/   /'
}

rm -rf "$out" && mkdir -p "$out"
echo "== Python package: wheel ($(command -v nvcc >/dev/null && echo 'with the CUDA engine' || echo 'no nvcc: CPU-only'))"
"$python" -m venv "$out/venv"
"$out/venv/bin/pip" install -q --upgrade pip
# One GPU architecture is enough to prove the CUDA build here (no GPU to run it); users get the defaults.
CMAKE_ARGS="${CMAKE_ARGS:--DCMAKE_CUDA_ARCHITECTURES=90}" "$out/venv/bin/pip" wheel -q --no-deps -w "$out/wheel" "$root"
check_exports "$out"/wheel/cudacca-*.whl
"$out/venv/bin/pip" install -q -r "$root/python/requirements-test.txt" "$out"/wheel/cudacca-*.whl
# from outside the source tree, so that the installed package is what is imported
(cd "$out" && "$out/venv/bin/python" -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning "$root/python/tests")

# A second host compiler: Debian's clang as the C++ compiler and nvcc's host compiler (a toolchain other than
# GCC 12 catches what that one forgives). The CPU suite with that wheel. CCA_SKIP_CLANG=1 leaves it out.
if [ "${CCA_SKIP_CLANG:-0}" != 1 ]; then
  command -v clang++ >/dev/null 2>&1 || "$root/scripts/install-missing.sh" python-tests clang
  echo "== Python package: built with $(clang++ --version | head -n 1) (C++ and CUDA host compiler), fresh venv, pytest"
  "$python" -m venv "$out/venv-clang"
  "$out/venv-clang/bin/pip" install -q --upgrade pip
  CC=clang CXX=clang++ CUDAHOSTCXX=clang++ CMAKE_ARGS="${CMAKE_ARGS:--DCMAKE_CUDA_ARCHITECTURES=90}" \
    "$out/venv-clang/bin/pip" wheel -q --no-deps -w "$out/wheel-clang" \
    --config-settings=build-dir="$out/cmake-clang" "$root"
  grep -q "CMAKE_CXX_COMPILER_ID \"Clang\"" "$out"/cmake-clang/CMakeFiles/*/CMakeCXXCompiler.cmake \
    || { echo "python-tests: the clang wheel was not built with clang"; exit 1; }
  check_exports "$out"/wheel-clang/cudacca-*.whl
  "$out/venv-clang/bin/pip" install -q -r "$root/python/requirements-test.txt" "$out"/wheel-clang/cudacca-*.whl
  (cd "$out" && "$out/venv-clang/bin/python" -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning "$root/python/tests")
fi

echo "== Python package: CPU-only wheel (CCA_ENABLE_CUDA=OFF), fresh venv, imported and used"
"$python" -m venv "$out/venv-cpu"
CMAKE_ARGS="-DCCA_ENABLE_CUDA=OFF" "$out/venv-cpu/bin/pip" wheel -q --no-deps -w "$out/wheel-cpu" "$root"
check_exports "$out"/wheel-cpu/cudacca-*.whl
"$out/venv-cpu/bin/pip" install -q "$out"/wheel-cpu/cudacca-*.whl
(cd "$out" && "$out/venv-cpu/bin/python" - <<'PY'
import numpy as np, warnings, cudacca
ok, why = cudacca.cuda_available()
assert not ok and "no CUDA engine" in why, why
image = np.zeros((256, 257), np.uint8); image[1:3, 1:3] = 1; image[4, 5:7] = 1  # 2^16 pixels or more:
# the automatic backend tries the GPU (below, it takes the CPU engine by size and has nothing to say)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    labels, table = cudacca.label(image, return_table=True)
assert labels.max() == 2 and list(table["num_pixels"]) == [4, 2] and cudacca.last_backend()[0] == "cpu"
assert any("using the CPU engine" in str(x.message) for x in w)
print("cudacca CPU-only wheel:", cudacca.last_backend()[1], "-", len(table["label"]), "objects")
PY
)

# The napari plugin: the CPU-only wheel with napari (requirements-napari.txt) in its venv, the widget's tests in a
# headless viewer under Xvfb (Qt's xcb platform and Mesa's OpenGL, from Debian). CCA_SKIP_NAPARI=1 leaves it out.
if [ "${CCA_SKIP_NAPARI:-0}" != 1 ]; then
  echo "== napari plugin: the CPU-only wheel with napari, the dock widget's tests under Xvfb"
  # what PyQt6's xcb platform plugin loads (ldd, dpkg -S), Mesa's software OpenGL for Xvfb, Xvfb, a font
  "$root/scripts/install-missing.sh" python-tests xvfb xauth libgl1 libgl1-mesa-dri libegl1 libglib2.0-0 \
    libfontconfig1 libfreetype6 libdbus-1-3 libx11-xcb1 libxkbcommon0 libxkbcommon-x11-0 libxcb-cursor0 libxcb-glx0 \
    libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render0 libxcb-render-util0 libxcb-shape0 \
    libxcb-shm0 libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xkb1 fonts-dejavu-core
  wheel=$(ls "$out"/wheel-cpu/cudacca-*.whl)
  "$out/venv-cpu/bin/pip" install -q -r "$root/python/requirements-napari.txt" "$wheel[napari]"
  (cd "$out" && QT_QPA_PLATFORM=xcb xvfb-run -a "$out/venv-cpu/bin/python" -m pytest -q -p no:cacheprovider \
    -W ignore::DeprecationWarning "$root/python/tests/test_napari.py" "$root/python/tests/test_napari_compute.py")
fi
