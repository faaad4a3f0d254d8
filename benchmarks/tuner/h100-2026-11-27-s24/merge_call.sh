#!/usr/bin/env bash
# A call's faster picks into the H100 set (benchmarks/tuner/merge_picks.sh: the changed picks
# rebuilt from the search's manifest, the second newpicks bench's figures written into them, then
# the >1% faster merged).
#   bash merge_call.sh benchmarks/tuner/h100-2026-11-27-s24/call2   (call3, ...)
set -euo pipefail
D=$1
bash benchmarks/tuner/merge_picks.sh $D/p/tuned/manifest.json $D/ab/picks.duckdb.gz kernels/h100_F32F16F16F32/manifest.json
