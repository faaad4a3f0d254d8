"""Search our kernel library for the fastest kernel of given shapes (what ``tune`` runs).

For each shape (on or off the grid) the search (tuner/search.py) measures the pruned candidates
on the local GPU and logs every one in the store; the kept kernels are merged into a manifest
(by default the user's own set beside the store, ``tuned/<gpu>_F32F16F16F32/``), recorded as a
kernel set in the store, and, unless told not to, measured against the seven baselines under the
full protocol so lookup and the app can rank them like any other set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cuda_l2_explorer.db.errors import UsageError
from cuda_l2_explorer.db.shapes import Shape, parse_shape
from cuda_l2_explorer.db.store import Store, default_store_path
from cuda_l2_explorer.engine.bench import ShapeChoice, find_resume, resumed_shapes, run_plan
from cuda_l2_explorer.engine.feedback import SILENT, Feedback
from cuda_l2_explorer.engine.library import library_entries, library_path, record_set
from cuda_l2_explorer.engine.lookup import Calibration, calibration

ACCUMULATOR = "F32F16F16F32"


@dataclass(frozen=True)
class TuneRequest:
    store_path: Path | None = None
    dims: tuple[str, ...] = ()  # one shape as M N K (or use ``choice``)
    choice: ShapeChoice = field(default_factory=ShapeChoice)
    library: str | None = None  # default: the latest tuner build
    manifest: str | None = None  # default: tuned/<gpu>_<ACC>/manifest.json beside the store
    limit: int = 16  # candidates measured per shape
    finalists: int = 4  # candidates re-measured per shape
    measure: bool = True  # the kept kernels against the baselines afterwards
    keep_faster: bool = False  # replace a manifest config only with a faster kernel
    gpus: str = "0"
    resume: str | None = None
    timeout_s: float = 300.0  # per shape
    command_line: str = "cuda-l2-explorer tune"


@dataclass(frozen=True)
class TuneResult:
    run_id: str
    entries: list[dict]  # the manifest entries kept by this search
    manifest: Path
    calibration: Calibration | None = None  # lookup's predictions for these shapes beside the measurements


def _shapes(request: TuneRequest) -> list[Shape]:
    if request.dims:
        if len(request.dims) != 3 or request.choice.mnk or request.choice.grid:
            raise UsageError("give M N K, or --mnk, or --grid")
        return [parse_shape(*request.dims)]
    return request.choice.shapes([])


def run_tune(request: TuneRequest, feedback: Feedback = SILENT) -> TuneResult:
    from cuda_l2_explorer.importer.harness import device
    from cuda_l2_explorer.tuner import manifest as mf
    from cuda_l2_explorer.tuner.search import manifest_entries, run_search, search_plan

    if request.limit < 1 or request.finalists < 1:
        raise UsageError("--limit and --finalists must be at least 1")
    shapes = _shapes(request)
    # No GPU (exit 7) is said before any advice about building the library it would run.
    gpus = device.parse_gpus(request.gpus, device.visible_gpus())
    library = library_path(request.library)
    store_path = request.store_path
    plan = search_plan(
        shapes, library, gpus, limit=request.limit, finalists=request.finalists, timeout_s=request.timeout_s
    )
    resume = None
    if request.resume:
        resume = find_resume(store_path, request.resume, None, "offline", kind="tune")
        plan.shapes = resumed_shapes(resume)
    run_id, summary = feedback.with_run_bar(
        "tune",
        lambda progress: run_search(store_path, plan, request.command_line, resume, progress=progress),
    )
    with Store.open(store_path, with_bundled=False, views=False) as store:
        entries = manifest_entries(store, [run_id])
    gpu = summary["gpu"]
    target = (
        Path(request.manifest).expanduser()
        if request.manifest
        else (store_path or default_store_path()).parent / "tuned" / f"{gpu}_{ACCUMULATOR}" / "manifest.json"
    )
    current = mf.load(target) if target.exists() else mf.empty(gpu, ACCUMULATOR)
    merged = mf.merge(current, entries, keep_faster=request.keep_faster)
    mf.save(merged, target)
    set_id = record_set(store_path, target.parent, merged, library)
    feedback.say(
        f"search run {run_id}: kept a kernel for {len(entries)} of {len(plan.shapes)} shapes -> {target}",
    )
    report = None
    if entries and request.measure:
        bench_run = measure_set(request, set_id, entries, library, gpus, feedback)
        with Store.open(store_path, read_only=True) as store:
            merged = mf.with_bench_evidence(merged, store, set_id, bench_run)
            report = calibration(store, shapes=[Shape(e["m"], e["n"], e["k"]) for e in entries])
            running = calibration(store)
        mf.save(merged, target)
        # Predicted against measured: how far lookup's answers for untuned shapes can be trusted.
        for point in report.points:
            feedback.say(point.text())
        feedback.say(running.summary())
    return TuneResult(run_id, entries, target, report)


def measure_set(
    request: TuneRequest, set_id: str, entries: list[dict], library: Path, gpus, feedback: Feedback
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
        timeout_s=request.timeout_s,
        cutlass=library_cutlass_version(library),
        worker=TUNER_WORKER,
    )
    return run_plan(plan, None, request.store_path, request.command_line, feedback).run_id
