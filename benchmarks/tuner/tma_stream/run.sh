#!/usr/bin/env bash
# TMA streaming probe (README.md in this folder). Run from the repository root on the GPU machine:
#   bash benchmarks/tuner/tma_stream/run.sh            # three shapes, CSVs under $OUT/tma_stream/
#   RUN_NCU=1 bash benchmarks/tuner/tma_stream/run.sh  # plus Nsight Compute on two 64x64 variants
# Builds the binary if it is missing (CUTLASS from $CUTLASS_DIR, default /tmp/cutlass).
set -u
D=benchmarks/tuner/tma_stream
BIN=$D/tma_stream
CUTLASS=${CUTLASS_DIR:-/tmp/cutlass}
R=${OUT:-/tmp}/tma_stream
mkdir -p "$R"

if [ ! -x "$BIN" ]; then
  # The gencode of tuner/build.py: -arch=sm_90a under nvcc 13 also compiles a compute_90 PTX
  # (twice the device compile, and ptxas advisories on the multicast copies).
  start=$SECONDS
  nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
    -I"$CUTLASS/include" -I"$CUTLASS/tools/util/include" -o "$BIN" "$D/tma_stream.cu" || exit 1
  echo "built $BIN in $((SECONDS - start)) s"
fi

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv \
  >"$R/nvidia_smi.csv" 2>&1

for shape in "512 512 12288" "256 512 8192" "1024 1024 4096"; do
  name=$(echo "$shape" | tr ' ' x)
  # A deadlocked variant would hang the process: bounded, and its stderr kept.
  timeout 300 "$BIN" $shape >"$R/stream_$name.csv" 2>"$R/stream_$name.err"
  echo "$name: exit $? at $SECONDS s, $(grep -c ',FAIL$' "$R/stream_$name.csv") FAIL"
done

if [ "${RUN_NCU:-0}" = 1 ]; then
  # One checked launch each (--ncu), the 64x64 x 2 splits, 12 stages of BK 64 (session 16: also
  # launched as (1, 1, 2) clusters, and the reduction through global memory), without and with
  # B multicast over the M pair, and with our kernel's MMAs (without and with its split-K
  # epilogue); caches flushed before each, clocks left to the GPU.
  timeout 300 ncu --clock-control none --cache-control all \
    --section MemoryWorkloadAnalysis --section SpeedOfLight \
    --metrics lts__t_sectors_op_read.sum,lts__t_bytes.sum,l1tex__m_xbar2l1tex_read_bytes.sum,dram__bytes_read.sum \
    --kernel-name regex:stream_kernel --csv --page raw --print-units base --log-file "$R/ncu_512x512x12288.csv" \
    "$BIN" 512 512 12288 --ncu \
    --only plain_64x64_bk64_s12_sk2,mcastB_64x64_bk64_s12_sk2,mma_w1_64x64_bk64_s12_sk2,mma_w1_epi_64x64_bk64_s12_sk2,plain_cz_64x64_bk64_s12_sk2,mma_w1_cz_64x64_bk64_s12_sk2,mma_w1_serial_64x64_bk64_s12_sk2 \
    >"$R/ncu_stdout.csv" 2>"$R/ncu.err"
  echo "ncu: exit $? at $SECONDS s"
fi
