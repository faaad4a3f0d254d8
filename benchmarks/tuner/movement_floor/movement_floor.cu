// The data movement every HGEMM must do, and nothing else, timed as harness 3 times a kernel
// (issue 15: how far could any kernel get past the best baseline, per config, by measurement).
//
//   nvcc -O3 -std=c++17 -arch=sm_90a -o movement_floor movement_floor.cu -lcublas
//   ./movement_floor CONFIGS [SAMPLES] > floor.csv        # CONFIGS: lines "M N K"
//
// Any HGEMM kernel launches, reads every byte of A (MxK) and B (KxN) from memory at least once,
// and writes every byte of C (MxN) after reads it depends on. `move_uU` does exactly that and no
// arithmetic: each thread loads U 16-byte chunks of A and B at once (coalesced, one round trip
// each round), folds them with XOR, and stores its share of C's chunks from the folded value, so
// every store waits for that thread's loads. Grid: enough 256-thread CTAs to give each thread U
// chunks of max(A + B, C), at most 8 CTAs an SM (full occupancy), looping when more. The floor of
// a config is the fastest of U = 1, 2, 4, 8: a relaxation of any GEMM (no K reduction, no math,
// each byte read by one thread only), so no GEMM kernel of this rotation is expected below it.
//   empty    the grid of move_u4 doing nothing: the launch floor;
//   cublas   cublasGemmEx fp32 compute, default algorithm, row-major A and B (harness 3's
//            cuBLAS-nn): this rotation beside the grid's, for the same config.
//   tile_TMxTN        the movement of a GEMM tiled TM x TN (tile_move below): 16-byte loads
//                     through L1, TILE_LOADS in flight a thread;
//   bulk_TMxTN        the same tile's bytes by bulk copies into shared memory (bulk_tile_move);
//   stream_TMxTN_sS   the movement of a pipelined TMA tile kernel (the wgmma family's pipeline
//                     without its MMAs, stream_tile below): one CTA a TM x TN tile and a 1/S share
//                     of K; 64-k boxes of A and B by tensor copies through a ring of stages behind
//                     full/empty barriers, three warps taking each stage (one chunk a thread) and
//                     releasing it; split 0 writes the tile of C (the splits' reduction left out:
//                     no split-K kernel can match it);
//   streamr_TMxTN_sS  stream_TMxTN_sS with the splits' reduction a split-K kernel must do, as our
//                     families do it: the S CTAs of a tile are one cluster, each parks a TM x TN
//                     fp32 partial (from its fold) in shared memory, and after a cluster barrier
//                     each sums its 1/S of the tile over every rank's partial through distributed
//                     shared memory and writes that share of C (fp16); shared memory sized to the
//                     stages the CTA's K share fills. Rows whose cluster cannot be resident are
//                     left out (cudaOccupancyMaxActiveClusters).
//   move_pdl_uU, empty_pdl   move_uU and the empty kernel launched as programmatic dependents
//                     (PDL: griddepcontrol.wait before any memory access), back to back;
//   cublas+move_u1, cublas+move_pdl_u1   each call cuBLAS then the move, without and with PDL:
//                     what PDL hides behind a predecessor that does not trigger early.
//
// Timing (SPEC section 7 device time, as harness 3): sets of A, B and C in one pool, as many as
// span 2x the L2 (at least 2, at most 8192, at most half the free memory); one CUDA graph of one
// call per set in order, replayed between two events; per call = elapsed / calls. One warm-up
// replay, then SAMPLES replays (default 5) per implementation, implementations interleaved in
// shuffled order each round; median, p10, p90 of the per-call times.
// Checked (where A + B and C are each <= 64 MB): the XOR of all folded values equals the XOR of every 16-byte
// chunk of set 0's A and B (every byte read once), and every chunk of C was written.
#include <cublas_v2.h>

#include <atomic>
#include <sstream>

#include "../probe_common.cuh"

// Our families' cluster reduction (tuner/csrc/split_k_cluster.cuh), which expects the C ABI's
// status codes (tuner/abi.py) and limits declared before it.
enum { kOk = 0, kCannotImplement = 1, kWorkspaceTooSmall = 2, kCudaError = 3, kCutlassError = 4, kInvalidArgument = 5 };
[[maybe_unused]] constexpr int kMaxDevices = 64;
constexpr int kMaxSplits = 16;
#include "../../../tuner/csrc/split_k_cluster.cuh"

constexpr int THREADS = 256;
constexpr int CTAS_PER_SM = 8;  // 8 x 256 threads: an SM's 2048

// A and B chunks are one index space: [0, n_a) in A, [n_a, n_a + n_b) in B.
// kWait: launched as a programmatic dependent (PDL): the launch and the index set-up may overlap the
// previous kernel's tail; griddepcontrol.wait holds every memory access until that kernel is done.
template <int U, bool kWait = false>
__global__ void __launch_bounds__(THREADS) move(const uint4* __restrict__ a, size_t n_a, const uint4* __restrict__ b,
                                                size_t n_b, uint4* __restrict__ c, size_t n_c, unsigned* check) {
  if constexpr (kWait) asm volatile("griddepcontrol.wait;\n" ::: "memory");
  const size_t stride = (size_t)gridDim.x * THREADS;
  const size_t first = (size_t)blockIdx.x * THREADS + threadIdx.x;
  const size_t n_in = n_a + n_b;
  uint4 x = make_uint4(0, 0, 0, 0);
  for (size_t base = first; base < n_in; base += stride * U) {
    uint4 v[U];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const size_t i = base + j * stride;
      const uint4* src = i < n_a ? a + i : b + (i - n_a);  // one load a chunk, A or B
      v[j] = i < n_in ? *src : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int j = 0; j < U; ++j) x = fold(x, v[j]);
  }
  for (size_t i = first; i < n_c; i += stride) c[i] = fold(x, make_uint4((unsigned)i, 0, 0, 0));
  if (check) {
    atomicXor(check + 0, x.x);
    atomicXor(check + 1, x.y);
    atomicXor(check + 2, x.z);
    atomicXor(check + 3, x.w);
  }
}

// The movement of a tiled GEMM (a tighter floor for one tiling): CTA (y, x) owns C's TM x TN tile at
// (y TM, x TN) and reads what a GEMM CTA of that tile must have, A's TM rows and B's TN rows (B
// stored N x K, K contiguous, as the tiny kernels read it), 16-byte chunks, TILE_LOADS at once a
// thread; folds them and writes its tile of C from the fold. A and B bytes are read N / TN and
// M / TM times (from L2 after the first), as a GEMM of that tile reads them; no math.
constexpr int TILE_THREADS = 128;
constexpr int TILE_LOADS = 16;

__global__ void __launch_bounds__(TILE_THREADS) tile_move(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                                     uint4* __restrict__ c, int n, int k, int tm, int tn) {
  const size_t kc = k / 8, m0 = (size_t)blockIdx.y * tm, n0 = (size_t)blockIdx.x * tn;
  const int chunks_a = tm * (int)kc, total = (tm + tn) * (int)kc;
  const uint4* const a_rows = a + m0 * kc;
  const uint4* const b_rows = b + n0 * kc - chunks_a;  // chunk i >= chunks_a is B's chunk i - chunks_a
  uint4 x = make_uint4(0, 0, 0, 0);
  for (int base = threadIdx.x; base < total; base += TILE_THREADS * TILE_LOADS) {
    uint4 v[TILE_LOADS];
#pragma unroll
    for (int j = 0; j < TILE_LOADS; ++j) {
      const int i = base + j * TILE_THREADS;
      v[j] = i < total ? (i < chunks_a ? a_rows : b_rows)[i] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int j = 0; j < TILE_LOADS; ++j) x = fold(x, v[j]);
  }
  const int cc = tn / 8;
  for (int i = threadIdx.x; i < tm * cc; i += TILE_THREADS)
    c[(m0 + i / cc) * (n / 8) + n0 / 8 + i % cc] = fold(x, make_uint4((unsigned)i, 0, 0, 0));
}
constexpr int TILES[][2] = {{32, 32}, {32, 64}, {64, 64}, {64, 128}, {128, 128}};

// The same tile's movement as a TMA-fed kernel makes it: one thread issues bulk copies (the
// non-tensor TMA, cp.async.bulk, BULK_PIECE bytes each) of the tile's A rows and B rows (each a
// contiguous panel) into shared memory against one mbarrier; every thread waits for the barrier,
// folds one chunk of what landed and writes its share of C. C waits for all of the tile's bytes;
// nothing reads them again (a wgmma reads shared memory at its own rate): a lower bound for a
// one-stage TMA tile kernel. Tiles whose panels exceed BULK_SMEM are skipped.
constexpr int BULK_SMEM = 200 << 10;

__global__ void __launch_bounds__(TILE_THREADS) bulk_tile_move(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                                          uint4* __restrict__ c, int n, int k, int tm, int tn) {
  extern __shared__ __align__(128) uint4 panels[];
  __shared__ __align__(8) uint64_t landed;
  const size_t kc = k / 8, m0 = (size_t)blockIdx.y * tm, n0 = (size_t)blockIdx.x * tn;
  const uint32_t bar = smem_addr(&landed);
  const uint32_t a_bytes = tm * k * 2, b_bytes = tn * k * 2;
  if (threadIdx.x == 0) {
    mbarrier_expect(bar, a_bytes + b_bytes);
    bulk_copy(smem_addr(panels), a + m0 * kc, a_bytes, bar);
    bulk_copy(smem_addr(panels) + a_bytes, b + n0 * kc, b_bytes, bar);
  }
  __syncthreads();  // the barrier is initialised before anyone waits on it
  mbarrier_wait_phase0(bar);
  const uint4 x = panels[threadIdx.x];
  const int cc = tn / 8;
  for (int i = threadIdx.x; i < tm * cc; i += TILE_THREADS)
    c[(m0 + i / cc) * (n / 8) + n0 / 8 + i % cc] = fold(x, make_uint4((unsigned)i, 0, 0, 0));
}

// The movement of a pipelined TMA tile kernel, for the mid-size configs where one stage cannot
// hold a tile's K (bulk_tile_move's limit): warp 0's first lane streams the CTA's share of K in
// 64-k boxes of A (TM rows) and B (TN rows, the buffer read as N x K) through STAGES stages, each
// behind a full barrier (the copies' bytes) and an empty one (the three consumer warps' release);
// every consumer thread folds one chunk of each stage it takes, so nothing is released unread.
// Then split 0 writes its tile of C from the folds. Stages of (TM + TN) x 128 bytes.
constexpr int STREAM_THREADS = 128;
constexpr int STREAM_CONSUMER_WARPS = STREAM_THREADS / 32 - 1;
constexpr int STREAM_SMEM = 192 << 10;

__host__ __device__ constexpr int stream_stages(int tm, int tn) {
  return STREAM_SMEM / ((tm + tn) * BOX_K * 2) < 8 ? STREAM_SMEM / ((tm + tn) * BOX_K * 2) : 8;
}

// A split's share of the cluster reduction (streamr rows): the fold parked as the TM x TN fp32
// partial in the stages' room, then chunk q (16 bytes of C: 8 fp32 partials, two float4 slots) of
// the tile summed over the ranks by rank q % splits, in rank order, and stored.
template <int TM, int TN>
__device__ __forceinline__ void reduce_in_cluster(uint4 x, unsigned char* room, uint4* __restrict__ c, int n, int m0,
                                                  int n0) {
  float4* const parked = reinterpret_cast<float4*>(room);
  constexpr int kSlots = TM * TN / 4, kChunksN = TN / 8;
  __syncthreads();  // every fold is done: the stages are free
  for (int i = threadIdx.x; i < kSlots; i += STREAM_THREADS) {
    const uint4 v = fold(x, make_uint4((unsigned)i, 0, 0, 0));
    parked[i] = make_float4(__uint_as_float(v.x & 0x3fffffffu), __uint_as_float(v.y & 0x3fffffffu),
                            __uint_as_float(v.z & 0x3fffffffu), __uint_as_float(v.w & 0x3fffffffu));  // finite
  }
  cluster_sync();  // every rank's partial is visible to every peer
  const int splits = gridDim.z;
  for (int q = blockIdx.z + splits * threadIdx.x; q < TM * kChunksN; q += splits * STREAM_THREADS) {
    const float4 lo = cluster_sum<kMaxSplits>(smem_u32(parked + 2 * q), splits);
    const float4 hi = cluster_sum<kMaxSplits>(smem_u32(parked + 2 * q + 1), splits);
    const __half2 h[4] = {__floats2half2_rn(lo.x, lo.y), __floats2half2_rn(lo.z, lo.w), __floats2half2_rn(hi.x, hi.y),
                          __floats2half2_rn(hi.z, hi.w)};
    c[(size_t)(m0 + q / kChunksN) * (n / 8) + n0 / 8 + q % kChunksN] = *reinterpret_cast<const uint4*>(h);
  }
  cluster_sync();  // no CTA leaves while a peer may still read its partial
}

template <int TM, int TN, bool kReduce = false>
__global__ void __launch_bounds__(STREAM_THREADS) stream_tile(const __grid_constant__ CUtensorMap map_a,
                                                         const __grid_constant__ CUtensorMap map_b,
                                                         uint4* __restrict__ c, int n, int k_share) {
  constexpr int kStages = stream_stages(TM, TN);
  constexpr uint32_t kBytesA = TM * BOX_K * 2, kStageBytes = (TM + TN) * BOX_K * 2;
  extern __shared__ __align__(128) unsigned char dynamic_smem[];
  __shared__ __align__(8) uint64_t full[kStages], empty[kStages];
  // The 128-byte swizzle's atom is 1024 bytes: the stages start at the next 1024-byte boundary
  // (stream_smem asks for 1024 more).
  unsigned char* const stages = dynamic_smem + ((1024 - (smem_addr(dynamic_smem) & 1023)) & 1023);
  const int m0 = blockIdx.y * TM, n0 = blockIdx.x * TN, k0 = blockIdx.z * k_share, boxes = k_share / BOX_K;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(smem_addr(&full[s]), 1);
      mbarrier_init(smem_addr(&empty[s]), STREAM_CONSUMER_WARPS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  uint4 x = make_uint4(0, 0, 0, 0);
  if (warp == 0) {
    if (lane == 0)
      for (int i = 0; i < boxes; ++i) {
        const int s = i % kStages;
        if (i >= kStages) mbarrier_wait(smem_addr(&empty[s]), (i / kStages - 1) & 1);
        const uint32_t bar = smem_addr(&full[s]), dst = smem_addr(stages + s * kStageBytes);
        mbarrier_arrive_expect_tx(bar, kStageBytes);
        tensor_box(dst, &map_a, k0 + i * BOX_K, m0, bar);
        tensor_box(dst + kBytesA, &map_b, k0 + i * BOX_K, n0, bar);
      }
  } else {
    for (int i = 0; i < boxes; ++i) {
      const int s = i % kStages;
      mbarrier_wait(smem_addr(&full[s]), (i / kStages) & 1);
      x = fold(x, reinterpret_cast<const uint4*>(stages + s * kStageBytes)[threadIdx.x - 32]);
      __syncwarp();
      if (lane == 0) mbarrier_arrive(smem_addr(&empty[s]));
    }
  }
  if constexpr (kReduce) {
    reduce_in_cluster<TM, TN>(x, stages, c, n, m0, n0);
    return;
  }
  if (blockIdx.z != 0) return;
  __syncthreads();  // every fold is done before any of the tile's C is written
  constexpr int cc = TN / 8;
  for (int i = threadIdx.x; i < TM * cc; i += STREAM_THREADS)
    c[(size_t)(m0 + i / cc) * (n / 8) + n0 / 8 + i % cc] = fold(x, make_uint4((unsigned)i, 0, 0, 0));
}

// The stream tiles and splits measured; a config takes those that divide it (K a multiple of
// 64 x splits): the tiles of our picks at the tiny regime's mid-size configs (the wgmma family's
// 64x64, 64x96, 64x128, 128x64, its splits up to 16; CUTLASS's 64x128, 128x96, 128x128, 64x256)
// and larger ones.
using StreamKernel = void (*)(CUtensorMap, CUtensorMap, uint4*, int, int);
struct StreamTile {
  int tm, tn;
  StreamKernel kernel, reduced;  // stream_ and streamr_ rows
};
template <int TM, int TN>
constexpr StreamTile stream_tile_pair() {
  return {TM, TN, stream_tile<TM, TN>, stream_tile<TM, TN, true>};
}
const StreamTile STREAM_TILES[] = {
    stream_tile_pair<64, 64>(),   stream_tile_pair<64, 96>(),   stream_tile_pair<64, 128>(),
    stream_tile_pair<128, 64>(),  stream_tile_pair<128, 96>(),  stream_tile_pair<128, 128>(),
    stream_tile_pair<64, 256>(),  stream_tile_pair<128, 256>(), stream_tile_pair<256, 128>()};
constexpr int STREAM_SPLITS[] = {1, 2, 4, 8, 16};

inline int stream_smem(int tm, int tn) { return stream_stages(tm, tn) * (tm + tn) * BOX_K * 2 + 1024; }
// A streamr row's: the stages its K share fills (the ring's later stages stay unused), at least the
// fp32 partial it parks (the same room), and the swizzle's alignment.
inline int streamr_smem(int tm, int tn, int k_share) {
  const int stages = std::min(stream_stages(tm, tn), k_share / BOX_K);
  return std::max(stages * (tm + tn) * BOX_K * 2, tm * tn * 4) + 1024;
}

__global__ void empty_kernel(const uint4*, size_t, const uint4*, size_t, uint4*, size_t, unsigned*) {}
__global__ void empty_pdl(const uint4*, size_t, const uint4*, size_t, uint4*, size_t, unsigned*) {
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
}

// Which tiled rows run: MOVEMENT_FLOOR_TILED holds comma-separated name prefixes ("bulk_", "-" for
// none; unset: all). The stream rows take most of a run; the untiled floor and cuBLAS always run.
static bool tiled_wanted(const std::string& name) {
  static const char* only = getenv("MOVEMENT_FLOOR_TILED");
  if (!only) return true;
  std::stringstream list(only);
  std::string prefix;
  while (std::getline(list, prefix, ','))
    if (!prefix.empty() && name.rfind(prefix, 0) == 0) return true;
  return false;
}

// Whether a (1, 1, splits) cluster of `kernel` with `smem` bytes a CTA can be resident at all.
static bool cluster_fits(StreamKernel kernel, int splits, int smem) {
  cudaLaunchAttribute cluster;
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = 1;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = splits;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(1, 1, splits);
  config.blockDim = dim3(STREAM_THREADS);
  config.dynamicSmemBytes = smem;
  config.attrs = &cluster;
  config.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return clusters > 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CONFIGS [SAMPLES]\n", argv[0]);
    return 2;
  }
  const int samples = argc > 2 ? atoi(argv[2]) : 5;
  const std::vector<Config> configs = read_configs(argv[1]);
  const Device dev = describe_device();
  const int sms = dev.sms;
  CK(cudaFuncSetAttribute(bulk_tile_move, cudaFuncAttributeMaxDynamicSharedMemorySize, BULK_SMEM));
  for (const StreamTile& t : STREAM_TILES) {
    CK(cudaFuncSetAttribute(t.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, stream_smem(t.tm, t.tn)));
    CK(cudaFuncSetAttribute(t.reduced, cudaFuncAttributeMaxDynamicSharedMemorySize, stream_smem(t.tm, t.tn)));
    CK(cudaFuncSetAttribute(t.reduced, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }
  const EncodeTiled encode = tensor_map_encoder();
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
  cublasSetStream(handle, st);
  unsigned* check;
  CK(cudaMalloc(&check, 16));
  printf("gpu,m,n,k,sets,impl,grid,median_us,p10_us,p90_us,check\n");
  for (const Config& cf : configs) {
    const Pool p = make_pool(cf, dev, st);
    const size_t n_a = 2ull * cf.m * cf.k / 16, n_b = 2ull * cf.k * cf.n / 16, n_c = 2ull * cf.m * cf.n / 16;
    const size_t work = std::max(n_a + n_b, n_c);
    auto grid_for = [&](int u) {
      const size_t want = (work + (size_t)THREADS * u - 1) / ((size_t)THREADS * u);
      return (int)std::max<size_t>(1, std::min<size_t>(want, (size_t)CTAS_PER_SM * sms));
    };
    using Kernel = void (*)(const uint4*, size_t, const uint4*, size_t, uint4*, size_t, unsigned*);
    struct Impl {
      std::string name;
      Kernel kernel;  // nullptr: cuBLAS, or a tiled movement (tile_m > 0)
      int grid;
      int tile_m = 0, tile_n = 0;
      bool pdl = false;           // launched as a programmatic dependent of the call before it
      bool after_cublas = false;  // each call is cuBLAS's GEMM, then this kernel: a predecessor that
                                  // does not trigger its dependents early, as in a model
      bool moves = true;          // writes every chunk of C (checked)
      bool bulk = false;          // a tiled movement by bulk copies (bulk_tile_move)
      int splits = 0;             // > 0: stream tile STREAM_TILES[stream] over that many shares of K
      int stream = 0;
      bool reduced = false;       // a streamr row: the splits are a cluster and reduced in it
    };
    std::vector<Impl> impls = {{"move_u1", move<1>, grid_for(1)},  {"move_u2", move<2>, grid_for(2)},
                               {"move_u4", move<4>, grid_for(4)},  {"move_u8", move<8>, grid_for(8)},
                               {"empty", empty_kernel, grid_for(4)}};
    impls.back().moves = false;
    // What programmatic dependent launch hides when a tiny kernel follows another: its launch and
    // CTA start-up overlap the previous kernel's tail (no early trigger: the implicit one at exit).
    impls.push_back({"move_pdl_u1", move<1, true>, grid_for(1)});
    impls.push_back({"move_pdl_u4", move<4, true>, grid_for(4)});
    impls.push_back({"empty_pdl", empty_pdl, grid_for(4)});
    for (size_t i = impls.size() - 3; i < impls.size(); ++i) impls[i].pdl = true;
    impls.back().moves = false;
    const size_t untiled = impls.size();
    for (const auto& t : TILES)
      if (cf.m % t[0] == 0 && cf.n % t[1] == 0) {
        const std::string tile = std::to_string(t[0]) + "x" + std::to_string(t[1]);
        const int ctas = (cf.m / t[0]) * (cf.n / t[1]);
        if (tiled_wanted("tile_" + tile)) impls.push_back({"tile_" + tile, nullptr, ctas, t[0], t[1]});
        if ((t[0] + t[1]) * cf.k * 2 <= BULK_SMEM && tiled_wanted("bulk_" + tile)) {
          impls.push_back({"bulk_" + tile, nullptr, ctas, t[0], t[1]});
          impls.back().bulk = true;
        }
      }
    // One pair of tensor maps a set and stream tile this config takes (box rows = the tile's
    // rows); the other tiles' entries stay unencoded.
    const int tiles = sizeof(STREAM_TILES) / sizeof(STREAM_TILES[0]);
    std::vector<CUtensorMap> stream_maps((size_t)p.sets * tiles * 2);  // [set][tile][A, B]
    for (int t = 0; t < tiles; ++t) {
      const StreamTile& tile = STREAM_TILES[t];
      if (cf.m % tile.tm || cf.n % tile.tn || cf.k % BOX_K) continue;
      for (int set = 0; set < p.sets; ++set) {
        stream_maps[((size_t)set * tiles + t) * 2] = tile_map(encode, p.a(set), cf.m, cf.k, tile.tm);
        stream_maps[((size_t)set * tiles + t) * 2 + 1] = tile_map(encode, p.b(set), cf.n, cf.k, tile.tn);
      }
      for (int splits : STREAM_SPLITS) {
        const std::string name =
            "stream_" + std::to_string(tile.tm) + "x" + std::to_string(tile.tn) + "_s" + std::to_string(splits);
        if (cf.k % (BOX_K * splits) == 0 && tiled_wanted(name)) {
          const int ctas = (cf.m / tile.tm) * (cf.n / tile.tn) * splits;
          impls.push_back({name, nullptr, ctas, tile.tm, tile.tn});
          impls.back().splits = splits;
          impls.back().stream = t;
        }
        const std::string reduced = "streamr" + name.substr(6);
        if (splits > 1 && cf.k % (BOX_K * splits) == 0 && tiled_wanted(reduced) &&
            cluster_fits(tile.reduced, splits, streamr_smem(tile.tm, tile.tn, cf.k / splits))) {
          impls.push_back({reduced, nullptr, (cf.m / tile.tm) * (cf.n / tile.tn) * splits, tile.tm, tile.tn});
          impls.back().splits = splits;
          impls.back().stream = t;
          impls.back().reduced = true;
        }
      }
    }
    for (bool pdl : {false, true}) {
      impls.push_back({pdl ? "cublas+move_pdl_u1" : "cublas+move_u1", pdl ? move<1, true> : move<1>, grid_for(1)});
      impls.back().pdl = pdl;
      impls.back().after_cublas = true;
    }
    impls.push_back({"cublas", nullptr, 0});
    impls.back().moves = false;
    const float one = 1.f, zero = 0.f;
    cudaLaunchAttribute pdl_attr;
    pdl_attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    pdl_attr.val.programmaticStreamSerializationAllowed = 1;
    auto gemm = [&](int s) {  // row-major C = A B as column-major C^T = B^T A^T
      cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, cf.n, cf.m, cf.k, &one, p.b<uint4>(s), CUDA_R_16F, cf.n, p.a<uint4>(s),
                   CUDA_R_16F, cf.k, &zero, p.c<uint4>(s), CUDA_R_16F, cf.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    auto call = [&](const Impl& im, int s, unsigned* chk) {
      if (im.after_cublas) gemm(s);
      if (im.kernel) {
        cudaLaunchConfig_t lc = {};
        lc.gridDim = dim3(im.grid);
        lc.blockDim = dim3(THREADS);
        lc.stream = st;
        lc.attrs = &pdl_attr;
        lc.numAttrs = im.pdl ? 1 : 0;
        CK(cudaLaunchKernelEx(&lc, im.kernel, p.a<uint4>(s), n_a, p.b<uint4>(s), n_b, p.c<uint4>(s), n_c, chk));
      } else if (im.splits) {
        const dim3 grid(cf.n / im.tile_n, cf.m / im.tile_m, im.splits);
        const CUtensorMap* maps = &stream_maps[((size_t)s * tiles + im.stream) * 2];
        const StreamTile& tile = STREAM_TILES[im.stream];
        if (im.reduced) {
          if (launch_split_k(tile.reduced, grid, STREAM_THREADS, streamr_smem(im.tile_m, im.tile_n, cf.k / im.splits), st,
                             maps[0], maps[1], p.c<uint4>(s), cf.n, cf.k / im.splits) != kOk) {
            fprintf(stderr, "%s at %dx%dx%d: cluster launch failed\n", im.name.c_str(), cf.m, cf.n, cf.k);
            exit(1);
          }
        } else {
          tile.kernel<<<grid, STREAM_THREADS, stream_smem(im.tile_m, im.tile_n), st>>>(maps[0], maps[1], p.c<uint4>(s),
                                                                                       cf.n, cf.k / im.splits);
        }
      } else if (im.tile_m) {
        const dim3 grid(cf.n / im.tile_n, cf.m / im.tile_m);
        if (im.bulk)
          bulk_tile_move<<<grid, TILE_THREADS, (im.tile_m + im.tile_n) * cf.k * 2, st>>>(p.a<uint4>(s), p.b<uint4>(s), p.c<uint4>(s), cf.n,
                                                                                          cf.k, im.tile_m, im.tile_n);
        else
          tile_move<<<grid, TILE_THREADS, 0, st>>>(p.a<uint4>(s), p.b<uint4>(s), p.c<uint4>(s), cf.n, cf.k, im.tile_m, im.tile_n);
      } else {
        gemm(s);
      }
    };
    // Check: every byte of A and B read once (XOR of the folds; the untiled moves), every chunk of C
    // written (every movement).
    std::string checked = "skipped";
    if (n_a + n_b <= (64u << 20) / 16 && n_c <= (64u << 20) / 16) {
      std::vector<uint4> host(n_a + n_b);
      CK(cudaMemcpyAsync(host.data(), p.a<uint4>(0), n_a * 16, cudaMemcpyDeviceToHost, st));
      CK(cudaMemcpyAsync(host.data() + n_a, p.b<uint4>(0), n_b * 16, cudaMemcpyDeviceToHost, st));
      CK(cudaStreamSynchronize(st));
      uint4 want = make_uint4(0, 0, 0, 0);
      for (const uint4& v : host) want = make_uint4(want.x ^ v.x, want.y ^ v.y, want.z ^ v.z, want.w ^ v.w);
      bool ok = true;
      for (size_t i = 0; i + 1 < impls.size(); ++i) {
        if (!impls[i].moves) continue;
        CK(cudaMemsetAsync(check, 0, 16, st));
        CK(cudaMemsetAsync(p.c<uint4>(0), 0xff, p.c_bytes, st));
        call(impls[i], 0, check);
        unsigned got[4];
        CK(cudaMemcpyAsync(got, check, 16, cudaMemcpyDeviceToHost, st));
        std::vector<uint16_t> c_host(n_c * 8);
        CK(cudaMemcpyAsync(c_host.data(), p.c<uint4>(0), n_c * 16, cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        if (i < untiled) ok = ok && got[0] == want.x && got[1] == want.y && got[2] == want.z && got[3] == want.w;
        // A chunk left at 0xffff... everywhere was not written (a written one has its index folded in)
        for (size_t q = 0; q < n_c && ok; ++q) {
          const uint16_t* w = c_host.data() + q * 8;
          ok = !std::all_of(w, w + 8, [](uint16_t h) { return h == 0xffff; });
        }
      }
      checked = ok ? "ok" : "FAIL";
    }
    std::vector<std::function<void(int)>> calls;
    for (const Impl& im : impls) calls.push_back([&](int s) { call(im, s, nullptr); });
    const std::vector<Stats> times = time_interleaved(calls, p.sets, samples, st);
    for (size_t i = 0; i < impls.size(); ++i) {
      const Impl& im = impls[i];
      const Stats& s = times[i];
      printf("%s,%d,%d,%d,%d,%s,%d,%.4f,%.4f,%.4f,%s\n", dev.name.c_str(), cf.m, cf.n, cf.k, p.sets, im.name.c_str(), im.grid,
             s.median, s.p10, s.p90, im.moves ? checked.c_str() : "-");
    }
    fflush(stdout);
    CK(cudaFree(p.base));
  }
  return 0;
}
