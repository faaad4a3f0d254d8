#!/usr/bin/env bash
# Session 31, call 4 (nvidia-h200, one GPU; issue 15). Call 3's source counters put 41% of the bulk
# kernel's stall samples on the wait for its bulk copies to land, the same bytes the movement probe
# (bulk_tile_move) waits ~1.4 us less for. One difference: the probe's dynamic shared memory is
# 128-byte aligned, the kernel's only 16 (`__align__(16)`, and a static mbarrier beside it), so every
# bulk copy lands across 128-byte lines. Library e7a4db31 changes only that (`__align__(128)`).
# 1. tests/gpu/test_tuner_own.py on e7a4db31;
# 2. the best bulk kernel of 38 tiny configs (bulk_set/, from call 1's search) benched with the old
#    library (7e5d9f92) and the new, old/new/old/new in one store, beside torch.matmul and cuBLASLt.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz (e7a4db31),oldlib.tar.gz}.
set -u
S=benchmarks/tuner/h200-2026-11-29-s31
top=$OUT
mkdir -p /tmp/setup
OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install, unpack the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
new=$(ls /tmp/tb/lib/libl2x_tuner-e7a4db31*.so)
tar xzf .carry/oldlib.tar.gz -C /tmp/tb
old=$(ls /tmp/tb/lib/libl2x_tuner-7e5d9f92*.so)
echo "old $old new $new" | tee "$top/device.txt"
CUDA_L2_EXPLORER_TUNER_LIB=$new timeout 120 python3 -m pytest -q -rfE -p no:cacheprovider \
  tests/gpu/test_tuner_own.py >"$top/gpu_tests.log" 2>&1
echo "gpu tests: exit $? $(tail -1 "$top/gpu_tests.log")" | tee -a "$top/device.txt"
cfgs=$(cat $S/bulk_set/configs.txt)
for which in old new old new; do
  lib=$old && [ $which = new ] && lib=$new
  python3 -m cuda_l2_explorer --no-bundled bench --db /tmp/align.duckdb --library "$lib" --progress none --json \
    --set $S/bulk_set/h100_F32F16F16F32 --set-name ${which}lib --mnk "$cfgs" --time-budget 70 \
    --baselines torch.matmul,cuBLASLt-heuristic-tn >>/tmp/align.json 2>>"$top/align.log"
  echo "$which: exit $? at $SECONDS s" | tee -a "$top/device.txt"
done
xz -T8 -c /tmp/align.duckdb >"$top/align.duckdb.xz"
ls -la "$top"
