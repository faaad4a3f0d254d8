#!/usr/bin/env bash
# The tiny-shape family on the device: SASS resources, GPU correctness tests, measurement vs cuBLASLt.
#   bash benchmarks/tuner/tiny_device_run.sh [LIB]
# LIB: a tuner library holding the tiny family (default: .tuner-build-tiny/lib's latest, else
# .tuner-build/lib's); carry that lib folder and .native-build (the cuBLASLt baselines library).
# Writes env.txt, resource_usage.txt, pytest.txt, tiny_bench.{json,md,log} under $OUT; ~3 minutes.
set -uo pipefail
OUT=${OUT:-/tmp/tiny-run}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
LIB=${1:-}
if [ -z "$LIB" ]; then
  for d in .tuner-build-tiny/lib .tuner-build/lib; do
    if [ -f "$d/latest.json" ]; then
      LIB=$d/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["library"])' "$d/latest.json")
      break
    fi
  done
fi
[ -n "$LIB" ] && export CUDA_L2_EXPLORER_TUNER_LIB=$PWD/$LIB
BL=$(ls -t .native-build/libhgemm_baselines-*.so 2>/dev/null | head -1)
[ -n "$BL" ] && export CUDA_L2_EXPLORER_BASELINES_LIB=$PWD/$BL
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  echo "tuner lib: ${CUDA_L2_EXPLORER_TUNER_LIB:-<none>}  baselines: ${CUDA_L2_EXPLORER_BASELINES_LIB:-<build>}"
} 2>&1 | tee "$OUT/env.txt"
echo "=== SASS: registers / spills / shared memory of the tiny kernels, HMMA count"
cuobjdump --dump-resource-usage "$CUDA_L2_EXPLORER_TUNER_LIB" 2>&1 | grep -A1 tiny_gemm > "$OUT/resource_usage.txt"
grep -o "REG:[0-9]* STACK:[0-9]* SHARED:[0-9]*" "$OUT/resource_usage.txt" | sort | uniq -c
cuobjdump --dump-sass "$CUDA_L2_EXPLORER_TUNER_LIB" 2>/dev/null | awk '/Function :/{f=$3} /HMMA/{n[f]++} END{for (k in n) print n[k], k}' | grep tiny | sort -k2 | tee "$OUT/hmma_counts.txt" | wc -l
echo "=== pytest (tiny family)"
timeout 100 python3 -m pytest -q tests/gpu/test_tuner_tiny.py -p no:cacheprovider -rs 2>&1 | tee "$OUT/pytest.txt" | tail -12
echo "=== tiny_bench"
timeout 200 python3 -m cuda_l2_explorer.tuner.tiny_bench --out "$OUT" --budget-s 160 2>&1 | tee "$OUT/tiny_bench.log" | tail -40
