#!/usr/bin/env bash
# Session 14, device call 6 (issue 14): the cross-check compares the graph replays timed by events with
# CUPTI's kernel time of the same replays (the timing's samples drift with the power limit): the
# whole tests/gpu/test_harness.py, then the new harness twice on the 20 validation configs.
set -u
V3=benchmarks/harness/v3
mkdir -p "$OUT/p"
OUT=$OUT/p TESTS="harness" bash $V3/run_device.sh >/dev/null 2>&1  # installs the wheel, unpacks the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
timeout 420 python3 -m pytest -q -rfE -p no:cacheprovider tests/gpu/test_harness.py >"$OUT/p/gpu_tests_harness.txt" 2>&1
echo "tests: exit $? at $SECONDS s: $(tail -1 "$OUT/p/gpu_tests_harness.txt")" | tee -a "$OUT/p/device_ab.txt"
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
MNK=$(grep -v '^#' $V3/configs.txt | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
for round in 5 6; do
  python3 -m cuda_l2_explorer --db "$OUT/p/new$round.duckdb" --no-bundled bench \
    --set kernels/h100_F32F16F16F32 --library "$lib" --mnk "$MNK" --mode offline --progress none --json \
    >"$OUT/p/new$round.json" 2>"$OUT/p/new$round.log"
  echo "new $round: exit $? at $SECONDS s" | tee -a "$OUT/p/device_ab.txt"
done
tar czf "$OUT/p.tar.gz" -C "$OUT" p && rm -rf "$OUT/p"
