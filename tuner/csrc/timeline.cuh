// Step stamps of our own families' kernels (rendered into each preamble after the API macro, at
// global scope). A timeline build (`python -m cuda_l2_explorer.tuner.build --timeline`:
// L2X_TIMELINE, the kernels of one TU): one thread of each CTA stamps its SM clock at the kernel's
// steps -- start, copies issued, first and last copy landed, the MMAs done, the K groups met (or C
// staged), C stored -- and the global timer at its start, so one CTA's time is read directly
// (sampled stalls only say where warps wait; benchmarks/tuner/tiny_floor/timeline.py). Off (the
// default) the stamps compile to nothing.
#ifndef L2X_TIMELINE_BLOCK
#define L2X_TIMELINE_BLOCK
enum TimelineStamp { kStampStart, kStampIssued, kStampFirstLanded, kStampLastLanded, kStampMmaDone, kStampMet,
                     kStampStored, kStampGlobalStart, kStamps };
#ifdef L2X_TIMELINE
constexpr int kTimelineCtas = 1 << 14;
__device__ long long timeline_stamps[kTimelineCtas][kStamps];
__device__ __forceinline__ void timeline_stamp(int slot) {  // the start also takes the global timer
  const unsigned cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (cta >= kTimelineCtas) return;
  timeline_stamps[cta][slot] = clock64();
  if (slot == kStampStart) {
    long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    timeline_stamps[cta][kStampGlobalStart] = ns;
  }
}
#define L2X_STAMP_BY(thread, slot)                   \
  do {                                               \
    if (threadIdx.x == (thread)) timeline_stamp(slot); \
  } while (0)
// Copies the first `ctas` CTAs' stamps (kStamps each: clock64, the last the global timer in ns) of
// the kernels run since the last read to host memory `dst`, then zeroes them all (a step a kernel
// did not reach reads 0); the CUDA status.
L2X_API int l2x_timeline(long long* dst, int ctas) {
  if (ctas < 0 || ctas > kTimelineCtas) return cudaErrorInvalidValue;
  if (cudaError_t e = cudaMemcpyFromSymbol(dst, timeline_stamps, sizeof(long long) * kStamps * ctas)) return e;
  static const long long zeros[kTimelineCtas][kStamps] = {};
  return cudaMemcpyToSymbol(timeline_stamps, zeros, sizeof(zeros));
}
#else
#define L2X_STAMP_BY(thread, slot) ((void)0)
#endif
#define L2X_STAMP(slot) L2X_STAMP_BY(0, slot)  // thread 0 of the CTA
#endif  // L2X_TIMELINE_BLOCK
