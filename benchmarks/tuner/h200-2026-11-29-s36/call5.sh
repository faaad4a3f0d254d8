#!/usr/bin/env bash
# Session 36, call 5 (nvidia-h200, one GPU; issue 15): the spread store (session 35's
# spread_store.patch; library bbf68764 = b704c710 + the patch) at the nine picks of the K = 2048
# split tiles (spread_pick_configs.txt: eight of them the eight-K-group kernel merged after call 1's
# lib_ab, whose timeline gained the most: met -> stored 856 -> 496 cycles at 64x1024x1024).
# lib_ab old (b704c710) / new (bbf68764) / old / new. Carried: .whl, .carry (tunerlib = bbf68764,
# oldlib = b704c710).
set -u
top=$OUT
S=benchmarks/tuner/h200-2026-11-29-s36
mkdir -p /tmp/setup /tmp/old
OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install, unpack the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
tar xzf .carry/oldlib.tar.gz -C /tmp/old
new=$(ls -t /tmp/tb/lib/*.so | head -1) old=$(ls /tmp/old/lib/*.so | head -1)
nvidia-smi --query-gpu=index,name,driver_version --format=csv >"$top/gpu.csv"
bash benchmarks/tuner/lib_ab.sh "$(cat $S/spread_pick_configs.txt)" "$old" "$new" kernels/h200_F32F16F16F32 /tmp/lab 80
xz -T8 -c /tmp/lab/picks.duckdb >"$top/lib_ab.duckdb.xz"
python3 benchmarks/tuner/h100-2026-11-24-s12/picks_ab.py /tmp/lab/picks.duckdb >"$top/lib_ab.txt" 2>&1
cat /tmp/lab/device.txt >"$top/device.txt"
tail -1 "$top/lib_ab.txt"
