#!/usr/bin/env bash
# Session 34, call 5 (nvidia-h200, one GPU; issue 15): where the four-box tensor kernels' time goes
# after their panels land: Nsight Compute with the source counters (ncu_source.sh) on
# tinyt_16x32x1024_w1x1x4 one-box, c4 and p4 at 64x1024x1024 (3.78 us against a 2.69 us landing in
# the probe), and tinyt_16x32x2048_w1x1x4_c4 beside a wgsk pick at 256x256x2048; torch.matmul beside.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz} (library 5cb65fc4).
set -u
S=benchmarks/tuner/h200-2026-11-29-s34
bash benchmarks/tuner/ncu_source.sh $S/ncu_c4.json $S/ncu_c4_configs.txt
ls -la "$OUT"
