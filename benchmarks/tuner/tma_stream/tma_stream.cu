// How fast can TMA alone stream the operand tiles of a deep-K, small-MN split-K HGEMM into shared
// memory, and which knob changes it? Why: our wgmma split-K kernel (cutlass/sm90_wgmma_splitk.cuh)
// takes 28.8 us at 512x512x12288 (64x64 tiles x 2 splits, 12 stages of BK 64: ~54 GB/s per SM
// into shared memory) where cuBLAS's kernel, with the same tiles and CTAs, takes 17.6 us (~89 GB/s
// per SM); its MMAs are a small part of each k-tile, so the bound is how fast the data arrives.
//
// The kernel here has our kernel's load structure and no MMA: one producer thread issues the TMA
// loads of the A tile (BM x BK of the K-major MxK matrix, 128B swizzle) and of the B tile (BN x BK
// of the N-major KxN matrix, 128B swizzle, 64 N x BK a box) into STAGES buffers behind full
// (transaction) and empty mbarriers; one consumer warpgroup waits on each full barrier, folds a
// few 16-byte chunks of the stage into a checksum (the loads cannot be dropped, and the host can
// check what arrived) and releases the stage. Variants, side by side in one run: README.md.
// The mma_* variants (session 15) give the consumer our kernel's wgmma loop instead (same producer),
// with a per-CTA fp32 sum of the accumulators as the checksum, and one of them our split-K
// epilogue over a (1, 1, splits) cluster: which part of the consumer costs our kernel its time.
//
//   nvcc -std=c++17 -O3 -arch=sm_90a --expt-relaxed-constexpr -I$CUTLASS/include \
//        -I$CUTLASS/tools/util/include -o tma_stream tma_stream.cu
//   ./tma_stream [M N K] [--reps R] [--only ID,ID,...] [--ncu]
//
// Prints CSV on stdout ('#' lines are the header and notes): per variant the median, 10th and
// 90th percentile per-launch time over 7 timings of R back-to-back launches (cold L2: the launches
// rotate over copies of A and B that together span at least twice the L2), the bytes one CTA
// streams / time, all bytes streamed into shared memory / time, and the checksum verdict.
// --ncu: one (checked) launch per variant and no timing, for Nsight Compute.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#define CK(x)                                                                             \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

namespace ts {

using namespace cute;

constexpr int kMaxSmemBytes = 227 << 10;  // dynamic shared memory a CTA may opt in to on sm_90
constexpr int kConsumerWarps = 4;         // one consumer warpgroup
constexpr int kThreads = 128 + 32 * kConsumerWarps;  // warpgroup 0 produces, as in our kernel

// Which operand a pair of CTAs shares and TMA-multicasts (each CTA loads half of the box into
// both). kB pairs neighbouring M tiles (cluster (1, 2, 1) over the grid (N tiles, M tiles,
// splits)): cuBLAS's "2x1" cluster at this shape. kA pairs neighbouring N tiles (cluster
// (2, 1, 1)): our kernel's MCAST = 2.
enum class Mcast { kNone, kA, kB };

// What the consumer warpgroup does with each stage. kStream: the checksum reads above. The others
// issue our kernel's wgmma MMAs on the stage (m64n64k16 x BK/16, fp32 accumulators in registers):
// kMmaW1 keeps one k-tile of MMAs in flight (warpgroup_wait<1>) and releases the PREVIOUS stage
// with one arrival per consumer thread (our kernel); kMmaW0 waits for all (warpgroup_wait<0>) and
// releases the current stage; kMmaW1Warp is kMmaW1 with one arrival per warp; kMmaW1Epi is kMmaW1
// plus our kernel's split-K epilogue (park the fp32 fragment in shared memory, cluster (1, 1,
// splits) barrier, each rank sums its share of the quads over DSMEM and stores fp16 C).
// kMmaW1Serial is kMmaW1 plus a split-K reduction without a cluster: each split stores its fp32
// partial to a global workspace and counts itself in on the tile's counter; the last to arrive sums
// the partials in split order, stores fp16 C and resets the counter (no memset between launches).
enum class Consumer { kStream, kMmaW1, kMmaW0, kMmaW1Warp, kMmaW1Epi, kMmaW1Serial };

template <int BM, int BN, int BK, int STAGES, Mcast MC = Mcast::kNone, bool TWO_PRODUCERS = false,
          bool READ_ALL = false, Consumer CONS = Consumer::kStream, bool CLUSTER_SPLITS = false>
struct Cfg {
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kStages = STAGES;
  static constexpr Mcast kMcast = MC;
  static constexpr Consumer kConsumer = CONS;
  static constexpr bool kMma = CONS != Consumer::kStream;
  static constexpr bool kEpi = CONS == Consumer::kMmaW1Epi;
  static constexpr bool kSerial = CONS == Consumer::kMmaW1Serial;
  static constexpr bool kWritesC = kEpi || kSerial;
  // Launched as clusters (1, 1, splits): the epilogue needs it; CLUSTER_SPLITS asks for the same
  // launch without using the cluster (what the launch and the CTAs' placement cost by themselves).
  static constexpr bool kClusterSplits = kEpi || CLUSTER_SPLITS;
  // Arrivals that release a stage: one per consumer warp of each CTA the stage's loads land in
  // (kStream), one per consumer thread (the MMA variants, as our kernel), or one per warp.
  static constexpr int kEmptyArrivals = !kMma ? kConsumerWarps * (MC == Mcast::kNone ? 1 : 2)
                                        : CONS == Consumer::kMmaW1Warp ? kConsumerWarps
                                                                        : 32 * kConsumerWarps;
  static constexpr int kClusterX = MC == Mcast::kA ? 2 : 1;
  static constexpr int kClusterY = MC == Mcast::kB ? 2 : 1;
  static constexpr int kCluster = kClusterX * kClusterY;
  // TWO_PRODUCERS: A's loads come from warp 0 and B's from warp 1 (each its own
  // arrive_and_expect_tx on the full barrier), instead of one thread issuing both.
  static constexpr bool kTwoProducers = TWO_PRODUCERS;
  static constexpr int kProducers = TWO_PRODUCERS ? 2 : 1;
  using SmemLayoutA =
      decltype(tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(Int<BM>{}, Int<BK>{}, Int<STAGES>{})));
  // K first, as our kernel: one TMA box covers 64 N x BK of the N-major B.
  using SmemLayoutB = decltype(tile_to_shape(GMMA::Layout_MN_SW128_Atom<half_t>{},
                                             make_shape(Int<BN>{}, Int<BK>{}, Int<STAGES>{}), Step<_2, _1, _3>{}));
  static constexpr int kBytesA = BM * BK * 2, kBytesB = BN * BK * 2, kStageBytes = kBytesA + kBytesB;
  // The consumer reads 16-byte chunks (8 halves along the contiguous dimension). READ_ALL: every
  // chunk of the stage once (the shared-memory read traffic of the MMAs it stands in for), else one
  // chunk of A and one of B a thread, rotating so that successive stages touch different chunks.
  static constexpr bool kReadAll = READ_ALL;
  static constexpr int kChunksA = BM * BK / 8, kChunksB = BN * BK / 8;
  static constexpr int kReadsA = READ_ALL ? kChunksA / 128 : 1, kReadsB = READ_ALL ? kChunksB / 128 : 1;
  static_assert(BM % 64 == 0 && BN % 64 == 0 && BK % 64 == 0, "whole 128-byte swizzle atoms");
  static_assert(kChunksA % 128 == 0 && kChunksB % 128 == 0, "the chunk rotation covers whole warpgroup rounds");
  static_assert(!kMma || (BM == 64 && MC == Mcast::kNone && !READ_ALL), "MMA consumers: one m64 warpgroup");
};

// The split-K reduction of our kernels, the same code: tuner/csrc/split_k_cluster.cuh, which each
// family renders into its preamble after the status enum, kMaxDevices and kMaxSplits.
namespace l2x_shared {
enum : int { kOk = 0, kCannotImplement = 1, kWorkspaceTooSmall = 2, kCudaError = 3, kCutlassError = 4, kInvalidArgument = 5 };
[[maybe_unused]] constexpr int kMaxDevices = 64;  // the shared launch helpers (unused here) refer to it
constexpr int kMaxSplits = 16;
#include "../../../tuner/csrc/split_k_cluster.cuh"
}  // namespace l2x_shared
using l2x_shared::cluster_sum;
__device__ __forceinline__ void store_pair(half_t* C, int N, int M, int row, int col, float x, float y) {
  if (row >= M || col >= N) return;
  *reinterpret_cast<__half2*>(C + size_t(row) * N + col) = __floats2half2_rn(x, y);
}

template <class C>
struct alignas(1024) Storage {  // 128B-swizzled TMA destinations must be 1024-byte aligned
  array_aligned<half_t, cosize_v<typename C::SmemLayoutA>, 1024> a;
  array_aligned<half_t, cosize_v<typename C::SmemLayoutB>, 1024> b;
  uint64_t full[C::kStages];
  uint64_t empty[C::kStages];
};
template <class C>
constexpr int kSmemBytes = int(sizeof(Storage<C>));

// Logical coordinates of the r-th chunk that consumer thread t reads in the stage of k-tile i
// (local index in the CTA's range). The host's checksum uses the same two functions.
template <class C>
CUTE_HOST_DEVICE void chunk_a(int t, int i, int r, int& m, int& k) {
  const int c = (t + (i * C::kReadsA + r) * 128) % C::kChunksA;
  m = c / (C::kBK / 8);
  k = c % (C::kBK / 8) * 8;
}
template <class C>
CUTE_HOST_DEVICE void chunk_b(int t, int i, int r, int& n, int& k) {
  const int c = (t + (i * C::kReadsB + r) * 128) % C::kChunksB;
  n = c % (C::kBN / 8) * 8;
  k = c / (C::kBN / 8);
}

template <class C, class TmaA, class TmaB>
__global__ void __launch_bounds__(kThreads, 1)
    stream_kernel(__grid_constant__ const TmaA tma_a, __grid_constant__ const TmaB tma_b, int M, int N, int K,
                  uint32_t* sums, half_t* Cout, float* workspace, int* counters) {
  using FullBarrier = cutlass::arch::ClusterTransactionBarrier;
  using EmptyBarrier = cutlass::arch::ClusterBarrier;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  auto& sh = *reinterpret_cast<Storage<C>*>(smem_raw);

  const int tid = threadIdx.x;
  const int n_blk = blockIdx.x, m_blk = blockIdx.y;
  // The host launches only shapes with K a multiple of BK x splits: equal contiguous ranges.
  const int kt_count = K / C::kBK / int(gridDim.z);
  const int kt_begin = int(blockIdx.z) * kt_count;
  const uint32_t rank = C::kCluster > 1 ? block_rank_in_cluster() : 0;

  if (tid == 0) {
    for (int s = 0; s < C::kStages; ++s) {
      FullBarrier::init(&sh.full[s], C::kProducers);  // each producer's arrive, with its bytes
      // One arrival per consumer warp of every CTA whose producer writes into this stage: with
      // multicast the peer's loads land here too, so both CTAs' consumers must have released it.
      EmptyBarrier::init(&sh.empty[s], C::kEmptyArrivals);
    }
    cutlass::arch::fence_barrier_init();
  }
  if constexpr (C::kCluster > 1) {
    cluster_sync();  // the peer's barriers are initialised before anything lands in or arrives on them
  } else {
    __syncthreads();
  }

  if (tid < 128) {
    const bool loads_a = tid == 0;
    const bool loads_b = tid == (C::kTwoProducers ? 32 : 0);  // another warp: issues independently
    if (loads_a || loads_b) {
      Tensor sA = make_tensor(make_smem_ptr(sh.a.data()), typename C::SmemLayoutA{});
      Tensor sB = make_tensor(make_smem_ptr(sh.b.data()), typename C::SmemLayoutB{});
      Tensor gA = local_tile(tma_a.get_tma_tensor(make_shape(M, K)), make_shape(Int<C::kBM>{}, Int<C::kBK>{}),
                             make_coord(m_blk, _));
      Tensor gB = local_tile(tma_b.get_tma_tensor(make_shape(N, K)), make_shape(Int<C::kBN>{}, Int<C::kBK>{}),
                             make_coord(n_blk, _));
      // With multicast, slice `rank` is this CTA's half of the shared operand's box.
      auto cta_a = tma_a.get_slice(C::kMcast == Mcast::kA ? rank : 0);
      auto cta_b = tma_b.get_slice(C::kMcast == Mcast::kB ? rank : 0);
      Tensor tAgA = cta_a.partition_S(gA);
      Tensor tAsA = cta_a.partition_D(sA);
      Tensor tBgB = cta_b.partition_S(gB);
      Tensor tBsB = cta_b.partition_D(sB);
      // Bytes that land in THIS CTA's stage for this thread's arrival: a multicast operand arrives
      // whole (this CTA's half and the peer's), so the expectation is the full tile either way.
      const uint32_t tx_bytes = (loads_a ? C::kBytesA : 0) + (loads_b ? C::kBytesB : 0);
      constexpr uint16_t kPair = 0b11;  // both CTAs of the cluster
      if (loads_a) prefetch_tma_descriptor(tma_a.get_tma_descriptor());
      if (loads_b) prefetch_tma_descriptor(tma_b.get_tma_descriptor());
      for (int i = 0; i < kt_count; ++i) {
        const int stage = i % C::kStages;
        // Parity of the ring's pass: flips each time the ring wraps. A fresh barrier counts as
        // having completed the phase of parity 1, so the first pass (wait on 0 ^ 1) goes through.
        const int phase = (i / C::kStages) & 1;
        EmptyBarrier::wait(&sh.empty[stage], phase ^ 1);
        FullBarrier::arrive_and_expect_tx(&sh.full[stage], tx_bytes);
        const int kt = kt_begin + i;
        if (loads_a) {
          if constexpr (C::kMcast == Mcast::kA) {
            copy(tma_a.with(sh.full[stage], kPair), tAgA(_, _, _, kt), tAsA(_, _, _, stage));
          } else {
            copy(tma_a.with(sh.full[stage]), tAgA(_, _, _, kt), tAsA(_, _, _, stage));
          }
        }
        if (loads_b) {
          if constexpr (C::kMcast == Mcast::kB) {
            copy(tma_b.with(sh.full[stage], kPair), tBgB(_, _, _, kt), tBsB(_, _, _, stage));
          } else {
            copy(tma_b.with(sh.full[stage]), tBgB(_, _, _, kt), tBsB(_, _, _, stage));
          }
        }
      }
    }
  } else if constexpr (C::kMma) {  // the consumer warpgroup, with our kernel's MMAs
    using Atom = decltype(GMMA::ss_op_selector<half_t, half_t, float, Shape<Int<C::kBM>, Int<C::kBN>, Int<C::kBK>>,
                                               GMMA::Major::K, GMMA::Major::MN>());
    using TiledMma = decltype(make_tiled_mma(Atom{}, Layout<Shape<_1, _1, _1>>{}));
    const int ct = tid - 128, lane = ct % 32;
    Tensor sA = make_tensor(make_smem_ptr(sh.a.data()), typename C::SmemLayoutA{});
    Tensor sB = make_tensor(make_smem_ptr(sh.b.data()), typename C::SmemLayoutB{});
    TiledMma tiled_mma;
    Tensor accum = partition_fragment_C(tiled_mma, make_shape(Int<C::kBM>{}, Int<C::kBN>{}));
    auto thr_mma = tiled_mma.get_thread_slice(ct);
    Tensor tCrA = thr_mma.make_fragment_A(thr_mma.partition_A(sA));
    Tensor tCrB = thr_mma.make_fragment_B(thr_mma.partition_B(sB));
    auto release = [&](int stage) {
      if constexpr (C::kConsumer == Consumer::kMmaW1Warp) {
        if (lane == 0) EmptyBarrier::arrive(&sh.empty[stage]);  // wgmma.wait is warp-aligned
      } else {
        EmptyBarrier::arrive(&sh.empty[stage]);
      }
    };
    clear(accum);
    for (int i = 0; i < kt_count; ++i) {
      const int stage = i % C::kStages;
      FullBarrier::wait(&sh.full[stage], (i / C::kStages) & 1);
      warpgroup_fence_operand(accum);
      warpgroup_arrive();
      gemm(tiled_mma, tCrA(_, _, _, stage), tCrB(_, _, _, stage), accum);
      warpgroup_commit_batch();
      if constexpr (C::kConsumer == Consumer::kMmaW0) {
        warpgroup_wait<0>();  // this k-tile's MMAs are done: its own stage is free
        warpgroup_fence_operand(accum);
        release(stage);
      } else {
        warpgroup_wait<1>();  // the previous k-tile's MMAs are done: its stage is free
        warpgroup_fence_operand(accum);
        if (i > 0) release((i - 1) % C::kStages);
      }
    }
    warpgroup_wait<0>();
    warpgroup_fence_operand(accum);
    // The checksum: the fp32 sum of this thread's accumulators, summed over the warp; the host adds
    // the four warps' (as float bits in `sums`).
    float acc_sum = 0.f;
    CUTE_UNROLL
    for (int j = 0; j < size(accum); ++j) acc_sum += accum(j);
    CUTE_UNROLL
    for (int o = 16; o > 0; o /= 2) acc_sum += __shfl_xor_sync(0xffffffffu, acc_sum, o);
    const int cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    if (lane == 0) sums[cta * kConsumerWarps + ct / 32] = __float_as_uint(acc_sum);
    // What both split-K epilogues below share: this thread's accumulator quads (values 4q..4q+3,
    // a column pair in row r and in row r + 8) as float4s, and their fp16 stores into C.
    Tensor tCcC = thr_mma.partition_C(make_identity_tensor(make_shape(Int<C::kBM>{}, Int<C::kBN>{})));
    constexpr int kQuads = decltype(size(accum))::value / 4;
    const int splits = int(gridDim.z), split = int(blockIdx.z);
    const int m0 = m_blk * C::kBM, n0 = n_blk * C::kBN;
    auto quad = [&](int q) { return make_float4(accum(4 * q), accum(4 * q + 1), accum(4 * q + 2), accum(4 * q + 3)); };
    auto store_quad = [&](int q, float4 v) {
      store_pair(Cout, N, M, m0 + get<0>(tCcC(4 * q)), n0 + get<1>(tCcC(4 * q)), v.x, v.y);
      store_pair(Cout, N, M, m0 + get<0>(tCcC(4 * q + 2)), n0 + get<1>(tCcC(4 * q + 2)), v.z, v.w);
    };
    if constexpr (C::kEpi) {
      // Our kernel's split-K epilogue (cutlass/sm90_wgmma_splitk.cuh): every stage has been
      // consumed, so the pipeline buffers take the fp32 partial as [quad][consumer thread]
      // float4s; after a cluster barrier rank r sums quads r, r + splits, ... of every rank over
      // DSMEM and stores them as fp16 C. The barriers are the whole CTA's, so the producer
      // warpgroup takes part below; here only the consumer's share.
      float4* const parked = reinterpret_cast<float4*>(smem_raw);  // cluster (1, 1, splits): rank = split
      // All 256 threads, as our kernel's __syncthreads (named: the producer's is at another site).
      asm volatile("bar.sync 1, 256;\n" ::: "memory");
      CUTE_UNROLL
      for (int q = 0; q < kQuads; ++q)
        parked[q * 128 + ct] = quad(q);
      cluster_sync();  // every rank's partial is visible to every peer
      for (int q = split; q < kQuads; q += splits)
        store_quad(q, cluster_sum<16>(static_cast<uint32_t>(__cvta_generic_to_shared(parked + q * 128 + ct)), splits));
      cluster_sync();  // peers may read this CTA's partial until here
    }
    if constexpr (C::kSerial) {
      __shared__ int last_split;
      const int tile = n_blk + int(gridDim.x) * m_blk;
      float4* const tile_ws = reinterpret_cast<float4*>(workspace) + size_t(tile) * splits * kQuads * 128;
      CUTE_UNROLL
      for (int q = 0; q < kQuads; ++q)
        tile_ws[(split * kQuads + q) * 128 + ct] = quad(q);
      __threadfence();  // this thread's partial is visible device-wide before the count below
      asm volatile("bar.sync 2, 128;\n" ::: "memory");  // the consumer warpgroup's stores are all fenced
      if (ct == 0) {
        const int arrived = atomicAdd(&counters[tile], 1);
        last_split = arrived == splits - 1;
        if (last_split) counters[tile] = 0;  // ready for the next launch: no memset between calls
      }
      asm volatile("bar.sync 2, 128;\n" ::: "memory");
      if (last_split) {
        __threadfence();  // acquire: the other splits' partials, read past L1 (__ldcg)
        CUTE_UNROLL
        for (int q = 0; q < kQuads; ++q) {
          float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
          for (int r = 0; r < splits; ++r) {  // split order: the same bits whichever finishes last
            const float4 p = r == split ? quad(q) : __ldcg(&tile_ws[(r * kQuads + q) * 128 + ct]);
            v = make_float4(v.x + p.x, v.y + p.y, v.z + p.z, v.w + p.w);
          }
          store_quad(q, v);
        }
      }
    }
  } else {  // the consumer warpgroup
    const int ct = tid - 128, lane = ct % 32;
    const half_t* const a = sh.a.data();
    const half_t* const b = sh.b.data();
    uint32_t sum = 0;  // 32-bit words, wrapping: the host's order of summation need not match
    for (int i = 0; i < kt_count; ++i) {
      const int stage = i % C::kStages;
      FullBarrier::wait(&sh.full[stage], (i / C::kStages) & 1);
      // The 128B swizzle permutes whole 16-byte chunks, so each 8-half chunk is one 16-byte load
      // (were it not, the loaded words would differ from the host's and the check would fail).
      CUTE_UNROLL
      for (int r = 0; r < C::kReadsA; ++r) {
        int m, k;
        chunk_a<C>(ct, i, r, m, k);
        const uint4 v = *reinterpret_cast<const uint4*>(a + typename C::SmemLayoutA{}(m, k, stage));
        sum += v.x + v.y + v.z + v.w;
      }
      CUTE_UNROLL
      for (int r = 0; r < C::kReadsB; ++r) {
        int n, k;
        chunk_b<C>(ct, i, r, n, k);
        const uint4 v = *reinterpret_cast<const uint4*>(b + typename C::SmemLayoutB{}(n, k, stage));
        sum += v.x + v.y + v.z + v.w;
      }
      // The warp's reads are done (__syncwarp orders them) before one lane per destination CTA
      // releases the stage: lane r arrives on rank r's barrier (with multicast, the peer's
      // producer writes into this stage too).
      __syncwarp();
      if constexpr (C::kCluster == 1) {
        if (lane == 0) EmptyBarrier::arrive(&sh.empty[stage]);
      } else {
        EmptyBarrier::arrive(&sh.empty[stage], uint32_t(lane), lane < C::kCluster);
      }
    }
    sum = __reduce_add_sync(0xffffffffu, sum);
    const int cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    if (lane == 0) sums[cta * kConsumerWarps + ct / 32] = sum;
  }
  if constexpr (C::kCluster > 1) {
    __syncwarp();   // reconverge the producer warp(s) for the aligned cluster barrier
    cluster_sync();  // the peer's consumers arrive on this CTA's empty barriers until here
  }
  if constexpr (C::kEpi) {
    if (tid < 128) {  // the producer warpgroup's part in the epilogue's barriers
      __syncwarp();
      asm volatile("bar.sync 1, 256;\n" ::: "memory");
      cluster_sync();
      cluster_sync();
    }
  }
}

__global__ void empty_kernel() {}

// SM cycles per ns over ~2 ms of one thread spinning on the global timer (the clock the GPU runs
// at now, not its rated peak).
__global__ void clock_probe(unsigned long long* out) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long c0 = clock64();
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  } while (t1 - t0 < 2000000ull);
  out[0] = (unsigned long long)(clock64() - c0);
  out[1] = t1 - t0;
}

// ---------------------------------------------------------------------------------------------
// Host side

struct Ctx {
  int M, N, K;
  int reps;
  bool ncu;
  std::vector<std::string> only;  // variant ids to run; empty: all
  int copies;
  std::vector<half_t*> A, B;  // device copies, identical contents
  std::vector<uint16_t> hA, hB;
  uint32_t* sums;
  size_t sums_len;
  half_t* C;  // the MxN fp16 output of the mma_w1_epi and mma_w1_serial variants
  float* workspace;  // mma_w1_serial: every split's fp32 partial of every 64x64 tile
  int* counters;     // mma_w1_serial: one arrival counter a tile, zeroed once
  cudaStream_t stream;
};

struct Times {
  double median, p10, p90;
};

double quantile(const std::vector<double>& sorted, double q) {  // linear interpolation, as numpy
  const double pos = q * double(sorted.size() - 1);
  const size_t lo = size_t(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

// Warm up, then 7 timings of `reps` back-to-back launches between two events; launch j uses copy
// j % copies, so each launch finds its inputs evicted from the L2 by the copies in between.
template <class Launch>
Times time_launches(const Ctx& ctx, Launch&& launch) {
  for (int j = 0; j < 2 * ctx.copies; ++j) launch(j % ctx.copies);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<double> us;
  for (int t = 0; t < 7; ++t) {
    CK(cudaEventRecord(e0, ctx.stream));
    for (int j = 0; j < ctx.reps; ++j) launch(j % ctx.copies);
    CK(cudaEventRecord(e1, ctx.stream));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    us.push_back(1e3 * ms / ctx.reps);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  std::sort(us.begin(), us.end());
  return {quantile(us, 0.5), quantile(us, 0.1), quantile(us, 0.9)};
}

uint32_t words16(const uint16_t* p) {  // the four 32-bit words of an 8-half chunk, summed
  uint32_t w[4];
  std::memcpy(w, p, 16);
  return w[0] + w[1] + w[2] + w[3];
}

// The checksum each CTA's consumer warpgroup should produce: the same chunks of A and B, from the
// host's copy of the inputs.
template <class C>
uint32_t expected_sum(const Ctx& ctx, int n_blk, int m_blk, int split, int kt_count) {
  uint32_t sum = 0;
  for (int i = 0; i < kt_count; ++i) {
    const int kt = split * kt_count + i;
    for (int t = 0; t < 128; ++t) {
      for (int r = 0; r < C::kReadsA; ++r) {
        int m, k;
        chunk_a<C>(t, i, r, m, k);
        sum += words16(&ctx.hA[size_t(m_blk * C::kBM + m) * ctx.K + kt * C::kBK + k]);
      }
      for (int r = 0; r < C::kReadsB; ++r) {
        int n, k;
        chunk_b<C>(t, i, r, n, k);
        sum += words16(&ctx.hB[size_t(kt * C::kBK + k) * ctx.N + n_blk * C::kBN + n]);
      }
    }
  }
  return sum;
}

const char* kind_name(Mcast mc, bool two_producers, bool read_all, Consumer cons = Consumer::kStream) {
  switch (cons) {
    case Consumer::kMmaW1: return "mma_w1";
    case Consumer::kMmaW0: return "mma_w0";
    case Consumer::kMmaW1Warp: return "mma_w1_warprelease";
    case Consumer::kMmaW1Epi: return "mma_w1_epi";
    case Consumer::kMmaW1Serial: return "mma_w1_serial";
    default: break;
  }
  if (mc == Mcast::kA) return "mcastA";
  if (mc == Mcast::kB) return "mcastB";
  if (two_producers) return "2producers";
  return read_all ? "readall" : "plain";
}

bool selected(const Ctx& ctx, const std::string& id) {
  return ctx.only.empty() || std::find(ctx.only.begin(), ctx.only.end(), id) != ctx.only.end();
}

void print_row(const std::string& id, int bm, int bn, int bk, int stages, int splits, const char* cluster,
               int ctas, const Times& t, double cta_bytes, const char* check) {
  const double gbs = t.median > 0 ? cta_bytes / t.median * 1e-3 : 0;              // B/us -> GB/s
  const double tbs = t.median > 0 ? cta_bytes * ctas / t.median * 1e-6 : 0;       // B/us -> TB/s
  std::printf("%s,%d,%d,%d,%d,%d,%s,%d,%.3f,%.3f,%.3f,%.2f,%.3f,%s\n", id.c_str(), bm, bn, bk, stages, splits,
              cluster, ctas, t.median, t.p10, t.p90, gbs, tbs, check);
  std::fflush(stdout);
}

template <class C>
auto make_tmas(const half_t* A, const half_t* B, int M, int N, int K) {
  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, Int<1>{}));
  Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(Int<1>{}, N));  // KxN row-major
  auto sa = typename C::SmemLayoutA{}(_, _, 0);
  auto sb = typename C::SmemLayoutB{}(_, _, 0);
  auto tma_a = [&] {
    if constexpr (C::kMcast == Mcast::kA) {
      return make_tma_copy(SM90_TMA_LOAD_MULTICAST{}, mA, sa, Int<2>{});
    } else {
      return make_tma_copy(SM90_TMA_LOAD{}, mA, sa);
    }
  }();
  auto tma_b = [&] {
    if constexpr (C::kMcast == Mcast::kB) {
      return make_tma_copy(SM90_TMA_LOAD_MULTICAST{}, mB, sb, Int<2>{});
    } else {
      return make_tma_copy(SM90_TMA_LOAD{}, mB, sb);
    }
  }();
  return make_tuple(tma_a, tma_b);
}

float half_bits_to_float(uint16_t h) {
  half_t v;
  std::memcpy(&v, &h, 2);
  return float(v);
}

// The MMA consumers' check. Each CTA's four warp sums (float bits) against the fp64 sum over its
// tile of its partial products, sum_k (sum_m A[m, k]) (sum_n B[k, n]) over its k-range, within a
// relative 1e-2 (of max(|ref|, 1): the sum of random-signed products may be near 0; the inputs are
// multiples of 1/16, so the fp32 accumulation is in fact exact). With the epilogue, also C at 1024
// sampled elements against the fp64 dot product (relative 1e-2 of max(|ref|, 1)).
template <class C>
bool verify_mma(const Ctx& ctx, const std::vector<uint32_t>& got, dim3 grid, int kt_count) {
  const int M = ctx.M, N = ctx.N, K = ctx.K;
  std::vector<double> colA(size_t(grid.y) * K, 0.0), rowB(size_t(grid.x) * K, 0.0);  // per tile, per k
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) colA[size_t(m / C::kBM) * K + k] += half_bits_to_float(ctx.hA[size_t(m) * K + k]);
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) rowB[size_t(n / C::kBN) * K + k] += half_bits_to_float(ctx.hB[size_t(k) * N + n]);
  bool ok = true;
  for (int z = 0; z < int(grid.z); ++z)
    for (int y = 0; y < int(grid.y); ++y)
      for (int x = 0; x < int(grid.x); ++x) {
        const size_t cta = x + grid.x * (y + grid.y * size_t(z));
        double sum = 0;
        for (int w = 0; w < kConsumerWarps; ++w) {
          float f;
          std::memcpy(&f, &got[cta * kConsumerWarps + w], 4);
          sum += f;
        }
        double ref = 0;
        for (int k = z * kt_count * C::kBK; k < (z + 1) * kt_count * C::kBK; ++k)
          ref += colA[size_t(y) * K + k] * rowB[size_t(x) * K + k];
        if (!(std::fabs(sum - ref) <= 1e-2 * std::max(std::fabs(ref), 1.0))) {
          if (ok) std::printf("# mismatch CTA (%d, %d, %d): %.6g, expected %.6g\n", x, y, z, sum, ref);
          ok = false;
        }
      }
  if constexpr (C::kWritesC) {
    std::vector<uint16_t> hC(size_t(M) * N);
    CK(cudaMemcpy(hC.data(), ctx.C, hC.size() * 2, cudaMemcpyDeviceToHost));
    std::mt19937 rng(777);
    for (int t = 0; t < 1024; ++t) {
      const int m = int(rng() % unsigned(M)), n = int(rng() % unsigned(N));
      double ref = 0;
      for (int k = 0; k < K; ++k)
        ref += double(half_bits_to_float(ctx.hA[size_t(m) * K + k])) * half_bits_to_float(ctx.hB[size_t(k) * N + n]);
      const double c = half_bits_to_float(hC[size_t(m) * N + n]);
      if (!(std::fabs(c - ref) <= 1e-2 * std::max(std::fabs(ref), 1.0))) {
        if (ok) std::printf("# mismatch C(%d, %d): %.6g, expected %.6g\n", m, n, c, ref);
        ok = false;
      }
    }
  }
  return ok;
}

// One variant at one split count: skip with a reason, or check, time and print a CSV row.
template <class C>
void run_variant(Ctx& ctx, int splits) {
  const char* kind = kind_name(C::kMcast, C::kTwoProducers, C::kReadAll, C::kConsumer);
  char idbuf[128];
  const char* cz = C::kClusterSplits && !C::kEpi ? "_cz" : "";  // the epilogue's cluster is implied
  std::snprintf(idbuf, sizeof idbuf, "%s%s_%dx%d_bk%d_s%d_sk%d", kind, cz, C::kBM, C::kBN, C::kBK, C::kStages, splits);
  const std::string id = idbuf;
  if (!selected(ctx, id)) return;
  if constexpr (kSmemBytes<C> > kMaxSmemBytes) {
    std::printf("# skip %s: %d bytes of shared memory > %d\n", id.c_str(), kSmemBytes<C>, kMaxSmemBytes);
    return;
  } else {
    const int M = ctx.M, N = ctx.N, K = ctx.K;
    if ((C::kClusterSplits || C::kSerial) && (splits < 2 || splits > 8)) {
      std::printf("# skip %s: the split-K epilogue needs 2 to 8 splits (a portable cluster)\n", id.c_str());
      return;
    }
    if (M % (C::kBM * C::kClusterY) || N % (C::kBN * C::kClusterX) || K % (C::kBK * splits)) {
      std::printf("# skip %s: M %% %d, N %% %d or K %% %d is not 0\n", id.c_str(), C::kBM * C::kClusterY,
                  C::kBN * C::kClusterX, C::kBK * splits);
      return;
    }
    using Tmas = decltype(make_tmas<C>(nullptr, nullptr, 8, 8, 8));
    using TmaA = remove_cvref_t<decltype(get<0>(std::declval<Tmas>()))>;
    using TmaB = remove_cvref_t<decltype(get<1>(std::declval<Tmas>()))>;
    auto kernel = stream_kernel<C, TmaA, TmaB>;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes<C>));
    std::vector<TmaA> tas;
    std::vector<TmaB> tbs;
    for (int c = 0; c < ctx.copies; ++c) {
      auto t = make_tmas<C>(ctx.A[c], ctx.B[c], M, N, K);
      tas.push_back(get<0>(t));
      tbs.push_back(get<1>(t));
    }
    const dim3 grid(N / C::kBN, M / C::kBM, splits);
    const int ctas = int(grid.x * grid.y * grid.z);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = C::kClusterX;
    attr[0].val.clusterDim.y = C::kClusterY;
    const int cluster_z = C::kClusterSplits ? splits : 1;  // the splits of one tile: a cluster along z
    attr[0].val.clusterDim.z = cluster_z;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = kSmemBytes<C>;
    cfg.stream = ctx.stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    CK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg));
    // Without multicast, a plain launch (the cluster attribute only served the occupancy query).
    if (C::kCluster * cluster_z == 1) cfg.numAttrs = 0;
    if (clusters == 0) {
      std::printf("# skip %s: no cluster of %d fits (cudaOccupancyMaxActiveClusters)\n", id.c_str(),
                  C::kCluster * cluster_z);
      return;
    }
    if (clusters * C::kCluster * cluster_z < ctas)
      std::printf("# note %s: %d CTAs, %d resident at once: more than one wave\n", id.c_str(), ctas,
                  clusters * C::kCluster * cluster_z);
    auto launch = [&](int c) {
      CK(cudaLaunchKernelEx(&cfg, kernel, tas[c], tbs[c], M, N, K, ctx.sums, ctx.C, ctx.workspace, ctx.counters));
    };
    const int kt_count = K / C::kBK / splits;
    // The checksum after one launch on a cleared buffer, and again after all the timed launches.
    auto verify = [&] {
      std::vector<uint32_t> got(size_t(ctas) * kConsumerWarps);
      CK(cudaStreamSynchronize(ctx.stream));
      CK(cudaMemcpy(got.data(), ctx.sums, got.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
      if constexpr (C::kMma) {
        return verify_mma<C>(ctx, got, grid, kt_count);
      } else {
        for (int z = 0; z < splits; ++z)
          for (int y = 0; y < int(grid.y); ++y)
            for (int x = 0; x < int(grid.x); ++x) {
              const size_t cta = x + grid.x * (y + grid.y * size_t(z));
              uint32_t sum = 0;
              for (int w = 0; w < kConsumerWarps; ++w) sum += got[cta * kConsumerWarps + w];
              if (sum != expected_sum<C>(ctx, x, y, z, kt_count)) return false;
            }
        return true;
      }
    };
    CK(cudaMemsetAsync(ctx.sums, 0, ctx.sums_len * sizeof(uint32_t), ctx.stream));
    if (C::kWritesC) CK(cudaMemsetAsync(ctx.C, 0, size_t(M) * N * 2, ctx.stream));
    launch(0);
    CK(cudaGetLastError());
    bool ok = verify();
    Times t{0, 0, 0};
    if (!ctx.ncu) {
      t = time_launches(ctx, launch);
      ok = ok && verify();
    }
    char cluster[16];
    std::snprintf(cluster, sizeof cluster, "%dx%dx%d", C::kClusterX, C::kClusterY, cluster_z);
    print_row(id, C::kBM, C::kBN, C::kBK, C::kStages, splits, cluster, ctas, t,
              double(kt_count) * C::kStageBytes, ok ? "OK" : "FAIL");
  }
}

// The launch cost for scale: an empty kernel with the 64x64 x 2 splits grid, timed the same way.
void run_empty(Ctx& ctx) {
  if (!selected(ctx, "empty") || ctx.ncu) return;
  const dim3 grid(ctx.N / 64, ctx.M / 64, 2);
  const Times t = time_launches(ctx, [&](int) { empty_kernel<<<grid, kThreads, 0, ctx.stream>>>(); });
  print_row("empty", 0, 0, 0, 0, 2, "1x1x1", int(grid.x * grid.y * grid.z), t, 0, "-");
}

double sm_mhz_now(Ctx& ctx) {
  unsigned long long* d;
  unsigned long long h[2];
  CK(cudaMalloc(&d, sizeof h));
  clock_probe<<<1, 1, 0, ctx.stream>>>(d);
  CK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, ctx.stream));
  CK(cudaStreamSynchronize(ctx.stream));
  CK(cudaFree(d));
  return 1e3 * double(h[0]) / double(h[1]);
}

// The variants (README.md says what each one tests). A stage ring that does not fit in 227 KB is
// printed as a skip without instantiating its kernel.
void run_all(Ctx& ctx) {
  using T64 = Cfg<64, 64, 64, 12>;
  run_empty(ctx);
  for (int splits : {2, 1}) {
    // Pipeline depth at BK 64 (16 KB a stage): 4, 8, 12 (our kernel), 13 (cuBLAS's).
    run_variant<Cfg<64, 64, 64, 4>>(ctx, splits);
    run_variant<Cfg<64, 64, 64, 8>>(ctx, splits);
    run_variant<T64>(ctx, splits);
    run_variant<Cfg<64, 64, 64, 13>>(ctx, splits);
    // BK 128 (32 KB a stage, twice the bytes per barrier round trip); 6 stages hold the same 192 KB
    // as 12 of BK 64.
    run_variant<Cfg<64, 64, 128, 4>>(ctx, splits);
    run_variant<Cfg<64, 64, 128, 6>>(ctx, splits);
    run_variant<Cfg<64, 64, 128, 7>>(ctx, splits);
    run_variant<Cfg<64, 64, 128, 8>>(ctx, splits);
    run_variant<Cfg<64, 64, 128, 12>>(ctx, splits);
    // B multicast over the M pair (cuBLAS's 2x1 cluster): a quarter fewer bytes asked of the L2.
    run_variant<Cfg<64, 64, 64, 4, Mcast::kB>>(ctx, splits);
    run_variant<Cfg<64, 64, 64, 8, Mcast::kB>>(ctx, splits);
    run_variant<Cfg<64, 64, 64, 12, Mcast::kB>>(ctx, splits);
    run_variant<Cfg<64, 64, 64, 13, Mcast::kB>>(ctx, splits);
    // A multicast over the N pair (our kernel's MCAST = 2), A and B issued by two warps, and a
    // consumer that reads every byte of each stage (as the MMAs do).
    run_variant<Cfg<64, 64, 64, 12, Mcast::kA>>(ctx, splits);
    run_variant<Cfg<64, 64, 64, 12, Mcast::kNone, true>>(ctx, splits);
    run_variant<Cfg<64, 64, 64, 12, Mcast::kNone, false, true>>(ctx, splits);
  }
  // The consumer with our kernel's MMAs (Consumer above), 64x64 x 2 splits, 12 stages (our kernel)
  // and 13.
  run_variant<Cfg<64, 64, 64, 12, Mcast::kNone, false, false, Consumer::kMmaW1>>(ctx, 2);
  run_variant<Cfg<64, 64, 64, 12, Mcast::kNone, false, false, Consumer::kMmaW0>>(ctx, 2);
  run_variant<Cfg<64, 64, 64, 12, Mcast::kNone, false, false, Consumer::kMmaW1Warp>>(ctx, 2);
  run_variant<Cfg<64, 64, 64, 12, Mcast::kNone, false, false, Consumer::kMmaW1Epi>>(ctx, 2);
  run_variant<Cfg<64, 64, 64, 13, Mcast::kNone, false, false, Consumer::kMmaW1>>(ctx, 2);
  run_variant<Cfg<64, 64, 64, 13, Mcast::kNone, false, false, Consumer::kMmaW1Epi>>(ctx, 2);
  // Session 16: what the (1, 1, splits) cluster launch costs by itself (the stream and mma_w1 so
  // launched, the cluster unused), and the split-K reduction through global memory instead.
  run_variant<Cfg<64, 64, 64, 12, Mcast::kNone, false, false, Consumer::kStream, true>>(ctx, 2);
  run_variant<Cfg<64, 64, 64, 12, Mcast::kNone, false, false, Consumer::kMmaW1, true>>(ctx, 2);
  run_variant<Cfg<64, 64, 64, 12, Mcast::kNone, false, false, Consumer::kMmaW1Serial>>(ctx, 2);
  run_variant<Cfg<64, 64, 64, 12, Mcast::kNone, false, false, Consumer::kMmaW1Warp, true>>(ctx, 2);
  // 128x128 x 4 splits (64 CTAs, 32 KB a stage), for comparison.
  run_variant<Cfg<128, 128, 64, 4>>(ctx, 4);
  run_variant<Cfg<128, 128, 64, 6>>(ctx, 4);
  run_variant<Cfg<128, 128, 64, 7>>(ctx, 4);
  run_variant<Cfg<128, 128, 64, 12>>(ctx, 4);
}

}  // namespace ts

int main(int argc, char** argv) {
  ts::Ctx ctx{};
  ctx.M = 512, ctx.N = 512, ctx.K = 12288;
  ctx.reps = 40;
  std::vector<int> dims;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      ctx.reps = std::atoi(argv[++i]);
    } else if (a == "--only" && i + 1 < argc) {
      std::string list = argv[++i];
      for (size_t p = 0; p <= list.size();) {
        const size_t q = std::min(list.find(',', p), list.size());
        if (q > p) ctx.only.push_back(list.substr(p, q - p));
        p = q + 1;
      }
    } else if (a == "--ncu") {
      ctx.ncu = true;
    } else if (!a.empty() && a[0] != '-') {
      dims.push_back(std::atoi(a.c_str()));
    } else {
      std::fprintf(stderr, "usage: %s [M N K] [--reps R] [--only ID,ID,...] [--ncu]\n", argv[0]);
      return 2;
    }
  }
  if (dims.size() == 3) {
    ctx.M = dims[0], ctx.N = dims[1], ctx.K = dims[2];
  } else if (!dims.empty()) {
    std::fprintf(stderr, "give all of M N K or none\n");
    return 2;
  }
  if (ctx.M <= 0 || ctx.N <= 0 || ctx.K <= 0 || ctx.reps <= 0) {
    std::fprintf(stderr, "M, N, K and R must be positive\n");
    return 2;
  }

  int dev = 0, sms, l2, clock_khz, mem_khz, bus_bits;
  CK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  CK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev));
  CK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev));
  CK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));

  // Enough identical copies of (A, B) to span twice the L2, so that a launch's inputs are cold.
  const size_t elems_a = size_t(ctx.M) * ctx.K, elems_b = size_t(ctx.K) * ctx.N;
  const size_t copy_bytes = 2 * (elems_a + elems_b);
  ctx.copies = std::max<int>(2, int((2 * size_t(l2) + copy_bytes - 1) / copy_bytes));
  // Small fp16 values (multiples of 1/16 in [-0.5, 0.5]), random bits for the checksum to see.
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> dist(-8, 8);
  ctx.hA.resize(elems_a);
  ctx.hB.resize(elems_b);
  for (auto* h : {&ctx.hA, &ctx.hB})
    for (auto& x : *h) {
      const cute::half_t v(float(dist(rng)) / 16.0f);
      std::memcpy(&x, &v, 2);
    }
  for (int c = 0; c < ctx.copies; ++c) {
    cute::half_t *a, *b;
    CK(cudaMalloc(&a, elems_a * 2));
    CK(cudaMalloc(&b, elems_b * 2));
    CK(cudaMemcpy(a, ctx.hA.data(), elems_a * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, ctx.hB.data(), elems_b * 2, cudaMemcpyHostToDevice));
    ctx.A.push_back(a);
    ctx.B.push_back(b);
  }
  // One sum per consumer warp of the largest grid: 64-row tiles x 2 splits (4 for 128x128 tiles).
  ctx.sums_len = size_t(ctx.M / 64 + 1) * (ctx.N / 64 + 1) * 2 * ts::kConsumerWarps;
  CK(cudaMalloc(&ctx.sums, ctx.sums_len * sizeof(uint32_t)));
  CK(cudaMalloc(&ctx.C, size_t(ctx.M) * ctx.N * 2));
  const size_t tiles64 = size_t(ctx.M / 64 + 1) * (ctx.N / 64 + 1);
  CK(cudaMalloc(&ctx.workspace, tiles64 * 8 * 64 * 64 * sizeof(float)));  // up to 8 splits
  CK(cudaMalloc(&ctx.counters, tiles64 * sizeof(int)));
  CK(cudaMemset(ctx.counters, 0, tiles64 * sizeof(int)));

  std::printf("# device %s, %d SMs, L2 %d KB, SM clock %d MHz rated, %.0f MHz measured before, memory %d MHz x "
              "%d bit\n",
              prop.name, sms, l2 >> 10, clock_khz / 1000, ts::sm_mhz_now(ctx), mem_khz / 1000, bus_bits);
  std::printf("# shape M %d N %d K %d, %d input copies of %.1f MB rotated, %d launches timed x 7%s\n", ctx.M,
              ctx.N, ctx.K, ctx.copies, copy_bytes / 1e6, ctx.reps, ctx.ncu ? " (--ncu: one launch, untimed)" : "");
  std::printf("variant,bm,bn,bk,stages,splits,cluster,ctas,us_median,us_p10,us_p90,gbs_per_sm,tbs_total,check\n");
  ts::run_all(ctx);
  std::printf("# SM clock measured after: %.0f MHz\n", ts::sm_mhz_now(ctx));

  for (int c = 0; c < ctx.copies; ++c) {
    CK(cudaFree(ctx.A[c]));
    CK(cudaFree(ctx.B[c]));
  }
  CK(cudaFree(ctx.sums));
  CK(cudaFree(ctx.C));
  CK(cudaStreamDestroy(ctx.stream));
  return 0;
}
