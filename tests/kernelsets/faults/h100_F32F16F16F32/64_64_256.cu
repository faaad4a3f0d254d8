// cuda-l2-explorer test kernel, planted fault: a stray write 64 Mi elements past the end of C.
// A naive HGEMM (one thread per output, fp32 accumulation) in the SPEC section 4 form; C itself
// comes out right. compute-sanitizer's memcheck reports the stray write (tests/gpu/test_faults.py).
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_fp16.h>

__global__ void naive_gemm_oob(const __half* a, const __half* b, __half* c, int m, int n, int k) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float acc = 0.f;
        for (int i = 0; i < k; ++i) {
            acc += __half2float(a[row * k + i]) * __half2float(b[i * n + col]);
        }
        c[row * n + col] = __float2half(acc);
    }
    if (row == 0 && col == 0) {
        c[static_cast<size_t>(m) * n + (size_t{1} << 26)] = __float2half(0.f);  // the planted fault
    }
}

void cuda_l2_h100_fp32(torch::Tensor a, torch::Tensor b, torch::Tensor b_col_major, torch::Tensor c) {
    const int m = a.size(0), k = a.size(1), n = b.size(1);
    dim3 block(16, 16);
    dim3 grid((n + 15) / 16, (m + 15) / 16);
    naive_gemm_oob<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const __half*>(a.data_ptr<at::Half>()),
        reinterpret_cast<const __half*>(b.data_ptr<at::Half>()),
        reinterpret_cast<__half*>(c.data_ptr<at::Half>()), m, n, k);
}
