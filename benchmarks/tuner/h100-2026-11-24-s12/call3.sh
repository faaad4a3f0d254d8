#!/usr/bin/env bash
# Session 12, device call 3 (library fc9d1115, .carry/tunerlib-fc9d1115.tar.gz):
# (1) GPU tests: tests/gpu/test_tuner_kernels.py (the family check fixed) and the new
#     test_a_raised_rotation_cap_spans_twice_the_l2_at_64_cubed of tests/gpu/test_harness.py;
# (2) the re-search's picks confirmed: the 27 configs where call 2's search measured its choice
#     >2% faster than the current pick, both pick sets benched,
#     old, new, old, new (against torch.matmul and cuBLASLt heuristic: the grid has the rest), into picks.duckdb;
# (3) the rotation-cap A/B (issue 14): 18 tiny configs, our set + the seven baselines, with the
#     default 64-set cap and with --rotation-cap 8192 (their sets span 2x the L2), into rot.duckdb.
set -u
D=benchmarks/tuner/h100-2026-11-24-s12
R=benchmarks/harness/v3/run_device.sh
mkdir -p /tmp/tb && tar xzf .carry/tunerlib-fc9d1115.tar.gz -C /tmp/tb
lib=/tmp/tb/lib/libl2x_tuner-fc9d11150d4bb33229ee.so
OUT=$OUT/t TESTS=tuner_kernels bash $R tests
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_L2_EXPLORER_BUILD_CACHE=/tmp/l2x-build
timeout 120 python3 -m pytest -q -rfE -p no:cacheprovider tests/gpu/test_harness.py -k rotation_cap >>"$OUT/t/gpu_tests.txt" 2>&1
echo "tests harness -k rotation_cap: exit $? at $SECONDS s: $(tail -1 "$OUT/t/gpu_tests.txt")" | tee -a "$OUT/t/device.txt"
mkdir -p "$OUT/ab"
bench() {  # name, then bench arguments
  local name=$1; shift
  python3 -m cuda_l2_explorer --no-bundled bench --library "$lib" --progress none --json "$@" \
    >>"$OUT/ab/$name.json" 2>>"$OUT/ab/$name.log"
  echo "$name: exit $? at $SECONDS s: $(tail -c 300 "$OUT/ab/$name.json" | tr -d '\n ')" | tee -a "$OUT/ab/device.txt"
}
PICKS=$(python3 -c 'import json,sys; print(",".join("%d_%d_%d" % (c["m"], c["n"], c["k"]) for c in json.load(open(sys.argv[1]))["configs"]))' $D/picks/newpicks/h100_F32F16F16F32/manifest.json)
for which in oldpicks newpicks oldpicks newpicks; do
  bench picks --db "$OUT/ab/picks.duckdb" --set $D/picks/$which/h100_F32F16F16F32 --set-name $which --mnk "$PICKS" --time-budget 100 \
    --baselines torch.matmul,cuBLASLt-heuristic-nn,cuBLASLt-heuristic-tn
done
TINY=$(cat $D/tiny_ab_configs.txt)
bench rot --db "$OUT/ab/rot.duckdb" --set kernels/h100_F32F16F16F32 --mnk "$TINY" --rotation-cap 64
bench rot --db "$OUT/ab/rot.duckdb" --set kernels/h100_F32F16F16F32 --mnk "$TINY" --rotation-cap 8192 --time-budget $(( 560 - SECONDS ))
tar czf "$OUT/t.tar.gz" -C "$OUT" t && rm -rf "$OUT/t"
tar czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
