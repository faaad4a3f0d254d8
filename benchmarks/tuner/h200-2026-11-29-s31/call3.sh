#!/usr/bin/env bash
# Session 31, call 3 (nvidia-h200, one GPU; issue 15): call 2's Nsight Compute step again (its
# results went into run_device.sh's logs.tar, which call 2 did not return), now with the source
# counters (per-instruction warp-stall samples, the SASS export) beside the launch and warp-state
# sections: the bulk-fed kernels beside the picks at 512x512x128, 256^3, 128^3 (ncu_bulk.json).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
S=benchmarks/tuner/h200-2026-11-29-s31
SET=kernels/h200_F32F16F16F32
top=$OUT
want="gpu__time_duration.sum sm__cycles_elapsed.max sm__cycles_active.avg smsp__inst_executed.sum
 l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
 smsp__inst_executed_op_shared_ld.sum l1tex__m_xbar2l1tex_read_bytes.sum lts__t_sectors_op_read.sum
 dram__bytes_read.sum dram__bytes_write.sum sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed"
ncu --query-metrics --chip gh100 >/tmp/known_metrics.txt 2>&1
metrics=""
for m in $want; do
  if grep -qE "^${m%%.*}([[:space:]]|$)" /tmp/known_metrics.txt; then metrics="$metrics,$m"; else echo "ncu lacks $m" >>"$top/ncu.log"; fi
done
metrics=${metrics#,}
mkdir -p /tmp/ncu3
OUT=/tmp/ncu3 SET=$SET NCU_MANIFEST=$S/ncu_bulk.json NCU_FAMILY=$S/ncu_bulk_configs.txt NCU_CALLS=1 NCU_REPORT=1 \
  NCU_SECTIONS="--section LaunchStats --section WarpStateStats --section SourceCounters --metrics $metrics" \
  timeout 300 bash benchmarks/harness/v3/run_device.sh ncu-family >>"$top/ncu.log" 2>&1
tail -4 "$top/ncu.log"
cp /tmp/ncu3/logs.tar /tmp/ncu3/ncu_raw.csv.xz /tmp/ncu3/ncu_sass.csv.xz "$top/" 2>/dev/null
for f in "$top"/*; do
  [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 15000000 ] && echo "dropped $f ($(stat -c %s "$f") B)" && rm -f "$f"
done
ls -la "$top"
