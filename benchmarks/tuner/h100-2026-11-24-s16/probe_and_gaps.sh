# Sourced by session 16's calls 1 and 2, from the repository root on the GPU machine: installs the
# carried wheel (run_device.sh), unpacks the carried probe binary, runs the TMA probe with ncu
# (tma_stream/run.sh) and gap_probe.py into $OUT, and leaves the environment for the steps after.
export OUT=${OUT:-/tmp/out}
bash benchmarks/harness/v3/run_device.sh >/dev/null 2>&1; echo "install: exit $?"
# The probe binary travels xz-compressed and stripped (the carry limit).
[ -f .carry/tma_stream.xz ] && xz -dc .carry/tma_stream.xz >benchmarks/tuner/tma_stream/tma_stream && chmod +x benchmarks/tuner/tma_stream/tma_stream
s=$SECONDS; RUN_NCU=1 bash benchmarks/tuner/tma_stream/run.sh; echo "probe: $((SECONDS - s)) s"
export PYTHONPATH=/tmp/site:benchmarks/harness/v3 PYTHONUNBUFFERED=1
export CUDA_L2_EXPLORER_BUILD_CACHE=/tmp/l2x-build CUDA_L2_EXPLORER_NATIVE_CACHE=/tmp/l2x-native
s=$SECONDS; timeout 240 python3 benchmarks/harness/v3/gap_probe.py "$OUT/gap_probe.json" >"$OUT/gap_probe.log" 2>&1
echo "gap_probe: exit $? in $((SECONDS - s)) s"
