#!/usr/bin/env bash
# Session 26 (planned; not run in session 25), one H200: what cuBLASLt's auto-tuned winner is at
# the large-M x N, small-K shapes where the H200 set loses most after its search. At
# 12288x12288x256 grid bf5c1b4a timed cuBLASLt-auto-tuning-tn ("algorithm 6 of 8 heuristic
# candidates") at 132.6 us against 159-160 for torch.matmul and the heuristic choice and 164.9 for
# ours: the kernel to learn from is that nvjet candidate (its name spells tile, cluster, schedule).
# benchmarks/tuner/cublaslt_algo_probe/probe.py lists every heuristic candidate's kernels and time.
# ~60 s. Carried: .whl, .carry/duckdb-site.tar.xz.
set -u
D=benchmarks/tuner/h200-2026-11-28-s25
mkdir -p "$OUT/probe"
OUT=$OUT/probe bash benchmarks/harness/v3/run_device.sh  # installs the wheel, writes device.txt
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_L2_EXPLORER_NATIVE_CACHE=/tmp/l2x-native
python3 benchmarks/tuner/cublaslt_algo_probe/probe.py $D/call6_configs.txt >"$OUT/probe/h200_probe.jsonl" 2>"$OUT/probe/probe.log"
echo "probe: exit $? ($(wc -l <"$OUT/probe/h200_probe.jsonl") candidates)"
tail -3 "$OUT/probe/probe.log"
