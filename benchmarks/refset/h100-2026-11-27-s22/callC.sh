#!/usr/bin/env bash
# Session 22, device call C (issue 17): call B again with CUTLASS's headers carried
# (.carry/cutlass-4.2.0.tar.gz: include/ and tools/util/include/ of the nvidia-cutlass 4.2.0
# wheel), resuming call B's store (.carry/refset.duckdb.gz) with --retry compile_error: the 115
# configs that call B stored as compile errors (cute/tensor.hpp not found) are measured again.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,refset-h100.tar.gz,refset.duckdb.gz,refset-builds.tar.xz}.
set -u
REFSET_JOBS=16 REFSET_PER_UNIT=2 BUDGET=${BUDGET:-260} REFSET_LIMIT=${REFSET_LIMIT:-550} REFSET_TIMEOUT=30 \
  REFSET_RETRY=compile_error bash benchmarks/harness/v3/run_device.sh refset
export PYTHONPATH=/tmp/site
grep -v '"label"' "$OUT/refset.log" | tail -8
python3 -c 'import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); print(c.execute("SELECT status, count(*) FROM run_configs GROUP BY 1").fetchall())' "$OUT/refset.duckdb"
gzip -9 "$OUT/refset.duckdb"
