#!/usr/bin/env bash
# Session 27, device call 3 (issue 15), nvidia-h200-x4: the eleven "convert" epilogue kernels
# (D = fp16(acc), no alpha multiply; library with 104 CUTLASS/own kernels) against the alpha
# kernels they twin, pick for pick: every pick of the H200 set whose kernel has a twin (413),
# with the same runtime variant (convert_twins.py), A/B'd old/new/old/new (ab_picks.sh) on GPUs
# 0..N-2, a third of the twins each; on the last GPU tests/gpu/test_tuner_kernels.py on the eleven.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s27
top=$OUT
SET=kernels/h200_F32F16F16F32
AB_S=${AB_S:-320}
mkdir -p "$top/setup"
OUT=$top/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install and unpack the library once
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
echo "library $lib"
gpus=$(nvidia-smi -L | wc -l)
shards=$((gpus - 1))
for g in $(seq 0 $((shards - 1))); do
  (
    export CUDA_VISIBLE_DEVICES=$g
    python3 $D/convert_twins.py $SET/manifest.json "$top/twins$g.json" "$g" "$shards"
    CURRENT_MANIFEST=$SET/manifest.json bash benchmarks/tuner/ab_picks.sh "$top/twins$g.json" "$lib" "$top/ab$g" "$AB_S"
  ) >"$top/ab$g.log" 2>&1 &
done
(
  export CUDA_VISIBLE_DEVICES=$shards
  CUDA_L2_EXPLORER_TUNER_LIB=$lib timeout 300 python3 -m pytest -q -p no:cacheprovider \
    tests/gpu/test_tuner_kernels.py -k "_cv" >"$top/gpu_tests.log" 2>&1
  echo "gpu tests: exit $? $(tail -1 "$top/gpu_tests.log")"
) &
wait
for g in $(seq 0 $((shards - 1))); do tail -6 "$top/ab$g.log"; [ -f "$top/ab$g/picks.duckdb" ] && xz -T4 "$top/ab$g/picks.duckdb"; done
tail -2 "$top/gpu_tests.log"
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
cd "$top" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
