#!/usr/bin/env bash
# Session 14, device call 4 (issue 14): the CUPTI cross-check taken from replays of each graph
# right after the timing (this checkout's wheel, .whl) against the eager calls after a pause (the
# previous commit's wheel, .whl-old): tests/gpu/test_harness.py, then our set + the seven baselines
# on benchmarks/harness/v3/configs.txt (20 configs, tiny to 16384^3) with the new harness, the old,
# the new, the old, each into its own store; library fc9d1115 (.carry/tunerlib.tar.gz).
set -u
V3=benchmarks/harness/v3
mkdir -p "$OUT/p"
OUT=$OUT/p TESTS="harness" TEST_TIMEOUT=300 bash $V3/run_device.sh tests
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-old .whl-old/*.whl || exit 1
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' .carry/duckdb-site.tar.xz /tmp/site-old
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
MNK=$(grep -v '^#' $V3/configs.txt | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
export PYTHONUNBUFFERED=1
for round in 1 2; do
  for which in new old; do
    site=/tmp/site; [ $which = old ] && site=/tmp/site-old
    PYTHONPATH=$site python3 -m cuda_l2_explorer --db "$OUT/p/$which$round.duckdb" --no-bundled bench \
      --set kernels/h100_F32F16F16F32 --library "$lib" --mnk "$MNK" --mode offline --progress none --json \
      >"$OUT/p/$which$round.json" 2>"$OUT/p/$which$round.log"
    echo "$which $round: exit $? at $SECONDS s" | tee -a "$OUT/p/device_ab.txt"
  done
done
tar czf "$OUT/p.tar.gz" -C "$OUT" p && rm -rf "$OUT/p"
