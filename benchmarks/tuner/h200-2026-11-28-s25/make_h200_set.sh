#!/usr/bin/env bash
# Our H200 set (kernels/h200_F32F16F16F32): the H100 set's picks (copied when the H200 set does
# not exist yet), with a call's re-searched picks that its old/new/old/new A/B on the H200 measured
# >1% faster taken in (their entries carry the A/B's H200 figures). A grid then measures the whole
# set on the H200 and fill_evidence.py writes that grid's figures into every entry.
#   bash benchmarks/tuner/h200-2026-11-28-s25/make_h200_set.sh CALL_DIR   (holding s/p and s/ab)
set -euo pipefail
C=$1
S13=benchmarks/tuner/h100-2026-11-24-s13
H100=kernels/h100_F32F16F16F32/manifest.json
H200=kernels/h200_F32F16F16F32/manifest.json
tmp=$(mktemp -d)
mkdir -p "$(dirname $H200)"
[ -f $H200 ] || python - "$H100" "$H200" <<'PY'
import sys
from pathlib import Path
from cuda_l2_explorer.tuner import manifest as mf
data = mf.load(sys.argv[1])
mf.save({**data, "device": "h200"}, Path(sys.argv[2]))
PY
python $S13/make_picks.py $C/s/p/tuned/manifest.json $H200 "$tmp" >/dev/null
python - "$tmp/newpicks/h100_F32F16F16F32/manifest.json" "$C/s/ab/picks.duckdb" <<'PY'
import sys
from pathlib import Path
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.tuner import manifest as mf
path, store = Path(sys.argv[1]), Store.open(sys.argv[2], with_bundled=False, read_only=True)
run = store.con.execute("SELECT run_id FROM main.runs WHERE set_id = 'newpicks/h100_F32F16F16F32' "
                        "ORDER BY started_at DESC LIMIT 1").fetchone()[0]
mf.save(mf.with_bench_evidence(mf.load(path), store, "newpicks/h100_F32F16F16F32", run), path)
PY
python $S13/merge_faster.py "$C/s/ab/picks.duckdb" "$tmp/newpicks/h100_F32F16F16F32/manifest.json" $H200
rm -rf "$tmp"
