#!/usr/bin/env bash
# A device call's checks of a tuner library against the one before it, on the GPU machine from the
# repository root (session 32's calls 2 and 4):
#   bash benchmarks/tuner/lib_checks.sh KERNEL_NAMES CHECKS_TAR
# installs the wheel and unpacks the carried library (run_device.sh), runs tests/gpu/test_tuner_own.py
# on the newest library in /tmp/tb/lib, then tiny_floor/bulk_bisect.cu on session 31's
# bisect_configs.txt (or $BISECT_CONFIGS) with KERNEL_NAMES (comma-separated) of that library ("new") and of
# .carry/oldlib.tar.gz's ("old"), side by side. Work files in /tmp/checks (gpu.csv, device.txt,
# gpu_tests.log, bisect_{new,old}.csv, bisect.log, build.log) go back as one tar, CHECKS_TAR.
set -u
names=$1 checks_tar=$2
bisect_configs=${BISECT_CONFIGS:-benchmarks/tuner/h200-2026-11-29-s31/bisect_configs.txt}  # lines "M N K"
mkdir -p /tmp/checks /tmp/setup /tmp/old
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >/tmp/checks/gpu.csv
OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install, unpack the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
new=$(ls -t /tmp/tb/lib/*.so | head -1)
tar xzf .carry/oldlib.tar.gz -C /tmp/old
old=$(ls /tmp/old/lib/*.so | head -1)
echo "new $new old $old" | tee /tmp/checks/device.txt
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/bulk_bisect benchmarks/tuner/tiny_floor/bulk_bisect.cu -lcublas -ldl 2>/tmp/checks/build.log &
CUDA_L2_EXPLORER_TUNER_LIB=$new timeout 120 python3 -m pytest -q -rfE -p no:cacheprovider \
  tests/gpu/test_tuner_own.py >/tmp/checks/gpu_tests.log 2>&1
echo "gpu tests: exit $? $(tail -1 /tmp/checks/gpu_tests.log)" | tee -a /tmp/checks/device.txt
wait
for which in new old; do
  lib=$new && [ $which = old ] && lib=$old
  timeout 90 /tmp/bulk_bisect "$bisect_configs" "$lib" "$names" 5 \
    >/tmp/checks/bisect_$which.csv 2>>/tmp/checks/bisect.log
  echo "bisect $which: exit $?" | tee -a /tmp/checks/device.txt
done
(cd /tmp/checks && tar cf "$checks_tar" .)
