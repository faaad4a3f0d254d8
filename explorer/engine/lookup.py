"""Lookup for any (M, N, K) (SPEC §8): rank exact, covering and nearest configs and the baselines,
with the evidence, and name the winner.

``rank`` is a pure function over candidate rows so its rules can be property-tested:
1. exact: the set has the config itself;
2. covering: a fixed-shape kernel for M'>=M, N'>=N, K'>=K run on zero-padded inputs, ranked by
   measured time (padding included) when there is one, else by the padded volume it wastes;
3. nearest: a kernel that takes runtime shapes (and whose family's limits allow the shape), from
   the configs nearest in log2 space, run at the true shape with no padding;
4. when nothing covers, say so and show the nearest configs for reference.
The best baseline is a candidate too: a kernel ranks above it only when its predicted speedup
beats it beyond the run-to-run spread (the low end of its interval above 1); otherwise the answer
is "keep <baseline>". A published ratio (the reference system's host timing, no spread) never
ranks above a baseline measured on that GPU and mode; where nothing was measured it is the advice,
said to be only published. One GPU and one accumulator per answer: ``lookup`` picks the GPU (this
machine's, else the one with the most measured rows for the shape) unless told otherwise.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from cuda_l2_explorer.db import reads
from cuda_l2_explorer.db.errors import UsageError
from cuda_l2_explorer.db.reads import Filters, resolve_filters
from cuda_l2_explorer.db.shapes import GRID_MAX, Shape
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.db.views import HEADLINE_METRIC
from cuda_l2_explorer.engine.stats import measure_command

TIERS = ("exact", "covering", "nearest", "uncovered")
BASELINE = "baseline"  # the tier (and set_id) of a "keep the baseline" entry
FP32_ACCUMULATE = "F32F16F16F32"
FP16_ACCUMULATE = "F16F16F16F16"
ACCUMULATORS = {"fp32": FP32_ACCUMULATE, "fp16": FP16_ACCUMULATE}
DEFAULT_MODE = "offline"  # device time, SPEC §7's headline metric
PUBLISHED = "published"  # the metric of a published ratio: the reference system's host-timed means
# How a figure's metric reads in a sentence (SPEC §7: every number says which metric it is).
METRIC_WORDS = {
    "device_time": "device time",
    "isolated_call": "isolated-call time",
    PUBLISHED: "published, host-timed",
}
_DETECT = object()  # lookup(machine_gpu=...) default: ask the machine


@dataclass(frozen=True, eq=False)  # identity: rows are keys of the ranking's dicts, thousands a lookup
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
    accumulator: str | None = None
    family: str | None = None  # our kernels' family (its shape limits), None for imported files
    tile_m: int | None = None
    outcome: str | None = None  # win / loss / same over the best baseline at its config
    best_baseline: str | None = None  # which baseline that is
    kernel_p10_s: float | None = None
    kernel_p90_s: float | None = None
    kernel_padded_p10_s: float | None = None
    kernel_padded_p90_s: float | None = None
    baseline_p10_s: float | None = None
    baseline_p90_s: float | None = None
    has_source: bool = False  # an imported SPEC section 4 file is stored: export can write it
    library: bool = False  # a kernel of our library, stored as parameters: export can render it

    @property
    def metric(self) -> str | None:
        """What its figures measure: a measured row the mode's own metric (device time offline),
        a published row the reference system's host timing (SPEC §5), never compared with it."""
        if self.source == PUBLISHED:
            return PUBLISHED
        return HEADLINE_METRIC.get(self.mode, self.mode) if self.source == "measured" else None

    def why_not(self, query: Shape) -> str | None:
        """Why this runtime-shape kernel cannot run ``query`` (its family's declared limits)."""
        if not self.runtime_shapes or self.family is None:
            return None
        return _family_limits(self.family, self.tile_m, query)


@functools.lru_cache(maxsize=256)
def _family_limits(family_name: str, tile_m: int | None, query: Shape) -> str | None:
    from cuda_l2_explorer.tuner.config import ConfigError
    from cuda_l2_explorer.tuner.families import family_of

    try:
        family = family_of(family_name)
    except ConfigError:
        return None  # a family this version does not know: its own checks decide at run time
    why = family.why_not(query.m, query.n, query.k, {"tile_m": tile_m})
    return None if why is None else f"{why} (family {family.name})"


@dataclass(frozen=True)
class Prediction:
    """A predicted speedup over the best baseline, the interval it may fall in, and its basis."""

    speedup: float | None
    low: float | None  # None: no lower bound (an upper-bound estimate)
    high: float | None
    beats: bool  # beats the best baseline beyond the run-to-run spread
    basis: str
    # The baseline the ratio is over where it is not the candidate's own (its time measured at your
    # shape, or at the smallest config covering it, by another row).
    over: str | None = None

    def text(self) -> str:
        if self.speedup is None:
            return "n/a"
        if self.low is None:
            return f"<= {self.high or self.speedup:.3f}x"
        if self.high is None or math.isclose(self.low, self.high):
            return f"{self.speedup:.3f}x"
        return f"{self.speedup:.3f}x [{self.low:.3f}-{self.high:.3f}]"


@dataclass(frozen=True)
class Ranked:
    rank: int
    tier: str
    candidate: Candidate
    runs_at: str  # 'your shape', 'padded to M_N_K', 'not runnable', or a baseline's library call
    padded_volume_ratio: float
    log2_distance: float
    predicted_speedup: float | None
    predicted_basis: str
    predicted_low: float | None = None
    predicted_high: float | None = None
    beats_baseline: bool = False
    predicted_over: str | None = None  # Prediction.over

    @property
    def prediction(self) -> Prediction:
        return Prediction(
            self.predicted_speedup,
            self.predicted_low,
            self.predicted_high,
            self.beats_baseline,
            self.predicted_basis,
            self.predicted_over,
        )

    @property
    def baseline(self) -> str | None:
        """The baseline the predicted ratio is over."""
        return self.predicted_over or self.candidate.best_baseline

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
            "predicted_low": self.predicted_low,
            "predicted_high": self.predicted_high,
            "beats_baseline": self.beats_baseline,
            "predicted_basis": self.predicted_basis,
            "metric": c.metric,
            "kernel_us": None if c.kernel_s is None else c.kernel_s * 1e6,
            "kernel_padded_us": None if c.kernel_padded_s is None else c.kernel_padded_s * 1e6,
            "baseline": self.baseline,
            "evidence": {
                "source": c.source,
                "metric": c.metric,
                "config": str(c.shape),
                "speedup_vs_best_baseline": c.speedup_best,
                "baseline": c.best_baseline,
                "baseline_us": None if c.best_baseline_s is None else c.best_baseline_s * 1e6,
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
    answer: str = ""  # the verdict: "use <kernel> ..." or "keep <baseline> ...; best measured kernel ..."
    measure: str | None = None  # the bench command for a kernel the answer names that is only published
    gpu: str | None = None  # the GPU answered for (None: several, with --any-gpu)
    gpu_choice: str = ""  # how that GPU was chosen
    mode: str | None = None
    accumulator: str | None = None
    notes: list[str] = field(default_factory=list)  # rows left out of the answer, and why

    @property
    def winner(self) -> Ranked | None:
        return self.candidates[0] if self.candidates else None

    @property
    def keep_baseline(self) -> bool:
        return self.winner is not None and self.winner.tier == BASELINE

    def scope(self) -> str:
        """What the answer is about: the GPU (and how it was chosen), the mode, the accumulator."""
        gpu = self.gpu or "any GPU"
        choice = f" ({self.gpu_choice})" if self.gpu_choice else ""
        acc = {FP32_ACCUMULATE: "fp32 accumulation", FP16_ACCUMULATE: "fp16 accumulation"}.get(
            self.accumulator or "", self.accumulator or "any accumulator"
        )
        return f"{self.query} on {gpu}{choice}, {self.mode or 'any mode'}, {acc}"

    def to_json(self) -> dict:
        return {
            "query": asdict(self.query),
            "covered": self.covered,
            "message": self.message,
            "answer": self.answer,
            "keep_baseline": self.keep_baseline,
            "gpu": self.gpu,
            "gpu_choice": self.gpu_choice,
            "mode": self.mode,
            "accumulator": self.accumulator,
            "notes": list(self.notes),
            "measure": self.measure,
            "candidates": [r.record() for r in self.candidates],
        }


# ---------------------------------------------------------------------------- ranking (pure)


def _tier(query: Shape, c: Candidate) -> str:
    if c.shape == query:
        return "exact"
    if c.runtime_shapes:
        return "nearest" if c.why_not(query) is None else "uncovered"
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
    return (TIERS.index(tier), *primary, c.shape.astuple(), c.set_id, c.gpu, c.mode, c.source, c.run_id or "")


def _total_keys(keys: dict[Candidate, tuple]) -> dict[Candidate, tuple]:
    """``keys`` made a total order: where two candidates tie, every field breaks the tie (only
    there: comparing every field of thousands of rows would cost more than the ranking)."""
    seen: dict[tuple, int] = {}
    for key in keys.values():
        seen[key] = seen.get(key, 0) + 1
    return {c: (key, _total(c) if seen[key] > 1 else ()) for c, key in keys.items()}


def _total(c: Candidate) -> tuple:
    """Every field, Nones first: a total order, so ties never depend on the input order."""
    out: list = []
    for f in fields(c):
        value = getattr(c, f.name)
        value = value.astuple() if isinstance(value, Shape) else value
        out.append((value is not None, value if value is not None else 0))
    return tuple(out)


def _ratio_spread(
    num: float | None,
    num_p10: float | None,
    num_p90: float | None,
    den_p10: float | None,
    den_p90: float | None,
) -> tuple[float | None, float | None]:
    """(low, high) of num/den from the p10 and p90 of each (None when a spread is missing)."""
    if num is None or None in (num_p10, num_p90, den_p10, den_p90) or not den_p10 or not den_p90:
        return None, None
    return num_p10 / den_p90, num_p90 / den_p10  # type: ignore[operator]


@dataclass(frozen=True)
class _AtQuery:
    """The best baseline measured at the query shape itself (on one GPU, in one mode)."""

    seconds: float
    p10: float | None
    p90: float | None
    name: str | None


def _prediction(
    query: Shape,
    tier: str,
    c: Candidate,
    at_query: dict[tuple[str, str], _AtQuery],
    covering_base: dict[tuple[str, str], tuple[float, str | None]] | None = None,
) -> Prediction:
    point = c.speedup_best
    measured_spread = _ratio_spread(
        c.best_baseline_s, c.baseline_p10_s, c.baseline_p90_s, c.kernel_p10_s, c.kernel_p90_s
    )
    if tier == "exact":
        low, high = measured_spread if measured_spread[0] is not None else (point, point)
        spread = "p10-p90 spread" if measured_spread[0] is not None else "no spread published"
        return Prediction(point, low, high, c.outcome == "win", f"{c.source} at your shape ({spread})")
    if tier == "nearest":
        low, high = measured_spread if measured_spread[0] is not None else (point, point)
        beats = low is not None and low > 1.0
        return Prediction(
            point, low, high, beats, f"estimate: {c.source} speedup at {c.shape}, kernel runs at your shape"
        )
    if tier == "uncovered":
        why = c.why_not(query) or f"{c.shape} is smaller than your shape"
        return Prediction(
            None, None, None, False, f"cannot run your shape ({why}); {c.source} at {c.shape}: {_fmt(point)}"
        )
    base = at_query.get((c.gpu, c.mode))
    padded = c.kernel_padded_s is not None
    kernel = c.kernel_padded_s if padded else c.kernel_s
    if base is not None and kernel is not None:
        k10, k90 = (
            (c.kernel_padded_p10_s, c.kernel_padded_p90_s) if padded else (c.kernel_p10_s, c.kernel_p90_s)
        )
        low, high = _ratio_spread(base.seconds, base.p10, base.p90, k10, k90)
        what = "with" if padded else "without"
        return Prediction(
            base.seconds / kernel,
            low,
            high,
            low is not None and low > 1.0,
            f"measured best baseline at your shape / kernel at {c.shape} ({what} the padding copy)",
            base.name,
        )
    # A baseline at a measured shape that covers yours costs at least what it costs at yours (a
    # GEMM does not slow down as every dimension shrinks), so that time over the padded kernel's
    # bounds the speedup too: a config 200x your volume gets ~0.01, not its own ratio.
    bound, over = (covering_base or {}).get((c.gpu, c.mode), (None, None))
    if bound is not None and kernel is not None and point is not None and bound / kernel < point:
        return Prediction(
            bound / kernel,
            None,
            bound / kernel,
            False,
            f"upper bound: the best baseline at the smallest measured config covering your shape / "
            f"kernel at {c.shape}",
            over,
        )
    return Prediction(
        point,
        None,
        point,
        False,
        f"upper bound: {c.source} speedup at {c.shape}; baselines there ran the larger shape",
    )


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _at_query(query: Shape, candidates: Sequence[Candidate]) -> dict[tuple[str, str], _AtQuery]:
    """Per (GPU, mode): the fastest best-baseline time measured at the query shape."""
    out: dict[tuple[str, str], _AtQuery] = {}
    for c in candidates:
        if c.shape == query and c.best_baseline_s is not None:
            key = (c.gpu, c.mode)
            if key not in out or c.best_baseline_s < out[key].seconds:
                out[key] = _AtQuery(c.best_baseline_s, c.baseline_p10_s, c.baseline_p90_s, c.best_baseline)
    return out


def _covering_base(
    query: Shape, candidates: Sequence[Candidate]
) -> dict[tuple[str, str], tuple[float, str | None]]:
    """Per (GPU, mode): the best-baseline time measured at the smallest config covering the query
    (not the query itself: that is :func:`_at_query`), an upper bound of the baseline's time there,
    and that baseline's name."""
    out: dict[tuple[str, str], tuple[int, float, str]] = {}
    for c in candidates:
        if c.source == PUBLISHED or c.best_baseline_s is None or not c.shape.covers(query):
            continue
        key, mine = (c.gpu, c.mode), (c.shape.volume, c.best_baseline_s, c.best_baseline or "")
        if key not in out or mine < out[key]:
            out[key] = mine
    return {key: (seconds, name or None) for key, (_, seconds, name) in out.items()}


def _baseline_entry(
    gpu: str, mode: str, query: Shape, group: Sequence[Candidate], best: Candidate | None
) -> tuple[Candidate, Prediction]:
    """The "keep the baseline" candidate of one GPU and mode, with the figure it rests on: the best
    baseline at your shape when a row there names it, else at the nearest config where it was
    measured, else at the best kernel's config (measured times before published names)."""
    named = [c for c in group if c.best_baseline]
    exact = [c for c in named if c.shape == query]
    timed = [c for c in named if c.best_baseline_s is not None]
    # The fields the figure shows break ties: equal on those, either row gives the same figure.
    if exact:
        where: Candidate | None = min(
            exact,
            key=lambda c: (c.best_baseline_s is None, c.best_baseline_s or 0, c.source, c.best_baseline),
        )
    elif timed:
        where = min(
            timed,
            key=lambda c: (
                query.log2_distance(c.shape),
                c.best_baseline_s,
                c.shape.astuple(),
                c.best_baseline,
            ),
        )
    else:
        where = best if best is not None and best.best_baseline else None
    entry = Candidate(
        set_id=BASELINE,
        set_name=where.best_baseline if where else "best baseline",
        gpu=gpu,
        mode=mode,
        source=where.source if where else "n/a",
        shape=where.shape if where else query,
        best_baseline=where.best_baseline if where else None,
        best_baseline_s=where.best_baseline_s if where else None,
        kernel_s=where.best_baseline_s if where else None,
    )
    figure = _baseline_figure(entry, query)
    return entry, Prediction(1.0, 1.0, 1.0, False, f"keep {_baseline_name(entry)}: {figure}")


def _baseline_name(entry: Candidate) -> str:
    return entry.best_baseline or "the best baseline (torch.matmul / cuBLAS / cuBLASLt)"


def _baseline_figure(entry: Candidate, query: Shape) -> str:
    where = "your shape" if entry.shape == query else str(entry.shape)
    if entry.best_baseline_s is not None:
        words = METRIC_WORDS.get(entry.metric or "", entry.metric)
        figure = f"{entry.best_baseline_s * 1e6:.2f} us of {words}"
        return f"{figure} at {where}, measured on {entry.gpu} {entry.mode}"
    if entry.best_baseline:
        source = "published (host-timed)" if entry.source == PUBLISHED else entry.source
        return f"the fastest of the seven at {where} in the {source} results for {entry.gpu} {entry.mode}"
    return f"no baseline figure for {entry.gpu} {entry.mode}: measure it with `bench`"


def rank(query: Shape, candidates: Sequence[Candidate], limit: int | None = 10) -> LookupResult:
    """Rank candidates and the baselines for ``query``; deterministic whatever the input order.

    First the kernels whose prediction for your shape beats the best baseline beyond the
    run-to-run spread: exact and covering rows measured against the baseline at your shape, and
    for each runtime-shape set only its config nearest to your shape (the estimate it gives;
    a win measured far away says nothing about your shape). Then one "keep the baseline" entry
    per GPU and mode, then every other kernel; each part in tier order (exact, covering, nearest).
    """
    tiers = {c: _tier(query, c) for c in candidates}
    runnable = [c for c in candidates if tiers[c] != "uncovered"]
    covered = bool(runnable)
    pool = runnable if covered else list(candidates)
    at_query = _at_query(query, candidates)
    covering_base = _covering_base(query, candidates)
    predictions = {c: _prediction(query, tiers[c], c, at_query, covering_base) for c in pool}
    if covered:
        order = _total_keys({c: _sort_key(query, tiers[c], c) for c in pool})
        estimates = _set_estimates(query, pool, order)
        measured_baseline = _measured_groups(pool)
        # Past the baseline, the kernels measured (the keep figure's metric) come before those
        # only published: a published ratio is another metric, never ranked among device times.
        kernel_key = {
            c: (0, False, *order[c])
            if predictions[c].beats
            and (tiers[c] != "nearest" or c in estimates)
            and not (c.source == PUBLISHED and (c.gpu, c.mode) in measured_baseline)
            else (2, c.source == PUBLISHED, *order[c])
            for c in pool
        }
    else:
        nearest_first = _total_keys(
            {c: (query.log2_distance(c.shape), *_sort_key(query, "uncovered", c)) for c in pool}
        )
        kernel_key = {c: (2, False, *key) for c, key in nearest_first.items()}
    by_group: dict[tuple[str, str], list[Candidate]] = {}
    for c in pool:
        by_group.setdefault((c.gpu, c.mode), []).append(c)
    # The baselines' figures come from every row of the GPU and mode: a baseline measured at a
    # config whose kernel cannot run your shape is still the nearest evidence of the baseline.
    evidence: dict[tuple[str, str], list[Candidate]] = {}
    for c in candidates:
        evidence.setdefault((c.gpu, c.mode), []).append(c)
    entries: list[tuple[tuple, str, Candidate, Prediction]] = []
    for (gpu, mode), group in sorted(by_group.items()):
        best = min(group, key=kernel_key.__getitem__) if covered else None
        baseline, prediction = _baseline_entry(gpu, mode, query, evidence[(gpu, mode)], best)
        entries.append(((1, False, gpu, mode), BASELINE, baseline, prediction))
    entries += [(kernel_key[c], tiers[c], c, predictions[c]) for c in pool]
    entries.sort(key=lambda e: e[0])
    ranked = [_ranked(i, query, tier, c, p) for i, (_, tier, c, p) in enumerate(entries[:limit], start=1)]
    # The answer names the best kernel measured and the best only published after the baseline,
    # which a short limit may cut off.
    top = ranked[:1]
    if top and top[0].tier == BASELINE and covered:
        for source in ("measured", PUBLISHED):
            kernels = [
                (i, e)
                for i, e in enumerate(entries, 1)
                if e[1] not in (BASELINE, "uncovered")
                and e[2].source == source
                and (e[1] != "nearest" or e[2] in estimates)
            ]
            if not kernels:
                continue
            # Measured: the best prediction for your shape, not the first in tier order (a config
            # 200x your volume covers it but runs far slower than a nearby estimate). Published
            # ratios have no time at your shape: the first in order, the least padding.
            best = (
                max(kernels, key=lambda ie: (ie[1][3].speedup or 0.0, -ie[0]))
                if source != PUBLISHED
                else kernels[0]
            )
            i, (_, tier, c, p) = best
            top.append(_ranked(i, query, tier, c, p))
    answer_text, measure = _answer(query, top, covered, _limits(query, candidates))
    return LookupResult(
        query, covered, _message(query, tiers, covered), ranked, answer=answer_text, measure=measure
    )


def _measured_groups(pool: Sequence[Candidate]) -> set[tuple[str, str]]:
    """The (GPU, mode)s whose best baseline was measured here. There a published win (host-timed,
    no spread: it cannot be said to win beyond the noise) never ranks above keeping the baseline;
    of the reference system's H100 claims measured so far, more were contradicted than confirmed
    (benchmarks/refset/README.md). Where nothing was measured, it is the only evidence and leads."""
    return {(c.gpu, c.mode) for c in pool if c.source != PUBLISHED and c.best_baseline_s is not None}


def _set_estimates(query: Shape, pool: Sequence[Candidate], order: dict[Candidate, tuple]) -> set[Candidate]:
    """Per runtime-shape set (GPU, mode, source): its row nearest to ``query`` (exact included)."""
    nearest: dict[tuple, Candidate] = {}
    for c in pool:
        if not c.runtime_shapes:
            continue
        key = (c.set_id, c.gpu, c.mode, c.source)
        rival = nearest.get(key)
        if rival is None or (query.log2_distance(c.shape), order[c]) < (
            query.log2_distance(rival.shape),
            order[rival],
        ):
            nearest[key] = c
    return set(nearest.values())


def _ranked(position: int, query: Shape, tier: str, c: Candidate, p: Prediction) -> Ranked:
    runs_at = {
        "exact": "your shape",
        "nearest": "your shape",
        "covering": f"padded to {c.shape}",
        "uncovered": "not runnable",
        BASELINE: "your shape (a library call)",
    }[tier]
    return Ranked(
        rank=position,
        tier=tier,
        candidate=c,
        runs_at=runs_at,
        padded_volume_ratio=c.shape.volume / query.volume,
        log2_distance=query.log2_distance(c.shape),
        predicted_speedup=p.speedup,
        predicted_basis=p.basis,
        predicted_low=p.low,
        predicted_high=p.high,
        beats_baseline=p.beats,
        predicted_over=p.over,
    )


def describe_kernel(r: Ranked) -> str:
    """'<set> <config> (<tier>) at <predicted> (<metric>) over <baseline>': a kernel entry in one
    phrase, its figure's metric named."""
    c = r.candidate
    over = f" over {r.baseline}" if r.baseline else ""
    words = METRIC_WORDS.get(c.metric or "", c.metric or c.source)
    return f"{c.set_id} {c.shape} ({r.tier}) at {r.prediction.text()} ({words}){over}"


def _only_published(r: Ranked) -> tuple[str, str]:
    """What the answer says of a kernel that only the reference system timed, and the bench
    command that would measure it on this GPU: its figure is never set against a measured one."""
    c = r.candidate
    command = measure_command(c.set_id, [c.shape], c.mode)
    return f"{describe_kernel(r)} is only published, not measured here: measure it with `{command}`", command


def _limits(query: Shape, candidates: Sequence[Candidate]) -> list[str]:
    """Why the runtime-shape kernels that cannot run ``query`` cannot (their families' limits)."""
    return sorted({why for c in candidates if (why := c.why_not(query)) is not None})


def _answer(
    query: Shape, ranked: Sequence[Ranked], covered: bool, limits: Sequence[str] = ()
) -> tuple[str, str | None]:
    """The verdict from the top entry (and, when it is the baseline, the best kernels after it: the
    best measured, and the best only published), with the command that would measure a kernel
    it names that is only published. A measured figure is weighed against the baseline's, of the
    same metric; a published one only reported, with that command."""
    if not ranked:
        return f"no data to answer {query}: keep torch.matmul / cuBLASLt, or measure it with `bench`", None
    top = ranked[0]
    if top.tier != BASELINE:
        c = top.candidate
        words = METRIC_WORDS.get(c.metric or "", c.metric or c.source)
        text = (
            f"use {c.set_id} {c.shape} ({top.tier}, runs at {top.runs_at}): "
            f"predicted {top.prediction.text()} ({words}) over {top.baseline or 'the best baseline'} "
            f"on {c.gpu} {c.mode} ({top.predicted_basis})"
        )
        if c.source != PUBLISHED:
            return text, None
        command = measure_command(c.set_id, [c.shape], c.mode)
        return f"{text}; only published, not measured here: measure it with `{command}`", command
    keep = f"keep {_baseline_name(top.candidate)} ({_baseline_figure(top.candidate, query)})"
    if not covered:
        why = f" (runtime-shape kernels: {'; '.join(limits)})" if limits else ""
        return f"{keep}; no kernel here can run {query}{why}", None
    measured = next((r for r in ranked[1:] if r.candidate.source != PUBLISHED), None)
    published = next((r for r in ranked[1:] if r.candidate.source == PUBLISHED), None)
    parts = [keep]
    if measured is not None:
        if (measured.predicted_high or measured.predicted_speedup or 0.0) < 1.0:
            why = "slower"
        elif measured.predicted_low is None:
            why = "an upper bound, not measured at your shape"
        else:
            why = "not faster beyond the run-to-run spread" + (
                ", estimated elsewhere" if measured.tier == "nearest" else ""
            )
        parts.append(f"best measured kernel here is {describe_kernel(measured)}: {why}")
    command = None
    # A published claim is worth measuring where nothing measured runs your shape, or where it
    # claims a win (over its own baselines, in its own metric).
    if published is not None and (
        measured is None or (published.predicted_high or published.predicted_speedup or 0.0) > 1.0
    ):
        text, command = _only_published(published)
        parts.append(text if measured is not None else f"no kernel here was measured: {text}")
    return "; ".join(parts), command


def _message(query: Shape, tiers: dict[Candidate, str], covered: bool) -> str:
    counts = {t: sum(1 for v in tiers.values() if v == t) for t in TIERS}
    if not tiers:
        return f"no data to answer {query}"
    unfit = sum(1 for c, t in tiers.items() if t == "uncovered" and c.runtime_shapes)
    limits = f"; {unfit} runtime-shape kernel(s) cannot run it (their family's limits)" if unfit else ""
    if counts["exact"]:
        return f"{query}: exact config found ({counts['exact']} row(s)){limits}"
    if covered:
        parts = []
        if counts["covering"]:
            parts.append(f"{counts['covering']} covering config(s), run zero-padded")
        if counts["nearest"]:
            parts.append(f"{counts['nearest']} runtime-shape kernel(s) from nearby configs")
        return f"{query}: no exact config; " + "; ".join(parts) + limits
    too_big = [name for name, v in zip("MNK", query.astuple(), strict=True) if v > GRID_MAX]
    why = f" ({', '.join(too_big)} above the largest config)" if too_big else ""
    return (
        f"nothing covers {query}{why}: no kernel here can run it{limits}; the nearest configs are shown "
        "for reference; compare the baselines at your shape with `bench`"
    )


# ---------------------------------------------------------------------------- one GPU, one accumulator


def choose_gpu(
    query: Shape, candidates: Sequence[Candidate], machine_gpu: str | None
) -> tuple[str | None, str]:
    """(GPU, why): this machine's GPU when the rows have it, else the GPU with the most measured
    rows that can run ``query`` (then the most such rows of any source, then the most rows)."""
    gpus = sorted({c.gpu for c in candidates})
    if not gpus:
        return machine_gpu, "this machine's GPU" if machine_gpu else ""
    if machine_gpu in gpus:
        return machine_gpu, "this machine's GPU"
    counts: dict[str, list[int]] = {g: [0, 0, 0] for g in gpus}
    for c in candidates:
        runs = _tier(query, c) != "uncovered"
        counts[c.gpu][0] += runs and c.source == "measured"
        counts[c.gpu][1] += runs
        counts[c.gpu][2] += 1
    chosen = min(gpus, key=lambda g: (-counts[g][0], -counts[g][1], -counts[g][2], g))
    measured, runnable, _ = counts[chosen]
    why = (
        f"most measured rows for this shape: {measured}"
        if measured
        else f"most rows for this shape: {runnable}"
        if runnable
        else "most rows"
    )
    if machine_gpu:
        why += f"; this machine's {machine_gpu} has none"
    return chosen, why


def answer(
    query: Shape,
    candidates: Sequence[Candidate],
    *,
    gpu: str | None = None,
    any_gpu: bool = False,
    machine_gpu: str | None = None,
    limit: int | None = 10,
) -> LookupResult:
    """``rank`` on one GPU's rows: ``gpu`` when given, every GPU with ``any_gpu``, else
    :func:`choose_gpu`'s. Rows of the other GPUs are left out, and the result says so."""
    why = "asked for"
    if gpu is None and not any_gpu:
        gpu, why = choose_gpu(query, candidates, machine_gpu)
    chosen = [c for c in candidates if any_gpu or c.gpu == gpu]
    result = rank(query, chosen, limit)
    result.gpu, result.gpu_choice = (None, "--any-gpu: GPUs mixed") if any_gpu else (gpu, why)
    others = sorted({c.gpu for c in candidates} - {c.gpu for c in chosen})
    if others:
        result.notes.append(f"rows of {', '.join(others)} left out (another GPU: --gpu G or --any-gpu)")
    return result


def resolve_accumulator(accumulator: str | None, set_accumulators: Sequence[str] = ()) -> str:
    """fp32 / fp16 (or the SPEC section 4 code) to the code; None: fp32, unless every set asked for
    (``set_accumulators``) accumulates in the same other way."""
    if accumulator is None:
        distinct = set(set_accumulators)
        return distinct.pop() if len(distinct) == 1 else FP32_ACCUMULATE
    code = ACCUMULATORS.get(accumulator.strip().lower(), accumulator.strip().upper())
    if code not in ACCUMULATORS.values():
        raise UsageError(f"--accumulator must be fp32 or fp16 (got {accumulator!r})")
    return code


_ROW_FIELDS = tuple(f.name for f in fields(Candidate) if f.name != "shape")


def candidate_from_row(row: dict[str, Any]) -> Candidate:
    """A row of :func:`db.reads.lookup_rows` as a Candidate."""
    values = {name: row[name] for name in _ROW_FIELDS}
    values["run_date"] = None if row["run_date"] is None else str(row["run_date"])
    values["runtime_shapes"] = bool(row["runtime_shapes"])
    return Candidate(shape=Shape(int(row["m"]), int(row["n"]), int(row["k"])), **values)


def scope_candidates(
    store: Store,
    query: Shape | None = None,
    *,
    gpu: str | None = None,
    set_: str | None = None,
    mode: str | None = None,
    accumulator: str | None = None,
) -> tuple[list[Candidate], Filters, str, list[str]]:
    """The store's rows one answer for ``query`` may rank: every GPU (unless ``gpu``), one mode
    (offline by default) and one accumulator (fp32 by default); the rows that can run ``query``
    when there are any, else every row (the nearest are shown for reference). Returns them with
    the resolved filters, the accumulator and notes on the sets left out."""
    filters = resolve_filters(store, gpu, set_, mode or DEFAULT_MODE)
    accumulators = reads.set_accumulators(store, filters.gpu)
    asked = [accumulators[s] for s in filters.set_ids or () if s in accumulators]
    code = resolve_accumulator(accumulator, asked)
    notes = []
    in_scope = filters.set_ids is None or set(filters.set_ids)
    other = sorted({a for s, a in accumulators.items() if a != code and (in_scope is True or s in in_scope)})
    if other:
        labels = {v: k for k, v in ACCUMULATORS.items()}
        flags = ", ".join(f"--accumulator {labels.get(a, a)}" for a in other)
        notes.append(f"sets that accumulate otherwise left out ({flags} to see them)")
    rows = reads.lookup_rows(store, filters, code, covering=query)
    candidates = [candidate_from_row(r) for r in rows]
    if query is not None and all(_tier(query, c) == "uncovered" for c in candidates):
        candidates = [candidate_from_row(r) for r in reads.lookup_rows(store, filters, code)]
    return candidates, filters, code, notes


def open_lookup_store(db: Path | None, with_bundled: bool | None = None) -> Store:
    """The store at ``db`` read-only, its views made as :func:`lookup` first reads them: lookup
    reads five of the tables and none of the derived views, which cost a third of its time to make."""
    return Store.open(db, read_only=True, with_bundled=with_bundled, lazy_views=True)


def lookup(
    store: Store,
    query: Shape,
    *,
    gpu: str | None = None,
    set_: str | None = None,
    mode: str | None = None,
    limit: int | None = 10,
    accumulator: str | None = None,
    any_gpu: bool = False,
    machine_gpu: Any = _DETECT,
) -> LookupResult:
    """The answer for ``query`` among the store's rows that pass the filters (each checked against
    the store: an unknown GPU, set or mode raises). ``machine_gpu``: this machine's GPU label
    (default: asked of the driver; None: no GPU)."""
    candidates, filters, code, notes = scope_candidates(
        store, query, gpu=gpu, set_=set_, mode=mode, accumulator=accumulator
    )
    if machine_gpu is _DETECT:
        machine_gpu = None if filters.gpu or any_gpu else detect_machine_gpu()
    result = answer(query, candidates, gpu=filters.gpu, any_gpu=any_gpu, machine_gpu=machine_gpu, limit=limit)
    result.mode, result.accumulator = filters.mode, code
    result.notes = notes + result.notes
    return result


def detect_machine_gpu() -> str | None:
    """This machine's first GPU as a store label (``h100``), from the driver's ``nvidia-smi``;
    None without one. The driver's tool answers in milliseconds where importing torch takes seconds."""
    import shutil

    tool = shutil.which("nvidia-smi")
    if tool is None:
        return None
    import subprocess

    try:
        out = subprocess.run(
            [tool, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    names = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    if out.returncode != 0 or not names:
        return None
    from cuda_l2_explorer.importer.harness.device import gpu_label

    return gpu_label(names[0])


# ---------------------------------------------------------------------------- calibration


@dataclass(frozen=True)
class CalibrationPoint:
    """One tuned config: what lookup predicts for it from the other measured rows, and what was
    measured; both ratios of the same metric (``metric``: device time offline)."""

    set_id: str
    shape: Shape
    gpu: str
    mode: str
    predicted: Prediction  # the best kernel lookup ranks for the shape without its own rows
    predicted_from: str
    measured: float  # the tuned kernel's speedup over the best baseline there
    measured_low: float | None
    measured_high: float | None
    metric: str = "device_time"

    @property
    def inside(self) -> bool:
        """Whether the measured speedup fell inside the predicted interval (<= an upper bound)."""
        high = self.predicted.high if self.predicted.high is not None else self.predicted.speedup
        low = self.predicted.low if self.predicted.low is not None else -math.inf
        return high is not None and low <= self.measured <= high

    def text(self) -> str:
        spread = "" if self.measured_low is None else f" [{self.measured_low:.3f}-{self.measured_high:.3f}]"
        return (
            f"{self.shape} on {self.gpu} {self.mode}, {self.metric} ratios: lookup predicted "
            f"{self.predicted.text()} from {self.predicted_from}; measured {self.measured:.3f}x{spread} "
            f"({'inside' if self.inside else 'outside'} the prediction)"
        )


@dataclass
class Calibration:
    """Predicted against measured over the tuned configs: how far lookup's predictions can be trusted."""

    points: list[CalibrationPoint] = field(default_factory=list)

    def summary(self) -> str:
        """One figure per metric: a ratio of one metric is never divided by another's."""
        scored = [p for p in self.points if p.predicted.speedup]
        if not scored:
            return "predictor calibration: no tuned config measured yet"
        parts = []
        for metric in sorted({p.metric for p in scored}):
            these = [p for p in scored if p.metric == metric]
            ratios = [p.measured / p.predicted.speedup for p in these]  # type: ignore[operator]
            geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            inside = sum(p.inside for p in these)
            parts.append(
                f"predictor calibration over {len(these)} tuned config(s), {metric} ratios: measured/"
                f"predicted geomean {geomean:.3f} (from {min(ratios):.3f} to {max(ratios):.3f}), "
                f"{inside} of {len(these)} inside the predicted interval"
            )
        return "; ".join(parts)


def calibration(store: Store, shapes: Sequence[Shape] | None = None, most: int = 50) -> Calibration:
    """Lookup's prediction for each config of the user's tuned sets (ours, not bundled), made from
    the store's other measured rows of its GPU and mode as if that config had not been measured,
    beside its measurement: the running figure ``tune`` reports. ``shapes``: only those configs;
    ``most``: the newest ones.

    Only measured rows predict: they divide the same metric as the measurement (device time
    offline), where a published ratio is the reference system's host timing; a calibration
    that divided one by the other would measure the metrics' disagreement, not the predictor."""
    tuned = reads.tuned_set_ids(store)
    if not tuned:
        return Calibration()
    candidates, *_ = scope_candidates(store)
    targets = [
        c
        for c in candidates
        if c.set_id in tuned and c.source == "measured" and (shapes is None or c.shape in shapes)
    ]
    targets.sort(key=lambda c: (c.run_date or "", c.shape.astuple()), reverse=True)
    points = []
    for target in targets[:most]:
        others = [
            c
            for c in candidates
            if c.source == "measured"
            and c.shape != target.shape
            and (c.gpu, c.mode) == (target.gpu, target.mode)
        ]
        best = next(
            (r for r in rank(target.shape, others, limit=None).candidates if r.tier in TIERS[:3]), None
        )
        if best is None or target.speedup_best is None:
            continue
        low, high = _ratio_spread(
            target.best_baseline_s,
            target.baseline_p10_s,
            target.baseline_p90_s,
            target.kernel_p10_s,
            target.kernel_p90_s,
        )
        points.append(
            CalibrationPoint(
                target.set_id,
                target.shape,
                target.gpu,
                target.mode,
                best.prediction,
                describe_kernel(best),
                target.speedup_best,
                low,
                high,
                HEADLINE_METRIC.get(target.mode, target.mode),
            )
        )
    return Calibration(points)
