"""Build an imported set's kernels on the CPU machine for the GPU machine's bench (issue 17).

The build cache's keys name versions, not folders (importer/harness/build.py), so modules built
here against the GPU machine's versions (Python 3.12, torch 2.11.0+cu130, nvcc 13.0, CUTLASS
4.2.0) are cache hits there: carried as one archive, unpacked into its build cache, the device
call only measures. Run it with a Python 3.12 whose site-packages holds that torch wheel (its
headers and libraries; torch is never imported, so its CUDA dependencies need not be there),
``nvidia-cublas`` and ``nvidia-cusparse`` (CUDA 13.0's: its header only, which
``ATen/cuda/CUDAContext.h`` includes; without it such files fail here and are built on the GPU
machine). Four reference kernels (two units of two) made a 115 KB archive here
(``benchmarks/refset/cpu-2026-11-27/prebuild.txt``).

    python3.12 -m venv /tmp/t312 && /tmp/t312/bin/pip install --no-deps torch==2.11.0 \
        'nvidia-cublas>=13.0,<13.2' 'nvidia-cusparse==12.6.3.3' 'nvidia-cutlass==4.2.0.0' . duckdb
    /tmp/t312/bin/python benchmarks/refset/prebuild.py --set SNAPSHOT/kernels/h100_F32F16F16F32 \
        --configs benchmarks/refset/configs.txt --skip-measured STORE --count 64 --jobs 2 \
        --out .carry/refset-builds.tar.xz

The archive holds the cache entries (hard links kept: a unit's module once); `run_device.sh
refset` unpacks it into the build cache when it is there.
"""

from __future__ import annotations

import argparse
import re
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from cuda_l2_explorer.db.shapes import parse_mnk
from cuda_l2_explorer.importer.harness import build as kb
from cuda_l2_explorer.importer.harness.build_units import DEFAULT_PER_UNIT
from cuda_l2_explorer.importer.kernelset import scan_set


def torch_info_without_import(site: Path) -> kb.TorchBuildInfo:
    """What ``kb.torch_build_info()`` says of the torch in ``site``, read from its files: its
    version as torch prints it, the C++11 ABI its wheels have used since 2.7, this interpreter's
    include folder and ABI tag (run this with the GPU machine's Python version)."""
    torch_dir = site / "torch"
    text = (torch_dir / "version.py").read_text()
    version = re.search(r"__version__ = '([^']+)'", text)
    cuda = re.search(r"cuda: Optional\[str\] = '([^']+)'", text)
    if version is None:
        raise SystemExit(f"no torch version in {torch_dir / 'version.py'}")
    include = torch_dir / "include"
    import sysconfig

    return kb.TorchBuildInfo(
        version=f"{version.group(1)} (CUDA {cuda.group(1) if cuda else None})",
        include_dirs=(str(include), str(include / "torch" / "csrc" / "api" / "include")),
        library_dirs=(str(torch_dir / "lib"),),
        cxx11_abi=1,
        python_include=sysconfig.get_paths()["include"],
        python_tag=str(sysconfig.get_config_var("SOABI")),
    )


def measured_configs(store: Path) -> set[str]:
    """Configs a bench store already holds a result for (they need no build)."""
    import duckdb

    con = duckdb.connect(str(store), read_only=True)
    return {f"{m}_{n}_{k}" for m, n, k in con.execute("SELECT DISTINCT m, n, k FROM run_configs").fetchall()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", required=True, help="a SPEC section 4 set folder")
    ap.add_argument(
        "--configs", required=True, help="configs in order (whitespace-separated M_N_K; # comments)"
    )
    ap.add_argument("--skip-measured", metavar="STORE", help="leave out the configs this store has measured")
    ap.add_argument("--count", type=int, default=64, help="build the first N configs left (default 64)")
    ap.add_argument("--site", default=None, help="site-packages holding torch (default: this Python's)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--per-unit", type=int, default=DEFAULT_PER_UNIT)
    ap.add_argument("--out", required=True, help="the archive to write (.tar.xz)")
    args = ap.parse_args()

    import sysconfig

    site = Path(args.site or sysconfig.get_paths()["purelib"])
    config = kb.make_config("h100", torch_info=torch_info_without_import(site))
    scan = scan_set(args.set)
    by_shape = scan.by_shape()
    done = measured_configs(Path(args.skip_measured)) if args.skip_measured else set()
    words = [
        w
        for line in Path(args.configs).read_text().splitlines()
        if not line.startswith("#")
        for w in line.split()
    ]
    shapes = [parse_mnk(w) for w in words if w not in done]
    files = [by_shape[s] for s in shapes if s in by_shape][: args.count]
    with tempfile.TemporaryDirectory(prefix="prebuild-") as cache:
        start = time.monotonic()
        results = kb.build_all(
            files,
            jobs=args.jobs,
            config=config,
            cache_dir=cache,
            per_unit=args.per_unit,
            progress=lambda n, total: print(f"built {n}/{total}", file=sys.stderr, flush=True),
        )
        ok = [f for f in files if results[f.path].ok]
        print(f"{len(ok)} of {len(files)} built in {time.monotonic() - start:.0f} s ({args.jobs} jobs)")
        for f in files:
            if not results[f.path].ok:
                print(f"failed {f.path.name}: {results[f.path].reason}")
        with tarfile.open(args.out, "w:xz") as tar:
            for entry in sorted(Path(cache).iterdir()):
                if not entry.name.startswith("."):
                    tar.add(entry, arcname=entry.name)
        print(
            f"wrote {args.out}: {Path(args.out).stat().st_size} bytes; "
            f"configs {','.join(str(f.shape) for f in ok)}"
        )


if __name__ == "__main__":
    main()
