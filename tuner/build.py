"""Build a catalog of kernel configs into one C-ABI shared library (no torch), cached by content.

Each group of configs is one translation unit compiled to an object file, named by the hash of
(source, flags, nvcc version, CUTLASS version), in parallel. A TU that fails is retried one
config per TU (so one bad config costs only itself), and the failures are reported with nvcc's
message. A registry TU naming the configs that compiled is then generated, and everything is
linked with nvcc's static cudart into ``<out>/lib/libl2x_tuner-<key>.so`` with a JSON manifest
beside it (``<out>/lib/latest.json`` points at the newest). Only ``<out>/lib`` needs to travel
to a GPU machine: CUTLASS headers are needed only where we compile.

    python -m cuda_l2_explorer.tuner.build [--catalog full|first|tiny|wgmma|smoke] [--per-tu 4]
        [--jobs 2] [--out DIR] [--only NAME,...] [--timeline]

``--out`` defaults to ``$CUDA_L2_EXPLORER_TUNER_BUILD``, else ``.tuner-build`` in the working
directory (where tuner/native.py looks for the library).

``full`` (the default) is the CUTLASS first catalog plus our own families (tuner/tiny.py,
tuner/wgmma.py); each family gets its own TUs, so adding one leaves the other's objects (and cache
keys) as they were. Tiny TUs include no CUTLASS header: ``--catalog tiny`` builds without CUTLASS.

CUTLASS headers: ``$CUTLASS_DIR`` (a CUTLASS checkout: ``include/`` and ``tools/util/include``),
else the ``nvidia-cutlass`` wheel's ``cutlass_library/source`` (``pip install
nvidia-cutlass==<cutlass/VERSION> --no-deps``).

``--only`` builds the named configs of the catalog. ``--timeline`` builds the tiny or the wgmma
family's kernels (one family) with their step stamps on (L2X_TIMELINE in tuner/csrc/timeline.cuh)
in one TU, a library apart that ``latest.json`` does not point at
(benchmarks/tuner/tiny_floor/timeline.py reads its stamps).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from cuda_l2_explorer.importer.cluster import ClusterError, client_for, map_unordered
from cuda_l2_explorer.importer.harness.build import CutlassInfo, ToolchainError, worker_toolchain
from cuda_l2_explorer.importer.harness.build import find_cutlass as _find_cutlass
from cuda_l2_explorer.importer.harness.toolchain import find_nvcc, nvcc_version
from cuda_l2_explorer.tuner import catalog as cat
from cuda_l2_explorer.tuner import tiny, wgmma
from cuda_l2_explorer.tuner.abi import ABI_VERSION
from cuda_l2_explorer.tuner.emit import group, render_registry
from cuda_l2_explorer.tuner.families import AnyConfig, family_of, full_catalog, pinned_cutlass, render_tu
from cuda_l2_explorer.tuner.native import default_build_dir

LIB_STEM = "libl2x_tuner"
TIMELINE_DEFINE = "L2X_TIMELINE"  # our families' step stamps (tuner/csrc/timeline.cuh)
TIMELINE_FAMILIES = (tiny.TINY_FAMILY, wgmma.WGMMA_FAMILY)  # the kernels that stamp their steps

GENCODE: tuple[str, ...] = ("-gencode=arch=compute_90a,code=sm_90a",)
COMPILE_FLAGS: tuple[str, ...] = (
    "-O3",
    "-std=c++17",
    "-DNDEBUG",  # SPEC section 4: without it CUTLASS may serialise wgmma
    "--expt-relaxed-constexpr",
    "-Xcompiler",
    "-fPIC",
    "-Xcompiler",
    "-fvisibility=hidden",
)
LINK_FLAGS: tuple[str, ...] = ("-shared", "-cudart", "static", "-Xlinker", "--exclude-libs,ALL")


class BuildError(RuntimeError):
    pass


# ---------------------------------------------------------------------------- toolchain


def find_cutlass() -> CutlassInfo | None:
    """CUTLASS headers as importer.harness.build finds them ($CUTLASS_DIR, the package's cutlass/, the
    nvidia-cutlass wheel), when they include tools/util, which the SM90 builders need."""
    found = _find_cutlass()
    return found if found is not None and len(found.include_dirs) == 2 else None


# ---------------------------------------------------------------------------- compile / link


@dataclass
class UnitResult:
    names: list[str]
    key: str
    obj: Path | None
    seconds: float
    cached: bool
    error: str = ""


@dataclass
class BuildResult:
    library: Path | None
    compiled: list[str]
    failed: dict[str, str]
    units: list[UnitResult] = field(default_factory=list)
    seconds: float = 0.0


def unit_key(source: str, nvcc_ver: str, cutlass_ver: str) -> str:
    payload = {
        "source": hashlib.sha256(source.encode()).hexdigest(),
        "flags": [*COMPILE_FLAGS, *GENCODE],
        "nvcc": nvcc_ver,
        "cutlass": cutlass_ver,
        "abi": ABI_VERSION,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:20]


# What a TU without CUTLASS headers (the tiny family) records in its cache key instead of a version.
NO_CUTLASS = "none"


def needs_cutlass(configs: Sequence[AnyConfig]) -> bool:
    return any(family_of(c).needs_cutlass for c in configs)


@dataclass(frozen=True)
class Unit:
    """One TU to compile (a cluster task gets only its source, key and toolchain versions)."""

    names: list[str]
    key: str
    source: str
    cutlass: CutlassInfo | None  # only for TUs that include CUTLASS headers


def plan_unit(
    configs: Sequence[AnyConfig], nvcc_ver: str, cutlass: CutlassInfo | None, defines: Sequence[str] = ()
) -> Unit:
    source = "".join(f"#define {d} 1\n" for d in defines) + render_tu(configs)
    if not needs_cutlass(configs):
        cutlass = None  # same key and command whether or not the build also holds CUTLASS TUs
    elif cutlass is None:
        raise BuildError("CUTLASS headers are needed for CUTLASS configs")
    key = unit_key(source, nvcc_ver, cutlass.version if cutlass is not None else NO_CUTLASS)
    return Unit([c.name for c in configs], key, source, cutlass)


# What compiling one TU gives back, wherever it ran: the object's bytes (None when nvcc failed),
# seconds, nvcc's (or our) message when it failed, and the command.
Outcome = tuple[bytes | None, float, str, list[str]]


def compile_source(source_text: str, key: str, nvcc: str, include_dirs: Sequence[str]) -> Outcome:
    """Compile one TU's source in a scratch folder of this machine."""
    with tempfile.TemporaryDirectory(prefix="l2x-unit-") as work:
        source, obj = Path(work) / f"{key}.cu", Path(work) / f"{key}.o"
        source.write_text(source_text)
        cmd = [nvcc, *COMPILE_FLAGS, *GENCODE, *(f"-I{d}" for d in include_dirs), "-c", str(source)]
        cmd += ["-o", str(obj)]
        t0 = time.monotonic()
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        secs = time.monotonic() - t0
        if res.returncode != 0:
            return None, secs, (res.stdout + res.stderr).strip()[-4000:], cmd
        return obj.read_bytes(), secs, "", cmd


def compile_on_worker(source_text: str, key: str, cutlass_version: str | None, nvcc_ver: str) -> Outcome:
    """A cluster task: compile one TU with the worker's own nvcc (and CUTLASS headers), which must
    be the versions the object's cache key names."""
    try:
        nvcc, cutlass = worker_toolchain(nvcc_ver, cutlass_version, find_cutlass)
    except ToolchainError as exc:
        return None, 0.0, str(exc), []
    return compile_source(source_text, key, nvcc, cutlass.include_dirs if cutlass else ())


def _record(unit: Unit, out: Path, outcome: Outcome, nvcc_ver: str) -> UnitResult:
    """Keep a compiled object in the cache under its key (written atomically), with its source
    (kept for a failed TU too) and a note of how it was made. Only the build's own process
    writes here, whichever machine compiled."""
    data, secs, message, cmd = outcome
    obj_dir = out / "obj"
    obj_dir.mkdir(parents=True, exist_ok=True)
    (obj_dir / f"{unit.key}.cu").write_text(unit.source)
    if data is None:
        return UnitResult(unit.names, unit.key, None, secs, False, message)
    obj = obj_dir / f"{unit.key}.o"
    fd, tmp = tempfile.mkstemp(prefix=f".{unit.key}.", suffix=".o", dir=obj_dir)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, obj)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    meta = {"key": unit.key, "configs": unit.names, "seconds": round(secs, 1), "command": cmd}
    obj.with_suffix(".json").write_text(json.dumps({**meta, "nvcc": nvcc_ver}, indent=1))
    return UnitResult(unit.names, unit.key, obj, secs, False)


def cached_unit(unit: Unit, out: Path) -> UnitResult | None:
    obj = out / "obj" / f"{unit.key}.o"
    return UnitResult(unit.names, unit.key, obj, 0.0, True) if obj.exists() else None


def _outcomes(
    units: Sequence[Unit], nvcc: str, nvcc_ver: str, jobs: int, client
) -> Iterator[tuple[int, Outcome]]:
    """(index, outcome) of each unit as it finishes: on the cluster's workers, else ``jobs`` local
    nvcc processes."""
    if client is not None:
        tasks = [(u.source, u.key, u.cutlass.version if u.cutlass else None, nvcc_ver) for u in units]
        yield from map_unordered(client, compile_on_worker, tasks, name="l2x-compile")
        return
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {
            pool.submit(compile_source, u.source, u.key, nvcc, u.cutlass.include_dirs if u.cutlass else ()): i
            for i, u in enumerate(units)
        }
        for future in as_completed(futures):
            yield futures[future], future.result()


def compile_units(
    units: Sequence[Unit], out: Path, nvcc: str, nvcc_ver: str, jobs: int = 1, client=None, say=None
) -> list[UnitResult]:
    """Each unit's object from the cache, or compiled (locally or by ``client``'s cluster) and
    recorded there; in ``units`` order, reported as each finishes."""
    results: list[UnitResult | None] = [cached_unit(u, out) for u in units]
    todo = [i for i, r in enumerate(results) if r is None]
    say = say or (lambda _msg: None)
    say(f"  {len(units) - len(todo)} TUs cached, {len(todo)} to compile")
    todo_units = [units[i] for i in todo]
    for done, (i, outcome) in enumerate(_outcomes(todo_units, nvcc, nvcc_ver, jobs, client), 1):
        result = results[todo[i]] = _record(todo_units[i], out, outcome, nvcc_ver)
        state = "ok" if result.obj else "FAILED"
        say(f"  [{state} {done}/{len(todo)}] {result.seconds:6.1f}s {result.key} {', '.join(result.names)}")
    return [r for r in results if r is not None]


def compile_unit(
    configs: Sequence[AnyConfig], out: Path, nvcc: str, cutlass: CutlassInfo | None, nvcc_ver: str
) -> UnitResult:
    """Compile one TU to ``out/obj/<key>.o`` (or find it there); ``cutlass`` only for CUTLASS TUs."""
    return compile_units([plan_unit(configs, nvcc_ver, cutlass)], out, nvcc, nvcc_ver)[0]


def build(
    configs: Sequence[AnyConfig],
    out: Path | None = None,
    *,
    per_tu: int = 4,
    jobs: int | None = None,
    nvcc: str | None = None,
    cutlass: CutlassInfo | None = None,
    log=None,
    cluster: str | None = None,
    timeline: bool = False,
) -> BuildResult:
    """Compile ``configs`` (cached) into ``out`` (default: :func:`default_build_dir`) and link the
    ones that compile into one shared library. ``cluster``: a Dask scheduler's address whose
    workers compile the TUs instead of ``jobs`` local processes (this process links).
    ``timeline``: tiny or wgmma configs (one family), one TU with the step stamps on, ``latest.json``
    left as it was."""
    t_start = time.monotonic()
    defines: tuple[str, ...] = ()
    if timeline:
        families = sorted({c.family for c in configs})
        if len(families) != 1 or families[0] not in TIMELINE_FAMILIES:
            raise BuildError(
                f"a timeline build holds the kernels of one of {TIMELINE_FAMILIES}, got {families or 'none'}"
            )
        defines, per_tu = (TIMELINE_DEFINE,), len(configs)  # one TU: one stamp array, one reader
    say = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    nvcc = nvcc or find_nvcc()
    if not nvcc:
        raise BuildError("nvcc not found (set NVCC or CUDA_HOME, or put nvcc on the PATH)")
    if needs_cutlass(configs):
        cutlass = cutlass or find_cutlass()
        if cutlass is None:
            raise BuildError(
                "CUTLASS headers not found: set CUTLASS_DIR or "
                f"`pip install nvidia-cutlass=={pinned_cutlass()} --no-deps`"
            )
    else:
        cutlass = None  # no CUTLASS header is included, none is recorded
    cutlass_ver = cutlass.version if cutlass is not None else NO_CUTLASS
    nv_ver = nvcc_version(nvcc)
    out = Path(out) if out is not None else default_build_dir()
    jobs = jobs or max(1, os.cpu_count() or 1)
    by_name = {c.name: c for c in configs}
    groups = group(list(by_name.values()), per_tu)
    where = f"the cluster at {cluster}" if cluster else f"{jobs} jobs"
    say(f"tuner.build: {len(by_name)} configs in {len(groups)} TUs, {where}, CUTLASS {cutlass_ver}")
    with client_for(cluster) as client:

        def run_groups(gs: list[list[AnyConfig]]) -> list[UnitResult]:
            units = [plan_unit(g, nv_ver, cutlass, defines) for g in gs]
            return compile_units(units, out, nvcc, nv_ver, jobs, client, say)

        units = run_groups(groups)
        retry = [[by_name[n]] for r in units if r.obj is None and len(r.names) > 1 for n in r.names]
        failed: dict[str, str] = {}
        for r in units:
            if r.obj is None and len(r.names) == 1:
                failed[r.names[0]] = r.error
        if retry:
            say(f"tuner.build: retrying {len(retry)} configs of failed TUs one per TU")
            singles = run_groups(retry)
            units += singles
            for r in singles:
                if r.obj is None:
                    failed[r.names[0]] = r.error
    good = [r for r in units if r.obj is not None]
    compiled = sorted(n for r in good for n in r.names)
    if not compiled:
        return BuildResult(None, [], failed, units, time.monotonic() - t_start)

    meta = {"nvcc": nv_ver, "cutlass": cutlass_ver, "gencode": " ".join(GENCODE)}
    if timeline:
        meta["timeline"] = TIMELINE_DEFINE
    registry = render_registry([by_name[n] for n in compiled], meta)
    objs = sorted({str(r.obj) for r in good})
    # Named by what goes in, not where it lies: each object's name is its TU's content key, so the
    # same sources built in another folder (another machine's cache, the device's /tmp) link to
    # the same name, which is what a store's measurements and audits refer to.
    linked = [sorted(Path(o).name for o in objs), registry, LINK_FLAGS]
    link_key = hashlib.sha256(json.dumps(linked, sort_keys=True).encode()).hexdigest()[:20]
    lib_dir = out / "lib"
    lib = lib_dir / f"{LIB_STEM}-{link_key}.so"
    if not lib.exists():
        lib_dir.mkdir(parents=True, exist_ok=True)
        reg_src = out / "obj" / f"registry-{link_key}.cu"
        reg_src.parent.mkdir(parents=True, exist_ok=True)
        reg_src.write_text(registry)
        fd, tmp = tempfile.mkstemp(prefix=f".{LIB_STEM}-{link_key}.", suffix=".so", dir=lib_dir)
        os.close(fd)
        cmd = [nvcc, *COMPILE_FLAGS, *GENCODE, *LINK_FLAGS, str(reg_src), *objs, "-o", tmp]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
            if res.returncode != 0:
                raise BuildError(f"link failed:\n{(res.stdout + res.stderr).strip()[-4000:]}")
            os.replace(tmp, lib)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    manifest = {
        "library": lib.name,
        "abi": ABI_VERSION,
        "configs": [by_name[n].to_dict() | {"name": n} for n in compiled],
        "failed": {n: e[-2000:] for n, e in sorted(failed.items())},
        "units": [
            {"key": r.key, "configs": r.names, "seconds": round(r.seconds, 1), "cached": r.cached}
            for r in units
        ],
        **meta,
    }
    lib.with_suffix(".json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    if not timeline:  # an instrumented library is never the default one
        (lib_dir / "latest.json").write_text(json.dumps({"library": lib.name}, indent=1))
    return BuildResult(lib, compiled, failed, units, time.monotonic() - t_start)


CATALOGS = {
    "full": full_catalog,
    "first": cat.first_catalog,
    "tiny": tiny.tiny_catalog,
    "wgmma": wgmma.wgmma_catalog,
    "smoke": cat.smoke_catalog,
}


def select(configs: Sequence[AnyConfig], only: str | None) -> list[AnyConfig]:
    """``configs`` named in ``only`` (comma-separated; all when None), in the catalog's order."""
    if only is None:
        return list(configs)
    wanted = [n for n in only.split(",") if n]
    by_name = {c.name: c for c in configs}
    unknown = [n for n in wanted if n not in by_name]
    if unknown or not wanted:
        raise BuildError(f"not in the catalog: {', '.join(unknown) or '(no names)'}")
    return [c for c in configs if c.name in set(wanted)]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m cuda_l2_explorer.tuner.build", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--catalog", choices=sorted(CATALOGS), default="full")
    ap.add_argument("--per-tu", type=int, default=4)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--cluster", default=None, metavar="tcp://HOST:8786", help="compile on a Dask cluster's workers"
    )
    ap.add_argument("--only", default=None, metavar="NAME,...", help="only these configs of the catalog")
    ap.add_argument(
        "--timeline",
        action="store_true",
        help="tiny or wgmma kernels with their step stamps on (one family, one TU, not latest)",
    )
    args = ap.parse_args(argv)
    try:
        configs = select(CATALOGS[args.catalog](), args.only)
        opts = dict(per_tu=args.per_tu, jobs=args.jobs, cluster=args.cluster, timeline=args.timeline)
        res = build(configs, args.out, **opts)
    except (BuildError, ClusterError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(
        json.dumps(
            {
                "library": str(res.library) if res.library else None,
                "compiled": len(res.compiled),
                "failed": sorted(res.failed),
                "seconds": round(res.seconds, 1),
            },
            indent=1,
        )
    )
    return 0 if res.library and not res.failed else 1


if __name__ == "__main__":
    sys.exit(main())
