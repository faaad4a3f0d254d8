#!/usr/bin/env bash
# Session 14, device call 1: the wgmma split-K family with A multicast (libraries built on the CPU
# machine: .carry/s14/wglib = `tuner.build --catalog wgmma`, .carry/s14/tinylib = `--catalog tiny`).
# 1. tests/gpu/test_tuner_own.py on both libraries (the shared split-K header changed);
# 2. the search of call1_configs.txt (deep-K configs whose pick is a wgsk kernel) over the wgmma
#    library only, search only (tune --no-measure);
# 3. the configs whose pick changed, benched old, new, old, new in one store (every old pick is a
#    wgsk kernel without multicast, also in the wgmma library) against torch.matmul and cuBLASLt.
set -u
D=benchmarks/tuner/h100-2026-11-24-s14
S13=benchmarks/tuner/h100-2026-11-24-s13
mkdir -p "$OUT/p" "$OUT/ab" /tmp/tb
cp -r .carry/s14/wglib /tmp/tb/lib
OUT=$OUT/p TESTS="tuner_own" TEST_TIMEOUT=150 bash benchmarks/harness/v3/run_device.sh tests
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
tiny=$(ls .carry/s14/tinylib/*.so)
CUDA_L2_EXPLORER_TUNER_LIB=$tiny timeout 150 python3 -m pytest -q -rfE -p no:cacheprovider tests/gpu/test_tuner_own.py \
  >"$OUT/p/gpu_tests_tiny.txt" 2>&1
echo "tests tiny: exit $? at $SECONDS s: $(tail -1 "$OUT/p/gpu_tests_tiny.txt")" | tee -a "$OUT/p/device_tests.txt"
mv "$OUT/p/stores.tar.gz" "$OUT/p/stores_tests.tar.gz" 2>/dev/null
OUT=$OUT/p TUNE_FILE=$D/call1_configs.txt TUNE_ARGS="--no-measure" TUNE_LIMIT=${TUNE_LIMIT:-240} \
  bash benchmarks/harness/v3/run_device.sh retune
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
mkdir -p /tmp/s14 && tar xzf "$OUT/p/stores.tar.gz" -C /tmp/s14
PICKS=$(python3 $S13/make_picks.py /tmp/s14/tune.duckdb kernels/h100_F32F16F16F32/manifest.json "$OUT/ab/picks")
echo "changed picks: $(echo "$PICKS" | tr ',' '\n' | grep -c _)"
each=$(( (560 - SECONDS) / 4 ))
for which in oldpicks newpicks oldpicks newpicks; do
  [ $each -lt 15 ] && break
  python3 -m cuda_l2_explorer --no-bundled bench --db "$OUT/ab/picks.duckdb" --library "$lib" --progress none --json \
    --set "$OUT/ab/picks/$which/h100_F32F16F16F32" --set-name $which --mnk "$PICKS" --time-budget $each \
    --baselines torch.matmul,cuBLASLt-heuristic-nn,cuBLASLt-heuristic-tn >>"$OUT/ab/picks.json" 2>>"$OUT/ab/picks.log"
  echo "$which: exit $? at $SECONDS s" | tee -a "$OUT/ab/device.txt"
done
tar czf "$OUT/p.tar.gz" -C "$OUT" p && rm -rf "$OUT/p"
tar czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
