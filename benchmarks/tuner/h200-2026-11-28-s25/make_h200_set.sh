#!/usr/bin/env bash
# Our H200 set (kernels/h200_F32F16F16F32): the H100 set's picks (copied when the H200 set does
# not exist yet), with a call's re-searched picks that its old/new/old/new A/B on the H200 measured
# >1% faster taken in (benchmarks/tuner/merge_picks.sh; their entries carry the A/B's H200
# figures). A grid then measures the whole set on the H200 and fill_evidence.py writes that grid's
# figures into every entry.
#   bash benchmarks/tuner/h200-2026-11-28-s25/make_h200_set.sh TUNED_MANIFEST PICKS_STORE
# Session 25 (call 2's committed evidence):
#   make_h200_set.sh benchmarks/tuner/h200-2026-11-28-s25/call2/tuned/manifest.json \
#     benchmarks/tuner/h200-2026-11-28-s25/call2/picks.duckdb.xz
set -euo pipefail
H200=kernels/h200_F32F16F16F32/manifest.json
mkdir -p "$(dirname $H200)"
[ -f $H200 ] || python - kernels/h100_F32F16F16F32/manifest.json "$H200" <<'PY'
import sys
from pathlib import Path
from cuda_l2_explorer.tuner import manifest as mf
data = mf.load(sys.argv[1])
mf.save({**data, "device": "h200"}, Path(sys.argv[2]))
PY
bash benchmarks/tuner/merge_picks.sh "$1" "$2" $H200
