// cuda-l2-explorer test kernel, planted fault: legacy_stream
// Correct, but launches on the legacy default stream (`<<<grid, block>>>`, no stream argument),
// as the reference system's kernels do: while the harness captures a CUDA graph on its own
// (non-blocking) stream, the launch runs at once outside the graph and the replay times nothing.
// A shared-memory-tiled HGEMM with fp32 accumulation; every edge is guarded.
//
// SPEC section 4 form: a (MxK) and b (KxN) row-major fp16, c (MxN) row-major fp16; M, N, K come
// from the tensors at run time. Written for the harness's tests, not for speed.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>

namespace {

void check_inputs(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& c) {
  TORCH_CHECK(a.is_cuda() && b.is_cuda() && c.is_cuda(), "a, b and c must be CUDA tensors");
  TORCH_CHECK(a.scalar_type() == torch::kHalf && b.scalar_type() == torch::kHalf &&
                  c.scalar_type() == torch::kHalf,
              "a, b and c must be float16");
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && c.dim() == 2, "a, b and c must be 2-D");
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && c.is_contiguous(),
              "a, b and c must be row-major contiguous");
  TORCH_CHECK(b.size(0) == a.size(1) && c.size(0) == a.size(0) && c.size(1) == b.size(1),
              "shapes do not match: a is MxK, b KxN, c MxN");
}

const __half* half_ptr(const torch::Tensor& t) {
  return reinterpret_cast<const __half*>(t.data_ptr<at::Half>());
}

__half* half_ptr_mut(torch::Tensor& t) { return reinterpret_cast<__half*>(t.data_ptr<at::Half>()); }

constexpr int kTile = 32;  // a block computes a kTile x kTile tile of C, stepping K by kTile
constexpr int kRowsPerThread = 4;
constexpr int kThreadsX = kTile;
constexpr int kThreadsY = kTile / kRowsPerThread;  // 32 x 8 = 256 threads

template <typename OutT>
__global__ void __launch_bounds__(kThreadsX * kThreadsY)
    hgemm_tiled(const __half* __restrict__ a, const __half* __restrict__ b, OutT* __restrict__ c, int M,
                int N, int K) {
  __shared__ float a_tile[kTile][kTile + 1];
  __shared__ float b_tile[kTile][kTile + 1];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row0 = blockIdx.y * kTile;
  const int col0 = blockIdx.x * kTile;
  float acc[kRowsPerThread];
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) acc[i] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += kTile) {
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int r = ty + i * kThreadsY;
      const int ga = row0 + r;
      const int ka = k0 + tx;
      a_tile[r][tx] = (ga < M && ka < K) ? __half2float(a[static_cast<long long>(ga) * K + ka]) : 0.0f;
      const int kb = k0 + r;
      const int gb = col0 + tx;
      b_tile[r][tx] = (kb < K && gb < N) ? __half2float(b[static_cast<long long>(kb) * N + gb]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) {
      const float bv = b_tile[kk][tx];
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) {
        acc[i] += a_tile[ty + i * kThreadsY][kk] * bv;
      }
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int r = row0 + ty + i * kThreadsY;
    const int col = col0 + tx;
    if (r < M && col < N) c[static_cast<long long>(r) * N + col] = static_cast<OutT>(acc[i]);
  }
}

template <typename OutT>
void launch_hgemm(const __half* a, const __half* b, OutT* c, int M, int N, int K, cudaStream_t stream) {
  if (M == 0 || N == 0) return;
  const dim3 block(kThreadsX, kThreadsY);
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  (void)stream;  // the planted fault: the caller's stream is ignored
  hgemm_tiled<OutT><<<grid, block>>>(a, b, c, M, N, K);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
}  // namespace

void cuda_l2_h100_fp32(torch::Tensor a, torch::Tensor b, torch::Tensor b_col_major, torch::Tensor c) {
  check_inputs(a, b, c);
  const int M = static_cast<int>(a.size(0));
  const int K = static_cast<int>(a.size(1));
  const int N = static_cast<int>(b.size(1));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  launch_hgemm(half_ptr(a), half_ptr(b), half_ptr_mut(c), M, N, K, stream);
}
