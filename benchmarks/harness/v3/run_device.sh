#!/usr/bin/env bash
# One device call of the harness-3 validation, from the repository root on the GPU machine:
#   bash benchmarks/harness/v3/run_device.sh [build] [tests] [probe] [validate] [ncu] [ncu-family] [grid] [server] [retune] [refset] [oldgrid] [savelib]
# build: our kernel library (tuner), 16 parallel nvcc jobs, into /tmp/tb (kept for later steps);
# tests: tests/gpu; validate: our set (kernels/h100_F32F16F16F32) on benchmarks/harness/v3/configs.txt
# with harness 3 (graph replay), the same configs timed harness 2's way (--timing eager), and
# the A/A set (a SPEC §4 kernel that calls torch.matmul) under harness 3; ncu: torch.matmul and
# our picks under Nsight Compute (ncu_driver.py), then the table (table.py); probe: isolated calls
# and clocks (isolated_probe.py).
# Carried: .whl (duckdb, platformdirs and the project's own wheel: `pip wheel --no-deps -w .whl .`),
# .carry (cutlass-4.2.0.tar.gz: the CUTLASS headers, to build the library there).
set -uo pipefail
OUT=${OUT:-/tmp/v3-out}
V3=benchmarks/harness/v3
mkdir -p "$OUT"
# Carry limit (64 MiB): beside a grid store, carry the project's wheel without db/bundled/*.parquet
# (benchmarks/harness/v3/slim_wheel.sh makes it): every step here runs with --no-bundled.
# Installed once a machine, whatever number of calls start at once (one per GPU: every step below
# imports from /tmp/site while another would be reinstalling it): under a lock, and skipped when
# the same carried files were installed already.
install_carried() {
  python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl || return 1
  # duckdb may come as its wheel unpacked and xz-compressed (15.7 MB against the wheel's 24.4: room
  # for a carried store): `mkdir w && cd w && unzip ../duckdb-*.whl && tar cf - . | xz -9e >
  # .carry/duckdb-site.tar.xz`, with the wheel left out of .whl.
  if [ -f .carry/duckdb-site.tar.xz ]; then
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' .carry/duckdb-site.tar.xz /tmp/site || return 1
  fi
  # Dask's wheels (benchmarks/device_carry.sh cluster) for GRID_GPUS=all: one worker a GPU.
  if [ -d .whl-cluster ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site-cluster .whl-cluster/*.whl || return 1
  fi
}
carried_sum=$(cat .whl/*.whl .carry/duckdb-site.tar.xz .whl-cluster/*.whl 2>/dev/null | md5sum | cut -c1-16)
exec 9>/tmp/l2x-install.lock && flock 9
if [ ! -f "/tmp/l2x-installed-$carried_sum" ]; then
  install_carried || exit 1
  touch "/tmp/l2x-installed-$carried_sum"
fi
flock -u 9
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
[ -d /tmp/site-cluster ] && export PYTHONPATH=/tmp/site:/tmp/site-cluster
export CUDA_L2_EXPLORER_BUILD_CACHE=/tmp/l2x-build CUDA_L2_EXPLORER_NATIVE_CACHE=/tmp/l2x-native
if [ -f .carry/cutlass-4.2.0.tar.gz ]; then  # only a build needs the headers
  mkdir -p /tmp/cutlass && tar -xzf .carry/cutlass-4.2.0.tar.gz -C /tmp/cutlass && export CUTLASS_DIR=/tmp/cutlass
fi
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
  nvcc --version | tail -1
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
  ncu --version | tail -1
} >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
# CLOCK_LOG=1: the SM clock, power and throttle reasons every 200 ms for the whole call (clocks.csv),
# beside the SM clock each config's timing ends at (run_configs.details): which power state a
# figure was taken in.
if [ -n "${CLOCK_LOG:-}" ]; then
  query=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active
  nvidia-smi --query-gpu=$query --format=csv >/dev/null 2>&1 || query=${query%,*}  # older field names
  nvidia-smi --query-gpu=$query --format=csv,nounits -lms 200 >"$OUT/clocks.csv" 2>&1 &
  CLOCK_PID=$!
fi
lib() { ls -t /tmp/tb/lib/*.so 2>/dev/null | head -1; }
# A library built by an earlier call and carried back (savelib) saves the ~2-minute build.
[ -z "$(lib)" ] && [ -f .carry/tunerlib.tar.gz ] && mkdir -p /tmp/tb && tar xzf .carry/tunerlib.tar.gz -C /tmp/tb
ensure_lib() {  # a warm machine keeps /tmp/tb from the previous call; a fresh one builds it
  [ -n "$(lib)" ] && return
  local start=$(date +%s)
  python3 -m cuda_l2_explorer.tuner.build --jobs 16 --per-tu 1 --out /tmp/tb >"$OUT/tuner_build.log" 2>&1
  echo "build: exit $? in $(( $(date +%s) - start )) s, library $(lib)" | tee -a "$OUT/device.txt"
  tail -3 "$OUT/tuner_build.log"
}
# A store carried as .carry/NAME.duckdb.xz (smaller: the carry limit) or .gz becomes $OUT/NAME.duckdb,
# unless a step of this call made it already; false when there is none.
carried_store() {
  [ -f "$OUT/$1.duckdb" ] && return 1
  if [ -f ".carry/$1.duckdb.xz" ]; then python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
    ".carry/$1.duckdb.xz" "$OUT/$1.duckdb"
  elif [ -f ".carry/$1.duckdb.gz" ]; then gunzip -c ".carry/$1.duckdb.gz" >"$OUT/$1.duckdb"
  else return 1; fi
}
MNK=$(grep -v '^#' $V3/configs.txt | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
SET=${SET:-kernels/h100_F32F16F16F32}  # another of our sets: SET=kernels/h200_F32F16F16F32

while [ $# -gt 0 ]; do
  start=$(date +%s)
  case "$1" in
  build)
    ensure_lib
    ;;
  tests)
    case " ${TESTS:-tuner} " in *tuner*) ensure_lib ;; esac
    # File by file, most relevant first, so a slow file cannot hide the others' results.
    for f in harness native_baselines faults tuner_own tuner_kernels tuner_search kernel_build export_device lookup_export_device; do
      [ -n "${TESTS:-}" ] && ! echo " $TESTS " | grep -q " $f " && continue
      # TEST_ARGS: more pytest arguments, word-split (e.g. "-k h200")
      # shellcheck disable=SC2086
      CUDA_L2_EXPLORER_TUNER_LIB=$(lib) timeout "${TEST_TIMEOUT:-360}" python3 -m pytest -q -rfE -p no:cacheprovider \
        ${TEST_ARGS:-} "tests/gpu/test_$f.py" >>"$OUT/gpu_tests.txt" 2>&1
      echo "tests $f: exit $? at $(( $(date +%s) - start )) s: $(tail -1 "$OUT/gpu_tests.txt")" | tee -a "$OUT/device.txt"
    done
    grep -E "^(FAILED|ERROR)" "$OUT/gpu_tests.txt" | head -20
    ;;
  validate)
    ensure_lib
    for timing in graph eager; do
      python3 -m cuda_l2_explorer --db "$OUT/$timing.duckdb" --no-bundled bench --set $SET --library "$(lib)" \
        --mnk "$MNK" --mode offline --timing $timing --json >"$OUT/$timing.json" 2>"$OUT/$timing.log"
      echo "bench $timing: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/device.txt"
      tail -2 "$OUT/$timing.log"
    done
    python3 benchmarks/make_evidence_set.py /tmp/sets $V3/configs.txt --aa >/dev/null
    python3 -m cuda_l2_explorer --db "$OUT/aa.duckdb" --no-bundled bench --set /tmp/sets/aa-torch/h100_F32F16F16F32 \
      --mnk "$MNK" --mode offline --baselines torch.matmul --json >"$OUT/aa.json" 2>"$OUT/aa.log"
    echo "bench aa: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/device.txt"
    tail -2 "$OUT/aa.log"
    ;;
  grid)
    # Throughput: our set + the seven baselines, offline, graph-timed, into grid.duckdb. GRID picks
    # the configs (default: the whole grid); BUDGET stops starting configs after that many
    # seconds; a store carried in .carry/grid.duckdb.xz (or .gz) is resumed (chunks of < 10 minutes);
    # GRID_GPUS=all shards the configs over every GPU of the machine (one worker a GPU).
    ensure_lib
    resume=""
    carried_store grid && resume="--resume"
    python3 -m cuda_l2_explorer --db "$OUT/grid.duckdb" --no-bundled bench --set $SET --library "$(lib)" \
      ${GRID:---grid} --mode offline $resume --time-budget "${BUDGET:-400}" ${GRID_GPUS:+--gpus $GRID_GPUS} --progress none --json \
      >"$OUT/grid.json" 2>"$OUT/grid.log"
    echo "bench grid: exit $? after $(( $(date +%s) - start )) s: $(tr -d '\n' <"$OUT/grid.json" | head -c 400)" \
      | tee -a "$OUT/device.txt"
    tail -2 "$OUT/grid.log"
    ;;
  server)
    # Server mode on SERVER configs (default a 20-config sample) into grid.duckdb: a store carried
    # in .carry/grid.duckdb.xz (or .gz) holds the offline run whose cuBLASLt auto-tuning choices it reuses.
    ensure_lib
    carried_store grid
    python3 -m cuda_l2_explorer --db "$OUT/grid.duckdb" --no-bundled bench --set $SET --library "$(lib)" \
      ${SERVER:---grid --sample 20 --seed 4} --mode server --progress none --json >"$OUT/server.json" 2>"$OUT/server.log"
    echo "bench server: exit $? after $(( $(date +%s) - start )) s: $(tr -d '\n ' <"$OUT/server.json" | head -c 300)" \
      | tee -a "$OUT/device.txt"
    tail -2 "$OUT/server.log"
    ;;
  retune)
    # Graph-timed search of TUNE's configs (tune --mnk), kept kernels measured against the seven
    # baselines, into tune.duckdb; the manifest it writes lands in $OUT/tuned.
    ensure_lib
    mkdir -p "$OUT/tuned"
    # TUNE_FILE (a file of comma-separated configs) for lists longer than a command line;
    # TUNE_LIMIT stops the search after that many seconds (the store keeps what was searched);
    # TUNE_ARGS adds tune options (--no-measure: the grid that follows is the confirming bench);
    # TUNE_LIB searches another library than the one built here (e.g. one family: build --catalog).
    [ -n "${TUNE_FILE:-}" ] && TUNE=$(tr -d ' \n' <"$TUNE_FILE")
    timeout "${TUNE_LIMIT:-560}" python3 -m cuda_l2_explorer --db "$OUT/tune.duckdb" --no-bundled tune --mnk "$TUNE" --library "${TUNE_LIB:-$(lib)}" \
      --manifest "$OUT/tuned/manifest.json" ${TUNE_ARGS:-} --progress none --json >"$OUT/tune.json" 2>"$OUT/tune.log"
    echo "tune: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/device.txt"
    tail -4 "$OUT/tune.log"
    ;;
  oldgrid)
    # The same bench with the harness of an older wheel (.whl-old/*.whl), for a side-by-side.
    ensure_lib
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-old .whl-old/*.whl .whl/duckdb*.whl .whl/platformdirs*.whl
    PYTHONPATH=/tmp/site-old python3 -m cuda_l2_explorer --db "$OUT/oldgrid.duckdb" --no-bundled bench --set $SET \
      --library "$(lib)" ${OLDGRID:---grid} --mode offline --progress none --json >"$OUT/oldgrid.json" 2>"$OUT/oldgrid.log"
    echo "bench oldgrid: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/device.txt"
    tail -2 "$OUT/oldgrid.log"
    ;;
  refset)
    # The reference system's H100 kernels (test input: .carry/refset-h100.tar.gz, a snapshot of
    # github.com/deepreinforce-ai/CUDA-L2's kernels/h100_F32F16F16F32, never committed here) on
    # REFSET's configs (default benchmarks/refset/configs.txt; REFSET_COUNT takes the first N),
    # built with REFSET_JOBS (16) nvcc jobs, REFSET_PER_UNIT (4) files to a translation unit (torch's
    # headers parsed once a unit: a kernel alone is ~130 s of one core, nearly all of it the headers),
    # a batch of jobs x per-unit configs at a time, harness 3 + audit, into refset.duckdb. A store carried in
    # .carry/refset.duckdb.gz is resumed; REFSET_BUDGET (else BUDGET) stops starting batches after that many seconds,
    # REFSET_LIMIT kills the bench after that many (the store keeps every finished config);
    # REFSET_TIMEOUT (30 s) gives up on one config (its 4096^3 kernel hung past 300 s on 2026-11-24;
    # 5 of the first 35 configs timed out, 60 s each at the old limit; the slowest that finished took 13 s).
    # Its kernels include CuTe: without .carry/cutlass-4.2.0.tar.gz bench now refuses to start (on
    # 2026-11-27 a call without it stored 115 configs as compile errors; REFSET_RETRY=compile_error
    # with the resumed store measures such configs again).
    mkdir -p /tmp/refset && tar xzf .carry/refset-h100.tar.gz -C /tmp/refset || exit 1
    # Kernels built on the CPU machine for this one (benchmarks/refset/prebuild.py): cache hits here
    # when the versions match (the bench log's "N from the cache" says how many were).
    if [ -f .carry/refset-builds.tar.xz ]; then
      mkdir -p "$CUDA_L2_EXPLORER_BUILD_CACHE" && tar xJf .carry/refset-builds.tar.xz -C "$CUDA_L2_EXPLORER_BUILD_CACHE"
      echo "refset: $(ls "$CUDA_L2_EXPLORER_BUILD_CACHE" | wc -l) prebuilt cache entries" | tee -a "$OUT/device.txt"
    fi
    resume=""
    if [ -f .carry/refset.duckdb.gz ] && [ ! -f "$OUT/refset.duckdb" ]; then
      gunzip -c .carry/refset.duckdb.gz >"$OUT/refset.duckdb" && resume="--resume"
    fi
    refs=$(grep -v '^#' "${REFSET:-benchmarks/refset/configs.txt}" | tr -s ' \n' '\n' | sed '/^$/d' | head -n "${REFSET_COUNT:-100000}" | paste -sd,)
    timeout "${REFSET_LIMIT:-500}" python3 -m cuda_l2_explorer --db "$OUT/refset.duckdb" --no-bundled bench --set /tmp/refset/kernels/h100_F32F16F16F32 \
      --set-name cuda-l2 --mnk "$refs" --mode offline --jobs "${REFSET_JOBS:-16}" --per-unit "${REFSET_PER_UNIT:-4}" $resume --time-budget "${REFSET_BUDGET:-${BUDGET:-400}}" \
      --timeout "${REFSET_TIMEOUT:-30}" ${REFSET_RETRY:+--retry "$REFSET_RETRY"} --progress jsonl --json \
      >"$OUT/refset.json" 2>"$OUT/refset.log"
    echo "bench refset: exit $? after $(( $(date +%s) - start )) s: $(tr -d '\n' <"$OUT/refset.json" | head -c 400)" \
      | tee -a "$OUT/device.txt"
    tail -2 "$OUT/refset.log"
    ;;
  savelib)
    # Bring the built library back (a later call carries it in .carry/lib and skips the build).
    ensure_lib
    tar czf "$OUT/tunerlib.tar.gz" -C /tmp/tb lib && ls -la "$OUT/tunerlib.tar.gz"
    ;;
  probe)
    python3 $V3/isolated_probe.py >"$OUT/probe.json" 2>"$OUT/probe.log"
    echo "probe: exit $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/device.txt"
    cat "$OUT/probe.json"
    ;;
  ncu)
    ensure_lib
    ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum --csv --print-units base \
      --log-file "$OUT/ncu.csv" python3 $V3/ncu_driver.py $V3/configs.txt $SET/manifest.json "$(lib)" \
      >"$OUT/order.json" 2>"$OUT/ncu.log"
    echo "ncu: exit $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/device.txt"
    tail -3 "$OUT/ncu.log"
    python3 $V3/table.py --h3 "$OUT/graph.duckdb" --h2 "$OUT/eager.duckdb" --aa "$OUT/aa.duckdb" \
      --ncu "$OUT/ncu.csv" --order "$OUT/order.json" --out "$OUT" 2>&1 | tail -40
    ;;
  ncu-family)
    # One representative shape per family (NCU_FAMILY, default benchmarks/tuner/ncu_family_configs.txt):
    # torch.matmul and our pick under Nsight Compute's speed-of-light, warp-state (stall reasons),
    # launch and memory sections, cold L2, the GPU's own clocks. NCU_MANIFEST names other picks
    # (e.g. a retune's $OUT/tuned/manifest.json).
    # NCU_SECTIONS replaces the sections (e.g. "--set full" for the source-level and pipe figures).
    # NCU_REPORT=1 also keeps the report and exports from it every raw metric (the warp-stall
    # reasons one by one) and the SASS with its per-instruction samples, xz-compressed.
    ensure_lib
    report=()
    [ -n "${NCU_REPORT:-}" ] && report=(--export "$OUT/ncu_family" --force-overwrite)
    # shellcheck disable=SC2086
    ncu --clock-control none --cache-control all \
      ${NCU_SECTIONS:---section SpeedOfLight --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis} \
      "${report[@]}" --csv --page details --print-units base \
      --log-file "$OUT/ncu_family.csv" python3 $V3/ncu_driver.py "${NCU_FAMILY:-benchmarks/tuner/ncu_family_configs.txt}" \
      "${NCU_MANIFEST:-$SET/manifest.json}" "$(lib)" >"$OUT/ncu_family_order.json" 2>"$OUT/ncu_family.log"
    echo "ncu-family: exit $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/device.txt"
    tail -3 "$OUT/ncu_family.log"
    if [ -f "$OUT/ncu_family.ncu-rep" ]; then
      ncu --import "$OUT/ncu_family.ncu-rep" --csv --page raw --print-units base 2>&1 | xz -T4 >"$OUT/ncu_raw.csv.xz"
      ncu --import "$OUT/ncu_family.ncu-rep" --csv --page source --print-source sass 2>&1 | xz -T4 >"$OUT/ncu_sass.csv.xz"
      echo "ncu exports: raw $(stat -c %s "$OUT/ncu_raw.csv.xz") B, sass $(stat -c %s "$OUT/ncu_sass.csv.xz") B" \
        | tee -a "$OUT/device.txt"
      xz -T4 "$OUT/ncu_family.ncu-rep"
    fi
    ;;
  esac
  shift
done
[ -n "${CLOCK_PID:-}" ] && kill "$CLOCK_PID"
# The device tool brings back at most 8 files: logs, JSON and CSV go into one tar, stores into another.
shopt -s nullglob
(cd "$OUT" && files=(*.log *.json *.csv) && [ ${#files[@]} -gt 0 ] && tar cf logs.tar -- "${files[@]}" && rm -f -- "${files[@]}")
(cd "$OUT" && files=(*.duckdb) && [ ${#files[@]} -gt 0 ] && tar czf stores.tar.gz -- "${files[@]}" && rm -f -- "${files[@]}")
ls -la "$OUT"
