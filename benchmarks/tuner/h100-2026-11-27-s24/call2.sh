#!/usr/bin/env bash
# Session 24, device call 2 (issue 15): the skinny configs with 12288 as the long side (38, where
# 64-wide tiles make 192 CTAs on 132 SMs) searched over the library with eight new 96-wide kernels
# (tuner/catalog.py: 64/128/256 x 96, B K-major or swap-AB; 77 kernels), 48 candidates a shape
# so every kernel class is measured (the cost model ties memory-bound kernels at the floor), search
# only; then the changed picks benched old, new, old, new in one store beside torch.matmul and
# three cuBLASLt baselines.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz} (the new library).
set -u
D=benchmarks/tuner/h100-2026-11-27-s24
bash benchmarks/tuner/search_then_ab.sh $D/call2_configs.txt "--limit 48" ${TUNE_LIMIT:-300} 560
