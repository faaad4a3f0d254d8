#!/usr/bin/env bash
# Session 19, device call 10 (issue 15): call 9 again with Nsight Compute's full set (stall
# reasons, shared-memory wavefronts and bank conflicts, instruction mix) on our two kernels only:
# why the 128x160 ping-pong is L1/shared-memory bound (86.6% against 72.9%) at 12288x8192x512.
# NCU_PAGE=raw (call 11): every metric of the set, stall reasons and bank conflicts among them.
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/s19/lgl8.
set -u
mkdir -p /tmp/tb && rm -rf /tmp/tb/lib && cp -r "${LIB:-.carry/s19/lgl8}" /tmp/tb/lib
bash benchmarks/harness/v3/run_device.sh >/dev/null 2>&1  # installs the wheel into /tmp/site
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
D=benchmarks/tuner/h100-2026-11-25-s19
LIB=$(ls -t /tmp/tb/lib/*.so | head -1)
s=$SECONDS
timeout 400 ncu --clock-control none --cache-control all --set full -k regex:device_kernel --launch-count 6 \
  --csv --page ${NCU_PAGE:-details} --print-units base --log-file "$OUT/ncu_full.csv" \
  python3 benchmarks/harness/v3/ncu_driver.py $D/call9_ncu_configs.txt $D/call9_ncu_manifest.json "$LIB" \
  >"$OUT/order.json" 2>"$OUT/ncu_full.log"
echo "ncu: exit $? in $((SECONDS - s)) s"; tail -3 "$OUT/ncu_full.log"
gzip -9 "$OUT/ncu_full.csv"
