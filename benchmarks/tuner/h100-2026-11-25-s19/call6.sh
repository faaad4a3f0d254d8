#!/usr/bin/env bash
# Session 19, device call 6 (issue 15, issue 14's landed harness change):
# 1. benchmarks/tuner/cublaslt_algo_probe/probe.py: every cuBLASLt heuristic candidate on the 28
#    large configs where ours lose most, with its kernels' names (tile, cluster, schedule) and times;
# 2. tests/gpu/test_harness.py whole (the offline eager calls restart the rotation after a replay:
#    tested on CPU only so far).
# Carried: .whl, .carry/duckdb-site.tar.xz.
set -uo pipefail
mkdir -p "$OUT/p"
bash benchmarks/harness/v3/run_device.sh >/dev/null 2>&1  # installs the wheel into /tmp/site
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_L2_EXPLORER_NATIVE_CACHE=/tmp/l2x-native
s=$SECONDS
timeout 200 python3 benchmarks/tuner/cublaslt_algo_probe/probe.py benchmarks/tuner/cublaslt_algo_probe/configs.txt \
  >"$OUT/probe.jsonl" 2>"$OUT/p/probe.log"
echo "probe: exit $? in $((SECONDS - s)) s, $(wc -l <"$OUT/probe.jsonl") rows"; tail -3 "$OUT/p/probe.log"
OUT=$OUT/p TESTS="harness" TEST_TIMEOUT=380 bash benchmarks/harness/v3/run_device.sh tests
tar czf "$OUT/p.tar.gz" -C "$OUT" p && rm -rf "$OUT/p"
