#!/usr/bin/env bash
# Session 11, device call 2: (1) the grid's last configs (resumes call 1's store, carried in
# .carry/grid.duckdb.gz); (2) headroom: the search with every kernel of the library (--limit 1000,
# three variants each) at 12 of the worst configs, no baseline pass; (3) ncu at three of them.
set -u
S=benchmarks/tuner/h100-2026-11-24-s11
OUT=$OUT/g BUDGET=300 bash benchmarks/harness/v3/run_device.sh grid
tar czf "$OUT/grid.tar.gz" -C "$OUT" g && rm -rf "$OUT/g"
OUT=$OUT/h TUNE_FILE=$S/headroom_configs.txt TUNE_ARGS="--no-measure --limit 1000" TUNE_LIMIT=330 \
  bash benchmarks/harness/v3/run_device.sh retune
tar czf "$OUT/headroom.tar.gz" -C "$OUT" h && rm -rf "$OUT/h"
OUT=$OUT/n NCU_FAMILY=$S/ncu_losses.txt bash benchmarks/harness/v3/run_device.sh ncu-family
tar czf "$OUT/ncu.tar.gz" -C "$OUT" n && rm -rf "$OUT/n"
