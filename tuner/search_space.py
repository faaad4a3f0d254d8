"""Which candidates the search measures for one shape: a roofline-and-waves cost model prunes the
library's kernels x runtime variants to a short list (pure Python; tested on the CPU).

A candidate is one compiled kernel (by name, with its parameters as the library reports them)
plus one :class:`~tuner.native.Variant` of its runtime arguments. The model is deliberately
coarse: it only has to keep the real winner inside the short list, not rank it. It counts what
decides most HGEMM shapes on Hopper: how many output tiles there are against the number of SMs
(waves, and the tail of the last one), how much of each tile is padding, and the memory floor.
Stage 1 measures every kept candidate briefly; stage 2 re-measures the best few (tuner/search_worker).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cuda_l2_explorer.db.shapes import TINY_FLOOR_S, Shape
from cuda_l2_explorer.tuner.catalog import DEFAULT_EPILOGUE, SM90_FAMILY
from cuda_l2_explorer.tuner.config import ELEM_BYTES
from cuda_l2_explorer.tuner.families import family_of
from cuda_l2_explorer.tuner.native import DECOMPOSITION, RASTER, Variant
from cuda_l2_explorer.tuner.wgmma import SHORT_K_STAGES, WGMMA_FAMILY

PEAK_FLOPS = 989e12  # dense fp16 tensor peak, H100/H200 SXM (SPEC §10)
DEFAULT_BANDWIDTH = 3.35e12  # H100 HBM3; H200 passes 4.8e12
LAUNCH_OVERHEAD_S = 2.5e-6  # fixed cost of one kernel launch + prologue/epilogue, measured ~2.7-3.4 us
# FP32 multiplies an SM issues per tensor-core flop it could do: 128 lanes a clock against 4096
# dense fp16 flops (sm_90). A CUTLASS "alpha" epilogue spends one multiply per element of C.
FP32_OPS_PER_TENSOR_FLOP = 128 / 4096


# A family of at most this many kernels is measured whole, every variant (~20 ms each in stage 1).
SWEEP_FAMILY = 8
# Where the roofline floor is under TINY_FLOOR_S (the launch-bound "tiny" regime of db.shapes), a
# family of at most TINY_SWEEP_FAMILY kernels is measured whole: a candidate costs ~7 ms there, and
# the model cannot rank kernels whose time is mostly fixed cost (H100, 2026-11-24: at 128x2048x64
# and 512x512x64 it shortlisted no kernel of the tiny family, whose 32x32 tiles run 64^3 in 1.8 us
# against cuBLAS's 2.2).
TINY_SWEEP_FAMILY = 16

# Where the roofline's memory term bounds many candidates alike (memory-bound shapes: every kernel
# predicted at the floor), the model cannot rank them, and a cut at ``limit`` kept those whose
# names sort first. Candidates predicted within TIE of the best are kept up to TIE_LIMIT (H100,
# 2026-11-27: on the 38 skinny configs with 12288 as the long side, 48 candidates a shape found
# picks 1.024x faster over the 34 that changed, e.g. a 64x256 ping-pong at 64x12288x4096 that the
# name order had left out; benchmarks/tuner/h100-2026-11-27-s24/).
TIE = 1.01
TIE_LIMIT = 48

# Clusters of 1, 2, ..., 16 CTAs that fit at once with one CTA per SM (every kernel of our split-K
# families), cudaOccupancyMaxActiveClusters on an H100 80GB HBM3 (132 SMs), 2026-11-24
# (benchmarks/tuner/cluster_occupancy). A cluster's CTAs share one GPC, and not every GPC holds 16
# SMs: 15 clusters of 8 fit (120 SMs) and 7 of 16 (112), so 16 clusters of 8 run in two waves.
MAX_CLUSTERS_132 = (132, 66, 39, 30, 22, 17, 15, 15, 9, 7, 7, 7, 7, 7, 7, 7)


@dataclass(frozen=True)
class Candidate:
    kernel: str
    variant: Variant
    predicted_s: float = 0.0

    @property
    def key(self) -> str:
        """Stable label used in the search log and as the implementation name in the worker."""
        return f"{self.kernel}|{self.variant.label}"

    def to_dict(self) -> dict[str, Any]:
        v = self.variant
        return {
            "kernel": self.kernel,
            "variant": {
                "raster": v.raster,
                "swizzle": v.swizzle,
                "decomposition": v.decomposition,
                "splits": v.splits,
            },
            "predicted_us": round(self.predicted_s * 1e6, 3),
        }


def user_tile(params: Mapping[str, Any]) -> tuple[int, int]:
    """(rows of C, columns of C) one CTA computes, whatever the family."""
    tm, tn = int(params["tile_m"]), int(params["tile_n"])
    return (tn, tm) if params.get("swap_ab") else (tm, tn)


def clusters_fit(size: int, sms: int) -> int:
    """Clusters of ``size`` CTAs (1-16), one CTA per SM, resident at once: measured for 132 SMs,
    scaled from that measurement for another SM count (0 where none fits)."""
    if not 1 <= size <= min(len(MAX_CLUSTERS_132), sms):
        return 0
    return max(1, MAX_CLUSTERS_132[size - 1] * sms // 132)


def multicast_a(params: Mapping[str, Any]) -> int:
    """Neighbouring N tiles that share A in one cluster (the wgmma split-K family's multicast)."""
    return int(params.get("multicast_a", 1))


def partials_in_memory(params: Mapping[str, Any]) -> bool:
    """Whether split-K partials meet in global memory (CUTLASS; the wgmma family's
    ``reduce="global"`` and ``"sliced"``) rather than in one cluster's distributed shared memory."""
    return family_of(params).split_partials_in_memory or params.get("reduce", "cluster") != "cluster"


def cluster_size(params: Mapping[str, Any], splits: int) -> int:
    """CTAs in one cluster. Our split-K families make a tile's ``splits`` (times its multicast
    pair) one cluster, unless they reduce in global memory; CUTLASS kernels have a fixed cluster
    shape."""
    if not partials_in_memory(params):
        return splits * multicast_a(params)
    return int(params.get("cluster_m", 1)) * int(params.get("cluster_n", 1))


def cluster_slots(params: Mapping[str, Any], splits: int, sms: int) -> int:
    """CTAs of one wave: whole clusters only."""
    size = cluster_size(params, splits)
    return max(1, clusters_fit(size, sms) * size)


def launched_tiles(m: int, n: int, params: Mapping[str, Any]) -> int:
    """CTA tiles a launch covers: with multicast the N tiles come in whole pairs."""
    rows, cols = user_tile(params)
    pair = multicast_a(params)
    return math.ceil(m / rows) * (math.ceil(n / cols) + pair - 1) // pair * pair


def tile_efficiency(rows: int, cols: int) -> float:
    """Fraction of the tensor peak a CTA of this tile sustains in the main loop (rough: small
    tiles re-read more of A and B per FLOP and hide less latency)."""
    area = rows * cols
    return min(0.85, 0.30 + 0.55 * math.sqrt(area / (128 * 256)))


def predict(
    m: int, n: int, k: int, params: Mapping[str, Any], v: Variant, sms: int, bandwidth: float
) -> float:
    """Predicted device seconds of one call."""
    rows, cols = user_tile(params)
    tiles = launched_tiles(m, n, params)
    splits = v.splits if v.decomposition == DECOMPOSITION["splitk"] else 1
    slots = cluster_slots(params, splits, sms)
    per_sm_flops = PEAK_FLOPS / sms * tile_efficiency(rows, cols)
    tile_s = 2.0 * rows * cols * k / per_sm_flops
    # A tile's C leaves at the SM's share of DRAM bandwidth. Ping-pong overlaps one warpgroup's
    # epilogue with the other's main loop, every other schedule waits for it: at small K on large
    # M x N the difference decides (H200, 2026-11-28: every auto-tuned cuBLASLt winner and our
    # best pick at K = 64-512 was a ping-pong kernel; the model had ranked cooperative 128x256 first).
    epilogue_s = rows * cols * ELEM_BYTES / (bandwidth / sms)
    alpha = params.get("epilogue", DEFAULT_EPILOGUE) == "alpha"  # CUTLASS's LinearCombination
    if alpha and family_of(params).name == SM90_FAMILY:
        # the alpha multiply (H200, 2026-11-28: its convert twins ran 1.022-1.026x at K = 64-256,
        # 1.00 from K = 1024 up, where it hides behind the main loop)
        epilogue_s += rows * cols / (PEAK_FLOPS / sms * FP32_OPS_PER_TENSOR_FLOP)
    tile_s = max(tile_s, epilogue_s) if params.get("schedule") == "pingpong" else tile_s + epilogue_s
    if v.decomposition == DECOMPOSITION["streamk"] or (
        v.decomposition == DECOMPOSITION["heuristic"] and params.get("scheduler") == "streamk"
    ):
        # Stream-K spreads the K-iterations of all tiles evenly, plus a fix-up per split tile.
        compute = tiles * tile_s / slots + (0.15 * tile_s if tiles % slots else 0.0)
    else:
        units = tiles * splits
        compute = math.ceil(units / slots) * tile_s / splits
    if splits > 1 and partials_in_memory(params):
        compute += 4.0 * m * n * splits / bandwidth  # fp32 partials written and read back
    return max(compute, Shape(m, n, k).bytes / bandwidth) + LAUNCH_OVERHEAD_S


def launch_bound(m: int, n: int, k: int, bandwidth: float) -> bool:
    """Whether the roofline floor is under TINY_FLOOR_S (the regime db.shapes calls tiny)."""
    shape = Shape(m, n, k)
    return max(shape.flops / PEAK_FLOPS, shape.bytes / bandwidth) < TINY_FLOOR_S


def variants_for(m: int, n: int, k: int, params: Mapping[str, Any], sms: int) -> list[Variant]:
    """Runtime variants worth measuring for this kernel at this shape."""
    tiles = launched_tiles(m, n, params)
    out = [Variant()]
    family = family_of(params)
    if family.sweeps_raster and tiles > sms:
        # Several waves: the order tiles are visited in decides L2 reuse of A and B panels.
        out += [Variant(RASTER["along_m"], 4), Variant(RASTER["along_n"], 4), Variant(RASTER["along_n"], 8)]
    k_iters = k // int(params.get("tile_k", 64))
    if params.get("scheduler") == "streamk" and tiles < 2 * sms:
        out.append(Variant(decomposition=DECOMPOSITION["streamk"]))
        out += [
            Variant(decomposition=DECOMPOSITION["splitk"], splits=s)
            for s in (2, 4, 8)
            if tiles * s <= 2 * sms and k_iters >= 2 * s
        ]
    elif DECOMPOSITION["splitk"] in family.decompositions(params) and tiles < sms:
        max_splits = (family.max_splits or 16) // multicast_a(params)
        splits = {s for s in (2, 4, 8, 16) if tiles * s <= 2 * sms and k_iters >= 2 * s and s <= max_splits}
        if not family.split_partials_in_memory:
            # Our families take any count up to max_splits, and the ones that fill at least half
            # the GPU in one wave (of clusters, where a tile's splits are one: H100, 512x512x12288,
            # 16 tiles of 128x128 x 8 splits need 16 clusters of 8, two waves, 33 us; x 4, 24 us)
            # are worth a look.
            clusters = tiles // multicast_a(params)
            splits |= {
                s
                for s in range(3, max_splits + 1)
                if 2 * tiles * s >= sms
                and clusters <= clusters_fit(cluster_size(params, s), sms)
                and k_iters >= 2 * s
            }
        out += [Variant(decomposition=DECOMPOSITION["splitk"], splits=s) for s in sorted(splits)]
    return out


def candidates(
    m: int,
    n: int,
    k: int,
    kernels: Mapping[str, Mapping[str, Any]],
    *,
    sms: int = 132,
    bandwidth: float = DEFAULT_BANDWIDTH,
    limit: int = 16,
    per_kernel: int = 3,
    sweep_family: int | None = None,
) -> list[Candidate]:
    """The ``limit`` candidates with the best predicted time, at most ``per_kernel`` per kernel
    (more where the model ties them with the best: up to TIE_LIMIT within TIE of it), plus the
    best-predicted one of every kernel class (family, schedule, swap-AB, scheduler) not yet
    represented: the model is least sure across classes (it does not see, for example, that
    ping-pong overlaps the epilogue, which decides small-K shapes). A family of at most
    ``sweep_family`` kernels that run the shape is measured whole: the model does not
    see what bounds a deep-K split-K kernel (L2 traffic, bytes in flight per SM, how many large
    clusters fit at once) and ranked the wgmma family's best variants last (H100, 2026-11-24:
    64x1024x16384, 17.0 us measured for the pick it left out, 33.1 for the one it kept).
    ``sweep_family`` defaults to SWEEP_FAMILY, TINY_SWEEP_FAMILY for a launch-bound shape."""
    if sweep_family is None:
        sweep_family = TINY_SWEEP_FAMILY if launch_bound(m, n, k, bandwidth) else SWEEP_FAMILY
    scored: list[Candidate] = []
    swept: dict[str, list[Candidate]] = {}  # every variant of every kernel, by family
    for name, params in kernels.items():
        if not family_of(params).supports(m, n, k, params):
            continue
        ranked = sorted(
            (
                Candidate(name, v, predict(m, n, k, params, v, sms, bandwidth))
                for v in variants_for(m, n, k, params, sms)
            ),
            key=lambda c: c.predicted_s,
        )
        scored += ranked[:per_kernel]
        swept.setdefault(sweep_group(params), []).extend(ranked)
    scored.sort(key=lambda c: (c.predicted_s, c.key))
    tied = sum(1 for c in scored if c.predicted_s <= scored[0].predicted_s * TIE) if scored else 0
    chosen = scored[: max(limit, min(tied, TIE_LIMIT))]
    classes = {kernel_class(kernels[c.kernel]) for c in chosen}
    for c in scored[len(chosen) :]:
        cls = kernel_class(kernels[c.kernel])
        if cls not in classes:
            chosen.append(c)
            classes.add(cls)
    keys = {c.key for c in chosen}
    for family in swept.values():
        if len({c.kernel for c in family}) <= sweep_family:
            extra = sorted((c for c in family if c.key not in keys), key=lambda c: (c.predicted_s, c.key))
            chosen += extra
            keys.update(c.key for c in extra)
    return chosen


def sweep_group(params: Mapping[str, Any]) -> str:
    """The kernels measured whole together when there are at most SWEEP_FAMILY of them: a family,
    our split-K families by where the partials meet (the wgmma family's cluster and workspace
    reductions are two designs, each measured whole)."""
    family = family_of(params)
    if family.split_partials_in_memory:
        return family.name
    # the wgmma family's short-K tiles for mid-size shapes (few stages, several CTAs an SM; sessions
    # 35-36) are a design of their own: grouped with the deep-K tiles they would make that group too
    # large to sweep (more than SWEEP_FAMILY), and the model ranks that group's kernels badly
    short_k = ""
    if params.get("family") == WGMMA_FAMILY and int(params.get("stages", 0)) <= SHORT_K_STAGES:
        short_k = "/short_k"
    # the tiny family's register-direct, bulk- and tensor-fed kernels are designs of their own,
    # measured whole too; the tensor kind's copies of several boxes (copy_boxes) another
    loads = f"/{params['loads']}" if params.get("loads") in ("direct", "bulk", "tensor") else ""
    if int(params.get("copy_boxes", 1)) > 1:
        loads += "/pitched" if params.get("copy_pitched") else "/slabs"
    return f"{family.name}/{params.get('reduce', 'cluster')}{loads}{short_k}"


def kernel_class(params: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(params.get(key, "")) for key in ("family", "schedule", "swap_ab", "scheduler"))
