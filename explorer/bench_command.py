"""``cuda-l2-explorer bench``: from arguments to a plan for the harness's runner, with progress."""

from __future__ import annotations

import argparse
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from cuda_l2_explorer.db.errors import NotFoundError, UsageError
from cuda_l2_explorer.db.shapes import Shape, grid_shapes, parse_mnk
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.output import emit, message
from cuda_l2_explorer.progress import ProgressBar

T = TypeVar("T")
CUTLASS_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](cutlass|cute)/', re.MULTILINE)


def _shapes(args: argparse.Namespace, set_shapes: list[Shape]) -> list[Shape]:
    if args.mnk and args.grid:
        raise UsageError("give either --mnk or --grid, not both")
    if args.sample is not None and not args.grid:
        raise UsageError("--sample needs --grid")
    if args.mnk:
        shapes = [parse_mnk(x) for x in args.mnk.split(",") if x.strip()]
    elif args.grid:
        shapes = grid_shapes()
        if args.sample is not None:
            if not 1 <= args.sample <= len(shapes):
                raise UsageError(f"--sample must be between 1 and {len(shapes)}")
            shapes = sorted(random.Random(args.seed).sample(shapes, args.sample))
    else:
        shapes = set_shapes
    if not shapes:
        raise UsageError("no configs to measure: pass --mnk or --grid")
    return sorted(dict.fromkeys(shapes))


def _settings(args: argparse.Namespace):
    from cuda_l2_explorer.importer.harness.protocol import ProtocolSettings

    samples = args.samples if args.samples is not None else (15 if args.mode == "offline" else 20)
    if samples < 1 or args.warmup_s < 0 or args.target_qps <= 0 or args.timeout <= 0:
        raise UsageError("--samples >= 1, --warmup-s >= 0, --target-qps > 0 and --timeout > 0 are required")
    return ProtocolSettings(
        mode=args.mode, samples=samples, warmup_s=args.warmup_s, target_qps=args.target_qps, seed=args.seed
    )


def _baselines(text: str) -> tuple[str, ...]:
    from cuda_l2_explorer.db.views import BASELINES

    chosen = tuple(b.strip() for b in text.split(",") if b.strip())
    unknown = [b for b in chosen if b not in BASELINES]
    if unknown:
        raise UsageError(f"unknown baseline {unknown[0]!r}; known: {', '.join(BASELINES)}")
    return chosen


def _resolve_set_dir(args: argparse.Namespace, store_path: Path | None) -> Path | None:
    if args.set_ is None:
        return None
    candidate = Path(args.set_).expanduser()
    if candidate.exists():
        return candidate
    with Store.open(store_path, read_only=True) as store:
        row = store.con.execute(
            "SELECT root FROM all_kernel_sets WHERE (set_id = ? OR name = ?) AND root IS NOT NULL LIMIT 2",
            [args.set_, args.set_],
        ).fetchall()
    if len(row) != 1:
        raise NotFoundError(f"--set {args.set_!r} is neither a folder nor one known kernel set with a folder")
    return Path(row[0][0])


def run_bench_command(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.importer.harness import device, runner
    from cuda_l2_explorer.importer.harness.plan import BenchPlan
    from cuda_l2_explorer.importer.kernelset import scan_set

    settings = _settings(args)
    baselines = _baselines(args.baselines)
    store_path = Path(args.db).expanduser() if args.db else None
    set_dir = _resolve_set_dir(args, store_path)
    if set_dir is not None and (set_dir / "manifest.json").is_file():
        return _run_manifest_set(args, settings, baselines, store_path, set_dir)
    scan = scan_set(set_dir) if set_dir is not None else None
    if scan is not None:
        for rel, reason in scan.problems:
            _say(args, f"skipped {rel}: {reason}")
    set_shapes = [f.shape for f in scan.files] if scan else []
    shapes = _shapes(args, set_shapes)
    gpus = device.parse_gpus(args.gpus, device.visible_gpus())
    set_id = None
    if scan is not None:
        name = args.set_name or scan.root.parent.name or "set"
        set_id = f"{name}/{scan.device}_{scan.accumulator}"
    with Store.open(store_path, with_bundled=False, views=False) as store:
        resume = None
        if args.resume:
            resume = runner.find_resumable(
                store, None if args.resume == "latest" else args.resume, set_id, settings.mode
            )
            shapes = [parse_mnk(s) for s in resume[1]["shapes"]]
    kernels = _build(args, store_path, scan, set_id, shapes) if scan is not None else {}
    # The store is closed here: the run holds it only for each commit (readers get their turn).
    plan = BenchPlan(
        shapes=shapes,
        settings=settings,
        baselines=baselines,
        set_id=set_id,
        accumulator=scan.accumulator if scan else "F32F16F16F32",
        kernels=kernels,
        gpus=gpus,
        timeout_s=args.timeout,
        l2="warm" if args.warm_l2 else "cold",
        cutlass=_cutlass_of(scan) if kernels else None,
    )
    _run(args, plan, resume, store_path)
    return 0


def _cutlass_of(scan) -> str | None:
    """The CUTLASS version the set's kernels were built against, if any of them uses CUTLASS."""
    from cuda_l2_explorer.importer.harness.build import find_cutlass

    uses = any(CUTLASS_INCLUDE.search(f.path.read_text(errors="replace")) for f in scan.files)
    found = find_cutlass() if uses else None
    return found.version if found else None


def _run(args: argparse.Namespace, plan, resume, store_path: Path | None, *, summary_out: bool = True) -> str:
    """Run ``plan`` with a progress bar; say and (unless told not to) print the run's summary.
    Returns the run's id."""
    from cuda_l2_explorer.importer.harness import runner

    run_id, summary = with_run_bar(
        args,
        f"bench {plan.settings.mode}",
        lambda progress: runner.run_plan(
            runner.store_opener(store_path),
            plan,
            runner.command_line_of(args.argv),
            resume,
            progress=progress,
        ),
    )
    _say(
        args,
        f"run {run_id}: {summary['measured_now']} configs measured now "
        f"({summary['measured_now'] - summary['done']} with failures), "
        f"{summary['configs'] - summary['measured_now']} done earlier; {summary['seconds']:.0f} s "
        f"on {summary['gpu_name']}",
    )
    if summary_out:
        emit([{"run_id": run_id, **summary}], args.fmt)
    return run_id


def _run_manifest_set(args, settings, baselines, store_path: Path | None, set_dir: Path) -> int:
    """Our own set (kernels/<device>_<ACC>/manifest.json): its kernels run from the compiled
    library, so no per-config build; the set is recorded from the manifest."""
    from cuda_l2_explorer.importer.harness import device, runner
    from cuda_l2_explorer.importer.harness.plan import BenchPlan
    from cuda_l2_explorer.tune_command import _library, library_entries, record_set
    from cuda_l2_explorer.tuner import manifest as mf
    from cuda_l2_explorer.tuner.native import library_cutlass_version
    from cuda_l2_explorer.tuner.search import TUNER_WORKER

    manifest = mf.load(set_dir / "manifest.json")
    set_shapes = sorted(Shape(e["m"], e["n"], e["k"]) for e in manifest["configs"])
    shapes = _shapes(args, set_shapes)
    library = _library(args)
    gpus = device.parse_gpus(args.gpus, device.visible_gpus())
    set_id = record_set(store_path, set_dir.resolve(), manifest, library)
    with Store.open(store_path, with_bundled=False, views=False) as store:
        resume = None
        if args.resume:
            run = None if args.resume == "latest" else args.resume
            resume = runner.find_resumable(store, run, set_id, settings.mode)
            shapes = [parse_mnk(s) for s in resume[1]["shapes"]]
    plan = BenchPlan(
        shapes=shapes,
        settings=settings,
        baselines=baselines,
        set_id=set_id,
        accumulator=manifest["accumulator"],
        kernels=library_entries(manifest, library, shapes),
        gpus=gpus,
        timeout_s=args.timeout,
        l2="warm" if args.warm_l2 else "cold",
        worker=TUNER_WORKER,
        cutlass=library_cutlass_version(library),
    )
    run_id = _run(args, plan, resume, store_path)
    # The manifest records the harness's figures for the configs this run measured.
    with Store.open(store_path, read_only=True) as store:
        updated = mf.with_bench_evidence(manifest, store, set_id, run_id)
    mf.save(updated, set_dir / "manifest.json")
    return 0


def _build(args, store_path: Path | None, scan, set_id: str, shapes: list[Shape]) -> dict:
    """Build the set's kernels for ``shapes`` (parallel, cached; the store is not held meanwhile)
    and record them in the store in one short transaction."""
    from cuda_l2_explorer.importer.harness.build import build_all
    from cuda_l2_explorer.importer.harness.plan import KernelEntry
    from cuda_l2_explorer.importer.kernelset import padded_shape

    by_shape = {f.shape: f for f in scan.files}
    missing = [s for s in shapes if s not in by_shape]
    if missing:
        _say(args, f"{len(missing)} config(s) have no kernel file in {scan.root}; baselines only for those")
    files = [by_shape[s] for s in shapes if s in by_shape]
    bar = _bar(args, "building kernels")
    try:
        results = build_all(files, jobs=args.jobs, progress=lambda done, total: bar.steps(done, total))
    finally:
        bar.close()
    origin = "ours" if "kernels" in scan.root.parts else "imported"
    entries = {}
    with Store.open(store_path, with_bundled=False, views=False) as store, store.transaction():
        store.con.execute(
            "INSERT INTO main.kernel_sets (set_id, name, gpu, accumulator, origin, root) "
            "VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (set_id) DO UPDATE SET root = excluded.root",
            [set_id, set_id.split("/")[0], scan.device, scan.accumulator, origin, str(scan.root)],
        )
        for f in files:
            result = results[f.path]
            pad = padded_shape(f.shape, f.pad) if f.pad else None
            entries[f.shape] = KernelEntry(
                module=str(result.module_path) if result.ok else None,
                pad_shape=pad.astuple() if pad and pad != f.shape else None,
                build_error=None if result.ok else (result.log or "compile failed")[-2000:],
            )
            store.con.execute(
                "INSERT INTO main.kernels (kernel_id, set_id, m, n, k, path, source_sha256, source, pad_bm, "
                "pad_bn, pad_bk, runtime_shapes, build_status, build_log) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, false, ?, ?) "
                "ON CONFLICT (kernel_id) DO UPDATE SET path = excluded.path, "
                "source_sha256 = excluded.source_sha256, "
                "source = excluded.source, build_status = excluded.build_status, "
                "build_log = excluded.build_log",
                [
                    f"{set_id}:{f.shape}",
                    set_id,
                    f.shape.m,
                    f.shape.n,
                    f.shape.k,
                    str(f.path),
                    f.sha256,
                    f.path.read_text(errors="replace"),
                    *(f.pad or (None, None, None)),
                    "ok" if result.ok else "compile_error",
                    (result.log or "")[-4000:],
                ],
            )
    failed = sum(1 for r in results.values() if not r.ok)
    _say(args, f"built {len(files) - failed} of {len(files)} kernels ({failed} failed to compile)")
    return entries


def with_run_bar(args: argparse.Namespace, label: str, run: Callable[[Callable], T]) -> T:
    """``run(progress)`` with a progress bar fed by the runner's per-config progress reports."""
    bar = _bar(args, label)
    try:
        return run(lambda p: bar.steps(p.done, p.total, p.current, p.eta_s, p.failed))
    finally:
        bar.close()


def _bar(args: argparse.Namespace, label: str) -> ProgressBar:
    mode = getattr(args, "progress", "auto")
    if mode == "jsonl":
        return ProgressBar(label, jsonl=True)
    return ProgressBar(label, enabled=False if args.quiet or mode == "none" else None)


def _say(args: argparse.Namespace, text: str) -> None:
    if not args.quiet:
        message(text)
