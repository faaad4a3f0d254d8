// Where a tiny HGEMM's device time goes (session 10 experiment, not product code).
//
//   nvcc -O3 -std=c++17 -arch=sm_90a -o tiny_floor tiny_floor.cu -lcublas && ./tiny_floor > floor.csv
//
// Per shape, graph-replayed device time (R calls captured in one CUDA graph over rotating input
// sets, as harness 3 does: enough sets to span 2x L2, at most 64; median of S replays) of:
//   cublas      cublasGemmEx, fp32 compute, default algorithm (the baseline's kernel);
//   full        a 32x32x64-tile mma.sync kernel shaped like the tiny family's data-parallel path
//               (cp.async pipeline, ldmatrix, m16n8k16; one 4-byte half2 store per fragment row);
//   staged      the same, C staged through shared memory and written as 16-byte rows;
//   no_store    the same without the store of C (a predicate no input satisfies keeps the math);
//   no_load     no global loads (the math on shared memory as found), C stored;
//   empty       the same grid and shared memory, nothing done: the launch floor.
// Each kernel is checked against cuBLAS on the first set (full and staged: max abs error).
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                       \
  do {                                                                              \
    cudaError_t e = (x);                                                            \
    if (e != cudaSuccess) {                                                         \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e));     \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

constexpr int BM = 32, BN = 32, BK = 64, STAGES = 4, THREADS = 128;  // 2x2 warps of 16x16
constexpr int LDA = BK + 8, LDB = BN + 8;                            // padded pitches (halfs)
constexpr int STAGE_A = BM * LDA, STAGE_B = BK * LDB;
constexpr int SMEM = STAGES * (STAGE_A + STAGE_B) * 2;

enum Mode { kFull, kStaged, kNoStore, kNoLoad, kEmpty };

__device__ __forceinline__ uint32_t su32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void cp16(uint32_t dst, const void* src, bool ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(ok ? 16 : 0) : "memory");
}

template <int MODE>
__global__ void __launch_bounds__(THREADS) tiny(const half* A, const half* B, half* C, int M, int N, int K) {
  extern __shared__ __align__(16) unsigned char smem[];
  if constexpr (MODE == kEmpty) return;
  half* sA = reinterpret_cast<half*>(smem);
  half* sB = sA + STAGES * STAGE_A;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wm = warp >> 1, wn = warp & 1;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int kt_count = (K + BK - 1) / BK;
  float acc[2][4] = {};
  auto load = [&](int s, int kt) {
    if constexpr (MODE == kNoLoad) return;
    const int k0 = kt * BK;
    for (int c = tid; c < BM * BK / 8; c += THREADS) {  // A: 32 rows x 8 chunks
      const int r = c / (BK / 8), col = (c % (BK / 8)) * 8;
      const bool ok = m0 + r < M && k0 + col < K;
      cp16(su32(sA + s * STAGE_A + r * LDA + col), ok ? A + (size_t)(m0 + r) * K + k0 + col : A, ok);
    }
    for (int c = tid; c < BK * BN / 8; c += THREADS) {  // B: 64 rows x 4 chunks
      const int r = c / (BN / 8), col = (c % (BN / 8)) * 8;
      const bool ok = k0 + r < K && n0 + col < N;
      cp16(su32(sB + s * STAGE_B + r * LDB + col), ok ? B + (size_t)(k0 + r) * N + n0 + col : B, ok);
    }
  };
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < kt_count) load(s, s);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  }
  for (int i = 0; i < kt_count; ++i) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
    __syncthreads();
    if (i + STAGES - 1 < kt_count) load((i + STAGES - 1) % STAGES, i + STAGES - 1);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    const half* a_s = sA + (i % STAGES) * STAGE_A;
    const half* b_s = sB + (i % STAGES) * STAGE_B;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t a[4], b[4];
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                   : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                   : "r"(su32(a_s + (wm * 16 + (lane & 15)) * LDA + kk + (lane >> 4) * 8)));
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                   : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
                   : "r"(su32(b_s + (kk + (lane & 15)) * LDB + wn * 16 + (lane >> 4) * 8)));
#pragma unroll
      for (int j = 0; j < 2; ++j)
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[2 * j]), "r"(b[2 * j + 1]));
    }
  }
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
  const int g = lane >> 2, t = lane & 3;
  if constexpr (MODE == kNoStore) {
    if (acc[0][0] == 1234.5f && acc[1][3] == -77.f) C[tid] = __float2half(acc[0][1] + acc[1][2]);
    return;
  }
  if constexpr (MODE == kStaged) {
    __syncthreads();  // the pipeline's shared memory is free
    half* sC = reinterpret_cast<half*>(smem);  // 32 x (32 + 8) halfs
    constexpr int LDC = BN + 8;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int r = wm * 16 + g, c = wn * 16 + j * 8 + 2 * t;
      *reinterpret_cast<half2*>(sC + r * LDC + c) = __floats2half2_rn(acc[j][0], acc[j][1]);
      *reinterpret_cast<half2*>(sC + (r + 8) * LDC + c) = __floats2half2_rn(acc[j][2], acc[j][3]);
    }
    __syncthreads();
    const int r = tid / (BN / 8), c = (tid % (BN / 8)) * 8;  // 128 threads x 16 bytes = 32 x 32
    if (m0 + r < M && n0 + c < N)
      *reinterpret_cast<uint4*>(C + (size_t)(m0 + r) * N + n0 + c) = *reinterpret_cast<const uint4*>(sC + r * LDC + c);
    return;
  }
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const int r = m0 + wm * 16 + g, c = n0 + wn * 16 + j * 8 + 2 * t;
    if (c >= N) continue;
    if (r < M) *reinterpret_cast<half2*>(C + (size_t)r * N + c) = __floats2half2_rn(acc[j][0], acc[j][1]);
    if (r + 8 < M) *reinterpret_cast<half2*>(C + (size_t)(r + 8) * N + c) = __floats2half2_rn(acc[j][2], acc[j][3]);
  }
}

struct Sets {
  int m, n, k, count;
  std::vector<half*> a, b, c;
};

template <class F>
double graph_us(const Sets& s, cudaStream_t st, F call, int reps = 50, int samples = 15) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int r = 0; r < reps; ++r) call(r % s.count);
  CK(cudaStreamEndCapture(st, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int w = 0; w < 3; ++w) CK(cudaGraphLaunch(ge, st));
  std::vector<float> t;
  for (int i = 0; i < samples; ++i) {
    CK(cudaEventRecord(e0, st));
    CK(cudaGraphLaunch(ge, st));
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1e3f / reps);
  }
  std::sort(t.begin(), t.end());
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  return t[t.size() / 2];
}

__global__ void fill(half* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    p[i] = __float2half(((x >> 8) & 0xffff) / 32768.f - 1.f);
  }
}

int main() {
  const int shapes[][3] = {{64, 64, 64},    {1024, 256, 64}, {512, 512, 64},  {128, 2048, 64},
                           {256, 1024, 64}, {64, 64, 512},   {256, 256, 256}, {2048, 64, 64}};
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetStream(h, st);
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  CK(cudaFuncSetAttribute(tiny<kFull>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  printf("m,n,k,sets,impl,us,max_err\n");
  for (auto& sh : shapes) {
    Sets s{sh[0], sh[1], sh[2], 0, {}, {}, {}};
    const size_t set_bytes = 2ull * ((size_t)s.m * s.k + (size_t)s.k * s.n + (size_t)s.m * s.n);
    s.count = (int)std::min<size_t>(64, (2ull * l2 + set_bytes - 1) / set_bytes);
    for (int i = 0; i < s.count; ++i) {
      half *a, *b, *c;
      CK(cudaMalloc(&a, 2ull * s.m * s.k));
      CK(cudaMalloc(&b, 2ull * s.k * s.n));
      CK(cudaMalloc(&c, 2ull * s.m * s.n));
      fill<<<256, 256, 0, st>>>(a, (size_t)s.m * s.k, 17 + i);
      fill<<<256, 256, 0, st>>>(b, (size_t)s.k * s.n, 91 + i);
      s.a.push_back(a);
      s.b.push_back(b);
      s.c.push_back(c);
    }
    half* ref;
    CK(cudaMalloc(&ref, 2ull * s.m * s.n));
    const float one = 1.f, zero = 0.f;
    auto cublas = [&](int i, half* out) {  // row-major C = A B as column-major C^T = B^T A^T
      cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &one, s.b[i], CUDA_R_16F, s.n, s.a[i], CUDA_R_16F,
                   s.k, &zero, out, CUDA_R_16F, s.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    cublas(0, ref);
    const dim3 grid((s.n + BN - 1) / BN, (s.m + BM - 1) / BM);
    auto run = [&](auto kernel) {
      return [&, kernel](int i) { kernel<<<grid, THREADS, SMEM, st>>>(s.a[i], s.b[i], s.c[i], s.m, s.n, s.k); };
    };
    struct Impl {
      const char* name;
      void (*kernel)(const half*, const half*, half*, int, int, int);
    } impls[] = {{"full", tiny<kFull>},       {"staged", tiny<kStaged>}, {"no_store", tiny<kNoStore>},
                 {"no_load", tiny<kNoLoad>}, {"empty", tiny<kEmpty>}};
    for (auto& im : impls) CK(cudaFuncSetAttribute(im.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    // Interleave implementations over rounds (three rounds; the median of each kept, then the min).
    std::vector<double> best(6, 1e30);
    std::vector<double> err(6, -1);
    for (int round = 0; round < 3; ++round) {
      best[0] = std::min(best[0], graph_us(s, st, [&](int i) { cublas(i, s.c[i]); }));
      for (int j = 0; j < 5; ++j) best[j + 1] = std::min(best[j + 1], graph_us(s, st, run(impls[j].kernel)));
    }
    for (int j = 0; j < 2; ++j) {  // correctness of full and staged on set 0
      CK(cudaMemsetAsync(s.c[0], 0xff, 2ull * s.m * s.n, st));
      run(impls[j].kernel)(0);
      std::vector<half> x((size_t)s.m * s.n), y((size_t)s.m * s.n);
      CK(cudaMemcpyAsync(x.data(), s.c[0], x.size() * 2, cudaMemcpyDeviceToHost, st));
      CK(cudaMemcpyAsync(y.data(), ref, y.size() * 2, cudaMemcpyDeviceToHost, st));
      CK(cudaStreamSynchronize(st));
      double e = 0;
      for (size_t q = 0; q < x.size(); ++q) {
        const double d = std::fabs((double)__half2float(x[q]) - (double)__half2float(y[q]));
        e = std::isnan(d) ? INFINITY : std::max(e, d);
      }
      err[j + 1] = e;
    }
    const char* names[] = {"cublas", "full", "staged", "no_store", "no_load", "empty"};
    for (int j = 0; j < 6; ++j) printf("%d,%d,%d,%d,%s,%.3f,%.4g\n", s.m, s.n, s.k, s.count, names[j], best[j], err[j]);
    fflush(stdout);
    for (int i = 0; i < s.count; ++i) {
      cudaFree(s.a[i]);
      cudaFree(s.b[i]);
      cudaFree(s.c[i]);
    }
    cudaFree(ref);
  }
  return 0;
}
