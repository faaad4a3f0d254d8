#!/usr/bin/env bash
# A completed grid of one of our sets into the product: the mechanical steps each grid took by hand
# (sessions 25-34), in order, from the repository root with the project's venv active:
#   bash benchmarks/tuner/bundle_grid.sh GRID_STORE GPU OLD_RUN_ID OUT_DIR [SEARCH_LOG...]
# GRID_STORE: the grid's store (.duckdb, one offline run of ours/GPU_F32F16F16F32, complete);
# GPU: h100 or h200; OLD_RUN_ID: the bundled run of that set it re-measures (dropped from the
# bundle); OUT_DIR: the session's evidence folder (reports land there); SEARCH_LOG: the tune
# stores whose searches made the set's changed picks (their search logs go in the bundle).
# 1. the grid's figures into every entry of the set's manifest (fill_evidence.py);
# 2. db/bundled rebuilt with the grid in place of OLD_RUN_ID, the set's kernels replaced;
# 3. the package reinstalled (the CLI and the tests read the installed bundled dataset);
# 4. the README's generated parts: headline tables and plot, console examples;
# 5. reports in OUT_DIR: merged_picks.json (the picks the base manifest did not have),
#    grid_vs_OLD.txt (grid_vs_previous.py), loss_by_regime_RUN.txt (by regime and kernel family),
#    recommendation_floor_RUN.txt.
# The prose (README, GRID.md, NOTES) stays for a person; the reports hold its figures.
# BASE_REF (default HEAD): the commit whose manifest and bundled dataset the grid is compared
# with, when the merged manifest was committed before the grid ran (session 36).
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,15p "$0"; exit 2; }
store=$1 gpu=$2 old_run=$3 out=$4
shift 4
set_id=ours/${gpu}_F32F16F16F32
manifest=kernels/${gpu}_F32F16F16F32/manifest.json
mkdir -p "$out"
run=$(python - "$store" "$set_id" <<'PY'
import sys
import duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
rows = con.execute("SELECT run_id, status FROM runs WHERE set_id = ? AND mode = 'offline'", [sys.argv[2]]).fetchall()
if len(rows) != 1 or rows[0][1] != "complete":
    sys.exit(f"{sys.argv[1]}: want one complete offline run of {sys.argv[2]}, found {rows} (resume it first)")
print(rows[0][0])
PY
)
short=${run:0:8}
echo "grid run $run of $set_id replaces $old_run"
base=${BASE_REF:-HEAD}
git show "$base:$manifest" >"$out/manifest_before.json"
python - "$out/manifest_before.json" "$manifest" "$out/merged_picks.json" <<'PY'
import json, sys
from cuda_l2_explorer.tuner import manifest as mf
merged = mf.changed_picks(mf.load(sys.argv[1]), mf.load(sys.argv[2]))
json.dump([list(c) for c in merged], open(sys.argv[3], "w"))
print(f"{len(merged)} picks differ from the base manifest")
PY
rm "$out/manifest_before.json"
python benchmarks/tuner/h200-2026-11-28-s25/fill_evidence.py "$store" "$set_id" "$run" "$manifest"
logs=()
for log in "$@"; do logs+=(--search-log "$log"); done
python -m cuda_l2_explorer.importer.bundle --base db/bundled --out db/bundled --store "$store" --replace-kernels \
  --drop-run "$old_run" "${logs[@]}"
pip install -q --no-deps --force-reinstall . && rm -rf build
python benchmarks/readme_headline.py
python benchmarks/readme_examples.py
python benchmarks/tuner/grid_vs_previous.py "$base" "${old_run:0:8}" . "$short" "$out/merged_picks.json" \
  >"$out/grid_vs_${old_run:0:8}.txt"
python benchmarks/tuner/loss_by_regime.py db/bundled/measurements.parquet --run "$short" --gpu "$gpu" --picks "$manifest" \
  >"$out/loss_by_regime_$short.txt"
python benchmarks/tuner/recommendation_floor.py "$short" --gpu "$gpu" >"$out/recommendation_floor_$short.txt"
echo "done: review git diff (README, db/bundled, $manifest) and $out/*_$short.txt, grid_vs_${old_run:0:8}.txt"
