#!/usr/bin/env bash
# A call's faster picks into the set: the changed picks rebuilt from the search's manifest, the
# second newpicks bench's figures (harness 3) written into them, then the >1% faster merged.
#   bash merge_call.sh benchmarks/tuner/h100-2026-11-27-s24/call2   (call3, ...)
set -euo pipefail
D=$1
S13=benchmarks/tuner/h100-2026-11-24-s13
SET=kernels/h100_F32F16F16F32/manifest.json
tmp=$(mktemp -d)
gunzip -c $D/ab/picks.duckdb.gz >"$tmp/picks.duckdb"
python $S13/make_picks.py $D/p/tuned/manifest.json $SET "$tmp" >/dev/null
python - "$tmp/newpicks/h100_F32F16F16F32/manifest.json" "$tmp/picks.duckdb" <<'PY'
import json, sys
from pathlib import Path
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.tuner import manifest as mf
path, store = Path(sys.argv[1]), Store.open(sys.argv[2], with_bundled=False)
run = store.con.execute("SELECT run_id FROM main.runs WHERE set_id = 'newpicks/h100_F32F16F16F32' "
                        "ORDER BY started_at DESC LIMIT 1").fetchone()[0]
mf.save(mf.with_bench_evidence(mf.load(path), store, "newpicks/h100_F32F16F16F32", run), path)
PY
python $S13/merge_faster.py "$tmp/picks.duckdb" "$tmp/newpicks/h100_F32F16F16F32/manifest.json" $SET
rm -rf "$tmp"
