#!/usr/bin/env bash
# The Nsight Compute metrics the tiny-kernel probes read (time, cycles, instructions, shared-memory
# loads and their bank conflicts, L2 and DRAM bytes, the tensor pipe), those this ncu knows, as one
# comma-separated --metrics argument on stdout; each one it lacks is a line in LOG.
#   metrics=$(bash benchmarks/tuner/ncu_metrics.sh LOG)
set -u
log=$1
want="gpu__time_duration.sum sm__cycles_elapsed.max sm__cycles_active.avg smsp__inst_executed.sum
 l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
 smsp__inst_executed_op_shared_ld.sum l1tex__m_xbar2l1tex_read_bytes.sum lts__t_sectors_op_read.sum
 dram__bytes_read.sum dram__bytes_write.sum sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed"
ncu --query-metrics --chip gh100 >/tmp/known_metrics.txt 2>&1
metrics=""
for m in $want; do
  if grep -qE "^${m%%.*}([[:space:]]|$)" /tmp/known_metrics.txt; then metrics="$metrics,$m"; else echo "ncu lacks $m" >>"$log"; fi
done
echo "${metrics#,}"
