#!/usr/bin/env bash
# Session 16, device calls 6-9 (issue 14, and issue 15's set in server mode): the whole server-mode
# 1000-grid of the set with session 16's merged picks, in chunks of BUDGET s, into the carried store
# (.carry/grid.duckdb.xz: the offline run 19c57c82, whose cuBLASLt auto-tuning choices server mode
# reuses, and the server run so far, which a later chunk resumes).
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/tunerlib.tar.gz (call 4's library), .carry/grid.duckdb.xz.
set -uo pipefail
export OUT=${OUT:-/tmp/out}
bash benchmarks/harness/v3/run_device.sh >/dev/null 2>&1  # installs into /tmp/site, unpacks the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_L2_EXPLORER_BUILD_CACHE=/tmp/l2x-build CUDA_L2_EXPLORER_NATIVE_CACHE=/tmp/l2x-native
python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
  .carry/grid.duckdb.xz "$OUT/grid.duckdb"
resume=$(python3 -c 'import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True)
print("--resume" if c.execute("SELECT count(*) FROM runs WHERE mode = '"'"'server'"'"'").fetchone()[0] else "")' "$OUT/grid.duckdb")
s=$SECONDS
python3 -m cuda_l2_explorer --db "$OUT/grid.duckdb" --no-bundled bench --set kernels/h100_F32F16F16F32 \
  --library "$(ls -t /tmp/tb/lib/*.so | head -1)" --grid --mode server $resume --time-budget "${BUDGET:-480}" \
  --progress none --json >"$OUT/server.json" 2>"$OUT/server.log"
echo "server ($resume): exit $? in $((SECONDS - s)) s"; tail -1 "$OUT/server.log"
cd "$OUT" && xz -3 -T8 grid.duckdb && ls -la
