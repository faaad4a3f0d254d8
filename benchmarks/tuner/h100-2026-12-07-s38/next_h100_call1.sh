#!/usr/bin/env bash
# Planned in session 38 for the next call that gets an H100 (issue 15), ~560 s. The H100 set here
# is session 38's call 2 merges (131 CUTLASS picks: call2/merged_manifest.json; not committed into
# kernels/ until a bundled grid measures them, tests/test_kernel_set.py), copied in first, on the
# device and here alike: cp $S/call2/merged_manifest.json kernels/h100_F32F16F16F32/manifest.json
# 1. session 38's band picks (an H100 search of the band configs: band_picks_h100.json, 55 picks,
#    54 of them not the H100 set's) A/B'd old/new/old/new against the H100 set's picks (session 37's
#    call1.sh with PICKS); then here: bash benchmarks/tuner/merge_picks.sh OUT/band/h200_picks.json
#    OUT/band/ab/picks.duckdb.xz kernels/h100_F32F16F16F32/manifest.json (with session 38's 131
#    CUTLASS merges in it);
# 2. the large regime's bound on the H100: torch.matmul and our pick at 12288x12288x2048 under
#    Nsight Compute's full set (ncu_large_configs.txt), the tensor pipe's busy fraction (then here
#    h200-2026-11-28-s28/ncu_where_waits.py on OUT/ncu, as session 28 did on the H200);
# 3. the split stream rows with their cluster reduction (movement_floor.cu's streamr rows, session
#    38, first GPU run) on configs_h100.txt, beside the untiled rows; then here grid_bound.py with
#    call3/floor/floor.csv and OUT/floor/floor.csv (the reduced rows replace their unreduced twins:
#    the tiny regime's K >= 1024 bound);
# (and, before ncu, tests/gpu/test_tuner_own.py -k 64x32: the new tiles' first GPU run);
# then the whole H100 grid with both merges (session 37's call2.sh, BUDGET=500, then BUDGET=250
# carrying .carry/grid.duckdb.xz) and bundle_grid.sh GRID h100 eb8c0a6389df4160b619d7e1d03ae265
# OUT_DIR. Session 38's partial grid 638c483a (579 configs, before the band merges) stays evidence.
# Carried: .whl, .carry (device_carry.sh lib); device_trim.sh out first (the tree is over 64 MiB).
set -u
S=benchmarks/tuner/h100-2026-12-07-s38
top=$OUT
mkdir -p "$top/band" "$top/ncu" "$top/floor"
cp $S/call2/merged_manifest.json kernels/h100_F32F16F16F32/manifest.json
OUT=$top/band PICKS=$S/band_picks_h100.json AB_S=${AB_S:-200} bash benchmarks/tuner/h100-2026-12-07-s37/call1.sh
# The wgmma family's 64x32 tiles (library f9c2bc0f, session 38) on the GPU first: correctness.
PYTHONPATH=/tmp/site CUDA_L2_EXPLORER_TUNER_LIB=$(ls -t /tmp/tb/lib/*.so | head -1) timeout 90 \
  python3 -m pytest -q -rfE -p no:cacheprovider tests/gpu/test_tuner_own.py -k 64x32 >"$top/gpu_tests_64x32.log" 2>&1
echo "64x32 gpu tests: exit $? $(tail -1 "$top/gpu_tests_64x32.log")"
OUT=$top/ncu SET=kernels/h100_F32F16F16F32 NCU_FAMILY=$S/ncu_large_configs.txt NCU_SECTIONS='--set full' \
  NCU_REPORT=1 timeout $((450 - SECONDS)) bash benchmarks/harness/v3/run_device.sh ncu-family
OUT=$top/floor MOVEMENT_FLOOR_TILED=streamr_ bash benchmarks/tuner/movement_floor/run.sh $((570 - SECONDS)) \
  benchmarks/tuner/movement_floor/configs_h100.txt
# A call returns 8 files at most (16 MiB each): everything in one tar.
cd "$top" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
