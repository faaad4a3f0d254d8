"""The measurement protocol of SPEC §7 as pure logic, behind a narrow GPU interface.

Nothing here imports torch: the worker supplies a ``Backend`` that runs calls and reads CUDA
events, and the CPU tests supply a fake one. What lives here: statistics, cold-L2 rotation
sizing, calls per sample, interleaved shuffled rounds, server-mode arrival gaps and correctness
classification. The launcher audit's rules are in ``audit``.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from cuda_l2_explorer.db.shapes import L2_SPAN_FACTOR, LEGACY_ROTATION_CAP, ROTATION_CAP

# Recorded with every run; bump when how a figure is measured changes.
# 2: the launcher audit runs after the timing, and CUPTI is torn down after it.
# 3: offline device time is CUDA-graph replay (R calls in one graph), not R calls issued from
#    Python; the isolated call and CUPTI's kernel time are stored beside it; server mode stores
#    each call's isolated-call latency and host latency (no "device time" of a lone call).
HARNESS_VERSION = "3"

# How an offline sample is timed. "graph": R calls captured into one CUDA graph, replayed between
# two events (SPEC §7 device time). "eager": R calls issued from Python between two events, as
# harnesses 1 and 2 did; for any kernel shorter than Python's issue cost this times the issue
# rate, so its figures are stored as the metric "issue_bound_time", never as device time.
TIMINGS = ("graph", "eager")

# ---------------------------------------------------------------------------- statistics


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    p10: float
    p90: float
    mean: float
    p99: float
    min: float
    max: float


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), q in [0, 100]."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    if len(sorted_values) == 1:
        return float(sorted_values[0])
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return float(sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo))


def summarize(values: Sequence[float]) -> Summary:
    ordered = sorted(values)
    return Summary(
        n=len(ordered),
        median=percentile(ordered, 50),
        p10=percentile(ordered, 10),
        p90=percentile(ordered, 90),
        mean=math.fsum(ordered) / len(ordered),
        p99=percentile(ordered, 99),
        min=ordered[0],
        max=ordered[-1],
    )


# ------------------------------------------------------------------- sizing and schedule


def rotation_sets(
    bytes_per_set: int,
    l2_bytes: int,
    free_bytes: int,
    *,
    factor: float = L2_SPAN_FACTOR,
    memory_fraction: float = 0.5,
    max_sets: int = ROTATION_CAP,
) -> int:
    """Input sets to rotate among so one pass spans >= ``factor`` x L2 (cold L2 by default).

    Never more than ``memory_fraction`` of the free device memory: a 16384^3 problem gets as
    many sets as fit (at least one), instead of running out of memory. Never more than
    ``max_sets`` either: sets under ``factor`` x L2 / ``max_sets`` bytes span less, and their
    rows say so (db.shapes.L2_SPAN_FLAG).
    """
    if bytes_per_set <= 0:
        raise ValueError("bytes_per_set must be positive")
    wanted = max(2, math.ceil(factor * l2_bytes / bytes_per_set))
    affordable = int(memory_fraction * free_bytes // bytes_per_set)
    return max(1, min(wanted, affordable, max_sets))


def calls_per_sample(call_seconds: float, target_seconds: float = 1e-3, max_calls: int = 4096) -> int:
    """R calls between two events so a sample spans at least ~``target_seconds``."""
    if call_seconds <= 0 or not math.isfinite(call_seconds):
        return max_calls
    return max(1, min(max_calls, math.ceil(target_seconds / call_seconds - 1e-9)))


def round_orders(names: Sequence[str], rounds: int, rng: random.Random) -> list[list[str]]:
    """Each round runs every implementation once, in a fresh shuffled order."""
    orders = []
    for _ in range(rounds):
        order = list(names)
        rng.shuffle(order)
        orders.append(order)
    return orders


def server_gaps(count: int, target_qps: float, rng: random.Random) -> list[float]:
    """Exponential inter-arrival gaps with mean 1/target_qps (a Poisson arrival process)."""
    if target_qps <= 0:
        raise ValueError("target_qps must be positive")
    return [rng.expovariate(target_qps) for _ in range(count)]


# ----------------------------------------------------------------------- the GPU interface


class Backend(Protocol):
    """What the measurement loop needs from a GPU; implemented by the worker with torch."""

    def calls_per_unit(self, impl: str) -> int:
        """Calls in one unit of ``offline_sample`` (a graph's calls; 1 for eager calls)."""
        ...

    def offline_sample(self, impl: str, units: int) -> tuple[float, float]:
        """Run ``units`` units back to back between two events; (device s, host s) in total."""
        ...

    def host_latency(self, impl: str) -> float:
        """One call on an idle GPU, wall clock from the call to the end of a synchronize (s)."""
        ...

    def isolated_call(self, impl: str) -> float:
        """One call's own span on an otherwise idle GPU timeline, host issue time excluded (s)."""
        ...

    def sleep(self, seconds: float) -> None: ...


# Protocol fields added after runs were first recorded, and the value those runs had.
_BEFORE_RECORDED: dict[str, Any] = {"rotation_cap": LEGACY_ROTATION_CAP}


@dataclass(frozen=True)
class ProtocolSettings:
    mode: str = "offline"
    samples: int = 15
    warmup_s: float = 0.02
    sample_target_s: float = 1e-3
    target_qps: float = 100.0
    seed: int = 0
    timing: str = "graph"
    # Offline: an implementation whose sample is long (a large GEMM) takes only as many samples
    # as fit in ``sample_budget_s`` of GPU time, never fewer than ``min_samples``; a tiny one
    # takes all ``samples``. The isolated-call and host latencies, secondary figures that cost
    # a synchronize each, are taken in ``latency_samples`` of the rounds (0: not at all).
    min_samples: int = 5
    sample_budget_s: float = 0.1
    latency_samples: int = 7
    # Cold L2: the most input sets rotated (rotation_sets). Sets of a tiny shape span 2x the L2
    # only in the thousands; each graph then holds that many calls (GraphBackend).
    rotation_cap: int = ROTATION_CAP

    def __post_init__(self) -> None:
        if self.mode not in ("offline", "server"):
            raise ValueError(f"mode must be offline or server, not {self.mode!r}")
        if self.timing not in TIMINGS:
            raise ValueError(f"timing must be one of {', '.join(TIMINGS)}, not {self.timing!r}")
        if self.samples < 1 or self.warmup_s < 0 or self.target_qps <= 0:
            raise ValueError("samples >= 1, warmup_s >= 0 and target_qps > 0 are required")
        if self.min_samples < 1 or self.sample_budget_s < 0 or self.latency_samples < 0:
            raise ValueError("min_samples >= 1, sample_budget_s >= 0 and latency_samples >= 0 are required")
        if not 1 <= self.rotation_cap <= ROTATION_CAP:
            raise ValueError(f"the rotation cap must be 1 to {ROTATION_CAP}, not {self.rotation_cap}")

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ProtocolSettings:
        """The settings a run recorded (its params' ``protocol``). A field the record lacks takes
        the value the harness had before the field existed, so a resumed old run stays itself."""
        known = {f.name for f in fields(cls)}
        return cls(**{**_BEFORE_RECORDED, **{k: v for k, v in record.items() if k in known}})

    def samples_for(self, sample_s: float) -> int:
        """Offline samples of an implementation whose sample takes ``sample_s`` of GPU time."""
        if sample_s <= 0 or not math.isfinite(sample_s):
            return self.samples
        fit = math.floor(self.sample_budget_s / sample_s)
        return min(self.samples, max(self.min_samples, fit))


@dataclass
class ImplSamples:
    """Per-call samples of one implementation, in seconds.

    ``device``: offline only, per-call time of R back-to-back calls. ``isolated``: one call
    between events on an idle GPU with its launch queued before it runs (the events' and front
    end's floor included, the host's issue time not); in server mode, one per arrival. ``host``:
    one call to the end of a synchronize (server mode: the call after an arrival gap).
    """

    device: list[float] = field(default_factory=list)
    host: list[float] = field(default_factory=list)
    isolated: list[float] = field(default_factory=list)
    calls_per_sample: int = 1


def warm_up(backend: Backend, impl: str, warmup_s: float, min_units: int = 2) -> float:
    """Run units for ``warmup_s``; return the last unit's device time (to size a sample).

    Two units at least: a graph's first replay also uploads it."""
    spent, per_unit, units = 0.0, 0.0, 0
    while units < min_units or spent < warmup_s:
        device, host = backend.offline_sample(impl, 1)
        per_unit = device
        spent += max(device, host)
        units += 1
        if units > 100_000:
            break
    return per_unit


def spread_rounds(count: int, rounds: int) -> set[int]:
    """``count`` of ``rounds`` round indexes, evenly spread (all of them when count >= rounds)."""
    if count >= rounds:
        return set(range(rounds))
    return {math.floor(j * rounds / count) for j in range(count)}


def measure(
    backend: Backend,
    impls: Sequence[str],
    settings: ProtocolSettings,
    on_round: Callable[[int, int], None] | None = None,
) -> dict[str, ImplSamples]:
    """SPEC §7 offline or server measurement of ``impls``, interleaved and shuffled per round.

    The GPU's clocks are warmed once (``warmup_s`` on the first implementation); every
    implementation then gets two warm-up units, which also size its samples. Server mode sleeps
    an exponential gap before each arrival, then times one call's host latency and one isolated
    call: the GPU is idle before each.
    """
    rng = random.Random(settings.seed)
    results = {name: ImplSamples() for name in impls}
    units: dict[str, int] = {}
    timed_rounds: dict[str, set[int]] = {}
    latency_rounds: dict[str, set[int]] = {}
    offline = settings.mode == "offline"
    for position, name in enumerate(impls):
        per_unit = warm_up(backend, name, settings.warmup_s if position == 0 else 0.0)
        if offline:
            units[name] = calls_per_sample(per_unit, settings.sample_target_s)
            results[name].calls_per_sample = units[name] * backend.calls_per_unit(name)
            count = settings.samples_for(units[name] * per_unit)
            timed_rounds[name] = spread_rounds(count, settings.samples)
            latency_rounds[name] = spread_rounds(min(count, settings.latency_samples), settings.samples)
    orders = round_orders(impls, settings.samples, rng)
    gaps = iter(server_gaps(settings.samples * len(impls), settings.target_qps, rng))
    # Server mode: the gap is the GPU's idle time before an arrival, counted from the moment the
    # last arrival's work was done (the figures' bookkeeping in between is part of it).
    clock = getattr(backend, "clock", time.perf_counter)
    idle_from: float | None = None
    for index, order in enumerate(orders):
        for name in order:
            slot = results[name]
            if offline:
                if index in timed_rounds[name]:
                    device, _ = backend.offline_sample(name, units[name])
                    slot.device.append(device / slot.calls_per_sample)
                if index in latency_rounds[name]:
                    slot.isolated.append(backend.isolated_call(name))
                    # Host latency as the reference measured it: one call, then synchronize.
                    slot.host.append(backend.host_latency(name))
            else:
                gap = next(gaps)
                backend.sleep(max(0.0, gap - (clock() - idle_from)) if idle_from is not None else gap)
                host = backend.host_latency(name)
                isolated = backend.isolated_call(name)
                idle_from = clock()
                slot.host.append(host)
                slot.isolated.append(isolated)
        if on_round is not None:
            on_round(index + 1, len(orders))
    return results


# cuBLASLt auto-tuning (SPEC §6) screens every correct heuristic candidate with SCREEN_SAMPLES
# short samples of the run's own metric (graph-replayed device time unless timing is eager), then
# times the closest few again with FINAL_SAMPLES and keeps the fastest (worker.autotune). Screening
# all candidates at full length cost ~3 s a config; in the H100 grid of 2026-11-24 (2000 tunings,
# ~8 candidates each) the kept algorithm was the screen's first at 84%, second 11%, third 4.4%.
# A candidate whose screen median is more than FINAL_MARGIN above the best one's is not a
# contender: in that grid (run 19c57c82) dropping those from the final changed 8 of 2000 choices
# by more than 1% (at most 2.5%, geomean 1.0001) and, a lone contender needing no final, timed
# 3278 finalists instead of 6000 (benchmarks/harness/v3/h100-throughput-2026-11-25/finalists_replay.py).
SCREEN_SAMPLES = 3
FINAL_SAMPLES = 5
FINALISTS = 3
FINAL_MARGIN = 0.02


def tuning_finalists(screen_medians: Mapping[str, float]) -> list[str]:
    """The candidates worth a final timing: at most FINALISTS, fastest first, each within
    FINAL_MARGIN of the fastest screen median (so always at least the fastest)."""
    ranked = sorted(screen_medians, key=lambda name: screen_medians[name])
    if not ranked:
        return []
    limit = screen_medians[ranked[0]] * (1.0 + FINAL_MARGIN)
    return [name for name in ranked[:FINALISTS] if screen_medians[name] <= limit]


# ------------------------------------------------------------------- correctness and audit

# A result this far from the fp64 reference is wrong whatever cuBLAS does.
ABSOLUTE_ERROR_LIMIT = 5e-2
# Error ratios to cuBLAS's own error (same inputs, same accumulator class).
INCORRECT_RATIO = 64.0
FP16_ACCUMULATION_RATIO = 6.0


@dataclass(frozen=True)
class Correctness:
    status: str  # 'ok' or 'incorrect'
    rel_error: float
    error_ratio: float | None
    findings: tuple[tuple[str, str], ...] = ()


def classify_correctness(
    rel_error: float, cublas_error: float | None, accumulator: str, finite: bool = True
) -> Correctness:
    """NaN/Inf or an error far above cuBLAS's is 'incorrect'; fp16-like error in fp32 is flagged."""
    ratio = None
    if cublas_error is not None and cublas_error > 0 and math.isfinite(rel_error):
        ratio = rel_error / cublas_error
    findings: list[tuple[str, str]] = []
    if not finite or not math.isfinite(rel_error):
        return Correctness("incorrect", rel_error, ratio, (("non_finite_output", "NaN or Inf in C"),))
    status = "ok"
    if rel_error > ABSOLUTE_ERROR_LIMIT or (ratio is not None and ratio > INCORRECT_RATIO):
        status = "incorrect"
    if accumulator == "F32F16F16F32" and ratio is not None and ratio > FP16_ACCUMULATION_RATIO:
        findings.append(
            (
                "fp16_accumulation_suspected",
                f"error {rel_error:.2e} is {ratio:.0f}x cuBLAS's fp32-accumulate error in a set "
                "labelled F32F16F16F32",
            )
        )
    return Correctness(status, rel_error, ratio, tuple(findings))
