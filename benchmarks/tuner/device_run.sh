#!/usr/bin/env bash
# One device call for the tuner: environment, SASS check, GPU correctness tests, first measurement.
#   bash benchmarks/tuner/device_run.sh [LIB] [SHAPES] [SAMPLES]
# LIB: a tuner library (default: .tuner-build/lib's latest); SHAPES: MxNxK,... (default: first_look's
# six); carry .tuner-build/lib (or the library's folder) and .native-build. Writes under $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/tuner-run}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
LIB=${1:-}
SHAPES=${2:-}
SAMPLES=${3:-15}
if [ -n "$LIB" ]; then export CUDA_L2_EXPLORER_TUNER_LIB=$PWD/$LIB; fi
BL=$(ls -t .native-build/libhgemm_baselines-*.so 2>/dev/null | head -1)
[ -n "$BL" ] && export CUDA_L2_EXPLORER_BASELINES_LIB=$PWD/$BL
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  echo "tuner lib: ${CUDA_L2_EXPLORER_TUNER_LIB:-<latest>}  baselines: ${CUDA_L2_EXPLORER_BASELINES_LIB:-<build>}"
} 2>&1 | tee "$OUT/env.txt"
TL=${CUDA_L2_EXPLORER_TUNER_LIB:-$(python3 -c 'from cuda_l2_explorer.tuner.native import default_library; print(default_library())')}
echo "=== SASS: HGMMA per kernel function, registers/stack"
cuobjdump --dump-resource-usage "$TL" > "$OUT/resource_usage.txt" 2>&1
cuobjdump --dump-sass "$TL" 2>/dev/null | awk '/Function :/{f=$3} /HGMMA/{n[f]++} END{for (k in n) print n[k], k}' | sort -k2 > "$OUT/hgmma_counts.txt"
wc -l < "$OUT/hgmma_counts.txt"; grep -c "Function" "$OUT/resource_usage.txt"
grep -o "STACK:[0-9]*" "$OUT/resource_usage.txt" | sort | uniq -c
echo "=== pytest"
timeout 150 python3 -m pytest -q tests/gpu/test_tuner_kernels.py -p no:cacheprovider -q -rs 2>&1 | tee "$OUT/pytest.txt" | tail -15
echo "=== first look"
ARGS=(--out "$OUT/first_look.json" --samples "$SAMPLES")
[ -n "$SHAPES" ] && ARGS+=(--shapes "$SHAPES")
timeout 170 python3 -m cuda_l2_explorer.tuner.first_look "${ARGS[@]}" 2>&1 | tee "$OUT/first_look.log" | tail -30
