#!/usr/bin/env bash
# Session 19, device call 1 (issue 15): the wgmma family's sliced split-K reduction (`_rs` kernels).
# Library built on the CPU machine: .carry/s19/wglib = `tuner.build --catalog wgmma` (21 kernels).
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/s19/wglib.
# 1. tests/gpu/test_tuner_own.py on that library (every kernel correct at every split count, twice,
#    bit-identical, counters left at 0; `_rs` refused exactly where the grid is more than one wave);
# 2. the search of session 14's 120 deep-K configs over it, search only (tune --no-measure), and
#    `_rs` against `_rg` at the same variant, by split count (multicast_vs_single.py);
# 3. the configs whose pick changed, benched old, new, old, new in one store (every old pick is a
#    wgsk kernel of this library) against torch.matmul and three cuBLASLt baselines.
set -u
S14=benchmarks/tuner/h100-2026-11-24-s14
mkdir -p "$OUT/p" "$OUT/ab" /tmp/tb
cp -r .carry/s19/wglib /tmp/tb/lib
OUT=$OUT/p TESTS="tuner_own" TEST_TIMEOUT=200 TUNE_FILE=$S14/call1_configs.txt TUNE_ARGS="--no-measure" \
  TUNE_LIMIT=${TUNE_LIMIT:-240} bash benchmarks/harness/v3/run_device.sh tests retune
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
mkdir -p /tmp/s19 && tar xzf "$OUT/p/stores.tar.gz" -C /tmp/s19
(cd $S14 && python3 multicast_vs_single.py /tmp/s19/tune.duckdb _rs _rg) 2>&1 | tee "$OUT/ab/rs_vs_rg.txt"
(cd $S14 && python3 multicast_vs_single.py /tmp/s19/tune.duckdb _rs) 2>&1 | tee "$OUT/ab/rs_vs_cluster.txt"
# (Ran with this step written out in full; benchmarks/tuner/ab_picks.sh is the same loop, shared.)
bash benchmarks/tuner/ab_picks.sh /tmp/s19/tune.duckdb "$lib" "$OUT/ab" $((570 - SECONDS))
tar czf "$OUT/p.tar.gz" -C "$OUT" p && rm -rf "$OUT/p"
tar czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
