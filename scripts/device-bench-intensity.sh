# On a GPU machine, .whl carried (bundle.tar.xz, the cp312 wheel, pylibs.tar.xz with cc3d, MONAI and cuCIM's
# skimage part): the intensity benchmark rows. The C++ benchmark's mode i (intensity statistics against ITK's
# ConnectedComponentImageFilter -> LabelImageToStatisticsLabelMapFilter, same run), then the Python --multiclass row
# (the largest component of each of 100 classes: cudacca against a cc3d largest_k loop, cc3d multi-label + statistics,
# and MONAI's KeepLargestConnectedComponent on a CUDA tensor). Logs to $OUT.
set -o pipefail
export PYTHONUNBUFFERED=1
bash scripts/device-unpack.sh
source .device-bundle/env.sh
nvidia-smi -L | tee $OUT/device.txt
timeout ${BENCH_TIMEOUT:-280} "$BUNDLE_BUILD/examples/CudaConnectedComponentAnalysisBenchmark" --modes i \
  --size3d ${SIZE3D:-512} --densities 0.2,0.5,0.8 --runs 3 --cpu-runs 1 --json $OUT/intensity.json 2>&1 \
  | tee $OUT/intensity.txt
site=/tmp/site; rm -rf "$site"; mkdir -p "$site"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .whl/cudacca-*.whl
tar xJf .whl/pylibs.tar.xz -C "$site"
export PYTHONPATH=$site
for conn in ${CONNECTIVITIES:-face}; do
  (cd /tmp && timeout ${BENCH_TIMEOUT:-280} python3 -m cudacca.benchmark --multiclass --size3d ${SIZE3D:-512} --classes 100 \
    --connectivity $conn --repeat 3 --json $OUT/multiclass-$conn.json) 2>&1 | tee $OUT/multiclass-$conn.txt
done
