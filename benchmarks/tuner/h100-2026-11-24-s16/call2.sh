#!/usr/bin/env bash
# Session 16, call 2 (issue 15 + issue 14), from the repository root on the GPU machine.
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/tunerlib.tar.gz (no CUTLASS: nothing is built there),
# .carry/tma_stream.xz (the probe binary built here, stripped: `strip` then `xz -9`).
# 1. the TMA probe (session 16 adds: the stream and mma_w1 launched as (1, 1, 2) clusters, the
#    split-K reduction through global memory), three shapes, then ncu on seven variants;
# 2. gap_probe.py (torch.matmul graphs of 4/16/64 calls, cold/warm, events vs CUPTI);
set -uo pipefail
export OUT=${OUT:-/tmp/out}
bash benchmarks/harness/v3/run_device.sh >/dev/null 2>&1; echo "install: exit $?"
# The probe binary travels xz-compressed and stripped (the carry limit).
[ -f .carry/tma_stream.xz ] && xz -dc .carry/tma_stream.xz >benchmarks/tuner/tma_stream/tma_stream && chmod +x benchmarks/tuner/tma_stream/tma_stream
s=$SECONDS; RUN_NCU=1 bash benchmarks/tuner/tma_stream/run.sh; echo "probe: $((SECONDS - s)) s"
export PYTHONPATH=/tmp/site:benchmarks/harness/v3 PYTHONUNBUFFERED=1
export CUDA_L2_EXPLORER_BUILD_CACHE=/tmp/l2x-build CUDA_L2_EXPLORER_NATIVE_CACHE=/tmp/l2x-native
s=$SECONDS; timeout 240 python3 benchmarks/harness/v3/gap_probe.py "$OUT/gap_probe.json" >"$OUT/gap_probe.log" 2>&1
echo "gap_probe: exit $? in $((SECONDS - s)) s"
cd "$OUT" && tar czf call2.tar.gz tma_stream gap_probe.json gap_probe.log device.txt && ls
