#!/usr/bin/env bash
# Planned in session 36 for a session lent an H100 (issue 15; superseded by session 37's call1.sh,
# which ran it with the wgmma family's picks too; the manifest filter is select_picks.py now): the
# H200 set's picks of our tiny family (tensor-, register- and bulk-fed kernels, 1.13x the best baseline on the H200
# at their 167 configs; 125 of them differ from the H100 set's picks, which predate those kernels)
# A/B'd on the H100 against the H100 set's picks, old/new/old/new (ab_picks.sh reads a manifest as
# a search's picks). Then here: bash benchmarks/tuner/merge_picks.sh OUT/h200_tiny_picks.json
# OUT/ab/picks.duckdb.xz kernels/h100_F32F16F16F32/manifest.json, the H100 grid (two calls, as the
# H200's) and bundle_grid.sh ... h100 de536734... (the H100 set's bundled run); the H100 set's
# model-shape exports (tests/gpu/test_lookup_export_device.py -k h100) for the "done when".
# Carried: .whl, .carry (tunerlib = HEAD's library: device_carry.sh lib).
set -u
mkdir -p /tmp/setup && OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # the wheel, the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
python3 benchmarks/tuner/h100-2026-12-07-s37/select_picks.py kernels/h200_F32F16F16F32/manifest.json \
  kernels/h100_F32F16F16F32/manifest.json sm90_mma_tiny >"$OUT/h200_tiny_picks.json"
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
CURRENT_MANIFEST=kernels/h100_F32F16F16F32/manifest.json bash benchmarks/tuner/ab_picks.sh \
  "$OUT/h200_tiny_picks.json" "$(ls -t /tmp/tb/lib/*.so | head -1)" "$OUT/ab" 400
python3 benchmarks/tuner/h100-2026-11-24-s12/picks_ab.py "$OUT/ab/picks.duckdb" >"$OUT/ab.txt" 2>&1
tail -1 "$OUT/ab.txt"
xz -T8 "$OUT/ab/picks.duckdb" && rm -rf "$OUT/ab/picks"
