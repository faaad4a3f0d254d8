#!/usr/bin/env bash
# A device call's search of some configs, search only, then its changed picks against the set's
# current ones (ab_picks.sh: old, new, old, new in one store beside four baselines), on the GPU
# machine from the repository root (run_device.sh installs the carried wheel and library):
#   bash benchmarks/tuner/search_then_ab.sh CONFIGS_FILE "TUNE_ARGS" SEARCH_SECONDS END_SECONDS
# CONFIGS_FILE: M_N_K,... ; TUNE_ARGS: tune options beside --no-measure (e.g. "--limit 48");
# SEARCH_SECONDS: the search's limit; the A/B gets what is left until END_SECONDS of this script.
# $OUT/p gets the search (tune.duckdb, its manifest, logs), $OUT/ab the A/B (ab_picks.sh).
# Session 23's call 1 and session 24's calls 2 and 3 ran this sequence.
set -u
configs=$1 tune_args=$2 search_s=$3 end_s=$4
mkdir -p "$OUT/p" "$OUT/ab"
OUT=$OUT/p TUNE_FILE=$configs TUNE_ARGS="--no-measure $tune_args" TUNE_LIMIT=$search_s \
  bash benchmarks/harness/v3/run_device.sh retune
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
store=$(mktemp -d) && tar xzf "$OUT/p/stores.tar.gz" -C "$store"
bash benchmarks/tuner/ab_picks.sh "$store/tune.duckdb" "$lib" "$OUT/ab" $((end_s - SECONDS))
echo "done at $SECONDS s"
