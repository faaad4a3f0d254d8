// What the standalone GPU probes under benchmarks/tuner share (movement_floor, tiny_floor's
// bulk_bisect): error checks, the rotation of input sets harness 3 times a kernel over, graph
// replay timing, the bulk copies (the non-tensor TMA) into shared memory against an mbarrier, and
// tensor copies of 128-byte-swizzled boxes through a 2D tensor map.
#pragma once
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                   \
  do {                                                                          \
    cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                    \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

constexpr int MAX_CALLS = 8192;  // harness 3's rotation cap (db/shapes.py ROTATION_CAP)

struct Config {
  int m, n, k;
};

// Lines "M N K".
inline std::vector<Config> read_configs(const char* path) {
  std::vector<Config> configs;
  FILE* f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  Config c;
  while (fscanf(f, "%d %d %d", &c.m, &c.n, &c.k) == 3) configs.push_back(c);
  fclose(f);
  return configs;
}

struct Device {
  std::string name;
  int l2 = 0, sms = 0;
};

inline Device describe_device() {
  Device d;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  d.name = prop.name;
  CK(cudaDeviceGetAttribute(&d.l2, cudaDevAttrL2CacheSize, 0));
  CK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, 0));
  fprintf(stderr, "%s, %d SMs, L2 %d bytes\n", d.name.c_str(), d.sms, d.l2);
  return d;
}

__global__ void fill(uint16_t* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    // fp16 in [-1, 1): sign, exponent 0..14, random mantissa (no NaN/Inf for cuBLAS)
    p[i] = (uint16_t)(((x >> 16) & 0x8000u) | ((x % 15u) << 10) | (x & 0x3ffu));
  }
}

__device__ __forceinline__ uint4 fold(uint4 a, uint4 b) { return make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w); }

inline size_t align256(size_t x) { return (x + 255) / 256 * 256; }

// Sets of A (M x K), B (K x N, or N x K: the same bytes) and C (M x N) in one allocation, as many as
// span 2x the L2 (at least 2, at most MAX_CALLS, at most half the free memory): cold L2 each call.
struct Pool {
  size_t a_bytes, b_bytes, c_bytes, set_bytes;  // set_bytes: 256-byte aligned stride of one set
  int sets;
  char* base = nullptr;
  template <class T = half>
  T* a(int s) const {
    return reinterpret_cast<T*>(base + s * set_bytes);
  }
  template <class T = half>
  T* b(int s) const {
    return reinterpret_cast<T*>(base + s * set_bytes + a_bytes);
  }
  template <class T = half>
  T* c(int s) const {
    return reinterpret_cast<T*>(base + s * set_bytes + a_bytes + b_bytes);
  }
};

inline Pool make_pool(const Config& cf, const Device& dev, cudaStream_t st) {
  Pool p;
  p.a_bytes = align256(2ull * cf.m * cf.k);
  p.b_bytes = align256(2ull * cf.k * cf.n);
  p.c_bytes = align256(2ull * cf.m * cf.n);
  p.set_bytes = p.a_bytes + p.b_bytes + p.c_bytes;
  size_t free_b, total_b;
  CK(cudaMemGetInfo(&free_b, &total_b));
  const size_t wanted = std::max<size_t>(2, (2ull * dev.l2 + p.set_bytes - 1) / p.set_bytes);
  const size_t affordable = free_b / 2 / p.set_bytes;
  p.sets = (int)std::max<size_t>(1, std::min<size_t>({wanted, affordable, (size_t)MAX_CALLS}));
  CK(cudaMalloc(&p.base, p.set_bytes * p.sets));
  fill<<<4 * dev.sms, 256, 0, st>>>(reinterpret_cast<uint16_t*>(p.base), p.set_bytes * p.sets / 2, 12345u);
  return p;
}

struct Stats {
  double median, p10, p90;
};

inline Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, (size_t)(q * (v.size() - 1) + 0.5))]; };
  return {at(0.5), at(0.1), at(0.9)};
}

// Per implementation: one graph of a call on each set in order, one warm-up replay, then SAMPLES
// replays each, implementations in shuffled order every round; the per-call times (elapsed / sets).
inline std::vector<Stats> time_interleaved(const std::vector<std::function<void(int)>>& calls, int sets, int samples,
                                           cudaStream_t st) {
  for (const auto& call : calls) call(0);  // lazy set-up (cuBLAS, opt-ins) outside the capture
  CK(cudaStreamSynchronize(st));
  std::vector<cudaGraphExec_t> execs(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    for (int s = 0; s < sets; ++s) calls[i](s);
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&execs[i], g, 0));
    CK(cudaGraphDestroy(g));
    CK(cudaGraphLaunch(execs[i], st));  // warm-up
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  static std::mt19937 rng(0);
  std::vector<std::vector<double>> us(calls.size());
  std::vector<int> order(calls.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = (int)i;
  for (int round = 0; round < samples; ++round) {
    std::shuffle(order.begin(), order.end(), rng);
    for (int i : order) {
      CK(cudaEventRecord(e0, st));
      CK(cudaGraphLaunch(execs[i], st));
      CK(cudaEventRecord(e1, st));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      us[i].push_back(ms * 1e3 / sets);
    }
  }
  std::vector<Stats> out;
  for (size_t i = 0; i < calls.size(); ++i) {
    out.push_back(stats(us[i]));
    CK(cudaGraphExecDestroy(execs[i]));
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return out;
}

// Set 0's C after one call (C poisoned with NaN first), for a comparison with another call's.
inline std::vector<half> run_and_copy(const Pool& p, cudaStream_t st, const std::function<void()>& call) {
  CK(cudaMemsetAsync(p.c(0), 0xff, p.c_bytes, st));
  call();
  std::vector<half> c(p.c_bytes / 2);
  CK(cudaMemcpyAsync(c.data(), p.c(0), p.c_bytes, cudaMemcpyDeviceToHost, st));
  CK(cudaStreamSynchronize(st));
  return c;
}

// The largest |x - y| (NaN if any x is NaN: a C element not written).
inline double max_abs_diff(const std::vector<half>& x, const std::vector<half>& y) {
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = std::abs((double)__half2float(x[i]) - (double)__half2float(y[i]));
    if (d != d) return d;
    worst = std::max(worst, d);
  }
  return worst;
}

// ---- Bulk copies into shared memory, landing on one mbarrier (phase 0: one use a kernel) ----
constexpr uint32_t BULK_PIECE = 16 << 10;  // bytes a bulk copy

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals));
}

__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Initialises the barrier for one arrival (the calling thread's) that expects `bytes`.
__device__ __forceinline__ void mbarrier_expect(uint32_t bar, uint32_t bytes) {
  mbarrier_init(bar, 1);
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the copies
  mbarrier_arrive_expect_tx(bar, bytes);
}

__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  for (uint32_t off = 0; off < bytes; off += BULK_PIECE) {
    const uint32_t piece = bytes - off < BULK_PIECE ? bytes - off : BULK_PIECE;
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     dst + off),
                 "l"(static_cast<const char*>(src) + off), "r"(piece), "r"(bar)
                 : "memory");
  }
}

// Returns once the barrier's phase of the given parity has completed.
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done)
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
}

__device__ __forceinline__ void mbarrier_wait_phase0(uint32_t bar) { mbarrier_wait(bar, 0); }

// ---- Tensor copies with the 128-byte swizzle ----
constexpr int BOX_K = 64;  // halfs: one 128-byte swizzle row

__device__ __forceinline__ void tensor_box(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The driver's cuTensorMapEncodeTiled, through the runtime (no -lcuda).
inline EncodeTiled tensor_map_encoder() {
  EncodeTiled encode = nullptr;
  cudaDriverEntryPointQueryResult found;
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&encode), 12000,
                                      cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess) {
    fprintf(stderr, "cuTensorMapEncodeTiled not found\n");
    exit(1);
  }
  return encode;
}

// A tensor map of a rows x k row-major fp16 matrix in boxes of box_rows rows x 64 halfs, swizzled.
inline CUtensorMap tile_map(EncodeTiled encode, const half* base, int rows, int k, int box_rows = 32) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {(cuuint64_t)k, (cuuint64_t)rows}, strides[1] = {(cuuint64_t)k * 2};
  const cuuint32_t box[2] = {BOX_K, (cuuint32_t)box_rows}, elem[2] = {1, 1};
  if (encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<half*>(base), dims, strides, box, elem,
             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
    fprintf(stderr, "cuTensorMapEncodeTiled failed\n");
    exit(1);
  }
  return map;
}
