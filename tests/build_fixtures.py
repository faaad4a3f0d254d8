"""What the CPU build tests share: nvcc (they run it for real) and a small fake of the torch and
pybind11 headers for kernel files to compile against on a machine without torch (the real thing,
against torch, is tests/gpu/test_kernel_build.py). The ``fake_config`` fixture (conftest.py)
builds a config on these."""

from __future__ import annotations

from pathlib import Path

import pytest
from cuda_l2_explorer.importer.harness import build as kb
from cuda_l2_explorer.importer.harness.toolchain import find_nvcc

PLANTED32 = Path(__file__).parent / "kernelsets" / "planted" / "h100_F32F16F16F32"

needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc not found")

# Just enough of torch/extension.h (and the two headers the planted kernels also include) for the
# wrapper and simple kernels to compile: types and macros, no behaviour.
FAKE_EXTENSION_H = """\
#pragma once
#include <cstdint>
#include <initializer_list>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
namespace c10 { struct Half { uint16_t x; }; enum class ScalarType { Half, Float }; }
namespace at {
using Half = c10::Half;
using ScalarType = c10::ScalarType;
struct TensorOptions { TensorOptions dtype(ScalarType) const { return *this; } };
struct Tensor {
  bool is_cuda() const { return true; }
  ScalarType scalar_type() const { return ScalarType::Half; }
  int64_t dim() const { return 2; }
  bool is_contiguous() const { return true; }
  int64_t size(int64_t) const { return 1; }
  template <typename T> T* data_ptr() const { return nullptr; }
  TensorOptions options() const { return {}; }
  Tensor& copy_(const Tensor&) { return *this; }
};
inline Tensor empty(std::initializer_list<int64_t>, TensorOptions) { return {}; }
namespace cuda {
struct CUDAStream { operator cudaStream_t() const { return nullptr; } };
inline CUDAStream getCurrentCUDAStream() { return {}; }
}
}
namespace torch {
using at::Tensor;
using at::empty;
constexpr auto kHalf = c10::ScalarType::Half;
constexpr auto kFloat32 = c10::ScalarType::Float;
}
template <typename... T> inline void torch_check_(bool, T&&...) {}
#define TORCH_CHECK(cond, ...) torch_check_((cond), __VA_ARGS__)
namespace pybind11 {
struct arg { arg(const char*) {} };
struct gil_scoped_release {};
template <typename... T> struct call_guard {};
struct module_ {
  template <typename F, typename... E> module_& def(const char*, F&&, E&&...) { return *this; }
};
}
namespace py = pybind11;
#define PYBIND11_MODULE(name, m) void pybind11_init_##name(pybind11::module_& m)
"""


def fake_build_config(inc: Path) -> kb.BuildConfig:
    """A config for an H100 (sm_90a) whose torch is the fake headers, written into ``inc``."""
    (inc / "torch").mkdir()
    (inc / "torch" / "extension.h").write_text(FAKE_EXTENSION_H)
    (inc / "ATen" / "cuda").mkdir(parents=True)
    (inc / "ATen" / "cuda" / "CUDAContext.h").write_text("#pragma once\n#include <torch/extension.h>\n")
    (inc / "c10" / "cuda").mkdir(parents=True)
    (inc / "c10" / "cuda" / "CUDAException.h").write_text(
        "#pragma once\n#define C10_CUDA_CHECK(x) (void)(x)\n#define C10_CUDA_KERNEL_LAUNCH_CHECK() (void)0\n"
    )
    info = kb.TorchBuildInfo(
        version="fake",
        include_dirs=(str(inc),),
        library_dirs=(),
        cxx11_abi=1,
        python_include=str(inc),
        python_tag="fake",
        libraries=(),
    )
    return kb.make_config("h100", torch_info=info, cutlass=None, cuda_link=("-lcudart",), timeout_s=300)
