#!/usr/bin/env bash
# Planned for the next H200 session (issue 15; not run here; nvidia-h200-x4, ~250 s): the
# fourteen convert twins added after call 3 (library with 118 kernels, built here): on the last
# GPU tests/gpu/test_tuner_kernels.py on every convert kernel (the new fourteen: 7 shapes each);
# on the others their 112 picks of the H200 set against the twin, pick for pick, same variant,
# old/new/old/new (convert_twins.py with L2X_TWINS_DONE: the 413 of call 3 left out), a share
# each. Then here, for each GPU N: bash benchmarks/tuner/merge_picks.sh CALL/twinsN.json
# CALL/gpuN/picks.duckdb.xz kernels/h200_F32F16F16F32/manifest.json; the grid (call4.sh), then
# fill_evidence.py, the re-bundle (--replace-kernels --drop-run 64e9f81d...), readme_headline.py.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s27
bash benchmarks/tuner/on_every_gpu.sh "
  lib=\$(ls -t /tmp/tb/lib/*.so | head -1)
  if [ \$GPU -eq \$((GPUS - 1)) ]; then
    CUDA_L2_EXPLORER_TUNER_LIB=\$lib timeout 200 python3 -m pytest -q -p no:cacheprovider \
      tests/gpu/test_tuner_kernels.py -k _cv >\$OUT/gpu_tests.log 2>&1
    echo \"gpu tests: exit \$? \$(tail -1 \$OUT/gpu_tests.log)\"
    exit 0
  fi
  L2X_TWINS_DONE='$D/call3/twins*.json' python3 $D/convert_twins.py kernels/h200_F32F16F16F32/manifest.json \
    \$OUT/twins\$GPU.json \$GPU \$((GPUS - 1))
  CURRENT_MANIFEST=kernels/h200_F32F16F16F32/manifest.json bash benchmarks/tuner/ab_picks.sh \
    \$OUT/twins\$GPU.json \$lib \$OUT/gpu\$GPU \${AB_S:-200}
  xz -T4 \$OUT/gpu\$GPU/picks.duckdb"
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
cd "$OUT" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
