// Where a bulk-fed tiny GEMM's time goes past its own movement (issue 15, session 31): the steps
// from movement_floor's bulk_tile_move to a whole 32x32-tile GEMM, each timed as harness 3 times a
// kernel, beside the library's bulk kernels and cuBLAS on the same rotation.
//
//   nvcc -O3 -std=c++17 -arch=sm_90a -o bulk_bisect bulk_bisect.cu -lcublas -ldl
//   ./bulk_bisect CONFIGS LIBRARY NAME[,NAME...] [SAMPLES] > bisect.csv   # CONFIGS: lines "M N K"
//
// A is M x K, B is stored N x K (K contiguous: the tiny kernels' B), C is M x N, all row-major fp16.
// Every step is one CTA a 32x32 tile of C, launched on the same grid; one thread bulk-copies the
// CTA's A rows and B rows (two contiguous panels) into shared memory against one mbarrier:
//   move_tT   every thread folds one 16-byte chunk of the panels and writes its share of the C
//             tile from it (bulk_tile_move with T threads);
//   frag_w2   two warps, each reading the fragments a 16x32 warp tile of the GEMM reads from the
//             panels (all of K, 16 bytes a lane a row, rows K * 2 bytes apart) and folding them;
//             C written as move's;
//   mma_w2    the GEMM itself: the same reads feed mma.sync m16n8k16 (a lane's 16-byte chunk of a
//             32-wide k block holds k's {8t..8t+7}: .x/.y one k16 step and .z/.w the next, the same
//             permutation of K for A and B, so the sum is unchanged); each lane stores its
//             fragments' C (4 bytes a store). Checked against cuBLAS on set 0;
//   frag_pad_w2, mma_pad_w2   the same with the panel rows K + 8 halfs apart (a bulk copy a row,
//             each by its own thread): a warp's reads of eight rows spread over the banks;
//   mma_swz_w2  the panels by tensor copies (cp.async.bulk.tensor, boxes of 32 rows x 64 halfs,
//             128-byte swizzle: a row's 16-byte chunk c lands at chunk c ^ (row % 8)), read back
//             through the same swizzle: a warp's eight rows meet in eight different bank groups;
//   mma_pad_w4  four warps (2 x 2, 16x16 warp tiles), padded;
//   move_swz, mma_swzpb_w2, mma_swzpb_k2, mma_swzpb_k4   a barrier a swizzled box (swz_box_tile,
//             session 32): the landing alone, the GEMM on two warps, and K split over 2 and 4 warp
//             pairs with one reduction in shared memory;
//   move_swz3_S, mma_swz3_w2_S, mma_swz3_k4_S   the same with S boxes a copy (S = 4, or "all" of K
//             in one copy of A and one of B) through a 3D map of 64-half k slabs (session 33);
//   move_pitch_S, mma_pitch_w2_S, mma_pitch_k4_S   S boxes a copy through a map with increasing
//             strides, rows landing S + 1 lines apart (an odd pitch: still conflict-free reads);
//   move_swz3_4_mcC, mma_swz3_k4_4_mcC   swz3 with 4 boxes a copy, B shared through multicast by
//             clusters of C = 2 or 4 CTAs along M (a cluster barrier before the copies and one at the
//             end; session 35: ~0.5 us slower, the K-marginal cost unchanged);
//   lib:NAME  the library's kernel l2x_gemm_NAME (dlopen'd LIBRARY), on the same sets;
//   cublas    cublasGemmEx, fp32 compute, default algorithm, C = A B^T as stored.
// Timing: probe_common.cuh (sets spanning 2x the L2, one graph of a call a set, replayed,
// implementations interleaved in shuffled order each round; median, p10, p90 a call).
#include <cublas_v2.h>
#include <cuda.h>
#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "../probe_common.cuh"

constexpr int TM = 32, TN = 32;  // the tile of C every step owns
constexpr int MAX_K = 1024;      // all of K in shared memory: (TM + TN) * MAX_K * 2 bytes of panels

// The CTA's A and B panels (TM and TN rows of K halfs, rows K + PAD halfs apart) in shared memory;
// every thread returns when they have landed. Unpadded: two bulk copies by one thread; padded: a
// copy a row, each by its own thread (TM + TN threads at most: 64).
template <int PAD>
__device__ __forceinline__ void land_panels(half* panels, const half* a, const half* b, int k, uint64_t* landed) {
  const uint32_t bar = smem_addr(landed);
  const uint32_t a_bytes = TM * k * 2, b_bytes = TN * k * 2;
  if (threadIdx.x == 0) mbarrier_expect(bar, a_bytes + b_bytes);
  if constexpr (PAD == 0) {
    if (threadIdx.x == 0) {
      bulk_copy(smem_addr(panels), a + (size_t)blockIdx.y * TM * k, a_bytes, bar);
      bulk_copy(smem_addr(panels) + a_bytes, b + (size_t)blockIdx.x * TN * k, b_bytes, bar);
    }
    __syncthreads();  // the barrier is initialised before anyone waits on it
  } else {
    __syncthreads();  // initialised before any copy completes on it
    const int r = threadIdx.x;
    if (r < TM + TN) {
      const half* src = r < TM ? a + ((size_t)blockIdx.y * TM + r) * k : b + ((size_t)blockIdx.x * TN + r - TM) * k;
      bulk_copy(smem_addr(panels + r * (k + PAD)), src, k * 2, bar);
    }
  }
  mbarrier_wait_phase0(bar);
}

// C's TM x TN tile from one folded chunk, 16 bytes a store, spread over the CTA's threads.
__device__ __forceinline__ void store_from(half* c, int n, uint4 x) {
  uint4* rows = reinterpret_cast<uint4*>(c + (size_t)blockIdx.y * TM * n + (size_t)blockIdx.x * TN);
  for (int i = threadIdx.x; i < TM * TN / 8; i += blockDim.x)
    rows[(size_t)(i / (TN / 8)) * (n / 8) + i % (TN / 8)] = fold(x, make_uint4((unsigned)i, 0, 0, 0));
}

template <int THREADS>
__global__ void __launch_bounds__(THREADS) move_tile(const half* a, const half* b, half* c, int n, int k) {
  extern __shared__ __align__(128) uint4 panels[];
  __shared__ __align__(8) uint64_t landed;
  land_panels<0>(reinterpret_cast<half*>(panels), a, b, k, &landed);
  store_from(c, n, panels[threadIdx.x]);
}

// The 16-byte chunks a lane reads for one 32-wide k block of a 16 x (8 NT) warp tile: A rows g and
// g + 8 of the warp's 16, B rows (columns of C) f * 8 + g of the warp's 8 NT; rows `pitch` apart.
template <int NT>
struct Fragments {
  uint4 a[2], b[NT];
};

template <int NT>
__device__ __forceinline__ Fragments<NT> read_block(const half* sa, const half* sb, int pitch, int kb, int wm, int wn,
                                                    int lane) {
  const int g = lane >> 2, t = lane & 3, col = kb * 32 + 8 * t;
  Fragments<NT> f;
  for (int h = 0; h < 2; ++h) f.a[h] = *reinterpret_cast<const uint4*>(sa + (wm * 16 + g + 8 * h) * pitch + col);
  for (int j = 0; j < NT; ++j) f.b[j] = *reinterpret_cast<const uint4*>(sb + (wn * NT * 8 + j * 8 + g) * pitch + col);
  return f;
}

// Warps: 2 x WN over the tile (warp tiles 16 x 32 / WN); PAD halfs after each panel row.
template <int WN, int PAD>
__global__ void __launch_bounds__(64 * WN) frag_tile(const half* a, const half* b, half* c, int n, int k) {
  constexpr int NT = 4 / WN;
  extern __shared__ __align__(128) uint4 panels[];
  __shared__ __align__(8) uint64_t landed;
  const half* sa = reinterpret_cast<const half*>(panels);
  land_panels<PAD>(reinterpret_cast<half*>(panels), a, b, k, &landed);
  const int warp = threadIdx.x >> 5, pitch = k + PAD;
  uint4 x = make_uint4(0, 0, 0, 0);
  for (int kb = 0; kb < k / 32; ++kb) {
    const Fragments<NT> f = read_block<NT>(sa, sa + TM * pitch, pitch, kb, warp % 2, warp / 2, threadIdx.x & 31);
    for (int h = 0; h < 2; ++h) x = fold(x, f.a[h]);
    for (int j = 0; j < NT; ++j) x = fold(x, f.b[j]);
  }
  store_from(c, n, x);
}

__device__ __forceinline__ void mma16816(float* d, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

template <int WN, int PAD>
__global__ void __launch_bounds__(64 * WN) mma_tile(const half* a, const half* b, half* c, int n, int k) {
  constexpr int NT = 4 / WN;
  extern __shared__ __align__(128) uint4 panels[];
  __shared__ __align__(8) uint64_t landed;
  const half* sa = reinterpret_cast<const half*>(panels);
  land_panels<PAD>(reinterpret_cast<half*>(panels), a, b, k, &landed);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, pitch = k + PAD;
  const int wm = warp % 2, wn = warp / 2;
  float acc[NT][4] = {};
  for (int kb = 0; kb < k / 32; ++kb) {
    const Fragments<NT> f = read_block<NT>(sa, sa + TM * pitch, pitch, kb, wm, wn, lane);
    for (int j = 0; j < NT; ++j) {  // k16 step 0 from .x/.y, step 1 from .z/.w
      mma16816(acc[j], f.a[0].x, f.a[1].x, f.a[0].y, f.a[1].y, f.b[j].x, f.b[j].y);
      mma16816(acc[j], f.a[0].z, f.a[1].z, f.a[0].w, f.a[1].w, f.b[j].z, f.b[j].w);
    }
  }
  half* tile = c + (size_t)(blockIdx.y * TM + wm * 16) * n + blockIdx.x * TN + wn * NT * 8;
  for (int j = 0; j < NT; ++j) {
    *reinterpret_cast<half2*>(tile + (size_t)g * n + j * 8 + 2 * t) = __floats2half2_rn(acc[j][0], acc[j][1]);
    *reinterpret_cast<half2*>(tile + (size_t)(g + 8) * n + j * 8 + 2 * t) = __floats2half2_rn(acc[j][2], acc[j][3]);
  }
}

// ---- Tensor copies with the 128-byte swizzle (tensor_box, BOX_K: probe_common.cuh) ----
// A 3D box of a map whose first dimension is a 64-half k slab (tile_map3d: y a row, z a slab;
// tile_map_pitched: y a slab, z a row), from the slab's start.
__device__ __forceinline__ void tensor_box3d(uint32_t dst, const CUtensorMap* map, int y, int z, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(0), "r"(y), "r"(z), "r"(bar)
      : "memory");
}

// tensor_box3d's copy landing at the same offset in every CTA of `mask` (of this cluster), each
// completing on its own barrier at `bar`'s offset (session 35: does sharing B's bytes among the CTAs
// of one M column shorten the landing, i.e. is the landing bound by L2's reads or by an SM's intake?).
__device__ __forceinline__ void tensor_box3d_multicast(uint32_t dst, const CUtensorMap* map, int y, int z, uint32_t bar,
                                                       uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(0), "r"(y), "r"(z), "r"(bar), "h"(mask)
      : "memory");
}

__device__ __forceinline__ void cluster_barrier() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// Row r's 16-byte chunk c (of the 64-half box row) in a swizzled 32-row box; in general the 128-byte
// line r * pitch + line0 from `box` (a pitched layout: rows `pitch` lines apart, the slab line0).
__device__ __forceinline__ uint4 swizzled_chunk(const half* box, int r, int c, int pitch = 1, int line0 = 0) {
  const int line = r * pitch + line0;
  return *reinterpret_cast<const uint4*>(box + line * BOX_K + ((c ^ (line & 7)) * 8));
}

// One 32-wide k block (16-byte chunk `chunk` of each row) of a warp's 16x32 tile from swizzled boxes:
// A rows row_a + g and + 8, B rows 8 f + g; .x/.y feed k16 step 0, .z/.w step 1.
__device__ __forceinline__ void swz_mma_block(float (&acc)[4][4], const half* box_a, const half* box_b, int row_a,
                                              int chunk, int g, int pitch = 1, int line0 = 0) {
  uint4 fa[2], fb[4];
  for (int h = 0; h < 2; ++h) fa[h] = swizzled_chunk(box_a, row_a + g + 8 * h, chunk, pitch, line0);
  for (int f = 0; f < 4; ++f) fb[f] = swizzled_chunk(box_b, f * 8 + g, chunk, pitch, line0);
  for (int f = 0; f < 4; ++f) {
    mma16816(acc[f], fa[0].x, fa[1].x, fa[0].y, fa[1].y, fb[f].x, fb[f].y);
    mma16816(acc[f], fa[0].z, fa[1].z, fa[0].w, fa[1].w, fb[f].z, fb[f].w);
  }
}

// A warp's 16x32 accumulators (rows row0 + g and + 8 of the CTA's tile) to C, 4 bytes a store.
__device__ __forceinline__ void store_warp_tile(half* c, int n, const float (&acc)[4][4], int row0, int g, int t) {
  half* tile = c + (size_t)(blockIdx.y * TM + row0) * n + blockIdx.x * TN;
  for (int f = 0; f < 4; ++f) {
    *reinterpret_cast<half2*>(tile + (size_t)g * n + f * 8 + 2 * t) = __floats2half2_rn(acc[f][0], acc[f][1]);
    *reinterpret_cast<half2*>(tile + (size_t)(g + 8) * n + f * 8 + 2 * t) = __floats2half2_rn(acc[f][2], acc[f][3]);
  }
}

__global__ void __launch_bounds__(64) mma_swz_tile(const __grid_constant__ CUtensorMap map_a,
                                                   const __grid_constant__ CUtensorMap map_b, half* c, int n, int k) {
  extern __shared__ __align__(128) uint4 panels[];
  __shared__ __align__(8) uint64_t landed;
  // The 128-byte swizzle repeats every 1024 bytes, from a 1024-byte aligned box (1024 bytes spare).
  const uint32_t pad = (1024 - (smem_addr(panels) & 1023)) & 1023;
  const half* sa = reinterpret_cast<const half*>(reinterpret_cast<const char*>(panels) + pad);
  const half* sb = sa + TM * k;
  const uint32_t bar = smem_addr(&landed);
  const int boxes = k / BOX_K;
  if (threadIdx.x == 0) {
    mbarrier_expect(bar, (TM + TN) * k * 2);
    for (int j = 0; j < boxes; ++j) {
      tensor_box(smem_addr(sa + j * TM * BOX_K), &map_a, j * BOX_K, blockIdx.y * TM, bar);
      tensor_box(smem_addr(sb + j * TN * BOX_K), &map_b, j * BOX_K, blockIdx.x * TN, bar);
    }
  }
  __syncthreads();
  mbarrier_wait_phase0(bar);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  float acc[4][4] = {};
  for (int kb = 0; kb < k / 32; ++kb)
    swz_mma_block(acc, sa + (kb / 2) * TM * BOX_K, sb + (kb / 2) * TN * BOX_K, warp * 16, (kb % 2) * 4 + t, g);
  store_warp_tile(c, n, acc, warp * 16, g, t);
}

// The swizzled boxes with a barrier a box (session 32): box j of A and of B land on barrier j, in k
// order. MMA false: the landing alone (every thread waits for every box, then writes its share of C
// from one folded chunk, as move_tile): `move_swz`. MMA true: warps 2 x KSPLIT, warp (wm, wk) a
// 16x32 tile of C over boxes wk, wk + KSPLIT, ..., each waited for just before its reads, so the
// MMAs of the first boxes run while the later ones land; with KSPLIT > 1 the K slices' accumulators
// meet in shared memory and slice 0's warps store C: `mma_swzpb_w2` (KSPLIT 1: the library's tinyt
// kernels' steps), `mma_swzpb_k2`, `mma_swzpb_k4`.
// Copies of several boxes (session 33: at K = 1024 the 32 copies of a 32x32 tile's boxes landed
// 0.5-0.7 us after a bulk copy of the same bytes, call 6), a barrier a copy:
// - SLABS: `slabs` boxes of A (of B) through a 3D map of the matrix as 64-half k slabs (tile_map3d:
//   strides k * 2 then 128, not increasing), the same swizzled layout slab after slab:
//   `move_swz3_*`, `mma_swz3_*`;
// - PITCHED: `slabs` + 1 slabs of every row through a map with increasing strides (tile_map_pitched),
//   landing row after row, each row `slabs` + 1 lines apart: an odd pitch keeps the swizzle's key
//   (the line index % 8) different across eight rows at one slab, so the reads stay conflict-free.
//   The extra slab is the next copy's first (or zeros past K): `move_pitch_*`, `mma_pitch_*`.
constexpr int MAX_BOXES = MAX_K / BOX_K;
enum class Copies { BOXES, SLABS, PITCHED };

template <int KSPLIT, bool MMA, Copies COPIES = Copies::BOXES, int MC = 1>
__global__ void __launch_bounds__(64 * KSPLIT) swz_box_tile(const __grid_constant__ CUtensorMap map_a,
                                                             const __grid_constant__ CUtensorMap map_b, half* c,
                                                             int n, int k, int slabs = 1) {
  extern __shared__ __align__(128) uint4 panels[];
  __shared__ __align__(8) uint64_t landed[MAX_BOXES];
  __shared__ float partial[KSPLIT > 1 ? KSPLIT - 1 : 1][2][32][16];  // slices 1.. : a warp's 16 floats a lane
  const uint32_t pad = (1024 - (smem_addr(panels) & 1023)) & 1023;
  const half* sa = reinterpret_cast<const half*>(reinterpret_cast<const char*>(panels) + pad);
  const int copies = k / BOX_K / slabs;  // of A and of B each; a barrier a pair (slabs = 1: BOXES)
  const int pitch = COPIES == Copies::PITCHED ? slabs + 1 : 1;  // 128-byte lines a row (pitched)
  const int lines = COPIES == Copies::PITCHED ? pitch : slabs;   // a copy's lines a row
  const half* sb = sa + copies * lines * TM * BOX_K;
  const uint32_t bar = smem_addr(&landed[0]);
  static_assert(MC == 1 || COPIES == Copies::SLABS, "multicast: slab copies only");
  if constexpr (MC > 1) {  // MC CTAs along y (one cluster) share B: copy j of B by rank j % MC, to all
    if (threadIdx.x == 0)
      for (int j = 0; j < copies; ++j) mbarrier_expect(bar + 8 * j, (TM + TN) * BOX_K * 2 * lines);
    cluster_barrier();  // every peer's barriers initialised before a multicast copy lands on them
    if (threadIdx.x == 0) {
      uint32_t rank;
      asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
      for (int j = 0; j < copies; ++j) {
        const uint32_t dst_a = smem_addr(sa + j * lines * TM * BOX_K), dst_b = smem_addr(sb + j * lines * TN * BOX_K);
        tensor_box3d(dst_a, &map_a, blockIdx.y * TM, j * slabs, bar + 8 * j);
        if (j % MC == (int)rank)
          tensor_box3d_multicast(dst_b, &map_b, blockIdx.x * TN, j * slabs, bar + 8 * j, (uint16_t)((1 << MC) - 1));
      }
    }
  } else if (threadIdx.x == 0)
    for (int j = 0; j < copies; ++j) {
      mbarrier_expect(bar + 8 * j, (TM + TN) * BOX_K * 2 * lines);
      const uint32_t dst_a = smem_addr(sa + j * lines * TM * BOX_K), dst_b = smem_addr(sb + j * lines * TN * BOX_K);
      if constexpr (COPIES == Copies::SLABS) {
        tensor_box3d(dst_a, &map_a, blockIdx.y * TM, j * slabs, bar + 8 * j);
        tensor_box3d(dst_b, &map_b, blockIdx.x * TN, j * slabs, bar + 8 * j);
      } else if constexpr (COPIES == Copies::PITCHED) {
        tensor_box3d(dst_a, &map_a, j * slabs, blockIdx.y * TM, bar + 8 * j);
        tensor_box3d(dst_b, &map_b, j * slabs, blockIdx.x * TN, bar + 8 * j);
      } else {
        tensor_box(dst_a, &map_a, j * BOX_K, blockIdx.y * TM, bar + 8 * j);
        tensor_box(dst_b, &map_b, j * BOX_K, blockIdx.x * TN, bar + 8 * j);
      }
    }
  __syncthreads();  // the barriers are initialised before anyone waits on them
  if constexpr (!MMA) {
    for (int j = 0; j < copies; ++j) mbarrier_wait_phase0(bar + 8 * j);
    store_from(c, n, panels[threadIdx.x]);
    if constexpr (MC > 1) cluster_barrier();  // no CTA leaves while a copy it issued may still land
  } else {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int wm = warp % 2, wk = warp / 2;
    float acc[4][4] = {};
    for (int j = wk; j < copies; j += KSPLIT) {
      mbarrier_wait_phase0(bar + 8 * j);
      for (int box = 0; box < slabs; ++box) {  // of this copy
        // a box's own 2D layout (pitch 1 from its start), or line `box` of the copy's pitched rows
        const int first = COPIES == Copies::PITCHED ? 0 : box;
        const half* base_a = sa + (j * lines + first) * TM * BOX_K;
        const half* base_b = sb + (j * lines + first) * TN * BOX_K;
        const int line0 = COPIES == Copies::PITCHED ? box : 0;
#pragma unroll
        for (int half_box = 0; half_box < 2; ++half_box)
          swz_mma_block(acc, base_a, base_b, wm * 16, half_box * 4 + t, g, pitch, line0);
      }
    }
    if constexpr (MC > 1) cluster_barrier();  // every thread: .aligned, before any returns
    if constexpr (KSPLIT > 1) {
      if (wk > 0)
        for (int f = 0; f < 16; ++f) partial[wk - 1][wm][lane][f] = acc[f / 4][f % 4];
      __syncthreads();
      if (wk > 0) return;
      for (int s = 0; s < KSPLIT - 1; ++s)
        for (int f = 0; f < 16; ++f) acc[f / 4][f % 4] += partial[s][wm][lane][f];
    }
    store_warp_tile(c, n, acc, wm * 16, g, t);
  }
}

// The same matrix as 64-half k slabs, (k within a slab, row, slab), boxes of 64 x 32 rows x `slabs`:
// a box lands slab after slab, each as tile_map's 2D box would (row strides k * 2 bytes, slab
// strides 128). False where the encoder refuses the map (strides not increasing).
static bool tile_map3d(EncodeTiled encode, const half* base, int rows, int k, int slabs, CUtensorMap* map) {
  const cuuint64_t dims[3] = {(cuuint64_t)BOX_K, (cuuint64_t)rows, (cuuint64_t)(k / BOX_K)};
  const cuuint64_t strides[2] = {(cuuint64_t)k * 2, (cuuint64_t)BOX_K * 2};
  const cuuint32_t box[3] = {BOX_K, 32, (cuuint32_t)slabs}, elem[3] = {1, 1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, const_cast<half*>(base), dims, strides, box, elem,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The same slabs in the matrix's own order, (k within a slab, slab, row), strides 128 then k * 2
// (increasing), boxes of 64 x (slabs + 1) x 32 rows: a row's slabs land together, rows slabs + 1
// lines apart in shared memory (Copies::PITCHED); the extra slab past K lands as zeros.
static bool tile_map_pitched(EncodeTiled encode, const half* base, int rows, int k, int slabs, CUtensorMap* map) {
  const cuuint64_t dims[3] = {(cuuint64_t)BOX_K, (cuuint64_t)(k / BOX_K), (cuuint64_t)rows};
  const cuuint64_t strides[2] = {(cuuint64_t)BOX_K * 2, (cuuint64_t)k * 2};
  const cuuint32_t box[3] = {BOX_K, (cuuint32_t)slabs + 1, 32}, elem[3] = {1, 1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, const_cast<half*>(base), dims, strides, box, elem,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

using LibGemm = int (*)(const void*, const void*, void*, int, int, int, int, int, int, int, void*, size_t,
                        cudaStream_t);
using LibCan = int (*)(int, int, int, int, int, int, int);

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s CONFIGS LIBRARY NAME[,NAME...] [SAMPLES]\n", argv[0]);
    return 2;
  }
  const std::vector<Config> configs = read_configs(argv[1]);
  void* lib = dlopen(argv[2], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  std::vector<std::string> names;
  for (std::string s = argv[3]; !s.empty();) {
    const size_t comma = s.find(',');
    names.push_back(s.substr(0, comma));
    s = comma == std::string::npos ? "" : s.substr(comma + 1);
  }
  const int samples = argc > 4 ? atoi(argv[4]) : 5;
  const Device dev = describe_device();
  constexpr int kMaxPanels = (TM + TN) * MAX_K * 2;
  CK(cudaFuncSetAttribute(move_tile<64>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels));
  CK(cudaFuncSetAttribute(move_tile<128>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels));
  constexpr int kMaxPadded = (TM + TN) * (MAX_K + 8) * 2;
  CK(cudaFuncSetAttribute(frag_tile<1, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels));
  CK(cudaFuncSetAttribute(frag_tile<1, 8>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPadded));
  CK(cudaFuncSetAttribute(mma_tile<1, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels));
  CK(cudaFuncSetAttribute(mma_tile<1, 8>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPadded));
  CK(cudaFuncSetAttribute(mma_tile<2, 8>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPadded));
  CK(cudaFuncSetAttribute(mma_swz_tile, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels + 1024));
  CK(cudaFuncSetAttribute(swz_box_tile<1, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels + 1024));
  CK(cudaFuncSetAttribute(swz_box_tile<1, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels + 1024));
  CK(cudaFuncSetAttribute(swz_box_tile<2, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels + 1024));
  CK(cudaFuncSetAttribute(swz_box_tile<4, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels + 1024));
  constexpr Copies kSlabs = Copies::SLABS, kPitched = Copies::PITCHED;
  constexpr int kMaxPitched = (TM + TN) * BOX_K * 2 * (MAX_BOXES + MAX_BOXES / 4) + 1024;  // 4 boxes a copy, 5 lines
  CK(cudaFuncSetAttribute(swz_box_tile<1, false, kSlabs>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels + 1024));
  CK(cudaFuncSetAttribute(swz_box_tile<1, true, kSlabs>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels + 1024));
  CK(cudaFuncSetAttribute(swz_box_tile<4, true, kSlabs>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels + 1024));
  CK(cudaFuncSetAttribute(swz_box_tile<1, false, kSlabs, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels + 1024));
  CK(cudaFuncSetAttribute(swz_box_tile<1, false, kSlabs, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels + 1024));
  CK(cudaFuncSetAttribute(swz_box_tile<4, true, kSlabs, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels + 1024));
  CK(cudaFuncSetAttribute(swz_box_tile<4, true, kSlabs, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPanels + 1024));
  CK(cudaFuncSetAttribute(swz_box_tile<1, false, kPitched>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPitched));
  CK(cudaFuncSetAttribute(swz_box_tile<1, true, kPitched>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPitched));
  CK(cudaFuncSetAttribute(swz_box_tile<4, true, kPitched>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxPitched));
  const EncodeTiled encode = tensor_map_encoder();
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
  cublasSetStream(handle, st);
  printf("gpu,m,n,k,sets,impl,median_us,p10_us,p90_us,max_abs_err\n");
  for (const Config& cf : configs) {
    if (cf.m % TM || cf.n % TN || cf.k % 32 || cf.k > MAX_K) {
      fprintf(stderr, "%d %d %d: M and N multiples of 32, K of 32 and <= %d; skipped\n", cf.m, cf.n, cf.k, MAX_K);
      continue;
    }
    Pool p = make_pool(cf, dev, st);
    const float one = 1.f, zero = 0.f;
    const dim3 grid(cf.n / TN, cf.m / TM);
    const int smem = (TM + TN) * cf.k * 2;
    using Call = std::function<void(int)>;  // one call on set s
    std::vector<std::pair<std::string, Call>> impls = {
        {"move_t128", [&](int s) { move_tile<128><<<grid, 128, smem, st>>>(p.a(s), p.b(s), p.c(s), cf.n, cf.k); }},
        {"move_t64", [&](int s) { move_tile<64><<<grid, 64, smem, st>>>(p.a(s), p.b(s), p.c(s), cf.n, cf.k); }},
        {"frag_w2", [&](int s) { frag_tile<1, 0><<<grid, 64, smem, st>>>(p.a(s), p.b(s), p.c(s), cf.n, cf.k); }},
        {"mma_w2", [&](int s) { mma_tile<1, 0><<<grid, 64, smem, st>>>(p.a(s), p.b(s), p.c(s), cf.n, cf.k); }},
        {"cublas", [&](int s) {
           cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, cf.n, cf.m, cf.k, &one, p.b(s), CUDA_R_16F, cf.k, p.a(s),
                        CUDA_R_16F, cf.k, &zero, p.c(s), CUDA_R_16F, cf.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
         }}};
    const int padded = (TM + TN) * (cf.k + 8) * 2;
    impls.push_back({"frag_pad_w2",
                     [&](int s) { frag_tile<1, 8><<<grid, 64, padded, st>>>(p.a(s), p.b(s), p.c(s), cf.n, cf.k); }});
    impls.push_back({"mma_pad_w2",
                     [&](int s) { mma_tile<1, 8><<<grid, 64, padded, st>>>(p.a(s), p.b(s), p.c(s), cf.n, cf.k); }});
    impls.push_back({"mma_pad_w4",
                     [&](int s) { mma_tile<2, 8><<<grid, 128, padded, st>>>(p.a(s), p.b(s), p.c(s), cf.n, cf.k); }});
    std::vector<CUtensorMap> maps_a, maps_b;  // a set each
    for (int i = 0; i < p.sets; ++i) {
      maps_a.push_back(tile_map(encode, p.a(i), cf.m, cf.k));
      maps_b.push_back(tile_map(encode, p.b(i), cf.n, cf.k));
    }
    if (cf.k % BOX_K == 0) {
      impls.push_back({"mma_swz_w2", [&](int s) {
                         mma_swz_tile<<<grid, 64, smem + 1024, st>>>(maps_a[s], maps_b[s], p.c(s), cf.n, cf.k);
                       }});
      impls.push_back({"move_swz", [&](int s) {
                         swz_box_tile<1, false><<<grid, 64, smem + 1024, st>>>(maps_a[s], maps_b[s], p.c(s), cf.n, cf.k);
                       }});
      impls.push_back({"mma_swzpb_w2", [&](int s) {
                         swz_box_tile<1, true><<<grid, 64, smem + 1024, st>>>(maps_a[s], maps_b[s], p.c(s), cf.n, cf.k);
                       }});
      impls.push_back({"mma_swzpb_k2", [&](int s) {
                         swz_box_tile<2, true><<<grid, 128, smem + 1024, st>>>(maps_a[s], maps_b[s], p.c(s), cf.n, cf.k);
                       }});
      impls.push_back({"mma_swzpb_k4", [&](int s) {
                         swz_box_tile<4, true><<<grid, 256, smem + 1024, st>>>(maps_a[s], maps_b[s], p.c(s), cf.n, cf.k);
                       }});
    }
    // Copies of several boxes: 4 a copy, and all of K in one copy of A and one of B, slab-major
    // (swz3) or row-major with an odd pitch (pitch).
    const int boxes = cf.k / BOX_K;
    std::vector<std::vector<CUtensorMap>> many_maps_a, many_maps_b;  // [layout and slabs][set]
    std::vector<int> slab_choices = {4};
    if (boxes > 4) slab_choices.push_back(boxes);
    for (bool pitched : {false, true})
      for (int slabs : slab_choices) {
        many_maps_a.emplace_back(p.sets);
        many_maps_b.emplace_back(p.sets);
        const auto encode_map = pitched ? tile_map_pitched : tile_map3d;
        bool ok = cf.k % BOX_K == 0 && boxes % slabs == 0;
        for (int i = 0; ok && i < p.sets; ++i)
          ok = encode_map(encode, p.a(i), cf.m, cf.k, slabs, &many_maps_a.back()[i]) &&
               encode_map(encode, p.b(i), cf.n, cf.k, slabs, &many_maps_b.back()[i]);
        const char* layout = pitched ? "pitch" : "swz3";
        if (!ok) {
          fprintf(stderr, "%d %d %d: no %s map of %d boxes a copy\n", cf.m, cf.n, cf.k, layout, slabs);
          continue;
        }
        const size_t c = many_maps_a.size() - 1;
        const std::string tag = slabs == boxes ? "all" : std::to_string(slabs);
        const int bytes = pitched ? (TM + TN) * BOX_K * 2 * (boxes / slabs) * (slabs + 1) + 1024 : smem + 1024;
        auto launch = [&, c, slabs, bytes](auto kernel, int threads, int s) {
          kernel<<<grid, threads, bytes, st>>>(many_maps_a[c][s], many_maps_b[c][s], p.c(s), cf.n, cf.k, slabs);
        };
        const std::string name = std::string(layout) + "_";
        auto add = [&, launch](auto copies) {  // copies: the layout as a type (a template argument)
          constexpr Copies C = decltype(copies)::value;
          impls.push_back({"move_" + name + tag, [=](int s) { launch(swz_box_tile<1, false, C>, 64, s); }});
          impls.push_back({"mma_" + name + "w2_" + tag, [=](int s) { launch(swz_box_tile<1, true, C>, 64, s); }});
          if (boxes / slabs >= 4)
            impls.push_back({"mma_" + name + "k4_" + tag, [=](int s) { launch(swz_box_tile<4, true, C>, 256, s); }});
        };
        if (pitched)
          add(std::integral_constant<Copies, kPitched>{});
        else
          add(std::integral_constant<Copies, kSlabs>{});
        // B shared by clusters of 2 and 4 CTAs along M (multicast), 4 boxes a copy.
        if (pitched || slabs != 4) continue;
        auto add_multicast = [&, c, bytes](auto cluster, int threads, auto kernel, const std::string& label) {
          constexpr int MC = decltype(cluster)::value;
          if ((cf.m / TM) % MC) return;
          impls.push_back({label + std::to_string(MC), [=, &p](int s) {
                             cudaLaunchConfig_t lc = {};
                             lc.gridDim = grid;
                             lc.blockDim = dim3(threads);
                             lc.dynamicSmemBytes = bytes;
                             lc.stream = st;
                             cudaLaunchAttribute at;
                             at.id = cudaLaunchAttributeClusterDimension;
                             at.val.clusterDim.x = 1;
                             at.val.clusterDim.y = MC;
                             at.val.clusterDim.z = 1;
                             lc.attrs = &at;
                             lc.numAttrs = 1;
                             if (cudaLaunchKernelEx(&lc, kernel, many_maps_a[c][s], many_maps_b[c][s], p.c(s), cf.n, cf.k, 4))
                               fprintf(stderr, "%s failed to launch\n", label.c_str());
                           }});
        };
        add_multicast(std::integral_constant<int, 2>{}, 64, swz_box_tile<1, false, kSlabs, 2>, "move_swz3_4_mc");
        add_multicast(std::integral_constant<int, 4>{}, 64, swz_box_tile<1, false, kSlabs, 4>, "move_swz3_4_mc");
        if (boxes / 4 >= 4) {
          add_multicast(std::integral_constant<int, 2>{}, 256, swz_box_tile<4, true, kSlabs, 2>, "mma_swz3_k4_4_mc");
          add_multicast(std::integral_constant<int, 4>{}, 256, swz_box_tile<4, true, kSlabs, 4>, "mma_swz3_k4_4_mc");
        }
      }
    for (const std::string& name : names) {
      auto run = reinterpret_cast<LibGemm>(dlsym(lib, ("l2x_gemm_" + name).c_str()));
      auto can = reinterpret_cast<LibCan>(dlsym(lib, ("l2x_gemm_" + name + "_can_implement").c_str()));
      if (!run || !can || can(cf.m, cf.n, cf.k, 0, 1, 0, 1) != 0) {
        fprintf(stderr, "%d %d %d: %s not in the library or cannot implement it\n", cf.m, cf.n, cf.k, name.c_str());
        continue;
      }
      impls.push_back({"lib:" + name, [&, run](int s) {
                         if (run(p.a(s), p.b(s), p.c(s), cf.m, cf.n, cf.k, 0, 1, 0, 1, nullptr, 0, st))
                           fprintf(stderr, "%s failed to launch\n", name.c_str());
                       }});
    }
    // The GEMMs' error on set 0 against cuBLAS's C (one call each, before the timing).
    std::vector<std::string> err(impls.size(), "-");
    std::vector<half> want = run_and_copy(p, st, [&] { impls.at(4).second(0); });
    for (size_t i = 3; i < impls.size(); ++i)
      if (i != 4 && impls[i].first.rfind("frag", 0) != 0 && impls[i].first.rfind("move", 0) != 0) err[i] = std::to_string(max_abs_diff(run_and_copy(p, st, [&] { impls[i].second(0); }), want));
    std::vector<Call> calls;
    for (auto& im : impls) calls.push_back(im.second);
    const std::vector<Stats> times = time_interleaved(calls, p.sets, samples, st);
    for (size_t i = 0; i < impls.size(); ++i)
      printf("%s,%d,%d,%d,%d,%s,%.4f,%.4f,%.4f,%s\n", dev.name.c_str(), cf.m, cf.n, cf.k, p.sets,
             impls[i].first.c_str(), times[i].median, times[i].p10, times[i].p90, err[i].c_str());
    fflush(stdout);
    CK(cudaFree(p.base));
  }
  return 0;
}
