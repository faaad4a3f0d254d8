"""What compiling an imported set's files a few to a translation unit saves (build_units.py).

Builds the same kernel files with ``build_all`` once per ``--per-unit`` value, each time into a
fresh cache, and reports the wall time, the compile seconds and which files built. Needs nvcc,
torch's headers (any torch wheel, a CPU one too: the modules are linked without torch's libraries,
so they are for timing only, never loaded) and CUTLASS 4.2 headers (the nvidia-cutlass wheel or
CUTLASS_DIR). The files are test input, e.g. the reference system's H100 set:

    python benchmarks/harness/unit_build_probe.py --set SET_DIR --configs benchmarks/refset/configs.txt \
        --count 8 --per-unit 1,4 --jobs 2 --out results.json
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from cuda_l2_explorer.db.shapes import parse_mnk
from cuda_l2_explorer.importer.harness import build as kb
from cuda_l2_explorer.importer.harness.build_units import shareable
from cuda_l2_explorer.importer.kernelset import scan_set


def _unit_of(result: kb.BuildResult) -> tuple[str, ...]:
    """The keys built in one translation unit with ``result``'s file (its own alone)."""
    meta = json.loads((result.module_path.parent / "build.json").read_text())
    return tuple(meta["unit"] or [result.key])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", required=True, help="a SPEC section 4 set folder")
    ap.add_argument("--configs", help="configs to take, in order (whitespace-separated M_N_K; # comments)")
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--per-unit", default="1,4", help="comma-separated values to compare")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--arch", default="h100")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    scan = scan_set(args.set)
    by_shape = scan.by_shape()
    if args.configs:
        words = [
            w
            for line in Path(args.configs).read_text().splitlines()
            if not line.startswith("#")
            for w in line.split()
        ]
        files = [by_shape[s] for s in map(parse_mnk, words) if s in by_shape][: args.count]
    else:
        files = scan.files[: args.count]
    config = kb.make_config(args.arch, cuda_link=("-lcudart",))
    config = replace(config, torch=replace(config.torch, libraries=()))  # timing only: never loaded
    runs = []
    for per_unit in (int(v) for v in args.per_unit.split(",")):
        with tempfile.TemporaryDirectory(prefix="unit-probe-") as cache:
            start = time.monotonic()
            results = kb.build_all(files, jobs=args.jobs, config=config, cache_dir=cache, per_unit=per_unit)
            wall = time.monotonic() - start
            units = {_unit_of(r) for r in results.values() if r.ok}  # read before the cache goes
        ok = sum(r.ok for r in results.values())
        runs.append(
            {
                "per_unit": per_unit,
                "wall_s": round(wall, 1),
                "built": ok,
                "units": len(units),
                "wall_s_per_file": round(wall / len(files), 1),
                "failures": {
                    str(f.path.name): results[f.path].reason for f in files if not results[f.path].ok
                },
            }
        )
        print(json.dumps(runs[-1]), flush=True)
    record = {
        "files": [f.path.name for f in files],
        "shareable": sum(shareable(f.path.read_text()) is not None for f in files),
        "jobs": args.jobs,
        "machine": platform.node(),
        "cpus": __import__("os").cpu_count(),
        "nvcc": config.nvcc_version,
        "torch": config.torch.version,
        "cutlass": None if config.cutlass is None else config.cutlass.version,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "runs": runs,
    }
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
