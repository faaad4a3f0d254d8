"""Choose the kernel to export for an (M, N, K) and gather the evidence its README states.

Candidates are what ``lookup`` ranks (the store's rows, SPEC section 8: our set's kernels are
stored as parameters) plus every config of the kernel-library manifests given (``--manifest``, or
``$CUDA_L2_EXPLORER_KERNELS_DIR/*/manifest.json``; runtime-shape kernels, so lookup ranks them as
"nearest" unless the config is the query itself). They are ranked together with
:func:`engine.lookup.answer` (one GPU, one accumulator, the baselines as candidates), and export
follows the answer: the best-ranked kernel that can be written out (a store row with its source,
an imported SPEC section 4 file; our set's stored parameters; a manifest entry), unless the
baseline ranks above it: then export refuses (``anyway`` exports the kernel, and its README says
the baseline was predicted faster). Rows above it that carry no source (published results) are
listed with why they were skipped.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuda_l2_explorer.db import reads
from cuda_l2_explorer.db.errors import NotFoundError
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.db.views import BASELINES
from cuda_l2_explorer.engine.lookup import (
    BASELINE,
    DEFAULT_MODE,
    Candidate,
    LookupResult,
    Prediction,
    Ranked,
    answer,
    detect_machine_gpu,
    resolve_accumulator,
    scope_candidates,
)
from cuda_l2_explorer.importer.kernelset import entry_point, padded_shape
from cuda_l2_explorer.tuner.manifest import entry_kernel, entry_variant
from cuda_l2_explorer.tuner.manifest import load as load_manifest
from cuda_l2_explorer.tuner.materialize import render_config_source, set_dir_name
from cuda_l2_explorer.tuner.native import Variant

LIBRARY_SET_NAME = "ours"  # our kernel library's set name, as `tune` and `bench` record it in the store
_ENV_KERNELS_DIR = "CUDA_L2_EXPLORER_KERNELS_DIR"


@dataclass(frozen=True)
class Evidence:
    """The measurement a predicted speedup rests on."""

    source: str  # 'measured', 'published' or 'manifest' (our search's own measurement)
    gpu: str
    gpu_name: str | None
    mode: str
    date: str | None
    config: Shape  # where the numbers were taken
    kernel_us: float | None
    baseline: str | None  # the fastest baseline there
    baseline_us: float | None
    speedup: float | None  # over that baseline
    run_id: str | None
    per_baseline: tuple[tuple[str, float], ...] = ()  # (baseline, speedup), store rows only


@dataclass(frozen=True)
class Spec4Kernel:
    """An imported SPEC section 4 file, exported as it was measured."""

    source: str
    origin: str | None  # the path it was read from
    pad: tuple[int, int, int] | None  # BM, BN, BK of the padding rule
    runtime_shapes: bool = False


@dataclass(frozen=True, eq=False)
class LibraryKernel:
    """A kernel of our library: a manifest entry, rendered through ``tuner.emit``."""

    entry: dict[str, Any]
    config: Any  # the family's config object (name, family, to_dict())
    variant: Variant
    manifest: str | None
    cutlass_version: str | None
    harness_version: str | None


@dataclass(frozen=True, eq=False)
class ExportPlan:
    query: Shape
    config: Shape  # the config lookup chose (the kernel's own shape for fixed-shape kernels)
    set_id: str
    set_name: str
    device: str
    accumulator: str
    tier: str  # exact, covering or nearest
    rank: int
    skipped: int  # better-ranked rows with no kernel to write out
    predicted_speedup: float | None
    predicted_basis: str
    kernel: Spec4Kernel | LibraryKernel
    evidence: Evidence
    skipped_rows: tuple[str, ...] = ()  # each skipped row and why
    predicted_low: float | None = None
    predicted_high: float | None = None
    anyway: str | None = None  # the baseline lookup ranks above this kernel, when exported --anyway

    @property
    def predicted_text(self) -> str:
        """The predicted speedup with its interval (an upper bound: '<= x')."""
        prediction = Prediction(
            self.predicted_speedup, self.predicted_low, self.predicted_high, False, self.predicted_basis
        )
        return prediction.text()

    @property
    def function(self) -> str:
        return entry_point(self.device, self.accumulator)

    @property
    def library(self) -> bool:
        return isinstance(self.kernel, LibraryKernel)

    @property
    def runtime_shapes(self) -> bool:
        return self.library or bool(getattr(self.kernel, "runtime_shapes", False))

    @property
    def pad_target(self) -> Shape | None:
        """The shape a fixed-shape kernel runs at (its config, rounded up to its tiles)."""
        if self.runtime_shapes:
            return None
        assert isinstance(self.kernel, Spec4Kernel)
        return padded_shape(self.config, self.kernel.pad)

    @property
    def runs_at(self) -> str:
        if self.runtime_shapes:
            return "your shape (runtime-shape kernel, no padding)"
        target = self.pad_target
        if target == self.query:
            return "your shape (the kernel's own config)"
        return f"your shape zero-padded to {target} (padding wrapper; C sliced back)"

    @property
    def kernel_shape(self) -> Shape:
        """The shape the SPEC section 4 file is named after."""
        return self.query if self.runtime_shapes else self.config

    @property
    def spec4_path(self) -> str:
        return f"{self.device}_{self.accumulator}/{self.kernel_shape}.cu"

    def spec4_source(self) -> str:
        if isinstance(self.kernel, Spec4Kernel):
            return self.kernel.source
        entry = {**self.kernel.entry, "m": self.query.m, "n": self.query.n, "k": self.query.k}
        return render_config_source(entry, self.device, self.accumulator)

    def kernel_summary(self) -> str:
        if isinstance(self.kernel, LibraryKernel):
            cfg = self.kernel.config
            return f"{cfg.name} (family {cfg.family}), variant {self.kernel.variant.label}"
        return f"SPEC section 4 file {self.kernel.origin or self.spec4_path} from set {self.set_id}"

    def describe(self) -> dict[str, Any]:
        """A JSON-able summary (the CLI's --json and the TUI's dialog show it)."""
        ev = self.evidence
        return {
            "query": str(self.query),
            "config": str(self.config),
            "set_id": self.set_id,
            "tier": self.tier,
            "lookup_rank": self.rank,
            "kernel": self.kernel_summary(),
            "runtime_shapes": self.runtime_shapes,
            "runs_at": self.runs_at,
            "predicted_speedup": self.predicted_speedup,
            "predicted_low": self.predicted_low,
            "predicted_high": self.predicted_high,
            "predicted_basis": self.predicted_basis,
            "skipped": list(self.skipped_rows),
            "exported_over_baseline": self.anyway,
            "evidence": {
                "source": ev.source,
                "gpu": ev.gpu,
                "gpu_name": ev.gpu_name,
                "mode": ev.mode,
                "date": ev.date,
                "config": str(ev.config),
                "kernel_us": ev.kernel_us,
                "baseline": ev.baseline,
                "baseline_us": ev.baseline_us,
                "speedup": ev.speedup,
                "run_id": ev.run_id,
            },
        }


# ---------------------------------------------------------------------------- manifests


def default_manifests() -> list[Path]:
    """``$CUDA_L2_EXPLORER_KERNELS_DIR/*/manifest.json``, else none.

    Never the repository's kernels/ folder: a checkout and an installed copy must choose alike.
    Our set needs no manifest to be exported: the bundled store holds its kernels' parameters
    and its measured runs.
    """
    folder = os.environ.get(_ENV_KERNELS_DIR)
    root = Path(folder) if folder else None
    return sorted(root.glob("*/manifest.json")) if root is not None and root.is_dir() else []


def _manifest_candidates(
    paths: Sequence[Path], gpu: str | None, set_: str | None, mode: str
) -> dict[Candidate, LibraryKernel]:
    out: dict[Candidate, LibraryKernel] = {}
    for path in paths:
        manifest = load_manifest(path)
        device = str(manifest.get("device", "h100")).lower()
        set_id = f"{LIBRARY_SET_NAME}/{set_dir_name(manifest)}"
        if set_ is not None and set_ not in (set_id, LIBRARY_SET_NAME):
            continue
        for entry in manifest["configs"]:
            label = str(entry.get("gpu") or manifest.get("gpu") or device).lower()
            entry_mode = str(entry.get("mode", "offline"))
            if (gpu is not None and gpu not in (label, device)) or mode != entry_mode:
                continue
            out[_manifest_candidate(path, manifest, entry, set_id, label, entry_mode)] = LibraryKernel(
                entry=entry,
                config=entry_kernel(entry),
                variant=entry_variant(entry),
                manifest=str(path),
                cutlass_version=manifest.get("cutlass_version"),
                harness_version=manifest.get("harness_version"),
            )
    return out


def _manifest_candidate(
    path: Path, manifest: dict, entry: dict, set_id: str, gpu: str, mode: str
) -> Candidate:
    """A manifest entry as lookup ranks it: our search's figures (the kernel's p10-p90, the best
    baseline's median) and its family's shape limits."""
    us = 1e-6
    kernel_us, baseline_us = entry.get("time_us"), entry.get("best_baseline_us")
    p10, p90 = entry.get("p10_us"), entry.get("p90_us")
    speedup = baseline_us / kernel_us if kernel_us and baseline_us else None
    outcome = None
    if speedup is not None:
        low, high = baseline_us / (p90 or kernel_us), baseline_us / (p10 or kernel_us)
        outcome = "win" if low > 1 else "loss" if high < 1 else "same"
    params = entry["kernel"]
    return Candidate(
        set_id=set_id,
        set_name=LIBRARY_SET_NAME,
        gpu=gpu,
        mode=mode,
        source="measured",
        shape=Shape(entry["m"], entry["n"], entry["k"]),
        runtime_shapes=True,
        speedup_best=speedup,
        kernel_s=None if kernel_us is None else kernel_us * us,
        kernel_p10_s=None if p10 is None else p10 * us,
        kernel_p90_s=None if p90 is None else p90 * us,
        best_baseline_s=None if baseline_us is None else baseline_us * us,
        baseline_p10_s=None if baseline_us is None else baseline_us * us,  # the search keeps its median only
        baseline_p90_s=None if baseline_us is None else baseline_us * us,
        best_baseline=entry.get("best_baseline"),
        outcome=outcome,
        run_id=entry.get("run_id"),
        run_source=str(path),
        run_date=entry.get("date"),
        accumulator=str(manifest.get("accumulator", "")) or None,
        family=params.get("family"),
        tile_m=params.get("tile_m"),
        library=True,
    )


# ---------------------------------------------------------------------------- the store


def _store_candidates(
    store: Store | None,
    query: Shape,
    gpu: str | None,
    set_: str | None,
    mode: str | None,
    accumulator: str | None,
    have_manifests: bool,
) -> tuple[list[Candidate], str | None, str]:
    """(the store's candidates, the GPU asked for (resolved), the accumulator)."""
    if store is None:
        return [], gpu, resolve_accumulator(accumulator)
    try:
        candidates, filters, code, _ = scope_candidates(
            store, query, gpu=gpu, set_=set_, mode=mode, accumulator=accumulator
        )
    except NotFoundError:
        if have_manifests:  # the filter names our library (or the store is empty): manifests only
            return [], gpu, resolve_accumulator(accumulator)
        raise
    return candidates, filters.gpu, code


def _stored_library_kernel(store: Store, set_id: str, shape: Shape) -> tuple[LibraryKernel, str, str]:
    """A stored kernel of our library, rebuilt from its parameters (it renders like a manifest entry)."""
    row = reads.library_kernel(store, set_id, shape)
    params = json.loads(row["params"])
    entry = {"m": shape.m, "n": shape.n, "k": shape.k, **params}
    kernel = LibraryKernel(
        entry=entry,
        config=entry_kernel(entry),
        variant=entry_variant(entry),
        manifest=None,
        cutlass_version=None,
        harness_version=row["harness"],
    )
    return kernel, row["device"], row["accumulator"]


def _stored_kernel(store: Store, set_id: str, shape: Shape) -> tuple[Spec4Kernel, str, str]:
    """The stored SPEC section 4 kernel with its set's device label and accumulator."""
    row = reads.source_kernel(store, set_id, shape)
    pad = (row["pad_bm"], row["pad_bn"], row["pad_bk"])
    kernel = Spec4Kernel(
        source=row["source"],
        origin=row["path"],
        # The padding rule: a tile not declared counts as 1 (that dimension is not padded).
        pad=None if all(p is None for p in pad) else (pad[0] or 1, pad[1] or 1, pad[2] or 1),
        runtime_shapes=bool(row["runtime_shapes"]),
    )
    return kernel, row["device"], row["accumulator"]


def _store_evidence(store: Store, c: Candidate) -> Evidence:
    rows = reads.config_speedups(store, c.set_id, c.gpu, c.mode, c.source, c.shape, c.run_id)
    per = {r["baseline"]: r for r in rows.iter_rows(named=True)}
    seven = [per[b] for b in BASELINES if b in per and per[b]["speedup"] is not None]
    # The fastest baseline is the one the kernel's speedup is smallest against.
    best = min(seven, key=lambda r: r["speedup"]) if seven else None
    gpu_name = None
    if c.run_id is not None:
        gpu_name = reads.run_gpu_name(store, c.run_id)
    return Evidence(
        source=c.source,
        gpu=c.gpu,
        gpu_name=gpu_name,
        mode=c.mode,
        date=None if c.run_date is None else str(c.run_date)[:10],
        config=c.shape,
        kernel_us=None if c.kernel_s is None else c.kernel_s * 1e6,
        baseline=None if best is None else best["baseline"],
        baseline_us=None if best is None or best["baseline_s"] is None else best["baseline_s"] * 1e6,
        speedup=c.speedup_best,
        run_id=c.run_id,
        per_baseline=tuple((b, per[b]["speedup"]) for b in sorted(per) if per[b]["speedup"] is not None),
    )


def _manifest_evidence(c: Candidate, kernel: LibraryKernel) -> Evidence:
    entry = kernel.entry
    return Evidence(
        source="manifest",
        gpu=c.gpu,
        gpu_name=entry.get("gpu_name"),
        mode=c.mode,
        date=entry.get("date"),
        config=c.shape,
        kernel_us=entry.get("time_us"),
        baseline=entry.get("best_baseline"),
        baseline_us=entry.get("best_baseline_us"),
        speedup=c.speedup_best,
        run_id=entry.get("run_id"),
    )


# ---------------------------------------------------------------------------- choosing


class KeepBaseline(NotFoundError):
    """Lookup's answer is the baseline: there is no kernel to export that beats it (exit code 4)."""


def plan_export(
    store: Store | None,
    query: Shape,
    *,
    gpu: str | None = None,
    set_: str | None = None,
    mode: str | None = None,
    manifests: Sequence[Path] | None = None,
    accumulator: str | None = None,
    any_gpu: bool = False,
    anyway: bool = False,
    machine_gpu: Any = None,
) -> ExportPlan:
    """The kernel lookup's answer for ``query`` names, or the best-ranked one that can be written
    out, with its evidence.

    ``manifests`` None: the default ones (:func:`default_manifests`). ``machine_gpu``: this
    machine's GPU label (None: ask the driver, as lookup does). Raises KeepBaseline when lookup
    ranks the baseline above every kernel that can be written out (unless ``anyway``), and
    NotFoundError when no exportable kernel can run ``query`` (saying what was found instead).
    """
    gpu = gpu.strip().lower() if gpu else None
    paths = default_manifests() if manifests is None else list(manifests)
    stored, gpu, code = _store_candidates(store, query, gpu, set_, mode, accumulator, bool(paths))
    library = {
        c: k
        for c, k in _manifest_candidates(paths, gpu, set_, mode or DEFAULT_MODE).items()
        if c.accumulator in (None, code)
    }
    if machine_gpu is None and gpu is None and not any_gpu:
        machine_gpu = detect_machine_gpu()
    result = answer(query, [*stored, *library], gpu=gpu, any_gpu=any_gpu, machine_gpu=machine_gpu, limit=None)
    skipped: list[str] = []
    baseline: Ranked | None = None
    for ranked in result.candidates:
        c = ranked.candidate
        if ranked.tier == "uncovered":
            break
        if ranked.tier == BASELINE:
            if not result.covered:
                break  # nothing here can run the shape: --anyway would not help
            if not anyway:
                raise KeepBaseline(_keep_baseline_message(result, ranked, skipped))
            baseline = baseline or ranked
            continue
        if c in library:
            kernel: Spec4Kernel | LibraryKernel = library[c]
            evidence = _manifest_evidence(c, library[c])
            device, accumulator_code = c.set_id.split("/", 1)[1].split("_", 1)
        elif store is not None and c.has_source:
            kernel, device, accumulator_code = _stored_kernel(store, c.set_id, c.shape)
            evidence = _store_evidence(store, c)
        elif store is not None and c.library:
            kernel, device, accumulator_code = _stored_library_kernel(store, c.set_id, c.shape)
            evidence = _store_evidence(store, c)
        else:
            skipped.append(
                f"rank {ranked.rank} {c.set_id} {c.shape}: {c.source} results only, no kernel source"
            )
            continue
        return ExportPlan(
            query=query,
            config=c.shape,
            set_id=c.set_id,
            set_name=c.set_name or c.set_id.split("/")[0],
            device=device,
            accumulator=accumulator_code,
            tier=ranked.tier,
            rank=ranked.rank,
            skipped=len(skipped),
            predicted_speedup=ranked.predicted_speedup,
            predicted_basis=ranked.predicted_basis,
            kernel=kernel,
            evidence=evidence,
            skipped_rows=tuple(skipped),
            predicted_low=ranked.predicted_low,
            predicted_high=ranked.predicted_high,
            anyway=None if baseline is None else f"rank {baseline.rank}, {baseline.predicted_basis}",
        )
    raise NotFoundError(_nothing_message(query, result, [*stored, *library], skipped, bool(paths)))


def _skipped_text(skipped: Sequence[str], most: int = 3) -> str:
    more = f" and {len(skipped) - most} more" if len(skipped) > most else ""
    return "; ".join(skipped[:most]) + more


def _keep_baseline_message(result: LookupResult, baseline: Ranked, skipped: Sequence[str]) -> str:
    anyway = "--anyway exports the best kernel that has a source, with a warning in its README"
    if skipped:
        return (
            f"not exporting {result.query}: what lookup ranks above the baseline is not exportable "
            f"({_skipped_text(skipped)}); then it says {baseline.predicted_basis}; {anyway}"
        )
    return f"not exporting {result.query}: lookup says {result.answer}; {anyway}"


def _nothing_message(
    query: Shape,
    result: LookupResult,
    candidates: Sequence[Candidate],
    skipped: Sequence[str],
    have_manifests: bool,
) -> str:
    limits = sorted({why for c in candidates if (why := c.why_not(query)) is not None})
    cannot = f"our runtime-shape kernels cannot run it: {', '.join(limits)}" if limits else ""
    if skipped:
        advice = cannot or (
            "benchmark a kernel set folder (which stores its sources) "
            "or pass --manifest of our kernel library"
        )
        return (
            f"no kernel source to export for {query}: the {len(skipped)} config(s) lookup ranks for it carry "
            f"published results only ({_skipped_text(skipped)}); {advice}"
        )
    if limits:
        return f"nothing can run {query}: {cannot}"
    where = "" if have_manifests else " (no kernel manifest found; pass --manifest)"
    gpu = f" for {result.gpu}" if result.gpu else ""
    return f"no kernel in the store or the manifests can run {query}{gpu}{where}"


def format_us(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.2f} us"
