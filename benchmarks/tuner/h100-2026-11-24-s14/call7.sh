#!/usr/bin/env bash
# Session 14, device call 7 (issue 14): short calls cross-checked against the timing's median, long ones
# against the profiled replays timed by events (calls 4 and 6): the new harness twice on the 20
# validation configs (test_harness.py ran in call 6).
set -u
V3=benchmarks/harness/v3
mkdir -p "$OUT/p"
OUT=$OUT/p TESTS="harness" bash $V3/run_device.sh >/dev/null 2>&1  # installs the wheel, unpacks the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
MNK=$(grep -v '^#' $V3/configs.txt | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
for round in 7 8; do
  python3 -m cuda_l2_explorer --db "$OUT/p/new$round.duckdb" --no-bundled bench \
    --set kernels/h100_F32F16F16F32 --library "$lib" --mnk "$MNK" --mode offline --progress none --json \
    >"$OUT/p/new$round.json" 2>"$OUT/p/new$round.log"
  echo "new $round: exit $? at $SECONDS s" | tee -a "$OUT/p/device_ab.txt"
done
tar czf "$OUT/p.tar.gz" -C "$OUT" p && rm -rf "$OUT/p"
