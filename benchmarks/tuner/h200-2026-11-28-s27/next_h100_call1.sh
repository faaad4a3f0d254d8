#!/usr/bin/env bash
# Planned for the next session lent H100s (issue 15; not run here; ~300 s on one GPU, less on
# more): library e8b3c9d5 on the H100 set. The last GPU first runs tests/gpu/test_tuner_kernels.py
# on the 27 kernels the H100 set has never had (16 wide-epilogue, 11 convert: 7 shapes each); every
# GPU then searches its share of the H100 set's 157 non-tiny configs with K <= 2048 under 1.0 in
# its bundled grid de536734 (session 26's h100_configs.txt, worst first; 48 candidates a shape)
# and A/Bs its changed picks old/new/old/new against the H100 set (search_then_ab.sh). Then here,
# for each GPU N: bash benchmarks/tuner/merge_picks.sh CALL/gpuN/p/tuned/manifest.json
# CALL/gpuN/ab/picks.duckdb.xz kernels/h100_F32F16F16F32/manifest.json; next_h100_call2.sh.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
bash benchmarks/tuner/on_every_gpu.sh '
  if [ "$GPU" -eq $((GPUS - 1)) ]; then
    CUDA_L2_EXPLORER_TUNER_LIB=$(ls -t /tmp/tb/lib/*.so | head -1) timeout 180 python3 -m pytest -q \
      -p no:cacheprovider tests/gpu/test_tuner_kernels.py \
      -k "e160 or e176 or e144 or e128 or e64 or e96 or _cv" >"$OUT/gpu_tests.log" 2>&1
    echo "gpu tests: exit $? $(tail -1 "$OUT/gpu_tests.log")"
  fi
  share benchmarks/tuner/h200-2026-11-28-s26/h100_configs.txt >/tmp/configs_gpu$GPU.txt
  OUT=$OUT/gpu$GPU CURRENT_MANIFEST=kernels/h100_F32F16F16F32/manifest.json \
    bash benchmarks/tuner/search_then_ab.sh /tmp/configs_gpu$GPU.txt "--limit 48" 150 ${END_S:-330}
  xz -T4 "$OUT/gpu$GPU/ab/picks.duckdb"'
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
cd "$OUT" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
