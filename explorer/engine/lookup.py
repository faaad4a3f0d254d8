"""Lookup for any (M, N, K) (SPEC §8): rank exact, covering and nearest configs with evidence.

``rank`` is a pure function over candidate rows so its rules can be property-tested:
1. exact: the set has the config itself;
2. covering: a fixed-shape kernel for M'>=M, N'>=N, K'>=K run on zero-padded inputs, ranked by
   measured time (padding included) when there is one, else by the padded volume it wastes;
3. nearest: a kernel that takes runtime shapes, from the configs nearest in log2 space, run at
   the true shape with no padding;
4. when nothing covers, say so and show the nearest configs for reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # polars is imported where frames are built: the GPU worker side has none
    import polars as pl

from cuda_l2_explorer.db.reads import Filters, config_candidates, resolve_filters
from cuda_l2_explorer.db.shapes import GRID_MAX, Shape
from cuda_l2_explorer.db.store import Store

TIERS = ("exact", "covering", "nearest", "uncovered")


@dataclass(frozen=True)
class Candidate:
    set_id: str
    gpu: str
    mode: str
    source: str  # 'published' or 'measured'
    shape: Shape
    runtime_shapes: bool = False
    speedup_best: float | None = None
    kernel_s: float | None = None
    kernel_padded_s: float | None = None
    best_baseline_s: float | None = None
    run_id: str | None = None
    run_source: str | None = None
    run_date: str | None = None
    set_name: str | None = None


@dataclass(frozen=True)
class Ranked:
    rank: int
    tier: str
    candidate: Candidate
    runs_at: str  # 'your shape', 'padded to M_N_K', or 'not runnable'
    padded_volume_ratio: float
    log2_distance: float
    predicted_speedup: float | None
    predicted_basis: str

    def record(self) -> dict:
        c = self.candidate
        return {
            "rank": self.rank,
            "tier": self.tier,
            "set_id": c.set_id,
            "gpu": c.gpu,
            "mode": c.mode,
            "m": c.shape.m,
            "n": c.shape.n,
            "k": c.shape.k,
            "runs_at": self.runs_at,
            "padded_volume_ratio": round(self.padded_volume_ratio, 4),
            "log2_distance": round(self.log2_distance, 4),
            "predicted_speedup": self.predicted_speedup,
            "predicted_basis": self.predicted_basis,
            "kernel_us": None if c.kernel_s is None else c.kernel_s * 1e6,
            "kernel_padded_us": None if c.kernel_padded_s is None else c.kernel_padded_s * 1e6,
            "evidence": {
                "source": c.source,
                "config": str(c.shape),
                "speedup_vs_best_baseline": c.speedup_best,
                "run_id": c.run_id,
                "from": c.run_source,
                "date": c.run_date,
            },
        }


@dataclass
class LookupResult:
    query: Shape
    covered: bool
    message: str
    candidates: list[Ranked] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "query": asdict(self.query),
            "covered": self.covered,
            "message": self.message,
            "candidates": [r.record() for r in self.candidates],
        }


def _tier(query: Shape, c: Candidate) -> str:
    if c.shape == query:
        return "exact"
    if c.runtime_shapes:
        return "nearest"
    if c.shape.covers(query):
        return "covering"
    return "uncovered"


def _time(c: Candidate, padded: bool) -> float:
    value = (c.kernel_padded_s or c.kernel_s) if padded else c.kernel_s
    return value if value is not None else math.inf


def _sort_key(query: Shape, tier: str, c: Candidate) -> tuple:
    ratio = c.shape.volume / query.volume
    distance = query.log2_distance(c.shape)
    speed = -(c.speedup_best or 0.0)
    if tier == "exact":
        primary: tuple = (_time(c, False), speed)
    elif tier == "covering":
        primary = (_time(c, True), ratio, speed)
    else:
        primary = (distance, _time(c, False), speed)
    return (TIERS.index(tier), *primary, c.shape.astuple(), c.set_id, c.gpu, c.mode, c.source, _total(c))


def _total(c: Candidate) -> tuple:
    """Every field, Nones first: a total order, so ties never depend on the input order."""
    out: list = []
    for f in fields(c):
        value = getattr(c, f.name)
        value = value.astuple() if isinstance(value, Shape) else value
        out.append((value is not None, value if value is not None else 0))
    return tuple(out)


def _prediction(query: Shape, tier: str, c: Candidate, baseline_at_query: dict) -> tuple[float | None, str]:
    if tier == "exact":
        return c.speedup_best, f"{c.source} speedup over the best baseline at your shape"
    if tier == "nearest":
        return c.speedup_best, f"estimate: {c.source} speedup at {c.shape}, kernel runs at your shape"
    if tier == "uncovered":
        return None, f"cannot run your shape; {c.source} speedup at {c.shape} is {_fmt(c.speedup_best)}"
    base = baseline_at_query.get((c.gpu, c.mode))
    kernel = c.kernel_padded_s or c.kernel_s
    if base is not None and kernel is not None:
        what = "with" if c.kernel_padded_s is not None else "without"
        return base / kernel, (
            f"measured best baseline at your shape / kernel at {c.shape} ({what} the padding copy)"
        )
    return c.speedup_best, (
        f"upper bound: {c.source} speedup at {c.shape}; baselines there ran the larger shape"
    )


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def rank(query: Shape, candidates: Sequence[Candidate], limit: int | None = 10) -> LookupResult:
    """Rank candidates for ``query``; deterministic whatever the input order."""
    tiers = {c: _tier(query, c) for c in candidates}
    runnable = [c for c in candidates if tiers[c] != "uncovered"]
    covered = bool(runnable)
    pool = runnable if covered else list(candidates)
    baseline_at_query = {}
    for c in candidates:
        if c.shape == query and c.best_baseline_s is not None:
            key = (c.gpu, c.mode)
            baseline_at_query[key] = min(baseline_at_query.get(key, math.inf), c.best_baseline_s)
    ordered = sorted(pool, key=lambda c: _sort_key(query, tiers[c], c))
    if not covered:
        ordered = sorted(
            pool, key=lambda c: (query.log2_distance(c.shape), *_sort_key(query, "uncovered", c))
        )
    if limit is not None:
        ordered = ordered[:limit]
    ranked = []
    for i, c in enumerate(ordered, start=1):
        tier = tiers[c]
        predicted, basis = _prediction(query, tier, c, baseline_at_query)
        runs_at = {
            "exact": "your shape",
            "nearest": "your shape",
            "covering": f"padded to {c.shape}",
            "uncovered": "not runnable",
        }[tier]
        ranked.append(
            Ranked(
                rank=i,
                tier=tier,
                candidate=c,
                runs_at=runs_at,
                padded_volume_ratio=c.shape.volume / query.volume,
                log2_distance=query.log2_distance(c.shape),
                predicted_speedup=predicted,
                predicted_basis=basis,
            )
        )
    return LookupResult(query, covered, _message(query, tiers, covered), ranked)


def _message(query: Shape, tiers: dict[Candidate, str], covered: bool) -> str:
    counts = {t: sum(1 for v in tiers.values() if v == t) for t in TIERS}
    if not tiers:
        return f"no data to answer {query}"
    if counts["exact"]:
        return f"{query}: exact config found ({counts['exact']} row(s))"
    if covered:
        parts = []
        if counts["covering"]:
            parts.append(f"{counts['covering']} covering config(s), run zero-padded")
        if counts["nearest"]:
            parts.append(f"{counts['nearest']} runtime-shape kernel(s) from nearby configs")
        return f"{query}: no exact config; " + "; ".join(parts)
    too_big = [name for name, v in zip("MNK", query.astuple(), strict=True) if v > GRID_MAX]
    why = f" ({', '.join(too_big)} above the largest config)" if too_big else ""
    return (
        f"nothing covers {query}{why}: no kernel here can run it; the nearest configs are shown "
        "for reference; compare the baselines at your shape with `bench`"
    )


def candidates_from_frame(frame: pl.DataFrame) -> list[Candidate]:
    out = []
    for row in frame.iter_rows(named=True):
        out.append(
            Candidate(
                set_id=row["set_id"],
                set_name=row["set_name"],
                gpu=row["gpu"],
                mode=row["mode"],
                source=row["source"],
                shape=Shape(int(row["m"]), int(row["n"]), int(row["k"])),
                runtime_shapes=bool(row["runtime_shapes"]),
                speedup_best=row["speedup_best"],
                kernel_s=row["kernel_s"],
                kernel_padded_s=row["kernel_padded_s"],
                best_baseline_s=row["best_baseline_s"],
                run_id=row["run_id"],
                run_source=row["run_source"],
                run_date=None if row["run_date"] is None else str(row["run_date"]),
            )
        )
    return out


def candidates(store: Store, filters: Filters) -> list[Candidate]:
    """The store's rows lookup ranks (one per set, GPU, mode, source and config)."""
    return candidates_from_frame(config_candidates(store, filters))


def lookup(
    store: Store,
    query: Shape,
    *,
    gpu: str | None = None,
    set_: str | None = None,
    mode: str | None = None,
    limit: int | None = 10,
) -> LookupResult:
    """The ranked answer for ``query`` among the store's rows that pass the filters (each checked
    against the store: an unknown GPU, set or mode raises)."""
    return rank(query, candidates(store, resolve_filters(store, gpu, set_, mode)), limit)
