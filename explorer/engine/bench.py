"""Benchmark a kernel set (SPEC §6-§7): from a request to a plan for the harness, run with progress.

A set is a SPEC §4 folder (its kernels built here, cached, and recorded with their sources) or
our own set, a folder with a ``manifest.json`` (its kernels run from the compiled library); with
no set, the baselines alone are measured.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from cuda_l2_explorer.db import reads, writes
from cuda_l2_explorer.db.errors import NotFoundError, UsageError
from cuda_l2_explorer.db.shapes import ROTATION_CAP, Shape, grid_shapes, parse_mnk
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.db.views import BASELINES
from cuda_l2_explorer.engine.feedback import SILENT, Feedback
from cuda_l2_explorer.engine.imports import SetFolder, kernel_set_folder, looks_like_archive
from cuda_l2_explorer.engine.library import library_entries, library_path, record_set
from cuda_l2_explorer.importer.harness.build_units import DEFAULT_PER_UNIT

# How a config of a run can end other than 'done' (importer/harness/measurer.py): what --retry takes.
RETRYABLE = ("compile_error", "timeout", "crashed", "error")
CUTLASS_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](cutlass|cute)/', re.MULTILINE)


@dataclass(frozen=True)
class ShapeChoice:
    """Which configs to run: ``mnk`` ("M_N_K,..."), the reference grid (optionally a fixed random
    sample of it), or, with neither, the set's own configs."""

    mnk: str | None = None
    grid: bool = False
    sample: int | None = None
    seed: int = 0

    def shapes(self, set_shapes: Sequence[Shape]) -> list[Shape]:
        if self.mnk and self.grid:
            raise UsageError("give either --mnk or --grid, not both")
        if self.sample is not None and not self.grid:
            raise UsageError("--sample needs --grid")
        if self.mnk:
            # In the order given (duplicates dropped): a run stopped part-way (time budget, batches
            # of an imported set's builds) has measured the configs the user put first.
            shapes = list(dict.fromkeys(parse_mnk(x) for x in self.mnk.split(",") if x.strip()))
            if not shapes:
                raise UsageError("no configs to measure: pass --mnk or --grid")
            return shapes
        elif self.grid:
            shapes = grid_shapes()
            if self.sample is not None:
                if not 1 <= self.sample <= len(shapes):
                    raise UsageError(f"--sample must be between 1 and {len(shapes)}")
                shapes = sorted(random.Random(self.seed).sample(shapes, self.sample))
        else:
            shapes = list(set_shapes)
        if not shapes:
            raise UsageError("no configs to measure: pass --mnk or --grid")
        return sorted(dict.fromkeys(shapes))


@dataclass(frozen=True)
class BenchRequest:
    """A benchmark as ``bench`` takes it (the app's Bench pane runs the CLI)."""

    store_path: Path | None = None
    set_: str | None = None  # a kernel set folder, archive, URL, or a stored set's name or id
    set_name: str | None = None  # the name to store a folder's set under (default: its parent)
    choice: ShapeChoice = field(default_factory=ShapeChoice)
    mode: str = "offline"
    target_qps: float = 100.0
    warmup_s: float = 0.02
    samples: int | None = None  # default: 15 offline, 20 server
    baselines: tuple[str, ...] = BASELINES
    gpus: str = "0"  # "all" or "0,1"
    cluster: str | None = None  # a Dask scheduler's address: measure on its GPU workers instead
    resume: str | None = None  # a run id, or "latest" (of this set and mode)
    retry: tuple[str, ...] = ()  # with resume: configs that ended so (compile_error, ...) run again
    timeout_s: float = 300.0  # per config
    time_budget_s: float | None = None  # start no new config after this long (resumable)
    warm_l2: bool = False
    rotation_cap: int = ROTATION_CAP  # cold L2: the most input sets rotated
    timing: str = "graph"  # offline: "graph" (device time) or "eager" (issue-bound, harness 2's way)
    seed: int = 0
    jobs: int = 2  # parallel kernel builds here (with a cluster, its workers' threads)
    per_unit: int = DEFAULT_PER_UNIT  # an imported set's files compiled in one translation unit
    library: str | None = None  # our compiled kernel library, for a set with a manifest.json
    command_line: str = "cuda-l2-explorer bench"


@dataclass(frozen=True)
class BenchRun:
    run_id: str
    summary: dict

    def runs(self) -> list[BenchRun]:
        """Every run the bench made: one per GPU type on a cluster of several (this one the
        first), else this one alone."""
        return [BenchRun(r["run_id"], r) for r in self.summary.get("runs", [])] or [self]


def _settings(request: BenchRequest):
    from cuda_l2_explorer.importer.harness.protocol import ProtocolSettings

    r = request
    samples = r.samples if r.samples is not None else (15 if r.mode == "offline" else 20)
    if samples < 1 or r.warmup_s < 0 or r.target_qps <= 0 or r.timeout_s <= 0:
        raise UsageError("--samples >= 1, --warmup-s >= 0, --target-qps > 0 and --timeout > 0 are required")
    if r.time_budget_s is not None and r.time_budget_s <= 0:
        raise UsageError("--time-budget must be positive")
    try:
        return ProtocolSettings(
            mode=r.mode,
            samples=samples,
            warmup_s=r.warmup_s,
            target_qps=r.target_qps,
            seed=r.seed,
            timing=r.timing,
            rotation_cap=r.rotation_cap,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _gpus(request: BenchRequest) -> list[int]:
    """This machine's GPUs to measure on; none are needed when a cluster's workers measure."""
    from cuda_l2_explorer.importer.harness import device

    if request.cluster:
        if request.gpus != "0":
            raise UsageError("--gpus and --cluster do not go together: the cluster's workers are its GPUs")
        return [0]
    return device.parse_gpus(request.gpus, device.visible_gpus())


def _check_baselines(chosen: tuple[str, ...]) -> tuple[str, ...]:
    unknown = [b for b in chosen if b not in BASELINES]
    if unknown:
        raise UsageError(f"unknown baseline {unknown[0]!r}; known: {', '.join(BASELINES)}")
    return chosen


def _resolve_set(set_: str | None, store_path: Path | None, feedback: Feedback) -> SetFolder | None:
    """The set's folder: a folder as given; an archive (file or URL) or a GitHub repository
    fetched and unpacked; else a stored set's folder by name or id."""
    if set_ is None:
        return None
    candidate = Path(set_).expanduser()
    if candidate.is_dir():
        return SetFolder(candidate, None, None)
    if looks_like_archive(set_):
        return kernel_set_folder(set_, feedback=feedback)
    if candidate.exists():
        return SetFolder(candidate, None, None)  # scan_set says why it is no set
    with Store.open(store_path, read_only=True) as store:
        folders = reads.set_folders(store, set_)
    if len(folders) != 1:
        raise NotFoundError(
            f"--set {set_!r} is neither a folder, an archive, a URL nor one known kernel set with a folder"
        )
    name, folder = folders[0]
    return SetFolder(Path(folder), name, None)  # measured under the stored set's id, not its folder's


def find_resume(
    store_path: Path | None,
    resume: str | None,
    set_id: str | None,
    mode: str,
    kind: str = "bench",
    retry: tuple[str, ...] = (),
    feedback: Feedback = SILENT,
) -> tuple[str, dict] | None:
    """The run to continue (``resume``: a run id, or "latest" of this set and mode), None without
    ``resume``. The store is opened either way: it is created (or migrated) before any GPU work.
    ``retry``: the run's configs that ended with one of these statuses are forgotten, so the
    resumed run measures them again (after the cause, such as missing headers, is fixed)."""
    from cuda_l2_explorer.importer.harness import runner

    if retry and not resume:
        raise UsageError("--retry needs --resume: it measures again configs of a run that ended so")
    unknown = sorted(set(retry) - set(RETRYABLE))
    if unknown:
        raise UsageError(f"--retry takes {', '.join(RETRYABLE)}; not {', '.join(unknown)}")
    with Store.open(store_path, with_bundled=False, views=False) as store:
        if not resume:
            return None
        found = runner.find_resumable(store, None if resume == "latest" else resume, set_id, mode, kind=kind)
        if retry:
            again = reads.configs_with_status(store, found[0], retry)
            with store.transaction():
                for shape in again:
                    writes.clear_config(store, found[0], *shape.astuple())
            feedback.say(
                f"run {found[0]}: {len(again)} config(s) that ended {'/'.join(retry)} will run again"
            )
        return found


def resumed_shapes(resume: tuple[str, dict]) -> list[Shape]:
    return [parse_mnk(s) for s in resume[1]["shapes"]]


def pending_shapes(store_path: Path | None, run_id: str, shapes: list[Shape]) -> list[Shape]:
    """The configs of ``shapes`` that run ``run_id`` has not finished, in order."""
    with Store.open(store_path, with_bundled=False, views=False) as store:
        done = reads.done_configs(store, run_id)
    return [s for s in shapes if s not in done]


def run_bench(request: BenchRequest, feedback: Feedback = SILENT) -> BenchRun:
    """Build what the set needs, then measure it (a new run, or the one ``resume`` names)."""
    from cuda_l2_explorer.importer.harness.plan import BenchPlan
    from cuda_l2_explorer.importer.kernelset import scan_set

    settings = _settings(request)
    baselines = _check_baselines(request.baselines)
    store_path = request.store_path
    resolved = _resolve_set(request.set_, store_path, feedback)
    set_dir = resolved.path if resolved is not None else None
    if set_dir is not None and (set_dir / "manifest.json").is_file():
        return _run_manifest_set(request, settings, baselines, set_dir, feedback)
    scan = scan_set(set_dir) if set_dir is not None else None
    if scan is not None:
        for rel, reason in scan.problems:
            feedback.say(f"skipped {rel}: {reason}")
    shapes = request.choice.shapes([f.shape for f in scan.files] if scan else [])
    gpus = _gpus(request)
    set_id = None
    if scan is not None:
        name = request.set_name or resolved.name or scan.root.parent.name or "set"
        set_id = f"{name}/{scan.device}_{scan.accumulator}"
    # Before the store changes (--retry): a set that cannot build here is refused first. A
    # cluster's workers compile with headers of their own; otherwise the builds are local.
    cutlass = cutlass_of(scan, required=not request.cluster) if scan is not None else None
    resume = find_resume(
        store_path, request.resume, set_id, settings.mode, retry=request.retry, feedback=feedback
    )
    pending = shapes
    if resume is not None:
        shapes = resumed_shapes(resume)
        pending = pending_shapes(store_path, resume[0], shapes)  # the measured ones need no build
    # The store is closed here: the run holds it only for each commit (readers get their turn).
    plan = BenchPlan(
        shapes=shapes,
        settings=settings,
        baselines=baselines,
        set_id=set_id,
        accumulator=scan.accumulator if scan else "F32F16F16F32",
        gpus=gpus,
        timeout_s=request.timeout_s,
        time_budget_s=request.time_budget_s,
        l2="warm" if request.warm_l2 else "cold",
        cutlass=cutlass,
        cluster=request.cluster,
    )
    if scan is None:
        return run_plan(plan, resume, store_path, request.command_line, feedback)
    return measure_in_batches(
        plan,
        pending,
        lambda batch: _build(request, scan, set_id, batch, feedback, resolved.description),
        build_batch_size(_build_slots(request), request.per_unit),
        resume,
        lambda batch_plan, batch_resume, continued: run_plan(
            batch_plan, batch_resume, store_path, None if continued else request.command_line, feedback
        ),
    )


def build_batch_size(jobs: int, per_unit: int = 1) -> int:
    """Configs built per batch: one round of the parallel nvcc jobs, each a translation unit of
    up to ``per_unit`` files (an imported set's file takes ~2 minutes of one core alone, nearly
    all of it torch's headers), then measured before the next batch is built."""
    return max(8, jobs * max(1, per_unit))


def _build_slots(request: BenchRequest) -> int:
    """How many kernels compile at once: ``--jobs`` here, or every thread of the cluster's workers."""
    if not request.cluster:
        return request.jobs
    from cuda_l2_explorer.importer.cluster import worker_threads

    return worker_threads(request.cluster)


def measure_in_batches(
    plan,
    pending: list[Shape],
    build: Callable[[list[Shape]], dict],
    batch_size: int,
    resume: tuple[str, dict] | None,
    measure: Callable[[object, tuple[str, dict] | list[tuple[str, dict]] | None, bool], BenchRun],
) -> BenchRun:
    """Build ``pending``'s kernels a batch at a time and measure each batch as soon as it is
    built, all in one run: a run stopped after any batch (time budget, Ctrl-C, a killed machine)
    keeps every config measured so far, and ``--resume`` builds only what is left. The time
    budget counts from here, builds included: no batch is built once it is spent, and a batch
    that was built is measured whole (its builds cost far more than its measurements).
    ``measure(plan, resume, continued)``: ``continued`` is true for every batch after the first,
    which continues the call's own runs (their command lines name the call already)."""
    deadline = None if plan.time_budget_s is None else time.monotonic() + plan.time_budget_s
    kernels: dict = {}
    run: BenchRun | None = None
    for start in range(0, max(len(pending), 1), batch_size):
        if run is not None and deadline is not None and time.monotonic() >= deadline:
            break  # resumable: the rest stays pending
        batch = pending[start : start + batch_size]
        kernels.update(build(batch))
        batch_plan = replace(plan, kernels=dict(kernels), measure_only=frozenset(batch), time_budget_s=None)
        run = measure(batch_plan, resume, run is not None)
        # Later batches continue the runs the first one created (one per GPU type of a cluster).
        resume = [(r.run_id, {}) for r in run.runs()]
    assert run is not None
    return run


def cutlass_of(scan, required: bool = False) -> str | None:
    """The CUTLASS version the set's kernels are built against, if any of them uses CUTLASS.

    ``required``: the builds happen here, so a set that includes CUTLASS or CuTe headers with none
    to be found is refused before anything is built or stored; otherwise every such file would be
    recorded as a compile error of the kernel's own (an H100 call lost 115 reference configs so)."""
    from cuda_l2_explorer.importer.harness.build import find_cutlass

    def uses(f) -> bool:
        return bool(CUTLASS_INCLUDE.search(f.path.read_text(errors="replace")))

    first = next((f for f in scan.files if uses(f)), None)  # one file settles the usual case
    found = find_cutlass() if first is not None else None
    if first is not None and found is None and required:
        users = sum(1 for f in scan.files if uses(f))
        raise UsageError(
            f"{users} of the set's {len(scan.files)} files include CUTLASS or CuTe headers "
            f"(e.g. {first.path.name}) and no CUTLASS was found: set CUTLASS_DIR to a CUTLASS "
            "checkout, or pip install nvidia-cutlass==4.2.0.0 (the tuner-build extra); nothing was "
            "built or stored"
        )
    return found.version if found else None


def run_plan(
    plan,
    resume: tuple[str, dict] | list[tuple[str, dict]] | None,
    store_path: Path | None,
    command_line: str | None,
    feedback: Feedback,
) -> BenchRun:
    """Run a harness plan with a progress bar, and say what it did (each run, on a cluster of
    several GPU types); ``command_line`` None continues the call's own runs (runner.run_plan)."""
    from cuda_l2_explorer.importer.harness import runner

    run_id, summary = feedback.with_run_bar(
        f"bench {plan.settings.mode}",
        lambda progress: runner.run_plan(
            runner.store_opener(store_path), plan, command_line, resume, progress=progress
        ),
    )
    done = BenchRun(run_id, summary)
    for run in done.runs():
        said, left = run.summary, run.summary["left"]
        feedback.say(
            f"run {run.run_id}: {said['measured_now']} configs measured now "
            f"({said['measured_now'] - said['done']} with failures), "
            f"{said['done_earlier']} done earlier"
            + (f", {left} left (--resume {run.run_id} measures them)" if left else "")
            + f"; {said['seconds']:.0f} s on {said['gpu_name']}",
        )
    return done


def _run_manifest_set(
    request: BenchRequest, settings, baselines: tuple[str, ...], set_dir: Path, feedback: Feedback
) -> BenchRun:
    """Our own set (kernels/<device>_<ACC>/manifest.json): its kernels run from the compiled
    library, so no per-config build; the set is recorded from the manifest."""
    from cuda_l2_explorer.importer.harness.plan import BenchPlan
    from cuda_l2_explorer.tuner import manifest as mf
    from cuda_l2_explorer.tuner.native import library_cutlass_version
    from cuda_l2_explorer.tuner.search import TUNER_WORKER

    store_path = request.store_path
    manifest = mf.load(set_dir / "manifest.json")
    shapes = request.choice.shapes(sorted(Shape(e["m"], e["n"], e["k"]) for e in manifest["configs"]))
    # No GPU (exit 7) is said before any advice about building the library it would run.
    gpus = _gpus(request)
    library = library_path(request.library)
    set_id = record_set(store_path, set_dir.resolve(), manifest, library)
    resume = find_resume(
        store_path, request.resume, set_id, settings.mode, retry=request.retry, feedback=feedback
    )
    if resume is not None:
        shapes = resumed_shapes(resume)
    plan = BenchPlan(
        shapes=shapes,
        settings=settings,
        baselines=baselines,
        set_id=set_id,
        accumulator=manifest["accumulator"],
        kernels=library_entries(manifest, library, shapes),
        gpus=gpus,
        timeout_s=request.timeout_s,
        time_budget_s=request.time_budget_s,
        l2="warm" if request.warm_l2 else "cold",
        cutlass=library_cutlass_version(library),
        worker=TUNER_WORKER,
        cluster=request.cluster,
    )
    run = run_plan(plan, resume, store_path, request.command_line, feedback)
    # The manifest records the harness's figures for the configs this run measured: on a cluster
    # of several GPU types, those of the run on the manifest's own GPU type, if any.
    own = next((r for r in run.runs() if r.summary["gpu"] == manifest.get("device")), run)
    with Store.open(store_path, read_only=True) as store:
        updated = mf.with_bench_evidence(manifest, store, set_id, own.run_id)
    mf.save(updated, set_dir / "manifest.json")
    return run


def _build(
    request: BenchRequest,
    scan,
    set_id: str,
    shapes: list[Shape],
    feedback: Feedback,
    description: str | None = None,
) -> dict:
    """Build the set's kernels for ``shapes`` (parallel, cached; the store is not held meanwhile)
    and record them in the store in one short transaction (``description``: where the set's
    files came from, for a downloaded one)."""
    from cuda_l2_explorer.importer.harness.build import build_all, make_config
    from cuda_l2_explorer.importer.harness.plan import KernelEntry
    from cuda_l2_explorer.importer.kernelset import padded_shape

    by_shape = {f.shape: f for f in scan.files}
    missing = [s for s in shapes if s not in by_shape]
    if missing:
        feedback.say(f"{len(missing)} config(s) have no kernel file in {scan.root}; baselines only for those")
    files = [by_shape[s] for s in shapes if s in by_shape]
    # On a cluster the kernels run on its GPU workers, not on a GPU here: the set's label (h100:
    # sm_90a) names their arch, and the workers compile with this config, not a guess of their own.
    config = make_config(scan.device) if request.cluster else None
    bar = feedback.bar(f"building kernels on {request.cluster}" if request.cluster else "building kernels")
    started = time.monotonic()
    try:
        results = build_all(
            files,
            jobs=request.jobs,
            progress=lambda done, total: bar.steps(done, total),
            config=config,
            cluster=request.cluster,
            per_unit=request.per_unit,
        )
    finally:
        bar.close()
    # Our library's sets carry a manifest.json and never come here: a SPEC section 4 folder is
    # another system's set, even when it sits in a folder named kernels/ (the reference system's does).
    origin = "imported"
    entries = {}
    with Store.open(request.store_path, with_bundled=False, views=False) as store, store.transaction():
        writes.upsert_kernel_set(
            store, set_id, scan.device, scan.accumulator, origin, str(scan.root), description
        )
        for f in files:
            result = results[f.path]
            pad = padded_shape(f.shape, f.pad) if f.pad else None
            entries[f.shape] = KernelEntry(
                module=str(result.module_path) if result.ok else None,
                pad_shape=pad.astuple() if pad and pad != f.shape else None,
                build_error=None if result.ok else (result.log or "compile failed")[-2000:],
            )
            writes.upsert_built_kernel(
                store,
                writes.BuiltKernel(
                    set_id=set_id,
                    shape=f.shape,
                    path=str(f.path),
                    source_sha256=f.sha256,
                    source=f.path.read_text(errors="replace"),
                    pad=f.pad,
                    build_ok=result.ok,
                    build_log=(result.log or "")[-4000:],
                ),
            )
    failed = sum(1 for r in results.values() if not r.ok)
    cached = sum(1 for r in results.values() if r.ok and r.cached)
    feedback.say(
        f"built {len(files) - failed} of {len(files)} kernels in {time.monotonic() - started:.0f} s "
        f"({cached} from the cache, {failed} failed to compile)"
    )
    return entries
