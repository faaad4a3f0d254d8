#!/usr/bin/env bash
# One command per GPU of the machine, all at once, after one shared install and library unpack
# (run_device.sh with no step): a machine's held time counts once whatever its GPU count, so a
# search or an A/B split over four GPUs takes a quarter of the device time (session 27). Each
# config is measured on one GPU only: no figure is set against another GPU's.
#   bash benchmarks/tuner/on_every_gpu.sh 'COMMAND'
# COMMAND runs under bash with CUDA_VISIBLE_DEVICES, GPU (its index), GPUS (their count) and
# PYTHONPATH set; its output goes to $OUT/gpu$GPU.log. `share FILE` (exported) prints this GPU's
# round-robin share of FILE's comma-separated configs, so a list sorted worst first stays balanced.
set -u
mkdir -p "$OUT/setup"
OUT=$OUT/setup bash benchmarks/harness/v3/run_device.sh >/dev/null
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
[ -d /tmp/site-cluster ] && export PYTHONPATH=/tmp/site:/tmp/site-cluster
GPUS=$(nvidia-smi -L | wc -l)
export GPUS
share() { tr ',' '\n' <"$1" | awk -v n="$GPUS" -v g="$GPU" 'NF && (NR - 1) % n == g' | paste -sd,; }
export -f share
for g in $(seq 0 $((GPUS - 1))); do
  CUDA_VISIBLE_DEVICES=$g GPU=$g bash -c "$1" >"$OUT/gpu$g.log" 2>&1 &
done
wait
for g in $(seq 0 $((GPUS - 1))); do echo "== gpu $g"; tail -4 "$OUT/gpu$g.log"; done
