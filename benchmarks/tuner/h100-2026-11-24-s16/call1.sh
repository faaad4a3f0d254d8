#!/usr/bin/env bash
# Session 16, call 1 (issue 15 + issue 14), from the repository root on the GPU machine.
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/tunerlib.tar.gz (no CUTLASS: nothing is built there),
# .carry/tma_stream.xz (the probe binary built here, stripped: `strip` then `xz -9`).
# 1. the TMA probe with its consumer variants, three shapes, then ncu on four 64x64 x 2 variants;
# 2. gap_probe.py (torch.matmul graphs of 4/16/64 calls, cold/warm, events vs CUPTI);
# 3. our set and the seven baselines at the probe's shapes under harness 3 (the same kernels'
#    device time on the harness's timer, beside the probe's).
set -uo pipefail
source benchmarks/tuner/h100-2026-11-24-s16/probe_and_gaps.sh
LIB=$(ls -t /tmp/tb/lib/*.so | head -1)
s=$SECONDS
timeout 200 python3 -m cuda_l2_explorer --db "$OUT/probe_shapes.duckdb" --no-bundled bench --set kernels/h100_F32F16F16F32 \
  --library "$LIB" --mnk 512_512_12288,256_512_8192,1024_1024_4096 --mode offline --progress none --json \
  >"$OUT/probe_shapes.json" 2>"$OUT/probe_shapes.log"
echo "bench: exit $? in $((SECONDS - s)) s"
cd "$OUT" && tar czf call1.tar.gz tma_stream gap_probe.json gap_probe.log probe_shapes.* device.txt && ls
