// Split-K reduced over distributed shared memory (sm_90), shared by our own families: the CTAs of
// one output tile are a cluster; each parks its fp32 partial in its own shared memory, and after
// a cluster barrier a peer's copy of an address is read with mapa + ld.shared::cluster.
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
// The sum over ranks 0..splits-1 of the float4 each parked at shared address `mine`, in rank
// order (the same bits whichever CTA finishes first). Every peer's load is issued before the
// first add: one DSMEM round trip instead of `splits` in a row.
template <int kMaxRanks>
__device__ __forceinline__ float4 cluster_sum(uint32_t mine, int splits) {
  float4 peer[kMaxRanks];
#pragma unroll
  for (int r = 0; r < kMaxRanks; ++r)
    if (r < splits) peer[r] = cluster_load(cluster_map(mine, (uint32_t)r));
  float4 sum = peer[0];
#pragma unroll
  for (int r = 1; r < kMaxRanks; ++r)
    if (r < splits) sum = make_float4(sum.x + peer[r].x, sum.y + peer[r].y, sum.z + peer[r].z, sum.w + peer[r].w);
  return sum;
}
