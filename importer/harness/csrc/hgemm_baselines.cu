// hgemm_baselines.cu -- cuBLAS / cuBLASLt HGEMM baselines behind a small C ABI.
//
// Part of cuda-l2-explorer (SPEC section 6). Built as a plain shared library (no torch headers),
// loaded with ctypes by importer/native.py. Written for this project.
//
// ---------------------------------------------------------------------------------------------
// Semantics (SPEC section 4): every matrix is fp16.
//   A    : M x K, row-major                       (lda = K)
//   B    : K x N, row-major                       (ldb = N)          used by layout "nn"
//   Bcol : the same K x N matrix, column-major    (ld  = K)          used by layout "tn"
//   C    : M x N, row-major                       (ldc = N), written, never read (beta = 0)
// cuBLAS is column-major, so we compute C^T = B^T * A^T:
//   a row-major X (r x c, ld c) read column-major is X^T (c x r, ld c), hence
//   nn: gemm(N, N, m=N, n=M, k=K, B,    ld=N, A, ld=K, C, ld=N)
//   tn: gemm(T, N, m=N, n=M, k=K, Bcol, ld=K, A, ld=K, C, ld=N)   (Bcol column-major = (B^T)^T)
// Accumulation: CUBLAS_COMPUTE_32F with float alpha/beta (default), or CUBLAS_COMPUTE_16F with
// half alpha/beta when the context is created with HB_COMPUTE_16F.
//
// C ABI (every function returns an int status unless stated: 0 = HB_OK, see HB_ERR_*; on error
// hb_last_error() gives the message of the failing call on this thread):
//   int  hb_abi_version(void)                                   -> HB_ABI_VERSION (no status)
//   const char* hb_last_error(void)                             -> thread-local text, never NULL
//   int  hb_versions(long long out[8])
//        out = {cuBLAS version (major*10000+minor*100+patch, cublasGetProperty),
//               cuBLASLt version (cublasLtGetVersion), cudart version cuBLASLt was built with
//               (cublasLtGetCudartVersion), CUDA runtime version of this library
//               (cudaRuntimeGetVersion; static cudart), CUDA driver version (cudaDriverGetVersion),
//               CUBLAS_VERSION of the headers compiled against, nvcc version (major*1000+minor*10),
//               HB_ABI_VERSION}
//   int  hb_create(size_t workspace_bytes, int flags, void** ctx)
//        On the current CUDA device: a cuBLAS handle, a cuBLASLt handle and two workspaces of
//        workspace_bytes each (0 -> 32 MiB), allocated once: one given to cuBLAS through
//        cublasSetWorkspace, one to every cuBLASLt call (the same budget for all baselines).
//        flags: HB_COMPUTE_16F selects CUBLAS_COMPUTE_16F.
//   int  hb_destroy(void* ctx)                      (synchronises the device before freeing)
//   int  hb_context_info(void* ctx, long long out[4])
//        out = {workspace bytes, compute (32 or 16), device ordinal, number of cuBLASLt plans}
//   int  hb_cublas_gemm(void* ctx, int layout, int M, int N, int K,
//                       const void* A, const void* B, void* C, void* stream)
//        cublasGemmEx with CUBLAS_GEMM_DEFAULT_TENSOR_OP. layout: HB_NN (B = row-major B) or
//        HB_TN (B = Bcol).
//   int  hb_lt_prepare(void* ctx, int layout, int M, int N, int K, int max_algos,
//                      void** plan, int* n_algos)
//        Creates (once per (M,N,K,layout); cached in ctx, later calls return the same plan) the
//        matmul descriptor, the matrix layouts and up to max_algos (1..100) results of
//        cublasLtMatmulAlgoGetHeuristic with the context's workspace as the budget. Candidate 0
//        is the heuristic's top-1 ("cuBLASLt-heuristic"). A later call with a larger max_algos
//        re-queries the heuristic for that plan (the plan pointer stays valid).
//   int  hb_lt_algo_info(void* plan, int i, long long out[8])
//        out = {algo id, tile id, stages id, splitK number, reduction scheme, CTA swizzling,
//               workspace bytes needed, waves count * 1000}; gathered at prepare time.
//   int  hb_lt_matmul(void* ctx, void* plan, int i, const void* A, const void* B, void* C,
//                     void* stream)
//        cublasLtMatmul with candidate i. Nothing is allocated or queried here. A, B, C must be
//        256-byte aligned (cuBLASLt's default alignment preference, which the heuristic assumed).
//   int  hb_gate(int* counter, int value, long long timeout_ns, void* stream)
//        Queues a one-thread kernel that holds stream until counter[0] >= value or timeout_ns
//        have passed on the GPU's global timer; on a timeout it sets counter[1] to 1. counter is
//        pinned host memory (cudaHostAlloc): the host opens the gate by writing counter[0] once it
//        has queued what must run behind it, so a call behind the gate is timed without the
//        host's issue time, and a host that never writes (a launcher that synchronises) costs
//        timeout_ns, never a hang.
// A context is bound to the device that was current at hb_create, and is not thread-safe.
// Pointers are device pointers; stream is a cudaStream_t (0 = legacy default stream).
// ---------------------------------------------------------------------------------------------

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <map>
#include <new>
#include <tuple>
#include <vector>

#define HB_API extern "C" __attribute__((visibility("default")))

enum {
  HB_ABI_VERSION = 2,
  HB_OK = 0,
  HB_ERR_CUDA = 1,
  HB_ERR_CUBLAS = 2,
  HB_ERR_INVALID = 3,
  HB_ERR_NO_ALGO = 4,
  HB_ERR_ALLOC = 5,
};
enum { HB_NN = 0, HB_TN = 1 };
enum { HB_COMPUTE_16F = 1 };

static const size_t kDefaultWorkspace = size_t(32) << 20;
static const int kMaxAlgos = 100;

static thread_local char g_err[512] = "";

static int set_err(int code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_err, sizeof(g_err), fmt, ap);
  va_end(ap);
  return code;
}

#define HB_CUDA(call)                                                                         \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess)                                                                    \
      return set_err(HB_ERR_CUDA, "%s failed: %s (%s)", #call, cudaGetErrorString(e_),        \
                     cudaGetErrorName(e_));                                                   \
  } while (0)

#define HB_CUBLAS(call)                                                                       \
  do {                                                                                        \
    cublasStatus_t s_ = (call);                                                               \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                          \
      return set_err(HB_ERR_CUBLAS, "%s failed: %s (%s)", #call, cublasGetStatusString(s_),   \
                     cublasGetStatusName(s_));                                                \
  } while (0)

struct AlgoInfo {
  long long v[8];
};

struct Plan {
  int M, N, K, layout;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t lay_first = nullptr;   // B or Bcol (cuBLAS "A" operand)
  cublasLtMatrixLayout_t lay_second = nullptr;  // A (cuBLAS "B" operand)
  cublasLtMatrixLayout_t lay_c = nullptr;       // C and D
  int requested = 0;                            // max_algos of the last heuristic query
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  std::vector<AlgoInfo> info;
};

struct Ctx {
  int device = 0;
  bool compute16 = false;
  cublasHandle_t blas = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* ws_blas = nullptr;
  void* ws_lt = nullptr;
  size_t ws_bytes = 0;
  cudaStream_t blas_stream = nullptr;  // stream last set on the cuBLAS handle
  float alpha32 = 1.0f, beta32 = 0.0f;
  __half alpha16, beta16;
  std::map<std::tuple<int, int, int, int>, Plan*> plans;
};

static void free_plan(Plan* p) {
  if (!p) return;
  if (p->lay_c) cublasLtMatrixLayoutDestroy(p->lay_c);
  if (p->lay_second) cublasLtMatrixLayoutDestroy(p->lay_second);
  if (p->lay_first) cublasLtMatrixLayoutDestroy(p->lay_first);
  if (p->desc) cublasLtMatmulDescDestroy(p->desc);
  delete p;
}

static void free_ctx(Ctx* c) {
  if (!c) return;
  for (auto& kv : c->plans) free_plan(kv.second);
  c->plans.clear();
  if (c->lt) cublasLtDestroy(c->lt);
  if (c->blas) cublasDestroy(c->blas);
  if (c->ws_lt) cudaFree(c->ws_lt);
  if (c->ws_blas) cudaFree(c->ws_blas);
  delete c;
}

static int check_shape(int layout, int M, int N, int K) {
  if (layout != HB_NN && layout != HB_TN)
    return set_err(HB_ERR_INVALID, "layout must be 0 (nn) or 1 (tn), got %d", layout);
  if (M <= 0 || N <= 0 || K <= 0)
    return set_err(HB_ERR_INVALID, "M, N, K must be positive, got %d, %d, %d", M, N, K);
  return HB_OK;
}

HB_API int hb_abi_version(void) { return HB_ABI_VERSION; }

HB_API const char* hb_last_error(void) { return g_err; }

HB_API int hb_versions(long long* out) {
  if (!out) return set_err(HB_ERR_INVALID, "hb_versions: out is NULL");
  int major = 0, minor = 0, patch = 0;
  HB_CUBLAS(cublasGetProperty(MAJOR_VERSION, &major));
  HB_CUBLAS(cublasGetProperty(MINOR_VERSION, &minor));
  HB_CUBLAS(cublasGetProperty(PATCH_LEVEL, &patch));
  int rt = 0, drv = 0;
  HB_CUDA(cudaRuntimeGetVersion(&rt));
  HB_CUDA(cudaDriverGetVersion(&drv));
  out[0] = (long long)major * 10000 + minor * 100 + patch;
  out[1] = (long long)cublasLtGetVersion();
  out[2] = (long long)cublasLtGetCudartVersion();
  out[3] = rt;
  out[4] = drv;
  out[5] = CUBLAS_VERSION;
  out[6] = (long long)__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10;
  out[7] = HB_ABI_VERSION;
  return HB_OK;
}

static int create_impl(Ctx* c, size_t ws, int flags) {
  HB_CUDA(cudaGetDevice(&c->device));
  c->compute16 = (flags & HB_COMPUTE_16F) != 0;
  c->ws_bytes = ws ? ws : kDefaultWorkspace;
  c->alpha16 = __float2half(1.0f);
  c->beta16 = __float2half(0.0f);
  HB_CUDA(cudaMalloc(&c->ws_blas, c->ws_bytes));
  HB_CUDA(cudaMalloc(&c->ws_lt, c->ws_bytes));
  HB_CUBLAS(cublasCreate(&c->blas));
  HB_CUBLAS(cublasLtCreate(&c->lt));
  HB_CUBLAS(cublasSetPointerMode(c->blas, CUBLAS_POINTER_MODE_HOST));
  HB_CUBLAS(cublasSetMathMode(c->blas, CUBLAS_DEFAULT_MATH));
  // cublasSetStream resets the workspace to cuBLAS's own pool, so stream first, then workspace.
  c->blas_stream = nullptr;
  HB_CUBLAS(cublasSetStream(c->blas, c->blas_stream));
  HB_CUBLAS(cublasSetWorkspace(c->blas, c->ws_blas, c->ws_bytes));
  return HB_OK;
}

HB_API int hb_create(size_t workspace_bytes, int flags, void** ctx) {
  if (!ctx) return set_err(HB_ERR_INVALID, "hb_create: ctx is NULL");
  *ctx = nullptr;
  if (flags & ~HB_COMPUTE_16F) return set_err(HB_ERR_INVALID, "hb_create: unknown flags %d", flags);
  Ctx* c = new (std::nothrow) Ctx();
  if (!c) return set_err(HB_ERR_ALLOC, "hb_create: out of host memory");
  int st = create_impl(c, workspace_bytes, flags);
  if (st != HB_OK) {
    free_ctx(c);
    return st;
  }
  *ctx = c;
  return HB_OK;
}

HB_API int hb_destroy(void* ctx) {
  if (!ctx) return HB_OK;
  Ctx* c = static_cast<Ctx*>(ctx);
  cudaError_t e = cudaDeviceSynchronize();  // workspaces may still be in use by queued work
  free_ctx(c);
  if (e != cudaSuccess)
    return set_err(HB_ERR_CUDA, "hb_destroy: cudaDeviceSynchronize failed: %s",
                   cudaGetErrorString(e));
  return HB_OK;
}

HB_API int hb_context_info(void* ctx, long long* out) {
  if (!ctx || !out) return set_err(HB_ERR_INVALID, "hb_context_info: NULL argument");
  Ctx* c = static_cast<Ctx*>(ctx);
  out[0] = (long long)c->ws_bytes;
  out[1] = c->compute16 ? 16 : 32;
  out[2] = c->device;
  out[3] = (long long)c->plans.size();
  return HB_OK;
}

HB_API int hb_cublas_gemm(void* ctx, int layout, int M, int N, int K, const void* A,
                          const void* B, void* C, void* stream) {
  if (!ctx || !A || !B || !C) return set_err(HB_ERR_INVALID, "hb_cublas_gemm: NULL argument");
  int st = check_shape(layout, M, N, K);
  if (st != HB_OK) return st;
  Ctx* c = static_cast<Ctx*>(ctx);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (s != c->blas_stream) {
    HB_CUBLAS(cublasSetStream(c->blas, s));
    c->blas_stream = s;
    HB_CUBLAS(cublasSetWorkspace(c->blas, c->ws_blas, c->ws_bytes));
  }
  const cublasOperation_t opa = layout == HB_NN ? CUBLAS_OP_N : CUBLAS_OP_T;
  const int lda = layout == HB_NN ? N : K;
  const void* alpha = c->compute16 ? static_cast<const void*>(&c->alpha16) : &c->alpha32;
  const void* beta = c->compute16 ? static_cast<const void*>(&c->beta16) : &c->beta32;
  HB_CUBLAS(cublasGemmEx(c->blas, opa, CUBLAS_OP_N, N, M, K, alpha, B, CUDA_R_16F, lda, A,
                         CUDA_R_16F, K, beta, C, CUDA_R_16F, N,
                         c->compute16 ? CUBLAS_COMPUTE_16F : CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT_TENSOR_OP));
  return HB_OK;
}

static int plan_descriptors(Ctx* c, Plan* p) {
  const cublasComputeType_t ct = c->compute16 ? CUBLAS_COMPUTE_16F : CUBLAS_COMPUTE_32F;
  const cudaDataType_t scale = c->compute16 ? CUDA_R_16F : CUDA_R_32F;
  HB_CUBLAS(cublasLtMatmulDescCreate(&p->desc, ct, scale));
  const cublasOperation_t opa = p->layout == HB_NN ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t opb = CUBLAS_OP_N;
  HB_CUBLAS(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)));
  HB_CUBLAS(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)));
  // Layouts describe the stored (pre-transpose) matrices, column-major.
  if (p->layout == HB_NN) {
    HB_CUBLAS(cublasLtMatrixLayoutCreate(&p->lay_first, CUDA_R_16F, p->N, p->K, p->N));
  } else {
    HB_CUBLAS(cublasLtMatrixLayoutCreate(&p->lay_first, CUDA_R_16F, p->K, p->N, p->K));
  }
  HB_CUBLAS(cublasLtMatrixLayoutCreate(&p->lay_second, CUDA_R_16F, p->K, p->M, p->K));
  HB_CUBLAS(cublasLtMatrixLayoutCreate(&p->lay_c, CUDA_R_16F, p->N, p->M, p->N));
  return HB_OK;
}

static int plan_heuristics(Ctx* c, Plan* p, int max_algos) {
  cublasLtMatmulPreference_t pref = nullptr;
  cublasStatus_t s = cublasLtMatmulPreferenceCreate(&pref);
  if (s != CUBLAS_STATUS_SUCCESS)
    return set_err(HB_ERR_CUBLAS, "cublasLtMatmulPreferenceCreate failed: %s",
                   cublasGetStatusString(s));
  uint64_t ws = c->ws_bytes;
  std::vector<cublasLtMatmulHeuristicResult_t> res(max_algos);
  int found = 0;
  s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                           sizeof(ws));
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulAlgoGetHeuristic(c->lt, p->desc, p->lay_first, p->lay_second, p->lay_c,
                                       p->lay_c, pref, max_algos, res.data(), &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS)
    return set_err(HB_ERR_CUBLAS, "cublasLtMatmulAlgoGetHeuristic (M=%d N=%d K=%d layout=%d) failed: %s",
                   p->M, p->N, p->K, p->layout, cublasGetStatusString(s));
  p->algos.clear();
  p->info.clear();
  for (int i = 0; i < found; ++i) {
    const cublasLtMatmulHeuristicResult_t& r = res[i];
    if (r.state != CUBLAS_STATUS_SUCCESS || r.workspaceSize > c->ws_bytes) continue;
    AlgoInfo ai{};
    int32_t v32 = 0;
    uint32_t u32 = 0;
    size_t w = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_ID, &v32, sizeof(v32), &w) == CUBLAS_STATUS_SUCCESS) ai.v[0] = v32;
    if (cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &u32, sizeof(u32), &w) == CUBLAS_STATUS_SUCCESS) ai.v[1] = u32;
    u32 = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &u32, sizeof(u32), &w) == CUBLAS_STATUS_SUCCESS) ai.v[2] = u32;
    u32 = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &v32, sizeof(v32), &w) == CUBLAS_STATUS_SUCCESS) ai.v[3] = v32;
    if (cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &u32, sizeof(u32), &w) == CUBLAS_STATUS_SUCCESS) ai.v[4] = u32;
    u32 = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &u32, sizeof(u32), &w) == CUBLAS_STATUS_SUCCESS) ai.v[5] = u32;
    ai.v[6] = (long long)r.workspaceSize;
    ai.v[7] = (long long)(r.wavesCount * 1000.0f);
    p->algos.push_back(r);
    p->info.push_back(ai);
  }
  p->requested = max_algos;
  if (p->algos.empty())
    return set_err(HB_ERR_NO_ALGO, "cuBLASLt heuristic found no algorithm for M=%d N=%d K=%d layout=%d",
                   p->M, p->N, p->K, p->layout);
  return HB_OK;
}

HB_API int hb_lt_prepare(void* ctx, int layout, int M, int N, int K, int max_algos, void** plan,
                         int* n_algos) {
  if (!ctx || !plan || !n_algos) return set_err(HB_ERR_INVALID, "hb_lt_prepare: NULL argument");
  *plan = nullptr;
  *n_algos = 0;
  int st = check_shape(layout, M, N, K);
  if (st != HB_OK) return st;
  if (max_algos < 1 || max_algos > kMaxAlgos)
    return set_err(HB_ERR_INVALID, "max_algos must be in 1..%d, got %d", kMaxAlgos, max_algos);
  Ctx* c = static_cast<Ctx*>(ctx);
  const auto key = std::make_tuple(M, N, K, layout);
  auto it = c->plans.find(key);
  Plan* p = nullptr;
  if (it != c->plans.end()) {
    p = it->second;
    if (max_algos > p->requested) {
      st = plan_heuristics(c, p, max_algos);
      if (st != HB_OK) return st;
    }
  } else {
    p = new (std::nothrow) Plan();
    if (!p) return set_err(HB_ERR_ALLOC, "hb_lt_prepare: out of host memory");
    p->M = M; p->N = N; p->K = K; p->layout = layout;
    st = plan_descriptors(c, p);
    if (st == HB_OK) st = plan_heuristics(c, p, max_algos);
    if (st != HB_OK) {
      free_plan(p);
      return st;
    }
    c->plans[key] = p;
  }
  *plan = p;
  *n_algos = max_algos < (int)p->algos.size() ? max_algos : (int)p->algos.size();
  return HB_OK;
}

HB_API int hb_lt_algo_info(void* plan, int i, long long* out) {
  if (!plan || !out) return set_err(HB_ERR_INVALID, "hb_lt_algo_info: NULL argument");
  Plan* p = static_cast<Plan*>(plan);
  if (i < 0 || i >= (int)p->info.size())
    return set_err(HB_ERR_INVALID, "algo index %d out of range 0..%d", i, (int)p->info.size() - 1);
  for (int k = 0; k < 8; ++k) out[k] = p->info[i].v[k];
  return HB_OK;
}

HB_API int hb_lt_matmul(void* ctx, void* plan, int i, const void* A, const void* B, void* C,
                        void* stream) {
  if (!ctx || !plan || !A || !B || !C) return set_err(HB_ERR_INVALID, "hb_lt_matmul: NULL argument");
  Ctx* c = static_cast<Ctx*>(ctx);
  Plan* p = static_cast<Plan*>(plan);
  if (i < 0 || i >= (int)p->algos.size())
    return set_err(HB_ERR_INVALID, "algo index %d out of range 0..%d", i, (int)p->algos.size() - 1);
  if (((uintptr_t)A | (uintptr_t)B | (uintptr_t)C) & 255u)
    return set_err(HB_ERR_INVALID, "hb_lt_matmul: A, B and C must be 256-byte aligned");
  const void* alpha = c->compute16 ? static_cast<const void*>(&c->alpha16) : &c->alpha32;
  const void* beta = c->compute16 ? static_cast<const void*>(&c->beta16) : &c->beta32;
  HB_CUBLAS(cublasLtMatmul(c->lt, p->desc, alpha, B, p->lay_first, A, p->lay_second, beta, C,
                           p->lay_c, C, p->lay_c, &p->algos[i].algo, c->ws_lt, c->ws_bytes,
                           static_cast<cudaStream_t>(stream)));
  return HB_OK;
}

static __device__ unsigned long long global_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

__global__ void hb_gate_kernel(volatile int* counter, int value, unsigned long long timeout_ns) {
  const unsigned long long start = global_ns();
  while (counter[0] < value) {
    if (global_ns() - start >= timeout_ns) {
      counter[1] = 1;
      return;
    }
    __nanosleep(256);  // a read of host memory crosses PCIe: no need to ask more often
  }
}

HB_API int hb_gate(int* counter, int value, long long timeout_ns, void* stream) {
  if (!counter || timeout_ns <= 0) return set_err(HB_ERR_INVALID, "hb_gate: NULL counter or timeout <= 0");
  void* mapped = nullptr;
  HB_CUDA(cudaHostGetDevicePointer(&mapped, counter, 0));
  hb_gate_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<int*>(mapped), value,
                                                                  (unsigned long long)timeout_ns);
  HB_CUDA(cudaGetLastError());
  return HB_OK;
}
