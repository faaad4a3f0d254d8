#!/usr/bin/env bash
# Session 11, device calls 1 and 2: the whole grid with the tiny picks re-searched in session 10's
# call 9 (kernels/h100_F32F16F16F32), library f9cff806 (split_k_range); two chunks, the second
# resumes the first's store (carried in .carry/grid.duckdb.gz).
set -u
OUT=$OUT/g BUDGET=${BUDGET:-520} bash benchmarks/harness/v3/run_device.sh grid
tar czf "$OUT/grid.tar.gz" -C "$OUT" g && rm -rf "$OUT/g"
