#!/usr/bin/env bash
# The files a device call carries, made again from scratch (a new session's checkout has none of
# them: .whl, .carry and .whl-cluster are ignored): the project's slim wheel and platformdirs in
# .whl, duckdb unpacked and xz-compressed in .carry/duckdb-site.tar.xz, CUTLASS 4.2.0's headers in
# .carry/cutlass-4.2.0.tar.gz (every CUTLASS or CuTe kernel set needs them: without them a call
# once stored 115 reference configs as compile errors), and with `cluster` the Dask wheels in
# .whl-cluster. A library built here (`python -m cuda_l2_explorer.tuner.build --out /tmp/tb`)
# goes in with `lib`: .carry/tunerlib.tar.gz holds its newest .so. Run from anywhere, after
# `python3 -m venv .venv && pip install '.[test]'` and the README's CUTLASS install.
#   bash benchmarks/device_carry.sh [lib] [cluster]
# Then, for each call: bash benchmarks/device_trim.sh out; run(carry=[".whl", ".carry", ...]);
# bash benchmarks/device_trim.sh back.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || printf '/.whl/\n/.carry/\n/.whl-cluster/\n' >>.git/info/exclude
PY=.venv/bin/python
mkdir -p .whl .carry
platform=(--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64
  --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
  --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64)
version() { "$PY" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$1"; }
bash benchmarks/harness/v3/slim_wheel.sh >/dev/null
"$PY" -m pip download -q --no-deps "${platform[@]}" -d .whl "platformdirs==$(version platformdirs)"
if [ ! -f .carry/duckdb-site.tar.xz ]; then
  tmp=$(mktemp -d)
  "$PY" -m pip download -q --no-deps "${platform[@]}" -d "$tmp" "duckdb==$(version duckdb)"
  (cd "$tmp" && mkdir site && cd site && unzip -q ../duckdb-*.whl && tar cf - . | xz -9e -T2 >"$root/.carry/duckdb-site.tar.xz")
  rm -rf "$tmp"
fi
if [ ! -f .carry/cutlass-4.2.0.tar.gz ]; then
  src=$("$PY" -c "import cutlass_library, pathlib; print(pathlib.Path(cutlass_library.__file__).parent / 'source')")
  tar czf .carry/cutlass-4.2.0.tar.gz -C "$src" include tools/util/include
fi
for what in "$@"; do
  case "$what" in
  lib)
    so=$(ls -t /tmp/tb/lib/*.so | head -1)
    tmp=$(mktemp -d) && mkdir "$tmp/lib" && cp "$so" "$tmp/lib/"
    [ -f "${so%.so}.json" ] && cp "${so%.so}.json" "$tmp/lib/"
    tar czf .carry/tunerlib.tar.gz -C "$tmp" lib && rm -rf "$tmp"
    echo "library: $(basename "$so")"
    ;;
  cluster)
    mkdir -p .whl-cluster
    for name in distributed dask tblib zict partd locket tornado; do
      "$PY" -m pip download -q --no-deps "${platform[@]}" -d .whl-cluster "$name==$(version "$name")"
    done
    ;;
  *) echo "unknown: $what (lib, cluster)" >&2; exit 2 ;;
  esac
done
du -sh .whl .carry ${1:+.whl-cluster} 2>/dev/null || true
