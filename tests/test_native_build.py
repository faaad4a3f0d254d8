"""CPU tests of importer/harness/baselines.py: the nvcc build, its cache key, and the loader's plumbing."""

from __future__ import annotations

import ctypes
import sys

import pytest
from background_builds import BACKGROUND
from cuda_l2_explorer.importer.harness import baselines as native
from cuda_l2_explorer.importer.harness import toolchain


def test_layout_names():
    assert native._layout("nn") == 0 and native._layout("tn") == 1 and native._layout(1) == 1
    with pytest.raises(ValueError):
        native._layout("nt")


def test_elf_needed_reads_python_itself():
    # The interpreter (or libpython) is an ELF that needs libc; a non-ELF gives [].
    needed = native.elf_needed(sys.executable)
    assert needed == [] or any(n.startswith("libc.so") or n.startswith("libpython") for n in needed)
    assert native.elf_needed(native.SOURCE) == []


def test_build_key_tracks_flags_arch_and_tools():
    base = native.build_key(nvcc_ver="release 13.0", cublas_ver="13.0.2.14")
    assert base == native.build_key(nvcc_ver="release 13.0", cublas_ver="13.0.2.14")
    assert base != native.build_key(extra_flags=("-DX=1",), nvcc_ver="release 13.0", cublas_ver="13.0.2.14")
    assert base != native.build_key(gencode=("-arch=sm_90",), nvcc_ver="release 13.0", cublas_ver="13.0.2.14")
    assert base != native.build_key(nvcc_ver="release 13.1", cublas_ver="13.0.2.14")
    assert base != native.build_key(nvcc_ver="release 13.0", cublas_ver="13.1.0.3")


needs_nvcc = pytest.mark.skipif(toolchain.find_nvcc() is None, reason="nvcc not on PATH")


def _need_cublas_dev():
    if toolchain.find_cublas_dev() is None:
        pytest.skip("cuBLAS headers not found (pip install nvidia-cublas)")


@pytest.fixture(scope="module")
def native_built():
    """(cache folder, library): built once, in the background from the start of the session
    (tests/background_builds.py)."""
    if toolchain.find_nvcc() is None:
        pytest.skip("nvcc not on PATH")
    _need_cublas_dev()
    lib = BACKGROUND.result("native")
    return lib.parent, lib


@needs_nvcc
def test_build_then_cache_hit(native_built, monkeypatch):
    cache, lib = native_built
    assert lib.exists() and lib.parent == cache and lib.name.startswith(native.LIB_STEM)
    needed = native.elf_needed(lib)
    assert any(n.startswith("libcublas.so") for n in needed)
    assert any(n.startswith("libcublasLt.so") for n in needed)
    assert lib.with_suffix(".json").exists()
    mtime = lib.stat().st_mtime_ns

    def no_rebuild(cmd):
        raise AssertionError("nvcc was run again on a cache hit")

    monkeypatch.setattr(native, "_run_nvcc", no_rebuild)
    assert native.build_baselines(cache) == lib
    assert lib.stat().st_mtime_ns == mtime


@needs_nvcc
def test_changed_flag_changes_the_library_name(native_built, monkeypatch):
    cache, lib = native_built
    ran = []
    monkeypatch.setattr(
        native, "_run_nvcc", lambda cmd: ran.append(cmd) or pytest.skip("stop before compiling")
    )
    with pytest.raises(pytest.skip.Exception):
        native.build_baselines(cache, extra_flags=("-DHB_TEST_FLAG=1",))
    assert ran, "a changed flag must miss the cache"
    assert "-DHB_TEST_FLAG=1" in ran[0]
    out = ran[0][ran[0].index("-o") + 1]
    assert lib.name.split("-")[1].split(".")[0] not in out


@needs_nvcc
def test_compile_failure_carries_nvcc_message(tmp_path):
    _need_cublas_dev()
    with pytest.raises(toolchain.NativeBuildError) as info:
        native.build_baselines(tmp_path, extra_flags=("--no-such-nvcc-flag",))
    assert "no-such-nvcc-flag" in info.value.output
    assert info.value.cmd and "--no-such-nvcc-flag" in info.value.cmd
    assert not list(tmp_path.glob("*.so"))


@needs_nvcc
def test_library_loads_and_reports_errors_without_a_gpu(native_built):
    _, lib_path = native_built
    try:
        lib = native.load_baselines(lib_path)
    except native.NativeError as exc:  # no runtime cuBLAS on this machine
        pytest.skip(f"cuBLAS runtime libraries not loadable: {exc}")
    assert lib.hb_abi_version() == native.ABI_VERSION
    # Argument checks happen before any CUDA call.
    handle, n = ctypes.c_void_p(), ctypes.c_int()
    assert lib.hb_lt_prepare(None, 0, 1, 1, 1, 1, ctypes.byref(handle), ctypes.byref(n)) == 3
    assert b"NULL" in lib.hb_last_error()
    try:
        import torch

        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if not has_gpu:
        with pytest.raises(native.NativeError) as info:
            native.CublasBaselines(lib=lib)
        assert info.value.func == "hb_create" and info.value.detail
