#!/usr/bin/env bash
# Two builds of the library on the same picks: a set's kernels at some configs benched with the old
# library, the new, the old and the new again in one store (harness 3: graph replay, cold L2) beside
# torch.matmul, on the GPU machine (the wheel installed in $PYTHONPATH). For a change to kernels that
# keep their names (session 35: the tensor-fed kernels' barrier set-up), where ab_picks.sh compares
# two sets of picks on one library (both run ab_benches.sh's four benches: oldpicks is the old library).
#   bash benchmarks/tuner/lib_ab.sh CONFIGS OLD_LIBRARY NEW_LIBRARY SET_DIR OUT_DIR SECONDS
# CONFIGS: M_N_K,... ; SECONDS: what the four benches may take in all. OUT_DIR gets picks.duckdb,
# picks.json, picks.log, device.txt.
set -u
configs=$1 old=$2 new=$3 set_dir=$4 out=$5 seconds=$6
mkdir -p "$out"
# The set copied as oldpicks/NAME and newpicks/NAME: the store's set ids say which library ran
# (a set under kernels/ would keep its own id, ours/NAME, in both).
for which in oldpicks newpicks; do
  rm -rf "$out/sets/$which" && mkdir -p "$out/sets/$which" && cp -r "$set_dir" "$out/sets/$which/"
done
. "$(dirname "$0")/ab_benches.sh"
name=$(basename "$set_dir")
ab_benches "$out" "$seconds" "$configs" "${AB_BASELINES:-torch.matmul}" \
  "$out/sets/oldpicks/$name" "$old" "$out/sets/newpicks/$name" "$new"
