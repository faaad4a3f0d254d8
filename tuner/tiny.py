# ruff: noqa: E501  (the long lines are CUDA text; reflowing them changes the emitted source)
"""Our own tiny-shape HGEMM family: raw mma.sync / ldmatrix / cp.async kernels, written from scratch.

CUTLASS's persistent warp-specialised SM90 kernels cost ~3.4 us at 256^3 whatever the tile
(prologue, TMA descriptor fetch, epilogue warps); launch-bound shapes need a lighter kernel:
one non-persistent CTA per output tile (grid = tiles_n x tiles_m x splits), no cluster, no TMA
descriptor, a cp.async multi-stage shared-memory pipeline feeding ``mma.sync.m16n8k16`` (fp16 in,
fp32 accumulate) through ``ldmatrix`` (``.trans`` for the N-major B), fp16 C stores.

A :class:`TinyConfig` has the same interface as :class:`tuner.catalog.KernelConfig` (``name``,
``to_dict`` / ``from_dict``, ``config_hash``, ``family``, ``user_tile``) and renders to a CUDA
translation unit with exactly the C ABI that ``tuner/emit.py`` documents. Runtime arguments:

- ``raster`` (0..2) and ``swizzle`` (1/2/4/8) are validated and ignored: the family serves
  one-wave shapes, where CTA order does not change what is read from HBM.
- ``decomposition`` 0 / 1: data parallel (``splits`` must be 1); 2: split-K over ``splits``
  (1..MAX_SPLITS; more than the K tiles is clamped to the K-tile count) reduced in the same
  launch; 3 (stream-K): cannot implement.

Split-K, one launch: every CTA of a tile writes its fp32 partial tile into the workspace
(``[tile][split][fragment][thread]`` float4s, so each thread reads back exactly what the same
thread of another split wrote: coalesced, no index remapping), then ``__threadfence()`` (each
thread: its partial stores are ordered before anything it does next, device-wide),
``__syncthreads()`` (all threads of the CTA have fenced), and thread 0 takes a ticket with
``atomicInc(ticket, splits - 1)``. The CTA that draws ``splits - 1`` is the last of its tile:
after a ``__syncthreads()`` broadcast and another ``__threadfence()`` it reads every split's
partial with ``ld.global.cg`` (L2, never a stale L1 line) in split order -- so the sum is the
same whichever CTA arrives last -- and writes fp16 C. This is the "last block" pattern of the
CUDA programming guide's memory-fence example. ``atomicInc`` wraps the counter back to 0 on the
last arrival, so the tickets are ready for the next launch with no memset. The launcher zeroes
the ticket area (the workspace's first bytes) itself when it has not seen the buffer, or when the
ticket area grew over where earlier partials were written (a larger tile count); in steady state
it issues none. A workspace must not be shared with other kernels that write to it (CUTLASS
stream-K): the launcher would not know its tickets were overwritten.

Layouts (SPEC section 4): A MxK row-major; B KxN row-major (``b_major='n'``, the user's ``b``) or
column-major (``'k'``, SPEC's ``b_col_major``); C MxN row-major. Any M, N and K multiples of 8
(16-byte cp.async chunks; out-of-range chunks are zero-filled, so M, N and K need not be tile
multiples); A, B, C and the workspace 16-byte aligned.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Literal

from cuda_l2_explorer.tuner.abi import API_MACRO, STATUS_ENUM, entry_points
from cuda_l2_explorer.tuner.catalog import B_MAJORS, ELEM_BYTES, SMEM_BYTES_SM90, BMajor, ConfigError

TINY_FAMILY = "sm90_mma_tiny"
MAX_SPLITS = 32
TILE_MS: tuple[int, ...] = (16, 32, 64, 128, 256)
TILE_NS: tuple[int, ...] = (16, 32, 64, 128, 256)
TILE_KS: tuple[int, ...] = (16, 32, 64, 128)
MAX_THREADS = 512
# fp32 accumulator registers per thread (warp tile / 32 lanes): above this the kernel spills.
MAX_ACCUMULATORS = 128
SMEM_PAD_HALFS = 8  # a 16-byte skew per shared-memory row: conflict-free ldmatrix without a swizzle


@dataclass(frozen=True, order=True)
class TinyConfig:
    """Compile-time parameters of one tiny-shape kernel (CTA tile, warp grid, pipeline, B layout)."""

    tile_m: int
    tile_n: int
    tile_k: int = 32
    warps_m: int = 2
    warps_n: int = 2
    stages: int = 3
    b_major: BMajor = "n"
    family: Literal["sm90_mma_tiny"] = "sm90_mma_tiny"

    def __post_init__(self) -> None:
        validate(self)

    @property
    def name(self) -> str:
        """Stable identifier, a valid C identifier suffix (``l2x_gemm_<name>``)."""
        return (
            f"tiny_{self.tile_m}x{self.tile_n}x{self.tile_k}_w{self.warps_m}x{self.warps_n}"
            f"_s{self.stages}_b{self.b_major}"
        )

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> TinyConfig:
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise ConfigError(f"unknown TinyConfig fields: {sorted(unknown)}")
        return cls(**data)  # type: ignore[arg-type]

    @property
    def config_hash(self) -> str:
        """Content hash of the parameters (stable across runs and machines)."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:12]

    def user_tile(self) -> tuple[int, int]:
        """(rows of C, columns of C) one CTA covers (no swap in this family)."""
        return (self.tile_m, self.tile_n)

    @property
    def threads(self) -> int:
        return 32 * self.warps_m * self.warps_n

    def smem_bytes(self) -> int:
        """Dynamic shared memory of the pipeline: padded A and B tiles per stage."""
        a = self.tile_m * (self.tile_k + SMEM_PAD_HALFS)
        if self.b_major == "k":
            b = self.tile_n * (self.tile_k + SMEM_PAD_HALFS)
        else:
            b = self.tile_k * (self.tile_n + SMEM_PAD_HALFS)
        return self.stages * (a + b) * ELEM_BYTES


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def validate(cfg: TinyConfig) -> None:
    """Raise :class:`ConfigError` for parameters the kernel template cannot instantiate."""
    if cfg.family != TINY_FAMILY:
        raise ConfigError(f"family must be {TINY_FAMILY!r}, got {cfg.family!r}")
    if cfg.b_major not in B_MAJORS:
        raise ConfigError(f"b_major must be one of {B_MAJORS}, got {cfg.b_major!r}")
    for f in ("tile_m", "tile_n", "tile_k", "warps_m", "warps_n", "stages"):
        if not _positive_int(getattr(cfg, f)):
            raise ConfigError(f"{f} must be a positive int, got {getattr(cfg, f)!r}")
    if cfg.tile_m not in TILE_MS:
        raise ConfigError(f"tile_m must be one of {TILE_MS}, got {cfg.tile_m}")
    if cfg.tile_n not in TILE_NS:
        raise ConfigError(f"tile_n must be one of {TILE_NS}, got {cfg.tile_n}")
    if cfg.tile_k not in TILE_KS:
        raise ConfigError(f"tile_k must be one of {TILE_KS}, got {cfg.tile_k}")
    if cfg.threads > MAX_THREADS:
        raise ConfigError(f"{cfg.warps_m}x{cfg.warps_n} warps exceed {MAX_THREADS} threads")
    # A warp covers whole m16 A fragments and pairs of n8 B fragments (one ldmatrix.x4 loads two).
    if cfg.tile_m % (16 * cfg.warps_m):
        raise ConfigError(
            f"warp tile M must be a multiple of 16: tile_m {cfg.tile_m} / warps_m {cfg.warps_m}"
        )
    if cfg.tile_n % (16 * cfg.warps_n):
        raise ConfigError(
            f"warp tile N must be a multiple of 16: tile_n {cfg.tile_n} / warps_n {cfg.warps_n}"
        )
    accumulators = cfg.tile_m * cfg.tile_n // cfg.threads
    if accumulators > MAX_ACCUMULATORS:
        raise ConfigError(f"{accumulators} fp32 accumulators per thread (max {MAX_ACCUMULATORS}): more warps")
    if not 2 <= cfg.stages <= 8:
        raise ConfigError(f"stages must be in 2..8, got {cfg.stages}")
    if cfg.smem_bytes() > SMEM_BYTES_SM90 - 1024:  # the kernel's static shared memory comes on top
        raise ConfigError(f"{cfg.stages} stages need {cfg.smem_bytes()} bytes of shared memory: does not fit")


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
    Warps: 2x2 (4 warps, warp tile 32x32..64x32) for 64-wide tiles, 2x4 (8 warps, 64x32) for
    128x128, so no thread holds more than 64 accumulators.
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
    ]
    names = [c.name for c in cat]
    assert len(set(names)) == len(names), "duplicate names in the tiny catalog"
    return cat


# ---------------------------------------------------------------------------- CUDA source

PREAMBLE = (
    r"""// Generated by tuner/tiny.py -- do not edit. Tiny-shape HGEMM kernels (mma.sync, ldmatrix,
// cp.async pipeline; one-launch split-K), C ABI as documented in tuner/emit.py.
#include <cstddef>
#include <cstdint>
#include <atomic>
#include <mutex>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

"""
    + API_MACRO
    + "\nnamespace {\n\n"
    + STATUS_ENUM
    + r"""
constexpr int kMaxDevices = 64;
constexpr int kMaxSplits = @MAX_SPLITS@;
constexpr size_t kTicketAlign = 256;  // partials start on their own 256-byte boundary

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global->shared copy; src-size 0 zero-fills the destination (edge predication).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// D (16x8 fp32) += A (16x16 fp16, row) * B (16x8 fp16, col).
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

struct TinyParams {
  const __half* A;
  const __half* B;
  __half* C;
  int M, N, K;
  int k_tiles;          // ceil(K / BK)
  int splits;           // effective split count (1 = no reduction)
  unsigned* tickets;    // one per output tile (split-K only)
  float4* partials;     // [tile][split][fragment][thread] (split-K only)
};

template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool kBKMajor>
struct TinyShape {
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kStages = STAGES;
  static constexpr int kThreads = 32 * WM * WN;
  static constexpr int kWarpM = BM / WM, kWarpN = BN / WN;
  static constexpr int kMI = kWarpM / 16, kNI = kWarpN / 8;  // m16 and n8 fragments per warp
  static constexpr int kFrags = kMI * kNI;
  static constexpr int kLdA = BK + 8;  // padded row pitch (halfs): rows 16 bytes apart mod 128
  static constexpr int kLdB = kBKMajor ? BK + 8 : BN + 8;
  static constexpr int kStageA = BM * kLdA;
  static constexpr int kStageB = kBKMajor ? BN * kLdB : BK * kLdB;
  static constexpr int kSmemBytes = STAGES * (kStageA + kStageB) * 2;
  static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0, "warp tile must be whole m16 / n16 blocks");
  static_assert(STAGES >= 2, "the pipeline needs two stages");
};

template <class S, bool kBKMajor>
__device__ __forceinline__ void load_tile(const TinyParams& p, __half* sA, __half* sB, int m0, int n0, int kt) {
  const int tid = threadIdx.x;
  const int k0 = kt * S::kBK;
  constexpr int kChunksK = S::kBK / 8;  // 16-byte chunks along K
  constexpr int kChunksA = S::kBM * kChunksK;
#pragma unroll
  for (int i = 0; i < (kChunksA + S::kThreads - 1) / S::kThreads; ++i) {
    const int c = tid + i * S::kThreads;
    if (kChunksA % S::kThreads == 0 || c < kChunksA) {
      const int row = c / kChunksK, col = (c % kChunksK) * 8;
      const int gm = m0 + row, gk = k0 + col;
      const bool ok = gm < p.M && gk < p.K;
      cp_async_16(smem_u32(sA + row * S::kLdA + col), ok ? p.A + (size_t)gm * p.K + gk : p.A, ok);
    }
  }
  if constexpr (kBKMajor) {  // B stored NxK (K contiguous): shared tile [n][k]
    constexpr int kChunksB = S::kBN * kChunksK;
#pragma unroll
    for (int i = 0; i < (kChunksB + S::kThreads - 1) / S::kThreads; ++i) {
      const int c = tid + i * S::kThreads;
      if (kChunksB % S::kThreads == 0 || c < kChunksB) {
        const int row = c / kChunksK, col = (c % kChunksK) * 8;
        const int gn = n0 + row, gk = k0 + col;
        const bool ok = gn < p.N && gk < p.K;
        cp_async_16(smem_u32(sB + row * S::kLdB + col), ok ? p.B + (size_t)gn * p.K + gk : p.B, ok);
      }
    }
  } else {  // B stored KxN (N contiguous): shared tile [k][n]
    constexpr int kChunksN = S::kBN / 8;
    constexpr int kChunksB = S::kBK * kChunksN;
#pragma unroll
    for (int i = 0; i < (kChunksB + S::kThreads - 1) / S::kThreads; ++i) {
      const int c = tid + i * S::kThreads;
      if (kChunksB % S::kThreads == 0 || c < kChunksB) {
        const int row = c / kChunksN, col = (c % kChunksN) * 8;
        const int gk = k0 + row, gn = n0 + col;
        const bool ok = gk < p.K && gn < p.N;
        cp_async_16(smem_u32(sB + row * S::kLdB + col), ok ? p.B + (size_t)gk * p.N + gn : p.B, ok);
      }
    }
  }
}

template <class S, bool kBKMajor>
__global__ void __launch_bounds__(S::kThreads) tiny_gemm_kernel(const TinyParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ unsigned is_last_split;
  __half* const sA = reinterpret_cast<__half*>(smem_raw);
  __half* const sB = sA + S::kStages * S::kStageA;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warp_m = warp / (S::kBN / S::kWarpN), warp_n = warp % (S::kBN / S::kWarpN);
  const int m0 = blockIdx.y * S::kBM, n0 = blockIdx.x * S::kBN;
  const int split = blockIdx.z;
  // Balanced K-tile ranges; the host keeps splits <= k_tiles, so none is empty.
  const int kt_begin = (int)((long long)split * p.k_tiles / p.splits);
  const int kt_count = (int)((long long)(split + 1) * p.k_tiles / p.splits) - kt_begin;

  float acc[S::kMI][S::kNI][4];
#pragma unroll
  for (int mi = 0; mi < S::kMI; ++mi)
#pragma unroll
    for (int ni = 0; ni < S::kNI; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.f;

  // Prologue: STAGES-1 k-tiles in flight (one commit group each, empty groups keep the count).
#pragma unroll
  for (int s = 0; s < S::kStages - 1; ++s) {
    if (s < kt_count) load_tile<S, kBKMajor>(p, sA + s * S::kStageA, sB + s * S::kStageB, m0, n0, kt_begin + s);
    cp_async_commit();
  }
  for (int i = 0; i < kt_count; ++i) {
    cp_async_wait<S::kStages - 2>();  // k-tile i has landed (this thread's copies)
    __syncthreads();                  // ... everyone's, and everyone is done with k-tile i-1's stage
    const int next = i + S::kStages - 1;
    if (next < kt_count) {
      const int st = next % S::kStages;  // the stage k-tile i-1 used
      load_tile<S, kBKMajor>(p, sA + st * S::kStageA, sB + st * S::kStageB, m0, n0, kt_begin + next);
    }
    cp_async_commit();
    const int stage = i % S::kStages;
    const __half* a_s = sA + stage * S::kStageA;
    const __half* b_s = sB + stage * S::kStageB;
#pragma unroll
    for (int kk = 0; kk < S::kBK; kk += 16) {
      uint32_t af[S::kMI][4];
      uint32_t bf[S::kNI][2];
#pragma unroll
      for (int mi = 0; mi < S::kMI; ++mi) {
        // lanes 0-15: rows 0-15 at k+0; lanes 16-31: rows 0-15 at k+8 -> a0..a3 of m16n8k16
        const int row = warp_m * S::kWarpM + mi * 16 + (lane & 15);
        ldmatrix_x4(af[mi], smem_u32(a_s + row * S::kLdA + kk + (lane >> 4) * 8));
      }
#pragma unroll
      for (int nj = 0; nj < S::kNI; nj += 2) {
        uint32_t r[4];  // {b0, b1} of n8 fragment nj, then of nj+1
        if constexpr (kBKMajor) {
          // [n][k] tile: matrices (n0-7,k0-7) (n0-7,k8-15) (n8-15,k0-7) (n8-15,k8-15), no transpose
          const int n = warp_n * S::kWarpN + nj * 8 + (lane & 7) + ((lane >> 4) << 3);
          ldmatrix_x4(r, smem_u32(b_s + n * S::kLdB + kk + ((lane >> 3) & 1) * 8));
        } else {
          // [k][n] tile: matrices (k0-7,n0-7) (k8-15,n0-7) (k0-7,n8-15) (k8-15,n8-15), transposed
          const int n = warp_n * S::kWarpN + nj * 8 + (lane >> 4) * 8;
          ldmatrix_x4_trans(r, smem_u32(b_s + (kk + (lane & 15)) * S::kLdB + n));
        }
        bf[nj][0] = r[0];
        bf[nj][1] = r[1];
        bf[nj + 1][0] = r[2];
        bf[nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < S::kMI; ++mi)
#pragma unroll
        for (int ni = 0; ni < S::kNI; ++ni) mma_16816(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
    }
  }
  cp_async_wait<0>();  // no copy may still target shared memory when the CTA exits

  if (p.splits > 1) {
    const int tile = blockIdx.y * gridDim.x + blockIdx.x;
    float4* const slabs = p.partials + (size_t)tile * p.splits * S::kFrags * S::kThreads;
    float4* const mine = slabs + (size_t)split * S::kFrags * S::kThreads;
#pragma unroll
    for (int mi = 0; mi < S::kMI; ++mi)
#pragma unroll
      for (int ni = 0; ni < S::kNI; ++ni)
        __stcg(mine + (mi * S::kNI + ni) * S::kThreads + tid,
               make_float4(acc[mi][ni][0], acc[mi][ni][1], acc[mi][ni][2], acc[mi][ni][3]));
    __threadfence();  // this thread's partial is visible device-wide before the ticket below
    __syncthreads();  // every thread of the CTA has stored and fenced
    if (tid == 0) {
      // atomicInc wraps to 0 on the last arrival: the ticket is reset for the next launch.
      is_last_split = atomicInc(p.tickets + tile, (unsigned)(p.splits - 1)) == (unsigned)(p.splits - 1);
    }
    __syncthreads();
    if (!is_last_split) return;
    __threadfence();  // acquire side: the partial loads below come after the ticket was seen
#pragma unroll
    for (int mi = 0; mi < S::kMI; ++mi)
#pragma unroll
      for (int ni = 0; ni < S::kNI; ++ni)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.f;
    // Split order, own partial included: the same sum whichever CTA arrives last.
    for (int s = 0; s < p.splits; ++s) {
      const float4* const slab = slabs + (size_t)s * S::kFrags * S::kThreads;
      float4 v[S::kMI][S::kNI];
#pragma unroll
      for (int mi = 0; mi < S::kMI; ++mi)
#pragma unroll
        for (int ni = 0; ni < S::kNI; ++ni) v[mi][ni] = __ldcg(slab + (mi * S::kNI + ni) * S::kThreads + tid);
#pragma unroll
      for (int mi = 0; mi < S::kMI; ++mi)
#pragma unroll
        for (int ni = 0; ni < S::kNI; ++ni) {
          acc[mi][ni][0] += v[mi][ni].x;
          acc[mi][ni][1] += v[mi][ni].y;
          acc[mi][ni][2] += v[mi][ni].z;
          acc[mi][ni][3] += v[mi][ni].w;
        }
    }
  }

  // Epilogue: c0,c1 at (row g, cols 2t, 2t+1), c2,c3 at row g+8. N % 8 == 0 and an n8 fragment
  // starts on a multiple of 8, so col < N implies col + 1 < N.
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mi = 0; mi < S::kMI; ++mi) {
    const int row = m0 + warp_m * S::kWarpM + mi * 16 + g;
#pragma unroll
    for (int ni = 0; ni < S::kNI; ++ni) {
      const int col = n0 + warp_n * S::kWarpN + ni * 8 + 2 * t;
      if (col < p.N) {
        if (row < p.M)
          *reinterpret_cast<__half2*>(p.C + (size_t)row * p.N + col) = __floats2half2_rn(acc[mi][ni][0], acc[mi][ni][1]);
        if (row + 8 < p.M)
          *reinterpret_cast<__half2*>(p.C + (size_t)(row + 8) * p.N + col) = __floats2half2_rn(acc[mi][ni][2], acc[mi][ni][3]);
      }
    }
  }
}

template <class S, bool kBKMajor>
struct TinyEntry {
  static int can_implement(int M, int N, int K, int raster, int swizzle, int decomp, int splits) {
    if (M < 1 || N < 1 || K < 1) return kInvalidArgument;
    if (raster < 0 || raster > 2) return kInvalidArgument;  // accepted and ignored (one wave)
    if (swizzle != 1 && swizzle != 2 && swizzle != 4 && swizzle != 8) return kInvalidArgument;
    if (decomp < 0 || decomp > 3 || splits < 1) return kInvalidArgument;
    if (decomp == 3) return kCannotImplement;  // no stream-K in this family
    if (decomp != 2 && splits != 1) return kInvalidArgument;
    if (splits > kMaxSplits) return kCannotImplement;
    if (N % 8 || K % 8) return kCannotImplement;  // 16-byte cp.async chunks of fp16 rows
    if ((M + S::kBM - 1) / S::kBM > 65535) return kCannotImplement;  // grid y
    return kOk;
  }

  static int effective_splits(int K, int decomp, int splits) {
    const int k_tiles = (K + S::kBK - 1) / S::kBK;
    return decomp == 2 ? (splits < k_tiles ? splits : k_tiles) : 1;
  }

  static size_t workspace_size(int M, int N, int splits) {
    if (splits <= 1) return 0;
    const size_t tiles = (size_t)((M + S::kBM - 1) / S::kBM) * ((N + S::kBN - 1) / S::kBN);
    const size_t tickets = (tiles * sizeof(unsigned) + kTicketAlign - 1) / kTicketAlign * kTicketAlign;
    return tickets + tiles * splits * S::kBM * S::kBN * sizeof(float);
  }

  static int workspace(int M, int N, int K, int raster, int swizzle, int decomp, int splits, size_t* bytes) {
    if (!bytes) return kInvalidArgument;
    if (int st = can_implement(M, N, K, raster, swizzle, decomp, splits)) return st;
    *bytes = workspace_size(M, N, effective_splits(K, decomp, splits));
    return kOk;
  }

  // Opt in to more than the default 48 KB (static included), once per device (no per-call
  // device query for kernels under it).
  static int prepare(void) {
    if (S::kSmemBytes <= (47 << 10)) return kOk;
    static std::atomic<unsigned long long> done{0};
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return kCudaError;
    const unsigned long long bit = 1ull << device;
    if (done.load(std::memory_order_acquire) & bit) return kOk;
    if (cudaFuncSetAttribute(tiny_gemm_kernel<S, kBKMajor>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             S::kSmemBytes) != cudaSuccess) {
      (void)cudaGetLastError();
      return kCudaError;
    }
    done.fetch_or(bit, std::memory_order_acq_rel);
    return kOk;
  }

  static int run(const void* A, const void* B, void* C, int M, int N, int K, int raster, int swizzle,
                 int decomp, int splits, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
    if (int st = can_implement(M, N, K, raster, swizzle, decomp, splits)) return st;
    if (!A || !B || !C) return kInvalidArgument;
    if (((uintptr_t)A | (uintptr_t)B | (uintptr_t)C | (uintptr_t)workspace) % 16) return kCannotImplement;
    const int eff = effective_splits(K, decomp, splits);
    const size_t need = workspace_size(M, N, eff);
    if (need > workspace_bytes || (need > 0 && workspace == nullptr)) return kWorkspaceTooSmall;
    if (int st = prepare()) return st;
    const int tiles_m = (M + S::kBM - 1) / S::kBM, tiles_n = (N + S::kBN - 1) / S::kBN;
    const size_t ticket_bytes =
        ((size_t)tiles_m * tiles_n * sizeof(unsigned) + kTicketAlign - 1) / kTicketAlign * kTicketAlign;
    TinyParams p;
    p.A = static_cast<const __half*>(A);
    p.B = static_cast<const __half*>(B);
    p.C = static_cast<__half*>(C);
    p.M = M;
    p.N = N;
    p.K = K;
    p.k_tiles = (K + S::kBK - 1) / S::kBK;
    p.splits = eff;
    p.tickets = static_cast<unsigned*>(workspace);
    p.partials = eff > 1 ? reinterpret_cast<float4*>(static_cast<unsigned char*>(workspace) + ticket_bytes) : nullptr;
    if (eff > 1) {
      // Tickets must start at zero. A launch leaves [0, ticket_bytes) zeroed (the last arrival
      // wraps each ticket) and dirties everything after it with partials, so only a new buffer,
      // or one whose ticket area grew into former partials, needs a memset: in steady state
      // (same buffer, same shape) there is none.
      static std::mutex mu;
      static const void* clean_ws = nullptr;
      static size_t clean_bytes = 0;
      std::lock_guard<std::mutex> lock(mu);
      if (workspace != clean_ws || ticket_bytes > clean_bytes) {
        if (cudaMemsetAsync(workspace, 0, ticket_bytes, stream) != cudaSuccess) return kCudaError;
      }
      clean_ws = workspace;
      clean_bytes = ticket_bytes;
    }
    tiny_gemm_kernel<S, kBKMajor><<<dim3(tiles_n, tiles_m, eff), S::kThreads, S::kSmemBytes, stream>>>(p);
    if (cudaGetLastError() != cudaSuccess) return kCudaError;
    return kOk;
  }
};

}  // namespace
"""
)

KERNEL_TEMPLATE = r"""
// ---- {name} ----
namespace l2x_{name} {{
using Shape = TinyShape<{tile_m}, {tile_n}, {tile_k}, {warps_m}, {warps_n}, {stages}, {b_k_major}>;
using E = TinyEntry<Shape, {b_k_major}>;
}}  // namespace l2x_{name}
"""


def render_kernel(cfg: TinyConfig) -> str:
    """The instantiation and the three C entry points of one config (needs :func:`render_preamble`)."""
    return KERNEL_TEMPLATE.format(
        name=cfg.name,
        tile_m=cfg.tile_m,
        tile_n=cfg.tile_n,
        tile_k=cfg.tile_k,
        warps_m=cfg.warps_m,
        warps_n=cfg.warps_n,
        stages=cfg.stages,
        b_k_major="true" if cfg.b_major == "k" else "false",
    ) + entry_points(cfg.name)


def render_preamble() -> str:
    return PREAMBLE.replace("@MAX_SPLITS@", str(MAX_SPLITS))


def render_tu(configs: Sequence[TinyConfig]) -> str:
    """One translation unit holding ``configs`` (in the given order); no CUTLASS header."""
    return render_preamble() + "".join(render_kernel(c) for c in configs)


# ---------------------------------------------------------------------------- index model


def split_ranges(k: int, tile_k: int, splits: int) -> list[tuple[int, int]]:
    """The K-tile range [begin, end) each split of a tile reduces (the kernel's arithmetic)."""
    k_tiles = -(-k // tile_k)
    eff = min(splits, k_tiles)
    return [(s * k_tiles // eff, (s + 1) * k_tiles // eff) for s in range(eff)]


def workspace_bytes(cfg: TinyConfig, m: int, n: int, k: int, decomposition: int, splits: int) -> int:
    """What ``l2x_gemm_<name>_workspace`` returns (the launcher's arithmetic, for tests and planning)."""
    eff = len(split_ranges(k, cfg.tile_k, splits)) if decomposition == 2 else 1
    if eff <= 1:
        return 0
    tiles = -(-m // cfg.tile_m) * -(-n // cfg.tile_n)
    tickets = -(-tiles * 4 // 256) * 256
    return tickets + tiles * eff * cfg.tile_m * cfg.tile_n * 4
