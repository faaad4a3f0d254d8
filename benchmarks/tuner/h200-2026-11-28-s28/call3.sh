#!/usr/bin/env bash
# Session 28, call 3 (nvidia-h200-x4; issue 15), one job a GPU:
# GPU 0: tests/gpu/test_export_device.py's new one-buffer-epilogue case (a 128x176 ping-pong kernel
#        with one D buffer and five stages, B K-major, exported in the three formats, built, run
#        against torch.matmul);
# GPU 1, 2: Nsight Compute's full set at 12288x12288x256 on the one-buffer twins of the pick (the
#        1x2 cluster as the pick; the 2x1 swap-AB cluster that multicasts the 176-row side) against
#        nvjet 176x128 (cuBLASLt auto-tuned tn candidate 6), report kept, raw metrics and SASS
#        exported: did the fifth stage take the full-barrier waits away, and what waits instead;
# GPU 3: the same at 12288x12288x2048, our pick (128x128 ping-pong) against cuBLASLt's auto-tuned
#        tn candidate 7: where the large regime's ~2% from K = 1024 up goes.
# Nsight Compute serialises its instances on one machine (its lock file): the three take turns.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
S=benchmarks/tuner/h200-2026-11-28-s28
bash benchmarks/tuner/on_every_gpu.sh "
  ncu_on() { mkdir -p \$OUT/ncu\$GPU && OUT=\$OUT/ncu\$GPU SET=kernels/h200_F32F16F16F32 NCU_MANIFEST=\$1 NCU_FAMILY=\$2 \
    NCU_SECTIONS='--set full' NCU_REPORT=1 timeout 500 bash benchmarks/harness/v3/run_device.sh ncu-family; }
  case \$GPU in
  0) mkdir -p \$OUT/export && OUT=\$OUT/export L2X_EXPORT_LABELS=one-buffer-epilogue TESTS=export_device \
       TEST_TIMEOUT=400 bash benchmarks/harness/v3/run_device.sh tests ;;
  1) ncu_on $S/ncu_d1_c1x2.json $S/ncu_d1_configs.txt ;;
  2) ncu_on $S/ncu_d1_c2x1.json $S/ncu_d1_configs.txt ;;
  3) ncu_on kernels/h200_F32F16F16F32/manifest.json $S/ncu_k2048_configs.txt ;;
  esac"
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
cd "$OUT" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
