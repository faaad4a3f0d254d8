#!/usr/bin/env bash
# Planned for the next session lent H100s, after next_h100_call1.sh's merge (issue 15; not run
# here): the H100 set's picks against their convert twins, pick for pick, same variant
# (convert_twins.py: the 531 picks whose kernel has a twin with the 118-kernel library),
# old/new/old/new on every GPU, a share each: ~0.5 s a config a bench, so ~330 s on four GPUs;
# on fewer, raise AB_S or run it in several calls. Then here, for each GPU N: bash benchmarks/tuner/merge_picks.sh CALL/twinsN.json
# CALL/gpuN/picks.duckdb.xz kernels/h100_F32F16F16F32/manifest.json; then the H100 set's grid
# (SET=kernels/h100_F32F16F16F32 GRID_GPUS=all CLOCK_LOG=1 BUDGET=560 bash
# benchmarks/harness/v3/run_device.sh grid, with .whl-cluster carried), fill_evidence.py, the
# re-bundle (--replace-kernels --drop-run de536734...) and readme_headline.py.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s27
bash benchmarks/tuner/on_every_gpu.sh "
  python3 $D/convert_twins.py kernels/h100_F32F16F16F32/manifest.json \$OUT/twins\$GPU.json \$GPU \$GPUS
  CURRENT_MANIFEST=kernels/h100_F32F16F16F32/manifest.json bash benchmarks/tuner/ab_picks.sh \
    \$OUT/twins\$GPU.json \$(ls -t /tmp/tb/lib/*.so | head -1) \$OUT/gpu\$GPU \${AB_S:-320}
  xz -T4 \$OUT/gpu\$GPU/picks.duckdb"
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
cd "$OUT" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
