#!/usr/bin/env bash
# Session 10, device call 8: our families with the 32-bit split range (split_k_range: no 64-bit
# division before the first load): their GPU tests, then the 392 tiny configs with the same picks
# as grid cec6e3f4 (the bundled one), a run of their own (an A/B of the code change, not bundled).
set -u
D=benchmarks/tuner/h100-2026-11-24-s10-tiny
mkdir -p "$OUT/g"
OUT=$OUT/g TESTS=tuner_own GRID="--mnk $(tr -d ' \n' <$D/configs.txt)" BUDGET=${BUDGET:-330} \
  bash benchmarks/harness/v3/run_device.sh tests grid
tar czf "$OUT/call8.tar.gz" -C "$OUT" g && rm -rf "$OUT/g"
