"""Our wgmma split-K HGEMM family for small M*N with deep K (CuTe atoms, our kernel).

Why: at 256x512x8192 cuBLASLt takes 10.4 us (device time) while our best was 18.7 us. The tiny
family's mma.sync runs at ~0.6-1.5 TFLOP/s per SM there, and CUTLASS 4.2's SM90 split-K reduces
its partials in a serial chain through global memory (18-25 us). This family feeds Hopper's
wgmma from TMA and reduces the splits on chip, the tiny family's way:

- one CTA per (output tile, split): a producer warp (one elected thread) issues TMA loads of A
  and B into 128B-swizzled shared memory, ``stages`` deep behind full/empty mbarriers;
- ``tile_m / 64`` consumer warpgroups, each an m64 row block of ``wgmma.m64nNk16`` (N =
  ``tile_n``), one k-tile of MMAs kept in flight;
- the splits of a tile are one thread-block cluster along z (16 at most, Hopper's largest with
  the non-portable opt-in), reduced over distributed shared memory in rank order: the same bits
  whoever finishes first, no workspace, no second kernel;
- ``multicast_a = 2`` pairs neighbouring N tiles in the cluster (2 x splits CTAs, so at most 8
  splits): each CTA loads half of the A tile the pair shares and TMA multicasts it to both
  (correct; measured slower, so the catalog ships none: :func:`wgmma_catalog`);
- ``reduce = "global"`` launches no cluster: the splits but the last park their fp32 partials in
  the workspace and count themselves in on the tile's counter; the last split (the highest grid
  z, dispatched after every lower one) waits for the count, adds the partials in split order and
  stores C, and resets the counter, so the workspace needs zeroing only once, when allocated. Why:
  a (1, 1, splits) cluster launch places CTAs so that neighbouring tiles' identical loads are no
  longer merged before the L2 (the TMA probe, session 16: the same stream 15.2 us plain, 26.0 us
  launched as clusters; L2 reads 138 against 200 MB).
- ``reduce = "sliced"`` launches no cluster either, and spreads the sum: every split parks its
  partial and counts itself in, waits for all of the tile's splits (the grid must be one wave, all
  of it resident at once: ``can_implement`` checks it on the device), sums its 1/splits slice of
  the tile over every partial in split order and stores that slice of C; the last split out resets
  the tile's two counters. Why: the global reduction's last split reads the other splits - 1
  partials alone (240 KB for a 64x64 tile in 16 splits, ~2 us of one SM's L2 bandwidth).

The CUDA source is cutlass/sm90_wgmma_splitk.cuh (every config) and sm90_wgmma_splitk_kernel.cuh
(one instantiation), with the C ABI of tuner/emit.py. Runtime arguments as the tiny family:
``raster`` / ``swizzle`` validated and ignored (one wave), ``decomposition`` 0/1 data parallel,
2 split-K over ``splits`` (clamped to the K tiles), 3 cannot implement. Any M; N and K multiples
of 8 (16-byte TMA rows; the TMA zero-fills past the edges); A, B and C 16-byte aligned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from cuda_l2_explorer.tuner.abi import entry_points
from cuda_l2_explorer.tuner.config import (
    ELEM_BYTES,
    SMEM_BYTES_SM90,
    BMajor,
    ConfigError,
    ConfigRecord,
    check_fields,
)
from cuda_l2_explorer.tuner.templates import render
from cuda_l2_explorer.tuner.tiny import MAX_SPLITS, render_split_k_preamble

WGMMA_FAMILY = "sm90_wgmma_splitk"
TILE_MS: tuple[int, ...] = (64, 128)  # one or two consumer warpgroups
# wgmma N; an N-major B's 128-byte swizzle atom is 64 columns wide (32 and 96: K-major B only)
TILE_NS: tuple[int, ...] = (32, 64, 96, 128, 192, 256)
# The short-K designs (sessions 35-36): all of K <= 256 in flight in at most this many stages, the
# smaller footprint holding two CTAs an SM where registers allow (the deep-K tiles keep 6-12 stages
# and one).
SHORT_K_STAGES = 4
TILE_KS: tuple[int, ...] = (64, 128)  # whole 128-byte swizzle rows of A
MULTICASTS: tuple[int, ...] = (1, 2)  # CTAs along N sharing each A tile
# Where split-K partials meet: DSMEM, or the workspace summed by the last split or by every split.
REDUCES: tuple[str, ...] = ("cluster", "global", "sliced")
FLAG_ALIGN = 128  # the workspace's per-tile counters come first, padded so the partials stay aligned
BARRIER_BYTES = 1024  # mbarriers and alignment beside the pipeline buffers


@dataclass(frozen=True, order=True)
class WgmmaConfig(ConfigRecord):
    """Compile-time parameters of one wgmma split-K kernel (CTA tile, pipeline depth, B layout)."""

    tile_m: int
    tile_n: int
    tile_k: int = 64
    stages: int = 4
    b_major: BMajor = "n"
    multicast_a: int = 1
    reduce: Literal["cluster", "global", "sliced"] = "cluster"
    family: Literal["sm90_wgmma_splitk"] = "sm90_wgmma_splitk"

    def __post_init__(self) -> None:
        validate(self)

    @property
    def name(self) -> str:
        """Stable identifier, a valid C identifier suffix (``l2x_gemm_<name>``)."""
        mc = f"_mc{self.multicast_a}" if self.multicast_a > 1 else ""
        reduce = {"cluster": "", "global": "_rg", "sliced": "_rs"}[self.reduce]
        return f"wgsk_{self.tile_m}x{self.tile_n}x{self.tile_k}_s{self.stages}_b{self.b_major}{mc}{reduce}"

    @property
    def max_splits(self) -> int:
        """Splits a tile can take: the cluster (multicast pair x splits) holds at most 16 CTAs (the
        global reductions keep the same bound: a tile's splits read each other's partials)."""
        return MAX_SPLITS // self.multicast_a

    def to_dict(self) -> dict[str, object]:
        # Fields at their first value are left out, so the names and hashes of the kernels measured
        # before the fields existed stay what the store and manifests hold.
        d = super().to_dict()
        if self.multicast_a == 1:
            del d["multicast_a"]
        if self.reduce == "cluster":
            del d["reduce"]
        return d

    def workspace_bytes(self, m: int, n: int, splits: int) -> int:
        """What ``l2x_gemm_<name>_workspace`` returns for ``splits`` effective splits (the kernel's
        arithmetic): the tiles' counters (two a tile when sliced), then the fp32 partials of every
        split but the last (sliced: of every split)."""
        if self.reduce == "cluster" or splits == 1:
            return 0
        sliced = self.reduce == "sliced"
        tiles = -(-m // self.tile_m) * -(-n // self.tile_n)
        flags = -(-tiles * (2 if sliced else 1) * 4 // FLAG_ALIGN) * FLAG_ALIGN
        return flags + tiles * (splits if sliced else splits - 1) * self.tile_m * self.tile_n * 4

    @property
    def threads(self) -> int:
        return 128 + 128 * (self.tile_m // 64)  # the producer warpgroup and the consumers

    def smem_bytes(self) -> int:
        return self.stages * (self.tile_m + self.tile_n) * self.tile_k * ELEM_BYTES + BARRIER_BYTES


def validate(cfg: WgmmaConfig) -> None:
    """Raise :class:`ConfigError` for parameters the kernel template cannot instantiate."""
    check_fields(
        cfg,
        WGMMA_FAMILY,
        ("tile_m", "tile_n", "tile_k", "stages", "multicast_a"),
        {"tile_m": TILE_MS, "tile_n": TILE_NS, "tile_k": TILE_KS, "multicast_a": MULTICASTS},
    )
    if cfg.b_major == "n" and cfg.tile_n % 64:
        raise ConfigError(
            f"an N-major B is whole 64-column swizzle atoms: tile_n {cfg.tile_n} needs b_major='k'"
        )
    if cfg.reduce not in REDUCES:
        raise ConfigError(f"reduce must be one of {REDUCES}, got {cfg.reduce!r}")
    if cfg.reduce != "cluster" and cfg.multicast_a != 1:
        raise ConfigError(f"reduce={cfg.reduce!r} launches no cluster: multicast_a must be 1")
    if not 2 <= cfg.stages <= 12:
        raise ConfigError(f"stages must be in 2..12, got {cfg.stages}")
    if cfg.smem_bytes() > SMEM_BYTES_SM90:
        raise ConfigError(f"{cfg.stages} stages need {cfg.smem_bytes()} bytes of shared memory: does not fit")
    # The split-K partial (fp32 tile) is parked where the pipeline buffers were.
    if cfg.tile_m * cfg.tile_n * 4 > cfg.smem_bytes() - BARRIER_BYTES:
        raise ConfigError(f"{cfg.stages} stages are too few to hold the fp32 partial tile: more stages")


def wgmma_catalog() -> list[WgmmaConfig]:
    """Deep-K shapes with few output tiles (M*N from 64^2 to 512^2, K 2048..16384).

    The k-loop is bound by bytes in flight per SM and by L2 bandwidth (A is re-read once per N
    tile, B once per M tile), so each config keeps 128-192 KB of loads in flight:
    - 64x64x64 at 8 and 12 stages: 64x64x16384 (one tile x 16 splits) and 256x512 (32 tiles x
      4 splits: 128 CTAs);
    - 64x64x128, 6 stages: half the barrier round trips per byte;
    - 64x128x64 and 128x64x64, 8 stages: half the re-reads of one operand;
    - 128x128x64, 6 stages, two consumer warpgroups (32 MB of L2 traffic at 256x512x8192
      instead of 64), with N-major and K-major B.
    Measured and dropped (H100, 2026-11-24, benchmarks/tuner/NOTES.md sessions 9 and 14): 64x256x64
    and 128x256x64 at 4 stages, 64x128x64 at 6 (slower everywhere: too few CTAs or bytes in
    flight); the 8-stage and 128x128 configs with ``multicast_a=2`` (slower than their twins at
    all 120 deep-K configs searched, 1.09-1.25x: the L2's output does not bound these kernels).
    Mid-size shapes with short K (M x N >= 128K, K <= 512, session 35): the tiles cuBLASLt's nvjet
    runs there, one wave of 64 x 192 at 128x12288 (where our CUTLASS 128x96 pick was 13% behind it),
    and 96-wide tiles for a K-major B: 64x192 and 128x192 at 4 stages (all of K = 256 in flight),
    64x96 and 128x96 K-major at 4 (the 64x96 took 15 picks, session 36). And the deep-K tiles
    64x64 and 64x128 at 4 stages, B N- or K-major (session 36; the 64x96 K-major tile's 15 picks
    came from the layout as much as the tile): 64-96 KB of shared memory and 86-126 registers a
    thread (the cluster and sliced reductions), two CTAs of 256 threads an SM where their 8-stage
    twins hold one, so one CTA's start-up and epilogue overlap another's loads at the mid-size
    configs of more tiles than SMs (M x N >= 2^20, where the tiny regime's CUTLASS picks are at
    0.97-0.99 of the best baseline). Not 128x64: its 384 threads hold one CTA an SM at any depth.
    And 64x32, B K-major, at 8 stages (session 38): the tile nvjet runs at skinny deep-K configs
    (64x2048x2048: 64 CTAs of 64 x 32 where our 64 x 64 makes 32; ncu, H200, session 35), twice
    the CTAs of a 64-wide tile without a split's reduction. Not at 4 stages: the short-K group
    (search_space.sweep_group) holds eight kernels, the most a group may have to be swept whole.
    Each comes three times: its splits reduced in one cluster's distributed shared memory, and
    through the workspace with no cluster launched (``reduce="global"``, session 16: the cluster
    launch itself cost 10.8 us of a 15.2 us stream at 512x512x12288 in 64x64 x 2 tiles), by the
    last split or by every split a slice (``reduce="sliced"``).
    """
    shapes = [
        WgmmaConfig(64, 64, 64, 8),
        WgmmaConfig(64, 64, 64, 12),
        WgmmaConfig(64, 64, 128, 6),
        WgmmaConfig(64, 128, 64, 8),
        WgmmaConfig(128, 64, 64, 8),
        WgmmaConfig(128, 128, 64, 6),
        WgmmaConfig(128, 128, 64, 6, b_major="k"),
        WgmmaConfig(64, 192, 64, 4),
        WgmmaConfig(128, 192, 64, 4),
        WgmmaConfig(64, 96, 64, 4, b_major="k"),
        WgmmaConfig(128, 96, 64, 4, b_major="k"),
        WgmmaConfig(64, 64, 64, 4),
        WgmmaConfig(64, 128, 64, 4),
        WgmmaConfig(64, 64, 64, 4, b_major="k"),
        WgmmaConfig(64, 128, 64, 4, b_major="k"),
        WgmmaConfig(64, 32, 64, 8, b_major="k"),
    ]
    cat = shapes + [replace(c, reduce=reduce) for reduce in REDUCES[1:] for c in shapes]
    names = [c.name for c in cat]
    assert len(set(names)) == len(names), "duplicate names in the wgmma catalog"
    return cat


# ---------------------------------------------------------------------------- CUDA source

PREAMBLE = "cutlass/sm90_wgmma_splitk.cuh"
KERNEL_TEMPLATE = "cutlass/sm90_wgmma_splitk_kernel.cuh"


def render_kernel(cfg: WgmmaConfig) -> str:
    """The instantiation and the three C entry points of one config (after the preamble)."""
    return render(
        KERNEL_TEMPLATE,
        name=cfg.name,
        tile_m=cfg.tile_m,
        tile_n=cfg.tile_n,
        tile_k=cfg.tile_k,
        stages=cfg.stages,
        b_k_major="true" if cfg.b_major == "k" else "false",
        mcast_a=cfg.multicast_a,
        reduce=REDUCES.index(cfg.reduce),  # the template's REDUCE: kReduceInCluster, ...
    ) + entry_points(cfg.name)


def render_tu(configs: Sequence[WgmmaConfig]) -> str:
    """One translation unit holding ``configs`` (in the given order); needs CUTLASS's CuTe headers."""
    return render_split_k_preamble(PREAMBLE, MAX_SPLITS) + "".join(render_kernel(c) for c in configs)
