#!/usr/bin/env bash
# One device call, from the repository root: the isolated-call probe (probe.py) on the carried
# library. Carried: .whl, .carry/duckdb-site.tar.xz, .carry/tunerlib.tar.gz.
set -uo pipefail
export OUT=${OUT:-/tmp/out}
bash benchmarks/harness/v3/run_device.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
cat "$OUT/device.txt"
LIB=$(ls -t /tmp/tb/lib/*.so | head -1)
python3 benchmarks/tuner/isolated_call_probe/probe.py "$LIB" kernels/h100_F32F16F16F32/manifest.json \
  "$OUT/probe.json" "$@" 2>&1 | tee "$OUT/probe.txt"
