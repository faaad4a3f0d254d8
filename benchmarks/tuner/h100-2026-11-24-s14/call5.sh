#!/usr/bin/env bash
# Session 14, device call 5 (issue 14): call 4 again after its finding (the flags left on large
# shapes came from the profiler's start letting the clock recover): the cross-check now replays
# long calls' graphs for CUPTI_WARM_S first. The test call 4's time limit cut (fp16 set) and the
# changed one, then the new harness twice on the 20 validation configs.
set -u
V3=benchmarks/harness/v3
mkdir -p "$OUT/p"
OUT=$OUT/p TESTS="harness" bash $V3/run_device.sh >/dev/null 2>&1  # installs the wheel, unpacks the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
timeout 300 python3 -m pytest -q -rfE -p no:cacheprovider tests/gpu/test_harness.py -k "fp16 or captured_launchers" \
  >"$OUT/p/gpu_tests_harness.txt" 2>&1
echo "tests: exit $? at $SECONDS s: $(tail -1 "$OUT/p/gpu_tests_harness.txt")" | tee -a "$OUT/p/device_ab.txt"
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
MNK=$(grep -v '^#' $V3/configs.txt | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
for round in 3 4; do
  python3 -m cuda_l2_explorer --db "$OUT/p/new$round.duckdb" --no-bundled bench \
    --set kernels/h100_F32F16F16F32 --library "$lib" --mnk "$MNK" --mode offline --progress none --json \
    >"$OUT/p/new$round.json" 2>"$OUT/p/new$round.log"
  echo "new $round: exit $? at $SECONDS s" | tee -a "$OUT/p/device_ab.txt"
done
tar czf "$OUT/p.tar.gz" -C "$OUT" p && rm -rf "$OUT/p"
