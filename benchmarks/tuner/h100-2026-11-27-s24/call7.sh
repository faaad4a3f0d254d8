#!/usr/bin/env bash
# Session 24, device call 7 (issue 15): call 6's ncu found our large-shape picks at 1435-1496 MHz
# against torch.matmul's nvjet at 1566-1606, while pulling 1.5-1.9x its DRAM bytes. Sustained
# calls with the SM clock and power sampled (benchmarks/tuner/power_probe.py): torch.matmul, our
# pick and bigger / clustered tiles and L2-friendlier rasters, at four large shapes.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
bash benchmarks/harness/v3/run_device.sh build >/dev/null 2>&1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
timeout 480 python3 benchmarks/tuner/power_probe.py "$lib" kernels/h100_F32F16F16F32/manifest.json \
  12288_8192_512 12288_12288_1024 16384_4096_2048 8192_8192_8192 >"$OUT/probe.jsonl" 2>"$OUT/probe.log"
echo "probe: exit $? at $SECONDS s"; tail -3 "$OUT/probe.log"
