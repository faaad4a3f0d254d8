"""Kernels as data: the compile-time parameters of one HGEMM instantiation, validated.

A :class:`KernelConfig` names everything that is fixed when a kernel is compiled (family, tile,
cluster, schedule, stages, tile scheduler, swap-AB, the memory layout of B). Everything else
(raster order, swizzle, split-K / stream-K decomposition and splits) is a runtime argument of
the emitted entry point, so one instantiation covers many search candidates.

Problem convention (SPEC section 4): C (MxN, row-major, fp16) = A (MxK, row-major, fp16) x
B (KxN, fp16), fp32 accumulation, beta = 0 (C is never read). ``b_major`` says how B is stored:
``"n"`` = row-major KxN (the user's ``b``; N contiguous), ``"k"`` = column-major KxN (SPEC's
``b_col_major``, i.e. ``b.t().contiguous()``; K contiguous). Any M; N and K multiples of 8
(16-byte TMA alignment).

``swap_ab`` computes C^T = B^T A^T instead, so that a small M lands on the wgmma N dimension
(tile N) and N on the 64/128-row tile M: the emitted kernel takes the user's (M, N, K) either way.
``tile_m`` / ``tile_n`` are always the *CUTLASS* tile (over the problem the kernel computes):
with ``swap_ab`` tile_m covers the user's N and tile_n the user's M.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cuda_l2_explorer.tuner.config import (
    ELEM_BYTES,
    SMEM_BYTES_SM90,
    BMajor,
    ConfigError,
    ConfigRecord,
    check_fields,
    is_positive_int,
)

SM90_FAMILY = "cutlass_sm90"
Family = Literal["cutlass_sm90"]
Schedule = Literal["cooperative", "pingpong"]
Scheduler = Literal["persistent", "streamk"]
Epilogue = Literal["alpha", "convert"]

SCHEDULES: tuple[str, ...] = ("cooperative", "pingpong")
SCHEDULERS: tuple[str, ...] = ("persistent", "streamk")
EPILOGUES: tuple[str, ...] = ("alpha", "convert")
DEFAULT_EPILOGUE: Epilogue = "alpha"  # left out of a kernel's dict (kernels that predate the field)


@dataclass(frozen=True, order=True)
class KernelConfig(ConfigRecord):
    """Compile-time parameters of one CUTLASS 3.x SM90 collective-builder HGEMM."""

    tile_m: int
    tile_n: int
    tile_k: int = 64
    cluster_m: int = 1
    cluster_n: int = 1
    schedule: Schedule = "cooperative"
    stages: int | Literal["auto"] = "auto"
    scheduler: Scheduler = "persistent"
    swap_ab: bool = False
    b_major: BMajor = "n"
    family: Family = "cutlass_sm90"
    # The epilogue's subtile width along N (its height is the warpgroup's 64 rows, or 128 under the
    # cooperative schedule); "auto" is CUTLASS's choice, 32 wide: ten TMA stores of 4 KB, each
    # behind a barrier, per 128x160 tile.
    epi_n: int | Literal["auto"] = "auto"
    # What the epilogue computes from the fp32 accumulators. "alpha": CUTLASS's LinearCombination,
    # D = alpha * acc with alpha = 1 at run time: one FP32 multiply an element (ncu, H200,
    # 12288x12288x256: 4.8M of our 22.2M instructions; nvjet's kernel has none). "convert":
    # D = fp16(acc), all our C ABI computes (C = A B).
    epilogue: Epilogue = DEFAULT_EPILOGUE
    # Buffers of D in shared memory behind an explicit epilogue subtile: "auto" is CUTLASS's
    # min(subtiles, 2); 1 makes each subtile's TMA store read the buffer before the next subtile
    # is written there, and leaves the bytes to the mainloop (a 128x176 ping-pong tile: 5 stages
    # instead of 4, as nvjet's 176x128 runs; H200 ncu, 2026-11-28: our consumers waited on the
    # pipeline's full barriers in ~19% of their stall samples at 12288x12288x256).
    epi_buffers: int | Literal["auto"] = "auto"

    def __post_init__(self) -> None:
        validate(self)

    def to_dict(self) -> dict[str, object]:
        # The default epilogue subtile and computation are left out, so kernels that predate those
        # fields keep their dicts (manifests, stores, the library's registry) and content hashes.
        data = super().to_dict()
        if self.epi_n == "auto":
            del data["epi_n"]
        if self.epilogue == DEFAULT_EPILOGUE:
            del data["epilogue"]
        if self.epi_buffers == "auto":
            del data["epi_buffers"]
        return data

    # -- naming ----------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """Stable, human-readable identifier; a valid C identifier suffix (``l2x_gemm_<name>``)."""
        sched = {"cooperative": "coop", "pingpong": "pp"}[self.schedule]
        parts = [
            "sm90",
            f"{self.tile_m}x{self.tile_n}x{self.tile_k}",
            f"c{self.cluster_m}x{self.cluster_n}",
            sched,
            "sk" if self.scheduler == "streamk" else "ps",
            f"s{self.stages}" if self.stages != "auto" else "sauto",
            f"b{self.b_major}",
        ]
        if self.swap_ab:
            parts.append("swap")
        if self.epi_n != "auto":
            parts.append(f"e{self.epi_n}")
        if self.epi_buffers != "auto":
            parts.append(f"d{self.epi_buffers}")
        if self.epilogue == "convert":
            parts.append("cv")
        return "_".join(parts)

    # -- what the user's shape maps to ------------------------------------------------------------
    def user_tile(self) -> tuple[int, int]:
        """(rows of C, columns of C) one CTA tile covers in the user's problem."""
        return (self.tile_n, self.tile_m) if self.swap_ab else (self.tile_m, self.tile_n)

    def smem_per_stage(self) -> int:
        return (self.tile_m + self.tile_n) * self.tile_k * ELEM_BYTES

    def epi_m(self) -> int:
        """Rows of the epilogue's subtile: one warpgroup's 64, or both's 128 when cooperative."""
        return 128 if self.schedule == "cooperative" else 64

    def epi_smem(self) -> int:
        """Shared memory an explicit epilogue subtile takes: its buffers of D (CUTLASS's StagesD)."""
        assert self.epi_n != "auto"
        subtiles = (self.tile_m // self.epi_m()) * (self.tile_n // self.epi_n)
        buffers = min(subtiles, 2) if self.epi_buffers == "auto" else self.epi_buffers
        return buffers * self.epi_m() * self.epi_n * ELEM_BYTES


def validate(cfg: KernelConfig) -> None:
    """Raise :class:`ConfigError` for parameters the CUTLASS SM90 builders (or we) do not allow."""
    check_fields(cfg, SM90_FAMILY, ("tile_m", "tile_n", "tile_k", "cluster_m", "cluster_n"))
    if cfg.schedule not in SCHEDULES:
        raise ConfigError(f"schedule must be one of {SCHEDULES}, got {cfg.schedule!r}")
    if cfg.scheduler not in SCHEDULERS:
        raise ConfigError(f"scheduler must be one of {SCHEDULERS}, got {cfg.scheduler!r}")
    if not isinstance(cfg.swap_ab, bool):
        raise ConfigError("swap_ab must be a bool")
    # wgmma: M is 64 per warpgroup; the cooperative schedule splits tile M over 2 consumer
    # warpgroups, so it needs a multiple of 128; ping-pong gives each warpgroup a whole tile.
    if cfg.tile_m % 64 or cfg.tile_m > 256:
        raise ConfigError(f"tile_m must be 64, 128, 192 or 256, got {cfg.tile_m}")
    if cfg.schedule == "cooperative" and cfg.tile_m % 128:
        raise ConfigError(f"the cooperative schedule needs tile_m a multiple of 128, got {cfg.tile_m}")
    # wgmma N: multiple of 8 up to 256; we keep multiples of 16 (epilogue tiling, TMA boxes).
    if cfg.tile_n % 16 or cfg.tile_n > 256:
        raise ConfigError(f"tile_n must be a multiple of 16 up to 256, got {cfg.tile_n}")
    # fp16 wgmma K is 16; one 128-byte swizzle atom along K is 64 halfs.
    if cfg.tile_k not in (32, 64, 128):
        raise ConfigError(f"tile_k must be 32, 64 or 128, got {cfg.tile_k}")
    if cfg.cluster_m not in (1, 2, 4) or cfg.cluster_n not in (1, 2, 4):
        raise ConfigError("cluster_m and cluster_n must be 1, 2 or 4")
    if cfg.cluster_m * cfg.cluster_n > 4:
        raise ConfigError("a cluster of more than 4 CTAs is not supported here (portable limit 8; 4 kept)")
    if cfg.scheduler == "streamk" and cfg.schedule != "cooperative":
        raise ConfigError("the stream-K tile scheduler needs the cooperative schedule")
    if cfg.epilogue not in EPILOGUES:
        raise ConfigError(f"epilogue must be one of {EPILOGUES}, got {cfg.epilogue!r}")
    if cfg.epi_n != "auto":
        if not is_positive_int(cfg.epi_n) or cfg.epi_n % 16 or cfg.tile_n % cfg.epi_n:
            raise ConfigError(f"epi_n must be 'auto' or a multiple of 16 dividing tile_n, got {cfg.epi_n!r}")
        if cfg.tile_m % cfg.epi_m():
            raise ConfigError(f"an explicit epilogue subtile needs tile_m a multiple of {cfg.epi_m()}")
    if cfg.epi_buffers not in ("auto", 1):
        raise ConfigError(f"epi_buffers must be 'auto' or 1, got {cfg.epi_buffers!r}")
    if cfg.epi_buffers == 1 and cfg.epi_n == "auto":
        raise ConfigError("one epilogue buffer needs an explicit epilogue subtile (epi_n)")
    # Shared memory the epilogue takes beside the pipeline: an explicit subtile's buffers, or a
    # rough allowance for CUTLASS's own choice (the compiler has the last word).
    epi_bytes = 16 * 1024 if cfg.epi_n == "auto" else cfg.epi_smem() + 2 * 1024
    if cfg.stages != "auto":
        if not isinstance(cfg.stages, int) or isinstance(cfg.stages, bool) or not 2 <= cfg.stages <= 8:
            raise ConfigError(f"stages must be 'auto' or an int in 2..8, got {cfg.stages!r}")
        if cfg.stages * cfg.smem_per_stage() > SMEM_BYTES_SM90 - epi_bytes:
            raise ConfigError(
                f"{cfg.stages} stages of {cfg.smem_per_stage()} bytes do not fit in shared memory"
            )
    elif 2 * cfg.smem_per_stage() > SMEM_BYTES_SM90 - epi_bytes:
        raise ConfigError("tile too large for two pipeline stages in shared memory")


# ---------------------------------------------------------------------------- the first catalog


def _c(tm: int, tn: int, **kw: object) -> KernelConfig:
    return KernelConfig(tm, tn, **kw)  # type: ignore[arg-type]


def first_catalog() -> list[KernelConfig]:
    """A first candidate catalog (a few dozen instantiations), grouped by the regime it serves.

    Large / compute-bound: the big cooperative tiles cuBLAS-class kernels use (128x256, 256x128)
    with 2-CTA clusters for TMA multicast, plus ping-pong 128x128 / 64x256 (overlapped epilogue).
    Mid sizes and wave quantisation: stream-K (cooperative only) and a non-power-of-two tile
    (128x192) whose tile count lands differently on 132 SMs. Skinny M (decode-like, M <= 256):
    swap-AB so M becomes the 16..64-wide wgmma N tile, clusters along the new M to multicast the
    user's A; ping-pong 64xN without swap. Skinny N: 128x64 / 256x64 tiles. Small K: ping-pong
    to overlap one tile's epilogue with the next tile's loads. Two K-major-B twins of the
    large-shape kernels measure the layout question (wgmma takes fp16 B either way).
    """
    one_buffer_pp: dict[str, object] = {"schedule": "pingpong", "epi_buffers": 1, "epilogue": "convert"}
    cat = [
        # large, compute-bound
        _c(128, 256, cluster_m=2),
        _c(128, 256),
        _c(256, 128, cluster_n=2),
        _c(128, 128),
        _c(128, 128, cluster_m=2),
        _c(128, 128, schedule="pingpong", cluster_m=2),
        _c(64, 256, schedule="pingpong"),
        _c(128, 128, schedule="pingpong"),
        # added after the first look (4096^3 went to ping-pong 128x128; cuBLASLt's best there
        # was a 256x128 tile): multicast along N for ping-pong, an unclustered 256x128 and a
        # 128x256 with a 1x2 cluster
        _c(128, 128, schedule="pingpong", cluster_n=2),
        _c(256, 128),
        _c(128, 256, cluster_n=2),
        # wave quantisation: stream-K and a non-power-of-two tile
        _c(128, 256, scheduler="streamk"),
        _c(128, 256, cluster_m=2, scheduler="streamk"),
        _c(128, 128, scheduler="streamk"),
        _c(128, 192),
        _c(128, 192, scheduler="streamk"),
        # skinny M: swap-AB (user's M on the wgmma N side)
        _c(128, 64, swap_ab=True),
        _c(128, 64, swap_ab=True, scheduler="streamk"),
        _c(128, 32, swap_ab=True),
        _c(128, 32, swap_ab=True, cluster_m=2),
        _c(128, 16, swap_ab=True),
        _c(128, 16, swap_ab=True, scheduler="streamk"),
        _c(64, 128, schedule="pingpong"),
        _c(64, 64, schedule="pingpong", swap_ab=True),
        # skinny N
        _c(128, 64),
        _c(256, 64),
        _c(128, 64, scheduler="streamk"),
        # tiny
        _c(64, 64, schedule="pingpong"),
        # B layout twins
        _c(128, 256, cluster_m=2, b_major="k"),
        _c(128, 128, b_major="k"),
        # added after ncu of three losses (2026-11-24): cuBLAS ran 128x64 tiles with a 1x2 cluster
        # at 1024x1024x4096 and 256x128 with a 1x2 cluster at 16384x4096x256, where we had the
        # 128x64 tile only without a cluster; their cluster twins, and one for skinny M
        _c(128, 64, cluster_n=2),
        _c(128, 64, cluster_m=2),
        _c(256, 128, cluster_m=2),
        _c(128, 64, swap_ab=True, cluster_m=2),
        # cuBLASLt's auto-tuned winner at K <= 1024 with M, N >= 2048 is nvjet 128x160 5-stage in a
        # 2x1 cluster (2026-11-25); as swap-AB (160 along the user's M, whose A is K-major) with
        # CuTe's extended wgmma widths it ran 0.984 of our 128x128 ping-pong on 20 such configs
        # (2026-11-27, benchmarks/tuner/h100-2026-11-27-s22/)
        _c(128, 160, schedule="pingpong", cluster_m=2, stages=5, swap_ab=True),
        # skinny, one wave at 12288: the long side in 96-wide tiles makes 128 CTAs on 132 SMs,
        # where 64-wide tiles make 192 (1.45 waves; at 64x12288x4096 ours reached 0.73 of the
        # floor, what two full-length waves predict, 2026-11-27). 96 sits on wgmma's N, along a
        # K-major operand (B K-major, or the user's A under swap-AB), so TMA keeps its 128-byte
        # swizzle: N-major odd widths ran 1.5-2.3x slower (2026-11-25).
        _c(64, 96, schedule="pingpong", b_major="k"),
        _c(128, 96, b_major="k"),
        _c(128, 96, schedule="pingpong", b_major="k"),
        _c(256, 96, b_major="k"),
        _c(64, 96, schedule="pingpong", swap_ab=True),
        _c(128, 96, swap_ab=True),
        _c(128, 96, schedule="pingpong", swap_ab=True),
        _c(256, 96, swap_ab=True),
        # output-bound (K <= 512 on large M x N, C most of the bytes): at 12288x12288x256 on an
        # H200 cuBLASLt's nvjet 128x160 5-stage 2x1 ping-pong ran 135 us of device time and our
        # kernel of the same tile, stages and cluster 165 (2026-11-28): CUTLASS's ping-pong
        # epilogue stores a 128x160 tile as ten 64x32 subtiles, each a TMA store behind a
        # barrier. One subtile as wide as the tile, and the auto-tuner's other winners there
        # (176x128 in 1x2 clusters, 144x128), whose odd widths need it (auto would cut 176 into
        # 16-wide subtiles).
        _c(128, 160, schedule="pingpong", cluster_m=2, stages=5, swap_ab=True, epi_n=160),
        _c(128, 160, schedule="pingpong", cluster_m=2, stages=4, swap_ab=True, epi_n=160),
        _c(128, 176, schedule="pingpong", cluster_m=2, stages=4, b_major="k", epi_n=176),
        _c(128, 176, schedule="pingpong", cluster_n=2, stages=4, swap_ab=True, epi_n=176),
        _c(128, 144, schedule="pingpong", cluster_m=2, stages=5, b_major="k", epi_n=144),
        _c(128, 128, schedule="pingpong", cluster_m=2, epi_n=128),
        _c(128, 128, schedule="pingpong", cluster_n=2, epi_n=128),
        _c(128, 128, schedule="pingpong", epi_n=128),
        _c(128, 128, schedule="pingpong", cluster_m=2, epi_n=64),
        # they took 71 of the 78 picks there (old/new 1.082, H200, 2026-11-28): the same subtile
        # change for the cooperative tiles of mid and large K (128 rows x 32 by default: eight
        # stores per 128x256 tile) and for the ping-pong tiles of skinny and mid shapes
        _c(128, 256, cluster_m=2, epi_n=64),
        _c(256, 128, cluster_n=2, epi_n=64),
        _c(128, 192, epi_n=64),
        _c(64, 256, schedule="pingpong", epi_n=128),
        _c(64, 128, schedule="pingpong", epi_n=128),
        _c(128, 96, schedule="pingpong", b_major="k", epi_n=96),
        _c(128, 96, schedule="pingpong", swap_ab=True, epi_n=96),
        # the same tile at 12288x12288x256 still took 16% more cycles than nvjet's (ncu, H200,
        # 2026-11-28): 30% more instructions, nearly all the epilogue's alpha multiplies. The
        # eleven kernels the H200 set picks most, with D = fp16(acc).
        _c(128, 128, schedule="pingpong", epilogue="convert"),
        _c(128, 128, schedule="pingpong", epi_n=128, epilogue="convert"),
        _c(128, 128, schedule="pingpong", cluster_n=2, epi_n=128, epilogue="convert"),
        _c(128, 176, schedule="pingpong", cluster_n=2, stages=4, swap_ab=True, epi_n=176, epilogue="convert"),
        _c(128, 160, schedule="pingpong", cluster_m=2, stages=5, swap_ab=True, epi_n=160, epilogue="convert"),
        _c(64, 128, schedule="pingpong", epilogue="convert"),
        _c(128, 128, epilogue="convert"),
        _c(128, 128, b_major="k", epilogue="convert"),
        _c(128, 256, epilogue="convert"),
        _c(256, 128, epilogue="convert"),
        _c(128, 256, cluster_m=2, b_major="k", epilogue="convert"),
        # A/B'd pick for pick they ran 1.010x (413 configs; 1.022-1.026 at K = 64-256, 1.00 from
        # K = 1024): the twins of the next fourteen kernels the set still picks with alpha.
        _c(64, 64, schedule="pingpong", swap_ab=True, epilogue="convert"),
        _c(64, 64, schedule="pingpong", epilogue="convert"),
        _c(64, 96, schedule="pingpong", swap_ab=True, epilogue="convert"),
        _c(64, 256, schedule="pingpong", epilogue="convert"),
        _c(128, 64, epilogue="convert"),
        _c(128, 96, schedule="pingpong", swap_ab=True, epilogue="convert"),
        _c(128, 96, schedule="pingpong", b_major="k", epi_n=96, epilogue="convert"),
        _c(128, 128, schedule="pingpong", cluster_m=2, epilogue="convert"),
        _c(128, 128, schedule="pingpong", cluster_n=2, epilogue="convert"),
        _c(128, 128, schedule="pingpong", cluster_m=2, epi_n=128, epilogue="convert"),
        _c(128, 128, schedule="pingpong", cluster_m=2, epi_n=64, epilogue="convert"),
        _c(128, 192, epilogue="convert"),
        _c(128, 256, cluster_m=2, epilogue="convert"),
        _c(128, 256, scheduler="streamk", epilogue="convert"),
        # At 12288x12288x256 the convert twin of the 128x176 pick still waited on its pipeline's
        # full barriers in ~19% of its stall samples, four stages deep where nvjet's 176x128 runs
        # five (ncu, H200, 2026-11-28). One buffer of D frees a stage's room for the tiles whose
        # two buffers cost one; the 2x1 swap-AB cluster multicasts the 176-row side instead
        # (216 rows read a tile from the L2 instead of 240).
        _c(128, 176, cluster_n=2, stages=5, swap_ab=True, epi_n=176, **one_buffer_pp),
        _c(128, 176, cluster_m=2, stages=5, swap_ab=True, epi_n=176, **one_buffer_pp),
        _c(128, 176, cluster_m=2, stages=5, b_major="k", epi_n=176, **one_buffer_pp),
        _c(128, 144, cluster_m=2, stages=6, b_major="k", epi_n=144, **one_buffer_pp),
        _c(128, 192, epi_n=64, epi_buffers=1, epilogue="convert"),
        _c(64, 256, epi_n=128, **one_buffer_pp),
    ]
    names = [c.name for c in cat]
    assert len(set(names)) == len(names), "duplicate names in the catalog"
    return cat


def smoke_catalog() -> list[KernelConfig]:
    """The smallest useful set (one persistent, one stream-K, one swap-AB): tests and CI."""
    return [_c(128, 128), _c(128, 128, scheduler="streamk"), _c(128, 64, swap_ab=True)]
