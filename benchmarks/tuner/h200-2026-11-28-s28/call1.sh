#!/usr/bin/env bash
# Session 28, call 1 (nvidia-h200-x4; issue 15): session 27's next_twins.sh and next_ncu.sh in one
# start. GPUs 0..GPUS-2: the fourteen new convert twins A/B'd pick for pick against the H200 set's
# alpha picks they twin (112; call 3 of session 27 left out by L2X_TWINS_DONE), old/new/old/new, a
# share each. The last GPU: tests/gpu/test_tuner_kernels.py on every convert kernel, then Nsight
# Compute's full set at 12288x12288x256 on the convert twin of the pick (128x176 e176) against
# cuBLASLt's auto-tuned tn candidate 6 (nvjet 176x128), the report kept, its raw metrics and SASS
# exported (run_device.sh ncu-family, NCU_REPORT=1).
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz} (library 9a1536c272bf14b4f25b).
# Then here, for each A/B GPU N: bash benchmarks/tuner/merge_picks.sh CALL/twinsN.json
# CALL/gpuN/picks.duckdb.xz kernels/h200_F32F16F16F32/manifest.json.
set -u
S27=benchmarks/tuner/h200-2026-11-28-s27
S26=benchmarks/tuner/h200-2026-11-28-s26
bash benchmarks/tuner/on_every_gpu.sh "
  lib=\$(ls -t /tmp/tb/lib/*.so | head -1)
  if [ \$GPU -eq \$((GPUS - 1)) ]; then
    CUDA_L2_EXPLORER_TUNER_LIB=\$lib timeout 200 python3 -m pytest -q -p no:cacheprovider \
      tests/gpu/test_tuner_kernels.py -k _cv >\$OUT/gpu_tests.log 2>&1
    echo \"gpu tests: exit \$? \$(tail -1 \$OUT/gpu_tests.log)\"
    python3 $S27/convert_twins.py kernels/h200_F32F16F16F32/manifest.json /tmp/twins_all.json
    mkdir -p \$OUT/ncu
    OUT=\$OUT/ncu SET=kernels/h200_F32F16F16F32 NCU_MANIFEST=/tmp/twins_all.json \
      NCU_FAMILY=$S26/ncu_next_configs.txt NCU_SECTIONS='--set full' NCU_REPORT=1 \
      timeout 420 bash benchmarks/harness/v3/run_device.sh ncu-family
    exit 0
  fi
  L2X_TWINS_DONE='$S27/call3/twins*.json' python3 $S27/convert_twins.py \
    kernels/h200_F32F16F16F32/manifest.json \$OUT/twins\$GPU.json \$GPU \$((GPUS - 1))
  CURRENT_MANIFEST=kernels/h200_F32F16F16F32/manifest.json bash benchmarks/tuner/ab_picks.sh \
    \$OUT/twins\$GPU.json \$lib \$OUT/gpu\$GPU \${AB_S:-200}
  xz -T4 \$OUT/gpu\$GPU/picks.duckdb"
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
cd "$OUT" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
