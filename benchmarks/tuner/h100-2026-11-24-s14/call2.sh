#!/usr/bin/env bash
# Session 14, device call 2: the consumer releases a stage with one arrival per warpgroup instead
# of one per thread (.carry/s14/wglib2; call 1's library is .carry/s14/wglib1).
# 1. tests/gpu/test_tuner_own.py on the new library;
# 2. the current picks of call 1's 120 configs (all wgsk kernels without multicast, the same names
#    in both libraries) benched with the old library, the new, the old, the new, in one store;
# 3. Nsight Compute's full set (stall reasons) on ncu_manifest.json's kernels and torch.matmul.
set -u
D=benchmarks/tuner/h100-2026-11-24-s14
mkdir -p "$OUT/p" "$OUT/ab" /tmp/tb
cp -r .carry/s14/wglib2 /tmp/tb/lib
OUT=$OUT/p TESTS="tuner_own" TEST_TIMEOUT=150 bash benchmarks/harness/v3/run_device.sh tests
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
old=$(ls .carry/s14/wglib1/*.so) new=$(ls .carry/s14/wglib2/*.so)
CFGS=$(python3 $D/subset_set.py kernels/h100_F32F16F16F32/manifest.json $D/call1_configs.txt "$OUT/ab/set")
echo "configs: $(echo "$CFGS" | tr ',' '\n' | grep -c _)"
each=$(( (400 - SECONDS) / 4 ))
for which in old new old new; do
  [ $each -lt 15 ] && break
  lib=$old; [ $which = new ] && lib=$new
  python3 -m cuda_l2_explorer --no-bundled bench --db "$OUT/ab/libs.duckdb" --library "$lib" --progress none --json \
    --set "$OUT/ab/set/h100_F32F16F16F32" --set-name "lib$which" --mnk "$CFGS" --time-budget $each \
    --baselines torch.matmul >>"$OUT/ab/libs.json" 2>>"$OUT/ab/libs.log"
  echo "$which: exit $? at $SECONDS s" | tee -a "$OUT/ab/device.txt"
done
timeout $(( 580 - SECONDS )) ncu --clock-control none --cache-control all --set full --csv --page raw --print-units base \
  --kernel-name regex:'nvjet|wgmma_splitk|splitKreduce|spin_kernel' --log-file "$OUT/p/ncu_full.csv" \
  python3 benchmarks/harness/v3/ncu_driver.py $D/ncu_configs.txt $D/ncu_manifest.json "$new" \
  >"$OUT/p/ncu_order.json" 2>"$OUT/p/ncu.log"
echo "ncu: exit $? at $SECONDS s" | tee -a "$OUT/ab/device.txt"
tail -3 "$OUT/p/ncu.log"
tar czf "$OUT/p.tar.gz" -C "$OUT" p && rm -rf "$OUT/p"
tar czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
