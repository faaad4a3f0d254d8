"""``cuda-l2-explorer tune``: search our kernel library for the fastest kernel of given shapes.

For each shape (on or off the grid) the search (tuner/search.py) measures the pruned candidates
on the local GPU and logs every one in the store; the kept kernels are merged into a manifest
(by default the user's own set beside the store, ``tuned/<gpu>_F32F16F16F32/``), recorded as a
kernel set in the store, and, unless ``--no-measure``, measured against the seven baselines
under the full protocol so lookup and the app can rank them like any other set.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cuda_l2_explorer.bench_command import _run, _say, _shapes, with_run_bar
from cuda_l2_explorer.db.errors import NotFoundError, UsageError
from cuda_l2_explorer.db.shapes import Shape, parse_shape
from cuda_l2_explorer.db.store import Store, default_store_path
from cuda_l2_explorer.output import emit

ACCUMULATOR = "F32F16F16F32"


def _tune_shapes(args: argparse.Namespace) -> list[Shape]:
    if args.dims:
        if len(args.dims) != 3 or args.mnk or args.grid:
            raise UsageError("give M N K, or --mnk, or --grid")
        return [parse_shape(*args.dims)]
    return _shapes(args, [])


def _library(args: argparse.Namespace) -> Path:
    from cuda_l2_explorer.tuner.native import default_library

    lib = Path(args.library).expanduser() if args.library else default_library()
    if lib is None or not lib.is_file():
        raise NotFoundError(
            "no kernel library: build one with `python -m cuda_l2_explorer.tuner.build` or pass --library / "
            "set CUDA_L2_EXPLORER_TUNER_LIB"
        )
    return lib


def run_tune_command(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.importer.harness import device, runner
    from cuda_l2_explorer.tuner import manifest as mf
    from cuda_l2_explorer.tuner.search import manifest_entries, run_search, search_plan

    if args.limit < 1 or args.finalists < 1:
        raise UsageError("--limit and --finalists must be at least 1")
    shapes = _tune_shapes(args)
    library = _library(args)
    store_path = Path(args.db).expanduser() if args.db else None
    gpus = device.parse_gpus(args.gpus, device.visible_gpus())
    plan = search_plan(
        shapes, library, gpus, limit=args.limit, finalists=args.finalists, timeout_s=args.timeout
    )
    resume = None
    if args.resume:
        with Store.open(store_path, with_bundled=False, views=False) as store:
            resume = runner.find_resumable(
                store, None if args.resume == "latest" else args.resume, None, "offline", kind="tune"
            )
        plan.shapes = [Shape(*map(int, s.split("_"))) for s in resume[1]["shapes"]]
    run_id, summary = with_run_bar(
        args,
        "tune",
        lambda progress: run_search(
            store_path, plan, runner.command_line_of(args.argv), resume, progress=progress
        ),
    )
    with Store.open(store_path, with_bundled=False, views=False) as store:
        entries = manifest_entries(store, [run_id])
    gpu = summary["gpu"]
    target = (
        Path(args.manifest).expanduser()
        if args.manifest
        else (store_path or default_store_path()).parent / "tuned" / f"{gpu}_{ACCUMULATOR}" / "manifest.json"
    )
    current = mf.load(target) if target.exists() else mf.empty(gpu, ACCUMULATOR)
    merged = mf.merge(current, entries, keep_faster=args.keep_faster)
    mf.save(merged, target)
    set_id = record_set(store_path, target.parent, merged, library)
    _say(
        args,
        f"search run {run_id}: kept a kernel for {len(entries)} of {len(plan.shapes)} shapes -> {target}",
    )
    if entries and not args.no_measure:
        bench_run = measure_set(args, store_path, set_id, entries, library, gpus)
        with Store.open(store_path, read_only=True) as store:
            merged = mf.with_bench_evidence(merged, store, set_id, bench_run)
        mf.save(merged, target)
    emit(
        [
            {
                "m": e["m"], "n": e["n"], "k": e["k"], "kernel": e["kernel_name"],
                "variant": json.dumps(e["variant"], sort_keys=True), "time_us": e["time_us"],
                "reference": e["best_reference"], "reference_us": e["best_reference_us"],
            }
            for e in sorted(entries, key=lambda e: (e["m"], e["n"], e["k"]))
        ],
        args.fmt,
    )  # fmt: skip
    return 0


def library_entries(manifest: dict, library: Path, shapes: list[Shape] | None = None) -> dict:
    """A KernelEntry per manifest config (run through the compiled library by the tuner's worker)."""
    from cuda_l2_explorer.importer.harness.plan import KernelEntry

    wanted = set(shapes) if shapes is not None else None
    out = {}
    for e in manifest["configs"]:
        shape = Shape(e["m"], e["n"], e["k"])
        if wanted is None or shape in wanted:
            out[shape] = KernelEntry(
                library={"path": str(library), "kernel": e["kernel_name"], "variant": e["variant"]}
            )
    return out


def record_set(store_path: Path | None, root: Path, manifest: dict, library: Path) -> str:
    """The manifest's configs as a kernel set of ours in the store (one transaction)."""
    # The repository's own set (kernels/<device>_<ACC>) is "ours"; a user's tuned set keeps its folder's name.
    parent = root.parent.name or "tuned"
    set_id = f"{'ours' if parent == 'kernels' else parent}/{root.name}"
    with Store.open(store_path, with_bundled=False, views=False) as store, store.transaction():
        store.con.execute(
            "INSERT INTO main.kernel_sets (set_id, name, gpu, accumulator, origin, root, description) "
            "VALUES (?, ?, ?, ?, 'ours', ?, ?) ON CONFLICT (set_id) DO UPDATE SET root = excluded.root",
            [set_id, set_id.split("/")[0], manifest["device"], manifest["accumulator"], str(root),
             f"tuned with {library.name}"],
        )  # fmt: skip
        for e in manifest["configs"]:
            params = {"kernel": e["kernel"], "variant": e["variant"], "kernel_name": e["kernel_name"]}
            store.con.execute(
                "INSERT INTO main.kernels (kernel_id, set_id, m, n, k, path, runtime_shapes, family, params) "
                "VALUES (?, ?, ?, ?, ?, ?, true, ?, ?) ON CONFLICT (kernel_id) DO UPDATE SET "
                "path = excluded.path, family = excluded.family, params = excluded.params",
                [f"{set_id}:{e['m']}_{e['n']}_{e['k']}", set_id, e["m"], e["n"], e["k"],
                 str(root / f"{e['m']}_{e['n']}_{e['k']}.cu"), e["kernel"]["family"], json.dumps(params)],
            )  # fmt: skip
    return set_id


def measure_set(
    args: argparse.Namespace, store_path: Path | None, set_id: str, entries: list[dict], library: Path, gpus
) -> str:
    """The kept kernels against the seven baselines, offline, full protocol (a bench run)."""
    from cuda_l2_explorer.db.views import BASELINES
    from cuda_l2_explorer.importer.harness.plan import BenchPlan
    from cuda_l2_explorer.importer.harness.protocol import ProtocolSettings
    from cuda_l2_explorer.tuner.native import library_cutlass_version
    from cuda_l2_explorer.tuner.search import TUNER_WORKER

    shapes = sorted(Shape(e["m"], e["n"], e["k"]) for e in entries)
    plan = BenchPlan(
        shapes=shapes,
        settings=ProtocolSettings(mode="offline"),
        baselines=BASELINES,
        set_id=set_id,
        kernels=library_entries({"configs": entries}, library),
        gpus=list(gpus),
        timeout_s=args.timeout,
        worker=TUNER_WORKER,
        cutlass=library_cutlass_version(library),
    )
    return _run(args, plan, None, store_path, summary_out=False)
