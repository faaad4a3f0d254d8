"""The C ABI every kernel family of the library exports, in one place (stdlib only).

Each kernel ``<name>`` exports ``l2x_gemm_<name>`` (run), ``l2x_gemm_<name>_workspace`` and
``l2x_gemm_<name>_can_implement`` with the arguments documented in tuner/emit.py; each family's
emitter defines ``l2x_<name>::E`` with static ``run``, ``workspace`` and ``can_implement``, then
appends :func:`entry_points`. Status codes are shared by the C side (``STATUS_ENUM``) and the
Python side (tuner/native.py).
"""

from __future__ import annotations

ABI_VERSION = 1

STATUS_NAMES = {
    0: "ok",
    1: "cannot implement",
    2: "workspace too small",
    3: "CUDA error",
    4: "CUTLASS error",
    5: "invalid argument",
}
L2X_OK = 0
L2X_CANNOT_IMPLEMENT = 1
L2X_WORKSPACE_TOO_SMALL = 2
L2X_CUDA_ERROR = 3
L2X_CUTLASS_ERROR = 4
L2X_INVALID_ARGUMENT = 5

API_MACRO = '#define L2X_API extern "C" __attribute__((visibility("default")))\n'

STATUS_ENUM = """enum : int {
  kOk = 0, kCannotImplement = 1, kWorkspaceTooSmall = 2, kCudaError = 3, kCutlassError = 4,
  kInvalidArgument = 5
};
"""

_ENTRY_POINTS = r"""
L2X_API int l2x_gemm_{name}(const void* A, const void* B, void* C, int M, int N, int K, int raster,
    int swizzle, int decomposition, int splits, void* workspace, size_t workspace_bytes,
    cudaStream_t stream) {{
  return l2x_{name}::E::run(A, B, C, M, N, K, raster, swizzle, decomposition, splits, workspace,
                            workspace_bytes, stream);
}}
L2X_API int l2x_gemm_{name}_workspace(int M, int N, int K, int raster, int swizzle, int decomposition,
    int splits, size_t* bytes) {{
  return l2x_{name}::E::workspace(M, N, K, raster, swizzle, decomposition, splits, bytes);
}}
L2X_API int l2x_gemm_{name}_can_implement(int M, int N, int K, int raster, int swizzle,
    int decomposition, int splits) {{
  return l2x_{name}::E::can_implement(M, N, K, raster, swizzle, decomposition, splits);
}}
"""


def entry_points(name: str) -> str:
    """The three exported functions of kernel ``name`` (after its ``namespace l2x_<name>``)."""
    return _ENTRY_POINTS.format(name=name)
