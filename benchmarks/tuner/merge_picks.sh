#!/usr/bin/env bash
# A search's faster picks into a set's manifest: the changed picks rebuilt from the search's
# manifest (make_picks.py against SET_MANIFEST), the A/B's second newpicks bench figures (harness 3)
# written into them, then those >1% faster merged (merge_faster.py); prints the merged configs.
#   bash benchmarks/tuner/merge_picks.sh TUNED_MANIFEST PICKS_STORE SET_MANIFEST
# TUNED_MANIFEST: the search's tuned/manifest.json; PICKS_STORE: ab_picks.sh's picks.duckdb (or .gz,
# .xz); SET_MANIFEST: the set it changes (its picks are the A/B's "old" ones). Session 24's
# merge_call.sh and session 25's make_h200_set.sh call this.
set -euo pipefail
tuned=$1 picks=$2 set_manifest=$3
S13=benchmarks/tuner/h100-2026-11-24-s13
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case "$picks" in
*.gz) gunzip -c "$picks" >"$tmp/picks.duckdb" ;;
*.xz) xz -dc "$picks" >"$tmp/picks.duckdb" ;;
*) cp "$picks" "$tmp/picks.duckdb" ;;
esac
python3 $S13/make_picks.py "$tuned" "$set_manifest" "$tmp" >/dev/null
newpicks=$tmp/newpicks/h100_F32F16F16F32/manifest.json  # make_picks.py's folder name, whatever the GPU
python3 - "$newpicks" "$tmp/picks.duckdb" <<'PY'
import sys
from pathlib import Path
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.tuner import manifest as mf
path, store = Path(sys.argv[1]), Store.open(sys.argv[2], with_bundled=False, read_only=True)
run = store.con.execute("SELECT run_id FROM main.runs WHERE set_id = 'newpicks/h100_F32F16F16F32' "
                        "ORDER BY started_at DESC LIMIT 1").fetchone()[0]
mf.save(mf.with_bench_evidence(mf.load(path), store, "newpicks/h100_F32F16F16F32", run), path)
PY
python3 $S13/merge_faster.py "$tmp/picks.duckdb" "$newpicks" "$set_manifest"
