// What our own families share (rendered into each preamble after the status enum, kMaxDevices and
// kMaxSplits): split-K over the CTAs of one cluster, reduced over distributed shared memory
// (sm_90); the runtime-argument checks of the C ABI; the once-per-device opt-ins; the launch.
// Each CTA parks its fp32 partial in its own shared memory, and after a cluster barrier a peer's
// copy of an address is read with mapa + ld.shared::cluster.
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ uint32_t cluster_map(uint32_t smem_addr, uint32_t rank) {
  uint32_t out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(out) : "r"(smem_addr), "r"(rank));
  return out;
}
__device__ __forceinline__ float4 cluster_load(uint32_t cluster_addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(cluster_addr) : "memory");
  return v;
}
// Every CTA of the cluster arrives; release/acquire make shared stores before it visible to peers.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// The sum over ranks base, base + stride, ... (splits of them) of the float4 each parked at shared
// address `mine`, in rank order (the same bits whichever CTA finishes first). Every peer's load
// is issued before the first add: one DSMEM round trip instead of `splits` in a row.
template <int kMaxRanks>
__device__ __forceinline__ float4 cluster_sum(uint32_t mine, int splits, int base = 0, int stride = 1) {
  float4 peer[kMaxRanks];
#pragma unroll
  for (int r = 0; r < kMaxRanks; ++r)
    if (r < splits) peer[r] = cluster_load(cluster_map(mine, (uint32_t)(base + r * stride)));
  float4 sum = peer[0];
#pragma unroll
  for (int r = 1; r < kMaxRanks; ++r)
    if (r < splits) sum = make_float4(sum.x + peer[r].x, sum.y + peer[r].y, sum.z + peer[r].z, sum.w + peer[r].w);
  return sum;
}

// The K-tile range [begin, begin + count) of one split: balanced, none empty (the host keeps
// splits <= k_tiles). 32-bit unsigned: k_tiles * splits < 2^32 for any int K (k-tiles are at
// least 16 deep, splits at most 16), and a 64-bit division sits on the critical path before the
// first load of a 2-3 us call.
__device__ __forceinline__ void split_k_range(int split, int k_tiles, int splits, int& begin, int& count) {
  const unsigned kt = (unsigned)k_tiles, n = (unsigned)splits;
  begin = (int)((unsigned)split * kt / n);
  count = (int)((unsigned)(split + 1) * kt / n) - begin;
}

// The C ABI's runtime arguments: raster and swizzle are accepted and ignored (these kernels serve
// one wave), no stream-K, split-K over at most kMaxSplits CTAs (one cluster), N and K multiples
// of 8 (16-byte rows), the M tiles along grid y.
inline int check_split_k_args(int M, int N, int K, int raster, int swizzle, int decomp, int splits, int tile_m) {
  if (M < 1 || N < 1 || K < 1) return kInvalidArgument;
  if (raster < 0 || raster > 2) return kInvalidArgument;
  if (swizzle != 1 && swizzle != 2 && swizzle != 4 && swizzle != 8) return kInvalidArgument;
  if (decomp < 0 || decomp > 3 || splits < 1) return kInvalidArgument;
  if (decomp == 3) return kCannotImplement;
  if (decomp != 2 && splits != 1) return kInvalidArgument;
  if (splits > kMaxSplits) return kCannotImplement;
  if (N % 8 || K % 8) return kCannotImplement;
  if ((M + tile_m - 1) / tile_m > 65535) return kCannotImplement;
  return kOk;
}
// Splits are clamped to the K tiles: no split is empty.
inline int effective_splits(int K, int tile_k, int decomp, int splits) {
  const int k_tiles = (K + tile_k - 1) / tile_k;
  return decomp == 2 ? (splits < k_tiles ? splits : k_tiles) : 1;
}
// Opt `kernel` in to `smem_bytes` of dynamic shared memory (beyond the default 48 KB) and to
// 16-CTA clusters, once per device (`done`: one bit a device, the caller's own static).
template <class Kernel>
int opt_in_once(std::atomic<unsigned long long>& done, Kernel kernel, int smem_bytes) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return kCudaError;
  const unsigned long long bit = 1ull << device;
  if (done.load(std::memory_order_acquire) & bit) return kOk;
  if ((smem_bytes > (47 << 10) &&
       cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes) != cudaSuccess) ||
      cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
    (void)cudaGetLastError();
    return kCudaError;
  }
  done.fetch_or(bit, std::memory_order_acq_rel);
  return kOk;
}
// Launch with `cluster_x` neighbouring tiles along x and `cluster_z` splits of a tile (grid z)
// as one cluster; no cluster for one CTA.
template <class Kernel, class... Args>
int launch_clustered(Kernel kernel, dim3 grid, int cluster_x, int cluster_z, int threads, int smem_bytes,
                     cudaStream_t stream, Args... args) {
  cudaLaunchAttribute cluster;
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = cluster_x;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = cluster_z;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  config.attrs = &cluster;
  const bool clustered = cluster_z > 1 || cluster_x > 1;
  config.numAttrs = clustered ? 1 : 0;
  if (cudaLaunchKernelEx(&config, kernel, args...) == cudaSuccess) return kOk;
  // A cluster this large may not fit this CTA's resources on one GPC: a launch error, not sticky.
  (void)cudaGetLastError();
  return clustered ? kCannotImplement : kCudaError;
}
template <class Kernel, class... Args>
int launch_split_k(Kernel kernel, dim3 grid, int threads, int smem_bytes, cudaStream_t stream, Args... args) {
  return launch_clustered(kernel, grid, 1, int(grid.z), threads, smem_bytes, stream, args...);
}
