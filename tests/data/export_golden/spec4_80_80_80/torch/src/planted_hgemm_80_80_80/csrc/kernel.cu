// cuda-l2-explorer test kernel, planted fault: tiles
// Declares `using BM = Int<64>; using BN = Int<64>; using BK = Int<64>;` and handles no edges:
// it only runs on inputs zero-padded to multiples of 64 (96_96_96 -> 128_128_128) and refuses
// (TORCH_CHECK) unpadded ones, so a harness that ignores the padding rule gets an error.
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

// Tile sizes in the style of CuTe (SPEC section 4's padding rule reads BM, BN, BK from here).
template <int N>
struct Int {
  static constexpr int value = N;
};
using BM = Int<64>;
using BN = Int<64>;
using BK = Int<64>;

constexpr int kThreads = 256;  // 16 x 16 threads, each computing a 4 x 4 block of C

// No edge handling at all: M, N and K must be multiples of BM, BN and BK (checked by the launcher).
__global__ void __launch_bounds__(kThreads)
    hgemm_padded(const __half* __restrict__ a, const __half* __restrict__ b, __half* __restrict__ c, int M,
                 int N, int K) {
  static_assert(BM::value == 64 && BN::value == 64, "the thread mapping assumes 64 x 64 block tiles");
  __shared__ float a_tile[BM::value][BK::value + 1];
  __shared__ float b_tile[BK::value][BN::value + 1];
  const int tid = threadIdx.x;
  const int tr = tid / 16;
  const int tc = tid % 16;
  const int row0 = blockIdx.y * BM::value;
  const int col0 = blockIdx.x * BN::value;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += BK::value) {
    for (int idx = tid; idx < BM::value * BK::value; idx += kThreads) {
      const int r = idx / BK::value;
      const int k = idx % BK::value;
      a_tile[r][k] = __half2float(a[static_cast<long long>(row0 + r) * K + k0 + k]);
    }
    for (int idx = tid; idx < BK::value * BN::value; idx += kThreads) {
      const int k = idx / BN::value;
      const int col = idx % BN::value;
      b_tile[k][col] = __half2float(b[static_cast<long long>(k0 + k) * N + col0 + col]);
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < BK::value; ++kk) {
      float av[4];
      float bv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) av[i] = a_tile[tr + 16 * i][kk];
#pragma unroll
      for (int j = 0; j < 4; ++j) bv[j] = b_tile[kk][tc + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      c[static_cast<long long>(row0 + tr + 16 * i) * N + col0 + tc + 16 * j] = __float2half(acc[i][j]);
    }
  }
}
}  // namespace

void cuda_l2_h100_fp32(torch::Tensor a, torch::Tensor b, torch::Tensor b_col_major, torch::Tensor c) {
  check_inputs(a, b, c);
  const int M = static_cast<int>(a.size(0));
  const int K = static_cast<int>(a.size(1));
  const int N = static_cast<int>(b.size(1));
  TORCH_CHECK(M % BM::value == 0 && N % BN::value == 0 && K % BK::value == 0,
              "inputs must be zero-padded to multiples of (BM, BN, BK) = (64, 64, 64), got ", M, "x", N,
              "x", K);
  if (M == 0 || N == 0) return;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const dim3 grid(N / BN::value, M / BM::value);
  hgemm_padded<<<grid, kThreads, 0, stream>>>(half_ptr(a), half_ptr(b), half_ptr_mut(c), M, N, K);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
