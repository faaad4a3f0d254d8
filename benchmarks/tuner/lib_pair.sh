# Sourced by a device call that sets two builds of the library side by side (lib_ab.sh's old and
# new), on the GPU machine from the repository root, with $top the call's output folder:
#   . benchmarks/tuner/lib_pair.sh && lib_pair NAME
# Writes NAME on GPU, then the GPUs' figures, to $top (device.txt, gpu.csv); installs the carried
# wheel and library (run_device.sh: the new one, .carry/tunerlib.tar.gz); unpacks the old one from
# .carry/oldlib.tar.gz; sets $new and $old to their .so and $PYTHONPATH to the wheel's. Fails when
# the two are one library (an A/B of a build against itself).
lib_pair() {
  local gpu
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  echo "$1 on: $gpu" | tee "$top/device.txt"
  nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
  mkdir -p /tmp/setup /tmp/old && OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null
  export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
  new=$(ls -t /tmp/tb/lib/*.so | head -1)
  tar xzf .carry/oldlib.tar.gz -C /tmp/old && old=$(ls /tmp/old/lib/*.so | head -1)
  echo "new $new old $old" | tee -a "$top/device.txt"
  [ "$(basename "$old")" != "$(basename "$new")" ] || { echo "old and new are one library" | tee -a "$top/device.txt"; return 1; }
}
