#!/usr/bin/env bash
# Session 38, call 1 (nvidia-h200, one GPU; issue 15; two H100 starts refused before it):
# session 36's next_call2.sh, the four-stage wgmma tiles' search at the 129 band configs (A/B
# against the H200 set's picks, merge into a copy of its manifest), then the wgmma family's first
# timelines (session 36's next_call1.sh, its step 3: four band picks at four band configs).
# Library cfb35611 (.carry/tunerlib.tar.gz); the timeline build .carry/timeline_wgsk.tar.gz
# (`tuner.build --catalog wgmma --only "$(cat $S36/next_timeline_wgsk_names.txt)" --timeline`).
set -u
S36=benchmarks/tuner/h200-2026-11-29-s36
top=$OUT
mkdir -p "$top/band"
OUT=$top/band bash $S36/next_call2.sh
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/tl && tar xzf .carry/timeline_wgsk.tar.gz -C /tmp/tl
timeout $((570 - SECONDS)) python3 benchmarks/tuner/tiny_floor/timeline.py "$(ls /tmp/tl/lib/*.so | head -1)" \
  $S36/next_timeline_wgsk_configs.txt "$(cat $S36/next_timeline_wgsk_names.txt)" >"$top/timeline_wgsk.csv" 2>&1
echo "timeline: exit $? at $SECONDS s"
