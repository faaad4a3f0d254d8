#!/usr/bin/env bash
# A device call's search, A/B and merge, returning only compact files (session 31's call 1 lost its
# A/B when one tar of everything came to 20.8 MB: a returned file may have 16 MiB), on the GPU
# machine from the repository root after run_device.sh installed the wheel and library:
#   bash benchmarks/tuner/search_ab_merge.sh CONFIGS_FILE "TUNE_ARGS" SEARCH_SECONDS AB_SECONDS SET_DIR
# search_then_ab.sh's search and old/new/old/new A/B against SET_DIR's manifest (work files in
# /tmp/sam), then merge_picks.sh takes the picks > 1% faster into SET_DIR's manifest, here a copy.
# $OUT gets: tune.duckdb.xz (the search), picks.duckdb.xz (the A/B), merged_manifest.json,
# merge.txt, search_ab.log; files over 15 MB are dropped with a line in search_ab.log.
set -u
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1  # the wheel run_device.sh installed (merge_picks.sh imports it)
configs=$1 tune_args=$2 search_s=$3 ab_s=$4 set_dir=$5
work=/tmp/sam
rm -rf $work && mkdir -p $work
OUT=$work CURRENT_MANIFEST=$set_dir/manifest.json \
  bash benchmarks/tuner/search_then_ab.sh "$configs" "$tune_args" "$search_s" $((search_s + 30 + ab_s)) \
  >"$OUT/search_ab.log" 2>&1
tail -6 "$OUT/search_ab.log"
store=$(mktemp -d) && tar xzf $work/p/stores.tar.gz -C "$store" 2>/dev/null
[ -f "$store/tune.duckdb" ] && xz -T8 -c "$store/tune.duckdb" >"$OUT/tune.duckdb.xz"
if [ -f $work/ab/picks.duckdb ] && [ -f "$store/tune.duckdb" ]; then
  bash benchmarks/tuner/merge_picks.sh "$store/tune.duckdb" $work/ab/picks.duckdb "$set_dir/manifest.json" >"$OUT/merge.txt" 2>&1
  echo "merge: exit $? $(tail -1 "$OUT/merge.txt" | head -c 300)"
  cp "$set_dir/manifest.json" "$OUT/merged_manifest.json"
  xz -T8 -c $work/ab/picks.duckdb >"$OUT/picks.duckdb.xz"
  cat $work/ab/picks.log $work/ab/device.txt >>"$OUT/search_ab.log" 2>/dev/null
fi
for f in "$OUT"/*; do
  if [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 15000000 ]; then
    echo "dropped $f ($(stat -c %s "$f") B)" | tee -a "$OUT/search_ab.log" && rm -f "$f"
  fi
done
