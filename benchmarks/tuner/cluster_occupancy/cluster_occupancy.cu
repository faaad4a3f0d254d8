// How many thread-block clusters of each size fit on this GPU at once (a cluster's CTAs always
// share one GPC). Why: our split-K families put the splits of a tile in one cluster; if fewer
// clusters fit at once than a launch has, the launch runs in two waves.
//
//   nvcc -O2 -std=c++17 -arch=sm_90a -o cluster_occupancy cluster_occupancy.cu && ./cluster_occupancy
//
// Prints, per (threads, dynamic shared memory) of our kernels, cudaOccupancyMaxActiveClusters for
// cluster sizes 1..16, then launches as many clusters of 2, 8 and 16 as it says fit and counts
// the distinct SMs they landed on (all resident at once: the count is real, not only predicted).
#include <cstdio>
#include <set>

#include <cuda_runtime.h>

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t e = (x);                                                              \
    if (e != cudaSuccess) {                                                           \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

__device__ unsigned smid() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// Each CTA writes its SM and its cluster's linear index; spins a little so that every CTA of the
// launch is resident at once (one CTA per SM by its shared memory).
__global__ void where_am_i(unsigned* sm_of_cta, unsigned* cluster_of_cta) {
  extern __shared__ unsigned char pad[];
  const unsigned cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (threadIdx.x == 0) {
    pad[0] = 1;
    unsigned cid;
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
    sm_of_cta[cta] = smid();
    cluster_of_cta[cta] = cid;
  }
  const long long start = clock64();
  while (clock64() - start < 200000) {
  }
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, %d SMs, %zu KB shared memory per block (opt-in)\n", prop.name, prop.multiProcessorCount,
              prop.sharedMemPerBlockOptin >> 10);
  CHECK(cudaFuncSetAttribute(where_am_i, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CHECK(cudaFuncSetAttribute(where_am_i, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 << 10));
  std::printf("threads smem_kb | max active clusters of size 1..16 (CTAs resident = size x clusters)\n");
  for (int threads : {256, 384}) {
    for (int smem_kb : {64, 100, 120, 200, 227}) {
      std::printf("%7d %7d |", threads, smem_kb);
      for (int size = 1; size <= 16; ++size) {
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute attr;
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = 1;
        attr.val.clusterDim.y = 1;
        attr.val.clusterDim.z = size;
        cfg.gridDim = dim3(1, 1, size * 64);
        cfg.blockDim = dim3(threads);
        cfg.dynamicSmemBytes = smem_kb << 10;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        int clusters = -1;
        cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, where_am_i, &cfg);
        if (e != cudaSuccess) {
          (void)cudaGetLastError();
          std::printf("  err");
        } else {
          std::printf(" %4d", clusters);
        }
      }
      std::printf("\n");
    }
  }
  // Launch as many clusters as fit, each CTA on its own SM (its shared memory), and count the SMs.
  for (int size : {2, 8, 16}) {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = size;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = 200 << 10;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    cfg.gridDim = dim3(size);
    int clusters = 0;
    CHECK(cudaOccupancyMaxActiveClusters(&clusters, where_am_i, &cfg));
    const int ctas = clusters * size;
    cfg.gridDim = dim3(ctas);
    unsigned *sm, *cl;
    CHECK(cudaMallocManaged(&sm, ctas * sizeof(unsigned)));
    CHECK(cudaMallocManaged(&cl, ctas * sizeof(unsigned)));
    CHECK(cudaLaunchKernelEx(&cfg, where_am_i, sm, cl));
    CHECK(cudaDeviceSynchronize());
    std::set<unsigned> used(sm, sm + ctas);
    std::printf("clusters of %2d: %d fit at once (%d CTAs ran on %zu distinct SMs)\n", size, clusters, ctas, used.size());
    CHECK(cudaFree(sm));
    CHECK(cudaFree(cl));
  }
  return 0;
}
