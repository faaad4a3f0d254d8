#!/usr/bin/env bash
# Session 13, device call 3 (library fc9d1115, .carry/tunerlib.tar.gz):
# 1. the 25 configs whose pick changed (call 2's A/B, merged_configs.txt), cleared in grid run
#    ca854783 (.carry/grid.duckdb.xz) and server run 67ec9aba (.carry/server.duckdb.xz) by
#    benchmarks/harness/v3/redo_configs.py, measured again with the new manifest (bench --resume);
# 2. issue 14: cuBLAS at the compute-bound extremes under ncu after back-to-back calls
#    (ncu_sustained.py: --launch-skip past the warm calls), beside harness 3's device time of the
#    same configs in this call.
set -u
mkdir -p "$OUT/x"
OUT=$OUT/g BUDGET=200 bash benchmarks/harness/v3/run_device.sh grid
mkdir -p "$OUT/s" && python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
  .carry/server.duckdb.xz "$OUT/s/grid.duckdb"
OUT=$OUT/s SERVER="--grid --resume --time-budget 150" bash benchmarks/harness/v3/run_device.sh server
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
EXT=4096_4096_4096,8192_8192_8192,16384_16384_16384
python3 -m cuda_l2_explorer --db "$OUT/x/extremes.duckdb" --no-bundled bench --set kernels/h100_F32F16F16F32 --library "$lib" \
  --mnk $EXT --baselines torch.matmul --mode offline --progress none --json >"$OUT/x/extremes.json" 2>"$OUT/x/extremes.log"
echo "extremes bench: exit $? at $SECONDS s" | tee -a "$OUT/x/device.txt"
for spec in "4096 4096 4096 2000 5" "8192 8192 8192 400 5" "16384 16384 16384 300 5" "16384 16384 16384 0 5"; do
  set -- $spec
  ncu --clock-control none --cache-control all --launch-skip $4 --launch-count $5 -k regex:nvjet \
    --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second --csv --print-units base \
    python3 benchmarks/harness/v3/ncu_sustained.py $1 $2 $3 $4 $5 >"$OUT/x/ncu_${1}_${2}_${3}_skip$4.csv" 2>>"$OUT/x/ncu.log"
  echo "ncu $spec: exit $? at $SECONDS s" | tee -a "$OUT/x/device.txt"
done
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv >>"$OUT/x/device.txt"
tar czf "$OUT/g.tar.gz" -C "$OUT" g && rm -rf "$OUT/g"
tar czf "$OUT/s.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
tar czf "$OUT/x.tar.gz" -C "$OUT" x && rm -rf "$OUT/x"
