#!/usr/bin/env bash
# Runs on a GPU machine, from the repository root, with .device-bundle (or .whl/bundle.tar.xz) carried: times
# `cca` as users run it on the CT-like volume of scripts/make-ct-like-nifti.py (numpy needed), the automatic
# backend, the CPU engine and the GPU, the .nii.gz and the same volume uncompressed (where the GPU's start-up is not hidden
# by the read). Each line: the tool's own split (read, analyze, write) and the wall time. CCA_BEFORE: another cca
# binary to time beside it (the one before a change). Logs go to $OUT.
set -uo pipefail
out=${OUT:-device-logs}; mkdir -p "$out"
[ -d .device-bundle ] || tar xJf .whl/bundle.tar.xz
source .device-bundle/env.sh
cca="$BUNDLE_BUILD/examples/cca"
work=/tmp/cca-cli; rm -rf "$work"; mkdir -p "$work"
python3 scripts/make-ct-like-nifti.py "$work/ct.nii.gz"
gzip -dc "$work/ct.nii.gz" > "$work/ct.nii"
ls -l "$work" | tee "$out/cli-files.txt"
run() { # label binary input backend
  local label=$1 binary=$2 input=$3 backend=$4 start end
  start=$EPOCHREALTIME
  "$binary" "$input" --lower 300 --connectivity full --output "$work/labels.nii.gz" --csv "$work/t.csv" \
    --backend "$backend" > "$work/run.txt" 2>&1
  local rc=$?
  end=$EPOCHREALTIME
  printf '%-8s %-6s %-8s exit %d wall %.3f s :: %s :: %s\n' "$label" "$(basename "$input" | sed 's/ct//')" "$backend" \
    "$rc" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$(grep 'time (s)' "$work/run.txt" | sed 's/ *time (s) *//')" \
    "$(grep 'backend' "$work/run.txt" | sed 's/ *backend *//' | cut -c1-40)"
}
{
  for input in "$work/ct.nii.gz" "$work/ct.nii"; do
    for backend in auto cpu cuda; do
      for i in 1 2 3; do
        run after "$cca" "$input" $backend
        [ -n "${CCA_BEFORE:-}" ] && run before "$CCA_BEFORE" "$input" $backend
      done
    done
  done
  sha256sum "$work/labels.nii.gz" "$work/t.csv"
} 2>&1 | tee "$out/cli-times.txt"
