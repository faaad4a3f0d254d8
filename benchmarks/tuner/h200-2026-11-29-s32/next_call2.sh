#!/usr/bin/env bash
# Session 33, call 2 (nvidia-h200, one GPU; issue 15), planned in session 32: where a tensor-fed
# tile's time goes after its panels land (512x512x256: 1.0 us after move_swz's landing, K split over
# warp groups does not remove it; 256^3, where the split pays, beside it): Nsight Compute with the
# source counters on tinyt_32x32 unsplit, x2 and x4 and the set's pick at both configs
# (ncu_tensor.json), torch.matmul beside them.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz} (library cfdf9cae or newer).
set -u
S2=benchmarks/tuner/h200-2026-11-29-s32
bash benchmarks/tuner/ncu_source.sh $S2/ncu_tensor.json $S2/ncu_tensor_configs.txt
ls -la "$OUT"
