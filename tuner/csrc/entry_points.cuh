
L2X_API int l2x_gemm_${name}(const void* A, const void* B, void* C, int M, int N, int K, int raster,
    int swizzle, int decomposition, int splits, void* workspace, size_t workspace_bytes,
    cudaStream_t stream) {
  return l2x_${name}::E::run(A, B, C, M, N, K, raster, swizzle, decomposition, splits, workspace,
                            workspace_bytes, stream);
}
L2X_API int l2x_gemm_${name}_workspace(int M, int N, int K, int raster, int swizzle, int decomposition,
    int splits, size_t* bytes) {
  return l2x_${name}::E::workspace(M, N, K, raster, swizzle, decomposition, splits, bytes);
}
L2X_API int l2x_gemm_${name}_can_implement(int M, int N, int K, int raster, int swizzle,
    int decomposition, int splits) {
  return l2x_${name}::E::can_implement(M, N, K, raster, swizzle, decomposition, splits);
}
