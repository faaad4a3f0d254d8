#!/usr/bin/env bash
# Session 16, call 2 (issue 15 + issue 14), from the repository root on the GPU machine.
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/tunerlib.tar.gz (no CUTLASS: nothing is built there),
# .carry/tma_stream.xz (the probe binary built here, stripped: `strip` then `xz -9`).
# 1. the TMA probe (session 16 adds: the stream and mma_w1 launched as (1, 1, 2) clusters, the
#    split-K reduction through global memory), three shapes, then ncu on seven variants;
# 2. gap_probe.py (torch.matmul graphs of 4/16/64 calls, cold/warm, events vs CUPTI);
set -uo pipefail
source benchmarks/tuner/h100-2026-11-24-s16/probe_and_gaps.sh
cd "$OUT" && tar czf call2.tar.gz tma_stream gap_probe.json gap_probe.log device.txt && ls
