#!/usr/bin/env bash
# Session 27, device call 1 (issue 15), on every GPU of the machine (nvidia-h200-x4: four H200s):
# the 553 configs under 1.0 of the best baseline in grid 0188a20e that no search with the 93-kernel
# library (436450237327fb8c2ef1, the explicit-epilogue kernels) has seen (call1_configs.txt, worst
# first; made by make_call1_configs.py), dealt round-robin over the GPUs; on each GPU a search
# (48 candidates a shape) and then the A/B of its changed picks against the H200 set
# (benchmarks/tuner/search_then_ab.sh). Each config is searched and A/B'd on one GPU, so no figure
# is set against another GPU's. The last GPU first runs ncu's full set on 12288x12288x256, our
# 128x176 e176 pick against cuBLASLt's auto-tuned tn candidate 6 (session 26's ncu_next.sh).
# Everything comes back in one all.tar.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s27
S26=benchmarks/tuner/h200-2026-11-28-s26
top=$OUT
SEARCH_S=${SEARCH_S:-200} END_S=${END_S:-420}
mkdir -p "$top/setup"
OUT=$top/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install and unpack the library once
gpus=$(nvidia-smi -L | wc -l)
echo "$gpus GPUs"
for g in $(seq 0 $((gpus - 1))); do
  part=$top/configs_gpu$g.txt
  tr ',' '\n' <$D/call1_configs.txt | awk -v n="$gpus" -v g="$g" 'NF && (NR - 1) % n == g' | paste -sd, >"$part"
  (
    export CUDA_VISIBLE_DEVICES=$g
    if [ "$g" -eq $((gpus - 1)) ]; then
      mkdir -p "$top/ncu"
      OUT=$top/ncu SET=kernels/h200_F32F16F16F32 NCU_FAMILY=$S26/ncu_next_configs.txt NCU_SECTIONS="--set full" \
        bash benchmarks/harness/v3/run_device.sh ncu-family >/dev/null 2>&1
    fi
    OUT=$top/gpu$g CURRENT_MANIFEST=kernels/h200_F32F16F16F32/manifest.json \
      bash benchmarks/tuner/search_then_ab.sh "$part" "--limit 48" "$SEARCH_S" "$END_S"
  ) >"$top/gpu$g.log" 2>&1 &
done
wait
for g in $(seq 0 $((gpus - 1))); do echo "gpu $g: $(tr ',' '\n' <"$top/configs_gpu$g.txt" | wc -l) configs"; tail -3 "$top/gpu$g.log"; done
cat "$top/ncu/device.txt" 2>/dev/null | tail -1
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
cd "$top" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
