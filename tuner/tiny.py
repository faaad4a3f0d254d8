"""Our own tiny-shape HGEMM family: raw mma.sync / ldmatrix / cp.async kernels, written from scratch.

CUTLASS's persistent warp-specialised SM90 kernels cost ~3.4 us at 256^3 whatever the tile
(prologue, TMA descriptor fetch, epilogue warps); launch-bound shapes need a lighter kernel:
one non-persistent CTA per output tile (grid = tiles_n x tiles_m x splits), no cluster, no TMA
descriptor, a cp.async multi-stage shared-memory pipeline feeding ``mma.sync.m16n8k16`` (fp16 in,
fp32 accumulate) through ``ldmatrix`` (``.trans`` for the N-major B), fp16 C stores.

A :class:`TinyConfig` has the same interface as :class:`tuner.catalog.KernelConfig` (``name``,
``to_dict`` / ``from_dict``, ``config_hash``, ``family``, ``user_tile``) and renders to a CUDA
translation unit with exactly the C ABI that ``tuner/emit.py`` documents; the CUDA source is
tuner/csrc/tiny_gemm.cuh (shared by every config) and tiny_gemm_kernel.cuh (one instantiation).
Runtime arguments:

- ``raster`` (0..2) and ``swizzle`` (1/2/4/8) are validated and ignored: the family serves
  one-wave shapes, where CTA order does not change what is read from HBM.
- ``decomposition`` 0 / 1: data parallel (``splits`` must be 1); 2: split-K over ``splits``
  (1..MAX_SPLITS; more than the K tiles is clamped to the K-tile count) reduced in the same
  launch; 3 (stream-K): cannot implement.

Split-K, one launch, nothing in global memory but A, B and C: the ``splits`` CTAs of an output
tile are one thread-block cluster (grid z = cluster z = splits; 16 is Hopper's largest cluster,
with the non-portable opt-in). Each CTA parks its fp32 partial tile in its own shared memory
(``[fragment][thread]`` float4s, where the pipeline's buffers were), then a cluster barrier
(``barrier.cluster`` arrive.release / wait.acquire) makes every partial visible to every peer.
Rank ``r`` sums fragments ``r, r + splits, ...`` of all ranks through distributed shared memory
(``mapa`` + ``ld.shared::cluster``) in rank order -- the same bits whoever finishes first -- and
stores those fp16 fragments of C; a second barrier keeps each CTA's shared memory alive until
its peers have read it. No workspace, no ticket or counter, no memset, no second kernel: a
launch leaves no state behind, so no buffer can be left dirty by another kernel (the previous
design, a ticket counter in a caller's workspace, gave NaNs when the allocator handed the same
buffer to a kernel that wrote partials there).

Register-direct kernels (``loads="direct"``, K <= ``tile_k``, B K-major): no shared memory, no
barrier; every thread loads its mma.sync fragments straight into registers, all of K in one round
trip, through a K permutation (16-byte loads) and an N permutation (one 16-byte C store a row)
that tiny_gemm.cuh describes; data parallel only (``decomposition`` 2 with ``splits`` 1).
Bulk-fed kernels (``loads="bulk"``, the same limits): the direct kernels' fragments and stores,
read from shared memory that one thread fills with bulk copies of the CTA's A and B panels (rows
x K, contiguous) against one mbarrier: a tile's bytes move as a TMA kernel moves them, without a
per-stage pipeline (benchmarks/tuner/movement_floor's ``bulk_`` rows: 0.2-0.3 us a call above the
untiled floor at tiny shapes, where every tiny GEMM measured sits ~1 us above it).
Tensor-fed kernels (``loads="tensor"``, the same limits): the bulk kernels with their panels
brought by tensor copies in 64-wide k boxes with the 128-byte swizzle, so that a warp's fragment
reads of eight rows meet in eight bank groups instead of one (session 31's tiny_floor/bulk_bisect:
the bulk kernels' unswizzled reads cost 0.3-0.9 us a call at K = 128-256), each box on a barrier of
its own, so that the MMAs of the first 64 k run while the later boxes land.

Layouts (SPEC section 4): A MxK row-major; B KxN row-major (``b_major='n'``, the user's ``b``) or
column-major (``'k'``, SPEC's ``b_col_major``); C MxN row-major. Any M, N and K multiples of 8
(16-byte cp.async chunks; out-of-range chunks are zero-filled, so M, N and K need not be tile
multiples); A, B and C 16-byte aligned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cuda_l2_explorer.tuner.abi import entry_points, family_fields
from cuda_l2_explorer.tuner.config import (
    ELEM_BYTES,
    SMEM_BYTES_SM90,
    BMajor,
    ConfigError,
    ConfigRecord,
    check_fields,
)
from cuda_l2_explorer.tuner.templates import read_text, render

TINY_FAMILY = "sm90_mma_tiny"
# Both our families (split_k_cluster.cuh): one CTA per split in a cluster, 16 the largest cluster
# on Hopper; M tiles along grid y (check_split_k_args checks the same bound).
MAX_SPLITS = 16
MAX_M_TILES = 65535
TILE_MS: tuple[int, ...] = (16, 32, 64, 128, 256)
TILE_NS: tuple[int, ...] = (16, 32, 64, 128, 256)
TILE_KS: tuple[int, ...] = (16, 32, 64, 128)
MAX_THREADS = 512
# fp32 accumulator registers per thread (warp tile / 32 lanes): above this the kernel spills.
MAX_ACCUMULATORS = 128
SMEM_PAD_HALFS = 8  # a 16-byte skew per shared-memory row: conflict-free ldmatrix without a swizzle
# Register-direct kernels (loads = "direct"): all of K (up to tile_k) in registers, 16 bytes a load;
# bulk-fed ones (loads = "bulk"): all of K in shared memory, fragments read from there the same way;
# tensor-fed ones (loads = "tensor"): the same from swizzled tensor-copy boxes.
LOADS: tuple[str, ...] = ("smem", "direct", "bulk", "tensor")
ONE_PASS_LOADS: tuple[str, ...] = ("direct", "bulk", "tensor")  # all of K at once: K <= tile_k, no split-K
PANEL_LOADS: tuple[str, ...] = ("bulk", "tensor")  # all of K in shared memory
SWIZZLE_ALIGN_BYTES = 1024  # a swizzled box starts 1024-byte aligned: spare bytes in the launch
BULK_TILE_KS: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048)  # also a tensor copy's whole boxes of 64 k
DIRECT_TILE_KS: tuple[int, ...] = (32, 64, 128, 256)
DIRECT_WARP_NS: tuple[int, ...] = (8, 16, 32)  # one C store of 2 * warp tile N / 8 halfs a row
WARPS_KS: tuple[int, ...] = (1, 2, 4, 8)  # warp groups splitting K (panel kinds; 1 everywhere else)
COPY_BOXES: tuple[int, ...] = (1, 4)  # 64-k boxes a tensor copy brings (tensor kind; 1 elsewhere)
BOX_K = 64  # halfs of K a tensor-copy box holds (one 128-byte swizzled line)
# Fragment registers a thread may hold (A, B and the accumulators): ptxas keeps ~160 without spills
# beside the addresses (the same bound, checked in validate, keeps it under 255).
MAX_DIRECT_REGISTERS = 160
DEFAULT_STAGES = 3


@dataclass(frozen=True, order=True)
class TinyConfig(ConfigRecord):
    """Compile-time parameters of one tiny-shape kernel (CTA tile, warp grid, pipeline, B layout)."""

    tile_m: int
    tile_n: int
    tile_k: int = 32
    warps_m: int = 2
    warps_n: int = 2
    stages: int = DEFAULT_STAGES
    b_major: BMajor = "n"
    family: Literal["sm90_mma_tiny"] = "sm90_mma_tiny"
    # "smem": the cp.async / ldmatrix pipeline; "direct": no shared memory, fragments loaded into
    # registers (K <= tile_k, B K-major; tiny_gemm.cuh says how); "bulk": the same fragments read
    # from panels bulk-copied into shared memory; "tensor": from swizzled tensor-copy boxes. Left out
    # of the dict when "smem", so every earlier kernel keeps its name and hash.
    loads: Literal["smem", "direct", "bulk", "tensor"] = "smem"
    # Panel kinds: warp groups of warps_m x warps_n that split K (every warps_k-th 64-k box each; their
    # sums meet in shared memory), so a tile's MMA chain is shorter where K is long. Left out of the
    # dict when 1, as `loads`.
    warps_k: int = 1
    # Tensor kind: 64-k boxes one tensor copy brings (a 3D map of the matrix as 64-k slabs; K a multiple
    # of 64), a barrier a copy: fewer copies land sooner (tiny_gemm.cuh). Left out of the dict when 1.
    copy_boxes: int = 1
    # With copy_boxes > 1: the copy's map in the matrix's own order (strides increasing), its rows
    # landing copy_boxes + 1 lines apart (tiny_gemm.cuh's kPitched). Left out of the dict when False.
    copy_pitched: bool = False

    def __post_init__(self) -> None:
        validate(self)

    @property
    def name(self) -> str:
        """Stable identifier, a valid C identifier suffix (``l2x_gemm_<name>``)."""
        tile = f"{self.tile_m}x{self.tile_n}x{self.tile_k}_w{self.warps_m}x{self.warps_n}"
        if self.warps_k > 1:
            tile += f"x{self.warps_k}"
        if self.copy_boxes > 1:
            tile += f"_{'p' if self.copy_pitched else 'c'}{self.copy_boxes}"
        if self.loads in ONE_PASS_LOADS:
            return f"tiny{self.loads[0]}_{tile}_b{self.b_major}"
        return f"tiny_{tile}_s{self.stages}_b{self.b_major}"

    def to_dict(self) -> dict[str, object]:
        data = super().to_dict()
        if self.loads == "smem":
            del data["loads"]
        if self.warps_k == 1:
            del data["warps_k"]
        if self.copy_boxes == 1:
            del data["copy_boxes"]
        if not self.copy_pitched:
            del data["copy_pitched"]
        return data

    def direct_registers(self) -> int:
        """Fragment registers one thread of a direct kernel holds: A (two rows a m16 fragment), B
        (one column an n8 fragment), 16 bytes a 32-wide k block each, and the accumulators."""
        m16 = self.tile_m // self.warps_m // 16
        n8 = self.tile_n // self.warps_n // 8
        blocks = self.tile_k // 32
        return 4 * blocks * (2 * m16 + n8) + 4 * m16 * n8

    @property
    def threads(self) -> int:
        return 32 * self.warps_m * self.warps_n * self.warps_k

    def partial_bytes(self) -> int:
        """Shared memory where warp groups 1.. park their fp32 tiles for group 0 to add."""
        return (self.warps_k - 1) * self.tile_m * self.tile_n * 4

    def smem_bytes(self) -> int:
        """Dynamic shared memory: padded A and B tiles per stage, the panels at K = tile_k (bulk; tensor
        with the swizzle's alignment spare), none (direct)."""
        if self.loads == "direct":
            return 0
        if self.loads == "bulk":
            return (self.tile_m + self.tile_n) * self.tile_k * ELEM_BYTES + self.partial_bytes()
        if self.loads == "tensor":  # whole copies, a pitched one a line a row more
            lines = self.tile_k // BOX_K // self.copy_boxes * (self.copy_boxes + self.copy_pitched)
            panels = (self.tile_m + self.tile_n) * lines * BOX_K * ELEM_BYTES
            return panels + self.partial_bytes() + SWIZZLE_ALIGN_BYTES
        a = self.tile_m * (self.tile_k + SMEM_PAD_HALFS)
        if self.b_major == "k":
            b = self.tile_n * (self.tile_k + SMEM_PAD_HALFS)
        else:
            b = self.tile_k * (self.tile_n + SMEM_PAD_HALFS)
        return self.stages * (a + b) * ELEM_BYTES


def validate(cfg: TinyConfig) -> None:
    """Raise :class:`ConfigError` for parameters the kernel template cannot instantiate."""
    if cfg.loads not in LOADS:
        raise ConfigError(f"loads must be one of {LOADS}, got {cfg.loads!r}")
    if cfg.warps_k not in WARPS_KS:
        raise ConfigError(f"warps_k must be one of {WARPS_KS}, got {cfg.warps_k!r}")
    if cfg.warps_k > 1 and cfg.loads not in PANEL_LOADS:
        raise ConfigError(f"only the panel kinds {PANEL_LOADS} split K over warps: warps_k must stay 1")
    if cfg.copy_boxes not in COPY_BOXES:
        raise ConfigError(f"copy_boxes must be one of {COPY_BOXES}, got {cfg.copy_boxes!r}")
    if cfg.copy_boxes > 1 and (cfg.loads != "tensor" or cfg.tile_k % (BOX_K * cfg.copy_boxes)):
        raise ConfigError(
            f"copy_boxes > 1 needs the tensor kind and whole copies of {cfg.copy_boxes} 64-k boxes "
            "up to tile_k"
        )
    if cfg.copy_pitched and cfg.copy_boxes == 1:
        raise ConfigError("copy_pitched needs copy_boxes > 1 (a pitched copy brings several boxes)")
    if cfg.loads in ONE_PASS_LOADS:
        validate_one_pass(cfg)
        return
    check_fields(
        cfg,
        TINY_FAMILY,
        ("tile_m", "tile_n", "tile_k", "warps_m", "warps_n", "stages"),
        {"tile_m": TILE_MS, "tile_n": TILE_NS, "tile_k": TILE_KS},
    )
    if cfg.threads > MAX_THREADS:
        raise ConfigError(f"{cfg.warps_m}x{cfg.warps_n}x{cfg.warps_k} warps exceed {MAX_THREADS} threads")
    # A warp covers whole m16 A fragments and pairs of n8 B fragments (one ldmatrix.x4 loads two).
    if cfg.tile_m % (16 * cfg.warps_m):
        raise ConfigError(
            f"warp tile M must be a multiple of 16: tile_m {cfg.tile_m} / warps_m {cfg.warps_m}"
        )
    if cfg.tile_n % (16 * cfg.warps_n):
        raise ConfigError(
            f"warp tile N must be a multiple of 16: tile_n {cfg.tile_n} / warps_n {cfg.warps_n}"
        )
    check_accumulators(cfg)
    if not 2 <= cfg.stages <= 8:
        raise ConfigError(f"stages must be in 2..8, got {cfg.stages}")
    if cfg.smem_bytes() > SMEM_BYTES_SM90 - 1024:  # the kernel's static shared memory comes on top
        raise ConfigError(f"{cfg.stages} stages need {cfg.smem_bytes()} bytes of shared memory: does not fit")


def check_accumulators(cfg: TinyConfig) -> None:
    accumulators = cfg.tile_m * cfg.tile_n // (32 * cfg.warps_m * cfg.warps_n)  # each K group holds the tile
    if accumulators > MAX_ACCUMULATORS:
        raise ConfigError(f"{accumulators} fp32 accumulators per thread (max {MAX_ACCUMULATORS}): more warps")


def validate_one_pass(cfg: TinyConfig) -> None:
    """A register-direct, bulk-fed or tensor-fed kernel's limits (tiny_gemm.cuh's DirectShape,
    BulkEntry and TensorEntry assert the same)."""
    kind = cfg.loads
    tile_ks = DIRECT_TILE_KS if kind == "direct" else BULK_TILE_KS
    check_fields(
        cfg,
        TINY_FAMILY,
        ("tile_m", "tile_n", "tile_k", "warps_m", "warps_n", "stages"),
        {"tile_m": TILE_MS, "tile_n": TILE_NS, "tile_k": tile_ks},
    )
    if cfg.b_major != "k":
        raise ConfigError(f"a {kind} kernel reads B K-major (b_col_major): b_major must be 'k'")
    if cfg.stages != DEFAULT_STAGES:
        raise ConfigError(f"a {kind} kernel has no pipeline: stages must stay {DEFAULT_STAGES}")
    if cfg.threads > MAX_THREADS:
        raise ConfigError(f"{cfg.warps_m}x{cfg.warps_n}x{cfg.warps_k} warps exceed {MAX_THREADS} threads")
    if cfg.tile_m % (16 * cfg.warps_m):
        raise ConfigError(
            f"warp tile M must be a multiple of 16: tile_m {cfg.tile_m} / warps_m {cfg.warps_m}"
        )
    if cfg.tile_n % cfg.warps_n or cfg.tile_n // cfg.warps_n not in DIRECT_WARP_NS:
        raise ConfigError(
            f"warp tile N must be one of {DIRECT_WARP_NS}: tile_n {cfg.tile_n} / warps_n {cfg.warps_n}"
        )
    if kind in PANEL_LOADS:  # one k block of fragments at a time: the accumulators and the panels bound it
        check_accumulators(cfg)
        if cfg.smem_bytes() > SMEM_BYTES_SM90 - 1024:
            raise ConfigError(f"panels of {cfg.smem_bytes()} bytes at K = {cfg.tile_k}: over shared memory")
        return
    # 64K registers an SM share the CTA's threads (512 threads: 128 each), ~24 go to addresses
    most = min(MAX_DIRECT_REGISTERS, 65536 // cfg.threads - 24)
    if cfg.direct_registers() > most:
        raise ConfigError(
            f"{cfg.direct_registers()} fragment registers a thread (max {most} at {cfg.threads} threads): "
            "a smaller warp tile or tile_k"
        )


def why_not_shape(m: int, n: int, k: int, params: Mapping[str, Any] | None) -> str | None:
    """What limits one kernel beyond the family's shape rule: a direct or bulk kernel holds all of K."""
    loads = params.get("loads") if params else None
    if loads in ONE_PASS_LOADS and k > int(params.get("tile_k") or 0):
        where = "registers" if loads == "direct" else "shared memory"
        return f"K must be at most {params.get('tile_k')} (a {loads} kernel holds all of K in {where})"
    if params and int(params.get("copy_boxes") or 1) > 1 and k % BOX_K:
        return f"K must be a multiple of {BOX_K} (a copy of several 64-k boxes reads whole 64-k slabs)"
    return None


def tiny_catalog() -> list[TinyConfig]:
    """The tiny regime (about 390 grid configs whose physical floor is under 5 us), by tile.

    - 64x64x32, 4 stages: the least work per CTA; 64^3..256^3 and 64xNxK skinny shapes get the
      most CTAs (16 at 256^3) and the shortest prologue (K=64 is two k-tiles).
    - 64x64x64, 4 stages (72 KB): deep-K split-K (64x64x16384: 256 k-tiles over up to 32 CTAs);
      64-wide k-tiles halve the barriers per byte and keep 48 KB of loads in flight per CTA.
    - 64x64x128, 3 stages (107 KB): the deepest in-flight loads per CTA for the deepest K.
    - 64x128x64 and 128x64x64, 3 stages: skinny shapes (64x512x512, 512x64x1024) and 512^3
      (32 CTAs of 128x64), one warp tile of 32x64 / 64x32 per warp.
    - 128x128x32 (8 warps, 4 stages) and 128x128x64 (8 warps, 3 stages, 105 KB): 1024^3 (64
      CTAs, half a wave, each reading 512 KB) and split-K 128x128x8192.
    - 128x128x32 with K-major B: the layout twin (no ``.trans`` ldmatrix) to measure B's layout.
    - 32x32x64 (4 stages), 32x32x128 and 32x64x128 (6 stages), 16x64x128 (6 stages): small
      M*N with deep K (64x64x16384): four to eight tiles x 16 splits put 64-128 CTAs (SMs) on
      the K sweep instead of 16, each with 5 k-tiles in flight; a deep-K HGEMM here is bound by
      bytes in flight per SM (latency), not by the tensor cores.
    - 64x64x128, 6 stages (215 KB): the same tile with twice the loads in flight.
    Tried and measured slower everywhere (H100, 2026-11-24, benchmarks/tuner/NOTES.md session 8):
    8-stage whole-chunk pipelines (32x32x128, 16x64x128, 32x64x128), 128x128x64 at 6 stages,
    64x128x128 / 128x64x128 at 4 and 64x64x128 with 8 warps. Bigger split tiles do not rescue
    the deep-K mid shapes: mma.sync at this size runs at ~0.6-1.5 TFLOP/s per SM.
    Warps: 2x2 (4 warps, warp tile 16x16..64x32) for tiles up to 128x64, 1x4 for 16x64, 2x4
    (8 warps, 64x32) for 128x128, so no thread holds more than 64 accumulators.
    """
    cat = [
        TinyConfig(64, 64, 32, 2, 2, 4),
        TinyConfig(64, 64, 64, 2, 2, 4),
        TinyConfig(64, 64, 128, 2, 2, 3),
        TinyConfig(64, 128, 64, 2, 2, 3),
        TinyConfig(128, 64, 64, 2, 2, 3),
        TinyConfig(128, 128, 32, 2, 4, 4),
        TinyConfig(128, 128, 64, 2, 4, 3),
        TinyConfig(128, 128, 32, 2, 4, 4, b_major="k"),
        TinyConfig(32, 32, 64, 2, 2, 4),
        TinyConfig(32, 32, 128, 2, 2, 6),
        TinyConfig(32, 64, 128, 2, 2, 6),
        TinyConfig(16, 64, 128, 1, 4, 6),
        TinyConfig(64, 64, 128, 2, 2, 6),
        *direct_catalog(),
        *bulk_catalog(),
        *tensor_catalog(),
    ]
    names = [c.name for c in cat]
    assert len(set(names)) == len(names), "duplicate names in the tiny catalog"
    return cat


def direct_catalog() -> list[TinyConfig]:
    """Register-direct kernels for K <= 256 (about 220 tiny grid configs): one CTA per tile, no
    shared memory, one round trip for all of A's and B's loads (benchmarks/tuner/movement_floor).
    Warp tiles 16x32 (one 16-byte C store a row) up to K = 128, 16x16 at K = 256 (registers: 64x64
    at K = 256 needs 16 warps, whose 128 registers a thread spill);
    CTA tiles from 16x32 (one warp: the most CTAs at 64^3) to 64x128 (16 warps) for the larger
    M x N of the regime (1024x1024x64: 128 CTAs)."""

    def d(m: int, n: int, k: int, wm: int, wn: int) -> TinyConfig:
        return TinyConfig(m, n, k, wm, wn, b_major="k", loads="direct")

    return [
        d(16, 32, 64, 1, 1),
        d(16, 32, 128, 1, 1),
        d(32, 32, 64, 2, 1),
        d(32, 32, 128, 2, 1),
        d(32, 64, 64, 2, 2),
        d(32, 64, 128, 2, 2),
        d(64, 64, 64, 4, 2),
        d(64, 64, 128, 4, 2),
        d(64, 128, 64, 4, 4),
        d(16, 16, 256, 1, 1),
        d(32, 32, 256, 2, 2),
        d(32, 64, 256, 2, 4),
    ]


def bulk_catalog() -> list[TinyConfig]:
    """Bulk-fed kernels for K <= 512 (about 330 tiny grid configs): one CTA per tile, all of K in
    shared memory. Tiles from the bulk movement's fastest at tiny shapes (H200, session 30:
    32x32 at most configs, 64x128 and 128x128 where M x N is large), warp tiles 16x32 (one 16-byte
    C store a row) but 32x32 at 128x128 (16 warps would take 512 threads); 16x32 for the fewest
    bytes a CTA at 64^3. K up to 512 where the panels fit (128x128: 256)."""

    def b(m: int, n: int, k: int, wm: int, wn: int) -> TinyConfig:
        return TinyConfig(m, n, k, wm, wn, b_major="k", loads="bulk")

    return [
        b(16, 32, 512, 1, 1),
        b(32, 32, 512, 2, 1),
        b(32, 64, 512, 2, 2),
        b(64, 64, 512, 4, 2),
        b(64, 128, 512, 4, 4),
        b(128, 128, 256, 4, 4),
    ]


def tensor_catalog() -> list[TinyConfig]:
    """The bulk kernels' tiles fed by swizzled tensor copies (their reads free of bank conflicts),
    and the three smallest with K split over 2 and 4 warp groups: a 32x32 tile spent 1.2 us after
    its panels landed at 512x512x256 against 0.37 at K = 64 (H200, session 32), its warps' MMA
    chains running all of K one after the other; split, 256^3 ran 2.97 -> 2.63 us (cuBLAS 2.87).
    The split tiles also hold K = 1024 (the panels up to 201 KB, one CTA an SM), for the tiny
    configs at K = 1024 where few tiles leave most SMs idle (64x1024x1024: 64 tiles of 32x32).
    The tiles of at most 32 rows also with four boxes a copy (copy_boxes): at K = 1024 a 32x32 tile's
    32 one-box copies landed 0.5-0.7 us after bulk copies of the same bytes (H200, session 33); a
    larger tile's boxes are already 8-16 KB a copy (and 64x128 spilled with four). Each of those
    also pitched (copy_pitched: a map whose strides increase) where its panels fit. The 16x32 split
    tile with four-box copies also at K = 2048 (its panels 193 KB, one CTA an SM): at K = 1024 it led
    the best baseline by 11-18% at M x N <= 64K (H200, session 34), where K = 2048 picks take 4.8-5.8 us.
    And that tile with K over eight warp groups (256 threads, a group every eighth 64-k pair) at K =
    2048, where a four-group warp runs eight pairs: at K = 512-1024 eight groups measured level or
    slower than four (64x1024x1024 3.83 against 3.82 us; 512x512x256 5.42 against 3.56; H200, session
    34), so the ~1.1 us a four-group kernel spends after its copies land is not its MMA chain."""

    def t(m: int, n: int, wm: int, wn: int, wk: int, k: int = 512) -> TinyConfig:
        return TinyConfig(m, n, k, wm, wn, b_major="k", loads="tensor", warps_k=wk)

    whole = [TinyConfig(**{**c.to_dict(), "loads": "tensor"}) for c in bulk_catalog()]
    groups = {(16, 32, 1, 1): (2, 4), (32, 32, 2, 1): (2, 4), (32, 64, 2, 2): (2,)}  # tile and warps: warps_k
    split = [t(*tile, wk) for tile, wks in groups.items() for wk in wks]
    one_box = [*whole, *split, *(t(*tile, max(wks), 1024) for tile, wks in groups.items())]
    four = [TinyConfig(**{**c.to_dict(), "copy_boxes": 4}) for c in one_box if c.tile_m <= 32]
    # the 16x32 tile's four-box kernels past the one-box set: four and eight groups at K = 2048
    more = [(4, 2048), (8, 2048)]
    deep = [TinyConfig(**{**t(16, 32, 1, 1, wk, k).to_dict(), "copy_boxes": 4}) for wk, k in more]
    return [*one_box, *four, *(p for c in four if (p := pitched_twin(c))), *deep]


def pitched_twin(cfg: TinyConfig) -> TinyConfig | None:
    """``cfg`` with its copies pitched, or None where the panels' extra lines do not fit."""
    try:
        return TinyConfig(**{**cfg.to_dict(), "copy_pitched": True})
    except ConfigError:
        return None


# ---------------------------------------------------------------------------- CUDA source

PREAMBLE = "tuner/csrc/tiny_gemm.cuh"
SPLIT_K_CLUSTER = "tuner/csrc/split_k_cluster.cuh"  # what both our families share (DSMEM split-K, ABI checks)
TIMELINE = "tuner/csrc/timeline.cuh"  # both families' step stamps (a timeline build's)
KERNEL_TEMPLATE = "tuner/csrc/tiny_gemm_kernel.cuh"
DIRECT_KERNEL_TEMPLATE = "tuner/csrc/tiny_direct_kernel.cuh"


def render_kernel(cfg: TinyConfig) -> str:
    """The instantiation and the three C entry points of one config (needs :func:`render_preamble`)."""
    tile = dict(
        name=cfg.name,
        tile_m=cfg.tile_m,
        tile_n=cfg.tile_n,
        tile_k=cfg.tile_k,
        warps_m=cfg.warps_m,
        warps_n=cfg.warps_n,
    )
    if cfg.loads in ONE_PASS_LOADS:
        tile["warps_k"] = cfg.warps_k
        tile["copy_boxes"] = cfg.copy_boxes
        tile["copy_pitched"] = int(cfg.copy_pitched)
        entry = {"direct": "DirectEntry", "bulk": "BulkEntry", "tensor": "TensorEntry"}[cfg.loads]
        return render(DIRECT_KERNEL_TEMPLATE, entry=entry, **tile) + entry_points(cfg.name)
    b_k_major = "true" if cfg.b_major == "k" else "false"
    return render(KERNEL_TEMPLATE, stages=cfg.stages, b_k_major=b_k_major, **tile) + entry_points(cfg.name)


def render_split_k_preamble(template: str, max_splits: int) -> str:
    """A preamble of our own families: the ABI fields, the split bound, the DSMEM helpers and the
    step stamps."""
    return render(
        template,
        max_splits=max_splits,
        split_k_cluster=read_text(SPLIT_K_CLUSTER),
        timeline=read_text(TIMELINE),
        **family_fields(),
    )


def render_preamble() -> str:
    return render_split_k_preamble(PREAMBLE, MAX_SPLITS)


def render_tu(configs: Sequence[TinyConfig]) -> str:
    """One translation unit holding ``configs`` (in the given order); no CUTLASS header."""
    return render_preamble() + "".join(render_kernel(c) for c in configs)


# ---------------------------------------------------------------------------- index model


def split_ranges(k: int, tile_k: int, splits: int) -> list[tuple[int, int]]:
    """The K-tile range [begin, end) each split of a tile reduces (the kernel's arithmetic)."""
    k_tiles = -(-k // tile_k)
    eff = min(splits, k_tiles)
    return [(s * k_tiles // eff, (s + 1) * k_tiles // eff) for s in range(eff)]
