#!/usr/bin/env bash
# Session 30, call 2 (nvidia-h200, one GPU; issue 15). Call 1 (ncu's full set on 22 kernels, 402 s)
# returned nothing: its report made the result tar 227 MB (a file comes back only under 16 MiB).
# This call asks the same question leaner, and times a tighter floor:
# 1. movement_floor with the tiled movements (tile_TMxTN: what a GEMM CTA of that tile must read
#    and write, no math) beside the untiled floor, cuBLAS and the empty kernel, on the 626 configs
#    that are not compute-bound: how much of a tiny kernel's time above the floor the tiling's
#    own L2 traffic explains;
# 2. Nsight Compute on the same 22 kernels as call 1 (ncu_tiny.json) with one profiled call each
#    (NCU_CALLS=1) and only the metrics the question needs (NCU_METRICS below, those this ncu knows),
#    launch and warp-state sections; and the movement kernels at 64^3, 512x512x128, 1024x1024x128.
# Every file it returns is checked against the 16 MiB limit.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
S=benchmarks/tuner/h200-2026-11-28-s30
F=benchmarks/tuner/movement_floor
top=$OUT
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/movement_floor $F/movement_floor.cu -lcublas 2>"$top/floor_build.log"
start=$SECONDS
timeout 150 /tmp/movement_floor $F/configs.txt 5 >"$top/floor.csv" 2>"$top/floor.log"
echo "movement_floor: exit $? in $((SECONDS - start)) s, $(grep -c cublas "$top/floor.csv") configs" | tee -a "$top/floor.log"
ncu --query-metrics --chip gh100 >/tmp/known_metrics.txt 2>&1
want="gpu__time_duration.sum sm__cycles_elapsed.max sm__cycles_active.avg sm__cycles_active.max
 smsp__inst_executed.sum sm__warps_active.avg.pct_of_peak_sustained_active
 l1tex__m_xbar2l1tex_read_bytes.sum l1tex__m_xbar2l1tex_read_bytes.sum.pct_of_peak_sustained_elapsed
 lts__t_sectors_op_read.sum lts__t_sectors_op_write.sum lts__t_sectors_srcunit_tex_op_read.sum
 lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum lts__throughput.avg.pct_of_peak_sustained_elapsed
 dram__bytes_read.sum dram__bytes_write.sum dram__throughput.avg.pct_of_peak_sustained_elapsed
 sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed
 sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed"
metrics=""
for m in $want; do
  if ! grep -q "^dram__bytes" /tmp/known_metrics.txt || grep -qE "^${m%%.*}([[:space:]]|$)" /tmp/known_metrics.txt; then metrics="$metrics,$m"; else echo "ncu lacks $m" >>"$top/floor.log"; fi
done
metrics=${metrics#,}
mkdir -p "$top/ncu"
OUT=$top/ncu SET=kernels/h200_F32F16F16F32 NCU_MANIFEST=$S/ncu_tiny.json NCU_FAMILY=$S/ncu_tiny_configs.txt \
  NCU_CALLS=1 NCU_SECTIONS="--section LaunchStats --section WarpStateStats --metrics $metrics" NCU_REPORT=1 \
  timeout 300 bash benchmarks/harness/v3/run_device.sh ncu-family >"$top/ncu.log" 2>&1
tail -4 "$top/ncu.log"
for cfg in "64 64 64" "512 512 128" "1024 1024 128"; do
  echo "$cfg" >/tmp/one.txt
  timeout 60 ncu --clock-control none --cache-control all --section LaunchStats --section WarpStateStats \
    --metrics "$metrics" -k regex:move -c 9 --csv --page raw --print-units base \
    --log-file "$top/ncu/floor_raw_${cfg// /x}.csv" /tmp/movement_floor /tmp/one.txt 1 >/dev/null 2>>"$top/floor.log"
done
rm -f "$top/ncu/ncu_sass.csv.xz"
for f in "$top"/ncu/*; do
  [ "$(stat -c %s "$f")" -gt 15000000 ] && echo "dropped $f ($(stat -c %s "$f") B)" && rm -f "$f"
done
cd "$top" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
[ "$(stat -c %s all.tar)" -gt 16000000 ] && split -b 15M all.tar all.tar. && rm all.tar && ls -la
