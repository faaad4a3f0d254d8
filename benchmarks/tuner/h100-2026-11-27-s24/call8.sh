#!/usr/bin/env bash
# Session 24, device call 8 (issue 15): call 7's sustained probe at ten more large configs (over 80
# us a call in the grid: the five worst, all K = 512, and five at random, seed 24), torch.matmul,
# our pick and the five candidates that led at call 7's shapes (PROBE_SHORT), 1 s a run, 2 rounds.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
bash benchmarks/harness/v3/run_device.sh build >/dev/null 2>&1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
PROBE_SHORT=1 PROBE_SECONDS=1.0 timeout 420 python3 benchmarks/tuner/power_probe.py "$lib" \
  kernels/h100_F32F16F16F32/manifest.json 12288_4096_512 12288_16384_512 16384_12288_512 \
  12288_12288_512 16384_4096_512 2048_16384_12288 4096_8192_2048 8192_2048_16384 8192_12288_1024 \
  8192_8192_2048 >"$OUT/probe.jsonl" 2>"$OUT/probe.log"
echo "probe: exit $? at $SECONDS s"; tail -3 "$OUT/probe.log"
