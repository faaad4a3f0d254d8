#!/usr/bin/env bash
# Session 25, device call 2 (issue 15), on the H200: the grid's last configs (call 1's store carried
# as .carry/grid.duckdb.gz, resumed), then a search of call2_configs.txt (the 204 configs outside
# the tiny regime where call 1 measured the H100-searched picks under 0.97 of the best baseline,
# worst first; regimes by the H200's roofline) over library 009e13bc, search only, and the changed
# picks benched old, new, old, new beside torch.matmul and three cuBLASLt baselines.
# Everything comes back as two tars (the tool brings back at most 8 files, 2 folders down).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,grid.duckdb.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s25
top=$OUT
mkdir -p "$top/g" "$top/s"
OUT=$top/g CLOCK_LOG=1 BUDGET=${BUDGET:-80} bash benchmarks/harness/v3/run_device.sh grid
OUT=$top/s bash benchmarks/tuner/search_then_ab.sh $D/call2_configs.txt "" ${TUNE_LIMIT:-230} ${END_S:-480}
cd "$top" && tar cf grid.tar g && tar cf search.tar s && rm -rf g s && ls -la
