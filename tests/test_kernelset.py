"""CPU tests of kernel sets: scanning (importer/kernelset.py) and building (importer/harness/build.py).

The build tests run nvcc for real (skipped when nvcc is absent) against a small fake of the torch
and pybind11 headers, so that the compile path, the cache and the failure handling are exercised
on a machine without torch. The real thing, against torch, is tests/gpu/test_kernel_build.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from build_fixtures import needs_nvcc
from cuda_l2_explorer.db.errors import BadInputError, IOFailure, UsageError
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.importer.harness import build as kb
from cuda_l2_explorer.importer.kernelset import (
    KernelFile,
    entry_point,
    mentions_identifier,
    padded_shape,
    parse_tiles,
    scan_set,
    strip_comments,
)
from hypothesis import given, settings
from hypothesis import strategies as st

PLANTED = Path(__file__).parent / "kernelsets" / "planted"
PLANTED32 = PLANTED / "h100_F32F16F16F32"

GOOD = """\
#include <torch/extension.h>
void cuda_l2_h100_fp32(torch::Tensor a, torch::Tensor b, torch::Tensor b_col_major, torch::Tensor c) {}
"""


def make_set(root: Path, files: dict[str, str | bytes], name: str = "h100_F32F16F16F32") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    for rel, content in files.items():
        path = folder / rel
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return folder


# ----------------------------------------------------------------------------------------------
# Scanning
# ----------------------------------------------------------------------------------------------


def test_scan_planted_set():
    scan = scan_set(PLANTED32)
    assert scan.root == PLANTED32.resolve()
    assert (scan.device, scan.accumulator, scan.function) == ("h100", "F32F16F16F32", "cuda_l2_h100_fp32")
    assert scan.problems == []
    shapes = [f.shape for f in scan.files]
    assert shapes == sorted(shapes) and len(shapes) == 12
    by_shape = scan.by_shape()
    tiles = by_shape[Shape(96, 96, 96)]
    assert tiles.pad == (64, 64, 64)
    assert all(f.pad is None for f in scan.files if f is not tiles)
    for f in scan.files:
        assert f.function == "cuda_l2_h100_fp32"
        assert f.rel == f.path.name and f.path.is_absolute()
        assert f.sha256 == hashlib.sha256(f.path.read_bytes()).hexdigest()
    # the two correct controls are the same text, so they hash alike
    assert by_shape[Shape(64, 64, 64)].sha256 == by_shape[Shape(128, 256, 512)].sha256


def test_parent_with_two_sets_needs_a_choice():
    with pytest.raises(UsageError, match="several kernel sets") as refused:
        scan_set(PLANTED)
    assert str(refused.value).endswith(f"name one, e.g. {PLANTED / 'h100_F16F16F16F16'}")  # the first by name
    f16 = scan_set(PLANTED, accumulator="fp16")
    assert f16.accumulator == "F16F16F16F16" and f16.function == "cuda_l2_h100_fp16"
    assert [str(f.shape) for f in f16.files] == ["128_256_512"]
    f32 = scan_set(PLANTED, device="H100", accumulator="F32F16F16F32")
    assert f32.root.name == "h100_F32F16F16F32"
    with pytest.raises(BadInputError, match="a100"):
        scan_set(PLANTED, device="a100")


def test_labels_that_contradict_the_folder_are_refused():
    with pytest.raises(UsageError, match="h100 F32F16F16F32 set"):
        scan_set(PLANTED32, accumulator="fp16")
    with pytest.raises(UsageError, match="accumulator"):
        scan_set(PLANTED32, accumulator="bf16")


def test_scan_skips_and_reports(tmp_path):
    outside = tmp_path / "elsewhere.cu"
    outside.write_text(GOOD)
    folder = make_set(
        tmp_path / "set",
        {
            "64_64_64.cu": GOOD,
            "064_64_64.cu": GOOD,  # same shape, non-canonical name: the canonical one wins
            "128_256_512.cu": GOOD.replace("{}", "{ /* BM = Int<999> in a comment */ }"),
            "64_64.cu": GOOD,
            "0_64_64.cu": GOOD,
            "a_b_c.cu": GOOD,
            "64_64_64_1.cu": GOOD,
            "64_128_256.cuh": GOOD,
            "notes.txt": "hello",
            "256_256_256.cu": "// cuda_l2_h100_fp32 is only in a comment\nvoid other() {}\n",
            "512_512_512.cu": GOOD.replace("fp32", "fp16"),
            "1024_64_64.cu": b"\xff\xfe not utf-8 cuda_l2_h100_fp32",
        },
    )
    (folder / "sub").mkdir()
    (folder / "2048_64_64.cu").symlink_to(outside)  # escapes the set: never followed
    (folder / "4096_64_64.cu").symlink_to(folder / "64_64_64.cu")  # inside the set: fine
    (folder / "8192_64_64.cu").symlink_to(folder / "missing.cu")
    big = folder / "64_64_128.cu"
    with big.open("w") as fh:
        fh.write(GOOD)
        fh.write("//" + "x" * (3 << 20) + "\n")

    scan = scan_set(folder)
    assert [str(f.shape) for f in scan.files] == ["64_64_64", "128_256_512", "4096_64_64"]
    assert scan.by_shape()[Shape(64, 64, 64)].rel == "64_64_64.cu"
    assert scan.by_shape()[Shape(128, 256, 512)].pad is None
    reasons = dict(scan.problems)
    assert scan.problems == sorted(scan.problems)
    assert "same shape" in reasons["064_64_64.cu"]
    for bad in ("64_64.cu", "0_64_64.cu", "a_b_c.cu", "64_64_64_1.cu"):
        assert "M_N_K" in reasons[bad], bad
    assert reasons["64_128_256.cuh"] == "not a .cu file"
    assert reasons["notes.txt"] == "not a .cu file"
    assert "folder" in reasons["sub"]
    assert "outside the set" in reasons["2048_64_64.cu"]
    assert "broken" in reasons["8192_64_64.cu"]
    assert "limit" in reasons["64_64_128.cu"]
    assert "does not define cuda_l2_h100_fp32" in reasons["256_256_256.cu"]
    assert "does not define" in reasons["512_512_512.cu"]
    assert reasons["1024_64_64.cu"] == "not UTF-8 text"
    assert len(scan.problems) == 14


def test_scan_with_a_tight_size_limit_has_nothing_left(tmp_path):
    folder = make_set(tmp_path, {"64_64_64.cu": GOOD})
    with pytest.raises(BadInputError, match=r"no usable.*64_64_64\.cu \(larger than the 10-byte limit"):
        scan_set(folder, max_bytes=10)


def test_unreadable_file_is_a_problem(tmp_path, monkeypatch):
    import cuda_l2_explorer.importer.kernelset as ks

    folder = make_set(tmp_path, {"64_64_64.cu": GOOD, "128_128_128.cu": GOOD})
    real = ks._read_limited

    def deny(path, max_bytes):
        if Path(path).name == "128_128_128.cu":
            raise PermissionError(13, "Permission denied")
        return real(path, max_bytes)

    monkeypatch.setattr(ks, "_read_limited", deny)
    scan = scan_set(folder)
    assert [f.rel for f in scan.files] == ["64_64_64.cu"]
    assert dict(scan.problems)["128_128_128.cu"] == "cannot read: Permission denied"


def test_root_errors(tmp_path):
    with pytest.raises(IOFailure, match="not found"):
        scan_set(tmp_path / "nope")
    a_file = tmp_path / "x.cu"
    a_file.write_text(GOOD)
    with pytest.raises(UsageError, match="folder"):
        scan_set(a_file)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BadInputError, match="no <device>_<ACC>"):
        scan_set(empty)
    bare = make_set(tmp_path, {}, name="a100_F16F16F16F16")
    with pytest.raises(BadInputError, match="no usable"):
        scan_set(bare)
    only_bad = make_set(tmp_path, {"readme.md": "x", "1_2.cu": GOOD}, name="3090_F32F16F16F32")
    with pytest.raises(BadInputError, match="skipped 2"):
        scan_set(only_bad)
    # every message is one line
    for call in (lambda: scan_set(tmp_path / "nope"), lambda: scan_set(only_bad)):
        with pytest.raises(Exception) as info:
            call()
        assert "\n" not in str(info.value)


def test_folder_under_another_name_needs_both_labels(tmp_path):
    folder = tmp_path / "my_kernels"
    folder.mkdir()
    (folder / "64_64_64.cu").write_text(GOOD)
    with pytest.raises(BadInputError):
        scan_set(folder)
    with pytest.raises(BadInputError):
        scan_set(folder, device="h100")
    scan = scan_set(folder, device="h100", accumulator="fp32")
    assert scan.root == folder.resolve() and len(scan.files) == 1


def test_set_folder_reached_through_a_link(tmp_path):
    real = make_set(tmp_path / "real", {"64_64_64.cu": GOOD})
    link = tmp_path / "h100_F32F16F16F32"
    link.symlink_to(real)
    scan = scan_set(link)
    assert scan.root == real.resolve() and [f.rel for f in scan.files] == ["64_64_64.cu"]


def test_content_hash_ignores_the_location(tmp_path):
    a = scan_set(make_set(tmp_path / "a", {"64_64_64.cu": GOOD}))
    b = scan_set(make_set(tmp_path / "b", {"64_64_64.cu": GOOD}))
    c = scan_set(make_set(tmp_path / "c", {"64_64_64.cu": GOOD + "\n"}))
    assert a.content_hash() == b.content_hash() != c.content_hash()


def test_entry_point_names():
    assert entry_point("H100", "F32F16F16F32") == "cuda_l2_h100_fp32"
    assert entry_point("3090", "fp16") == "cuda_l2_3090_fp16"
    with pytest.raises(UsageError):
        entry_point("h-100", "fp32")


# ----------------------------------------------------------------------------------------------
# Source text: comments, the padding rule
# ----------------------------------------------------------------------------------------------


def test_strip_comments_keeps_code_and_lines():
    src = 'int a = 1; // BM = Int<64>\n/* BN =\n Int<8> */ const char* s = "BK = Int<4>"; int b = 1\'000;\n'
    out = strip_comments(src)
    assert out.count("\n") == src.count("\n")
    assert "Int<" not in out and "int a = 1;" in out and "int b = 1'000;" in out
    assert strip_comments('R"x(BM = Int<64>)x" y') == '"" y'
    assert strip_comments("'\"' BM") == "'' BM"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("using BM = Int<128>; using BN = Int<256>; using BK = Int<64>;", (128, 256, 64)),
        ("auto BM = Int<128>{};\nauto BN = Int<64>{};\nauto BK = Int<32>{};", (128, 64, 32)),
        (
            "constexpr auto BM = cute::Int<64>{}; constexpr auto BN = ::cute::Int<32>{}; "
            "static constexpr auto BK = Int <16> {};",
            (64, 32, 16),
        ),
        ("using BM=Int< 64 >;using BN =\n  Int<\n64>;", (64, 64, 1)),  # BK missing: 1
        ("using BK = Int<32>;", (1, 1, 32)),
        ("int BM = 128;", None),
        ("using kBM = Int<64>; using BMX = Int<64>;", None),
        ("// using BM = Int<64>;\n/* using BN = Int<64>; */", None),
        ('const char* s = "using BM = Int<64>;";', None),
        ("using BM = Int<0>; using BN = Int<64>;", (1, 64, 1)),
        ("using BM = Int<64>; using BM = Int<96>;", (192, 1, 1)),  # two kernels: lcm
        ("", None),
    ],
)
def test_parse_tiles(source, expected):
    assert parse_tiles(source) == expected


_WS = st.text(alphabet=" \t\n", max_size=3)
_NAME_STYLES = [
    "using {n} ={s}Int<{v}>;",
    "auto {n} = Int<{v}>{{}};",
    "constexpr auto {n}{s}={s}cute::Int<{s}{v}{s}>{{}};",
    "static constexpr {n} = Int<{v}>;",
]


@st.composite
def declarations(draw):
    present = draw(st.lists(st.sampled_from("MNK"), unique=True, max_size=3))
    values = {d: draw(st.integers(1, 4096)) for d in present}
    parts = []
    for d in present:
        style = draw(st.sampled_from(_NAME_STYLES))
        parts.append(style.format(n=f"B{d}", v=values[d], s=draw(_WS)))
        if draw(st.booleans()):
            parts.append(f"// B{d} = Int<{draw(st.integers(1, 4096))}>  (a comment: ignored)\n")
        if draw(st.booleans()):
            parts.append(f"int kB{d} = 3; using XB{d} = Int<7>;")
    sep = draw(st.sampled_from(["\n", " ", "\n\n  "]))
    expected = None if not present else tuple(values.get(d, 1) for d in "MNK")
    return sep.join(parts), expected


@given(declarations())
@settings(max_examples=300, deadline=None)
def test_parse_tiles_generated(case):
    source, expected = case
    assert parse_tiles(source) == expected


def test_mentions_identifier():
    assert mentions_identifier("void cuda_l2_h100_fp32(int);", "cuda_l2_h100_fp32")
    assert not mentions_identifier("void cuda_l2_h100_fp32x(int);", "cuda_l2_h100_fp32")
    assert not mentions_identifier("// cuda_l2_h100_fp32\n", "cuda_l2_h100_fp32")


def test_padded_shape_examples():
    assert padded_shape(Shape(96, 96, 96), (64, 64, 64)) == Shape(128, 128, 128)
    assert padded_shape(Shape(128, 100, 1), (64, 1, 32)) == Shape(128, 100, 32)
    assert padded_shape(Shape(5, 6, 7), None) == Shape(5, 6, 7)
    with pytest.raises(ValueError):
        padded_shape(Shape(5, 6, 7), (0, 1, 1))


@given(
    st.tuples(st.integers(1, 20000), st.integers(1, 20000), st.integers(1, 20000)),
    st.tuples(st.integers(1, 512), st.integers(1, 512), st.integers(1, 512)),
)
def test_padded_shape_is_the_least_multiple(dims, tiles):
    out = padded_shape(Shape(*dims), tiles).astuple()
    for d, t, p in zip(dims, tiles, out, strict=True):
        assert p % t == 0 and d <= p < d + t


# ----------------------------------------------------------------------------------------------
# Build: arch, command, key
# ----------------------------------------------------------------------------------------------

FAKE_TORCH = kb.TorchBuildInfo(
    version="fake-1.0",
    include_dirs=("/fake/torch/include",),
    library_dirs=("/fake/torch/lib",),
    cxx11_abi=1,
    python_include="/fake/python",
    python_tag="fake-312",
)


def config(**over) -> kb.BuildConfig:
    base = {"arch": "sm_90a", "nvcc": "nvcc", "nvcc_version": "release 13.0, V13.0.88", "torch": FAKE_TORCH}
    return kb.BuildConfig(**{**base, **over})


def test_arch_and_gencode():
    assert kb.arch_for("h100") == kb.arch_for("H200") == "sm_90a"
    assert kb.arch_for("a100") == "sm_80" and kb.arch_for("3090") == "sm_86"
    assert kb.arch_for("sm_90a") == "sm_90a" and kb.arch_for("89") == "sm_89"
    assert kb.arch_for_capability(9, 0) == "sm_90a" and kb.arch_for_capability(8, 0) == "sm_80"
    assert kb.gencode("sm_90a") == "-gencode=arch=compute_90a,code=sm_90a"
    assert kb.gencode("sm_80") == "-gencode=arch=compute_80,code=sm_80"
    with pytest.raises(UsageError):
        kb.arch_for("rtx-foo")


def test_compile_command_has_the_spec_flags():
    cmd = kb.compile_command(config(), "w.cu", "out.so", "mod")
    i = cmd.index("-O3")
    assert tuple(cmd[i : i + len(kb.SPEC_FLAGS)]) == kb.SPEC_FLAGS
    assert "-gencode=arch=compute_90a,code=sm_90a" in cmd
    for flag in (
        "-shared",
        "-fPIC",
        "-DTORCH_EXTENSION_NAME=mod",
        "-DTORCH_API_INCLUDE_EXTENSION_H",
        "-D_GLIBCXX_USE_CXX11_ABI=1",
        "-L/fake/torch/lib",
        "-ltorch_python",
        "-lc10_cuda",
        "-lcublas",
    ):
        assert flag in cmd, flag
    assert "-DNDEBUG" not in cmd
    assert "-DNDEBUG" in kb.compile_command(config(ndebug=True), "w.cu", "o.so", "m")
    assert cmd[cmd.index("-o") + 1] == "out.so" and "w.cu" in cmd
    cut = kb.CutlassInfo(root="/c", include_dirs=("/c/include", "/c/tools/util/include"), version="4.2.0")
    with_cut = kb.compile_command(config(cutlass=cut), "w.cu", "o.so", "m")
    assert "-I/c/include" in with_cut and "-I/c/tools/util/include" in with_cut
    a100 = kb.compile_command(config(arch="sm_80"), "w.cu", "o.so", "m")
    assert "-gencode=arch=compute_80,code=sm_80" in a100


def test_build_key_is_deterministic_and_sensitive():
    src = GOOD.encode()
    fn = "cuda_l2_h100_fp32"
    base = kb.build_key(src, fn, config())
    assert base == kb.build_key(src, fn, config()) and len(base) == 64
    assert base == kb.build_key(src, fn, config(timeout_s=5))  # not part of what is built
    different = [
        kb.build_key(src + b" ", fn, config()),
        kb.build_key(src, "cuda_l2_h100_fp16", config()),
        kb.build_key(src, fn, config(arch="sm_80")),
        kb.build_key(src, fn, config(ndebug=True)),
        kb.build_key(src, fn, config(extra_flags=("-lineinfo",))),
        kb.build_key(src, fn, config(nvcc_version="release 13.1")),
        kb.build_key(src, fn, config(torch=kb.TorchBuildInfo(**{**FAKE_TORCH.__dict__, "version": "x"}))),
        kb.build_key(src, fn, config(torch=kb.TorchBuildInfo(**{**FAKE_TORCH.__dict__, "python_tag": "y"}))),
        kb.build_key(src, fn, config(cutlass=kb.CutlassInfo("/c", ("/c/include",), "4.2.0"))),
        kb.build_key(src, fn, config(cutlass=kb.CutlassInfo("/c", ("/c/include",), "4.3.0"))),
    ]
    assert len({base, *different}) == len(different) + 1


def test_build_key_names_versions_not_folders():
    """The same versions installed in other folders (another machine) give the same key: a cache
    built on a CPU machine serves the GPU machine's bench."""
    src, fn = GOOD.encode(), "cuda_l2_h100_fp32"
    here = config(cutlass=kb.CutlassInfo("/c", ("/c/include", "/c/tools/util/include"), "4.2.0"))
    moved_torch = kb.TorchBuildInfo(
        **{
            **FAKE_TORCH.__dict__,
            "include_dirs": ("/elsewhere/torch/include", "/cuda/include"),
            "python_include": "/py",
        }
    )
    there = config(
        nvcc="/opt/cuda/bin/nvcc",
        torch=moved_torch,
        cutlass=kb.CutlassInfo("/d", ("/d/include", "/d/tools/util/include"), "4.2.0"),
        cuda_link=("-lcudart", "-L/other/cublas/lib", "-l:libcublas.so.13"),
    )
    same_link = config(cutlass=here.cutlass, cuda_link=("-lcudart", "-L/my/cublas/lib", "-l:libcublas.so.13"))
    assert kb.build_key(src, fn, same_link) == kb.build_key(src, fn, there)
    assert kb.build_key(src, fn, here) != kb.build_key(src, fn, same_link)  # another cuBLAS library


def test_wrapper_includes_the_file_and_binds_run(tmp_path):
    text = kb.render_wrapper(tmp_path / "64_64_64.cu", "cuda_l2_h100_fp32", "cl2k_abc")
    assert f'#include "{tmp_path / "64_64_64.cu"}"' in text
    assert "PYBIND11_MODULE(cl2k_abc, m)" in text and '"run"' in text
    assert text.count("cuda_l2_h100_fp32(a, b, b_col_major, c)") >= 1
    assert "void cuda_l2_h100_fp32" not in text  # declared once, by the included file
    with pytest.raises(ValueError):
        kb.render_wrapper(Path('/tmp/we"ird.cu'), "f", "m")


def test_trim_log_keeps_head_and_tail():
    log = "first error\n" + "x" * 50_000 + "\nlast line"
    out = kb.trim_log(log, 1000)
    assert out.startswith("first error") and out.endswith("last line") and len(out) < 1100
    assert kb.trim_log("  short \n") == "short"


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDA_L2_EXPLORER_BUILD_CACHE", str(tmp_path / "c"))
    assert kb.default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("CUDA_L2_EXPLORER_BUILD_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert kb.default_cache_dir() == tmp_path / "x" / "cuda-l2-explorer" / "kernels"


def test_find_cutlass_from_env(monkeypatch, tmp_path):
    root = tmp_path / "cutlass"
    (root / "include" / "cutlass").mkdir(parents=True)
    (root / "tools" / "util" / "include").mkdir(parents=True)
    (root / "include" / "cutlass" / "cutlass.h").write_text("")
    (root / "include" / "cutlass" / "version.h").write_text(
        "#define CUTLASS_MAJOR 4\n#define CUTLASS_MINOR 2\n#define CUTLASS_PATCH 1\n"
    )
    monkeypatch.setenv("CUTLASS_DIR", str(root))
    found = kb.find_cutlass()
    assert found is not None and found.version == "4.2.1"
    assert found.include_dirs == (str(root / "include"), str(root / "tools" / "util" / "include"))
    monkeypatch.setenv("CUTLASS_DIR", str(tmp_path))
    with pytest.raises(UsageError, match="CUTLASS_DIR"):
        kb.find_cutlass()


@pytest.mark.skipif(
    "torch" in sys.modules or kb.importlib.util.find_spec("torch") is not None, reason="torch here"
)
def test_without_torch_the_toolchain_error_is_clear(tmp_path):
    with pytest.raises(kb.ToolchainError, match="torch"):
        kb.torch_build_info()
    with pytest.raises(kb.ToolchainError, match="torch"):
        kb.load_module(tmp_path / "x.so")


# ----------------------------------------------------------------------------------------------
# Build: real nvcc against fake torch headers (tests/build_fixtures.py)
# ----------------------------------------------------------------------------------------------


def kernel_file(path: Path, function: str = "cuda_l2_h100_fp32") -> KernelFile:
    from cuda_l2_explorer.db.shapes import parse_mnk

    return KernelFile(
        shape=parse_mnk(path.stem),
        path=path,
        rel=path.name,
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        function=function,
        pad=None,
    )


def cache_entries(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


@needs_nvcc
def test_build_compile_error_is_a_result(tmp_path, fake_config):
    folder = make_set(
        tmp_path,
        {
            "64_64_64.cu": GOOD,
            "128_128_128.cu": GOOD.replace("{}", "{ int x = ; }"),  # syntax error
        },
    )
    files = scan_set(folder).files
    cache = tmp_path / "cache"
    seen: list[tuple[int, int]] = []
    got: list[str] = []
    results = kb.build_all(
        files,
        jobs=2,
        config=fake_config,
        cache_dir=cache,
        progress=lambda done, total: seen.append((done, total)),
        on_result=lambda f, r: got.append(f.rel),
    )
    assert sorted(seen) == [(1, 2), (2, 2)] and sorted(got) == ["128_128_128.cu", "64_64_64.cu"]
    good, bad = results[folder / "64_64_64.cu"], results[folder / "128_128_128.cu"]
    assert good.ok and not good.cached and good.module_path is not None and good.module_path.is_file()
    assert good.module_path.parent == cache / good.key
    assert not bad.ok and bad.module_path is None and not bad.cached
    assert "128_128_128.cu" in bad.log and "error" in bad.log.lower()
    assert bad.reason.startswith("nvcc failed") and "\n" not in bad.reason
    # only the good build is in the cache; no temporary folder is left behind
    assert cache_entries(cache) == [good.key]
    meta = (good.module_path.parent / "build.json").read_text()
    assert "-O3" in meta and '"seconds"' in meta and str(cache / good.key) in meta


@needs_nvcc
def test_build_cache_hit_shared_contents_and_force(tmp_path, fake_config):
    folder = make_set(tmp_path, {"64_64_64.cu": GOOD, "128_128_128.cu": GOOD, "256_64_64.cu": GOOD + "\n"})
    files = scan_set(folder).files
    cache = tmp_path / "cache"
    first = kb.build_all(files, config=fake_config, cache_dir=cache)
    assert all(r.ok and not r.cached for r in first.values())
    a, b, c = (first[folder / n] for n in ("64_64_64.cu", "128_128_128.cu", "256_64_64.cu"))
    assert a.module_path == b.module_path != c.module_path  # identical text: one build
    assert len(cache_entries(cache)) == 2
    mtime = a.module_path.stat().st_mtime_ns

    again = kb.build_all(files, config=fake_config, cache_dir=cache)
    assert all(r.ok and r.cached for r in again.values())
    assert again[folder / "64_64_64.cu"].module_path == a.module_path
    assert again[folder / "64_64_64.cu"].seconds == pytest.approx(a.seconds, abs=1e-3)
    assert a.module_path.stat().st_mtime_ns == mtime

    time.sleep(0.01)
    forced = kb.build_one(files[0], config=fake_config, cache_dir=cache, force=True)
    assert forced.ok and not forced.cached and forced.module_path == a.module_path
    assert forced.module_path.stat().st_mtime_ns != mtime
    assert len(cache_entries(cache)) == 2

    other_arch = kb.build_one(
        files[0], config=kb.BuildConfig(**{**fake_config.__dict__, "arch": "sm_80"}), cache_dir=cache
    )
    assert other_arch.ok and other_arch.key != a.key and len(cache_entries(cache)) == 3


@needs_nvcc
def test_broken_entry_is_rebuilt(tmp_path, fake_config):
    folder = make_set(tmp_path, {"64_64_64.cu": GOOD})
    f = scan_set(folder).files[0]
    cache = tmp_path / "cache"
    key = kb.build_key(GOOD.encode(), f.function, fake_config)
    (cache / key).mkdir(parents=True)
    (cache / key / "leftover.o").write_text("junk")  # no module, no build.json
    result = kb.build_one(f, config=fake_config, cache_dir=cache)
    assert result.ok and not result.cached and result.key == key
    assert sorted(p.name for p in (cache / key).iterdir()) == [
        "build.json",
        f"{kb.module_name(key)}.so",
        "wrapper.cu",
    ]
    assert cache_entries(cache) == [key]


@needs_nvcc
def test_planted_kernels_compile_against_fake_headers(tmp_path, fake_config):
    """The planted kernels' CUDA code and the wrapper fit together (real torch: tests/gpu)."""
    scan = scan_set(PLANTED32)
    pick = [
        scan.by_shape()[Shape(*s)] for s in ((128, 256, 512), (96, 96, 96), (256, 256, 256), (64, 64, 128))
    ]
    results = kb.build_all(pick, jobs=os.cpu_count(), config=fake_config, cache_dir=tmp_path / "cache")
    for f in pick:
        assert results[f.path].ok, results[f.path].log


def fake_nvcc(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake-nvcc"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return str(script)


def test_a_worker_compiles_only_with_the_versions_the_key_names(tmp_path, monkeypatch):
    """A cluster worker's own nvcc and CUTLASS (the library build's and an imported set's)."""
    monkeypatch.setenv("NVCC", fake_nvcc(tmp_path, 'echo "Cuda compilation tools, release 99.9, V99.9.1"'))
    ours = "release 99.9, V99.9.1"
    cutlass = kb.CutlassInfo(root="/c", include_dirs=("/c/include",), version="4.2.0")
    assert kb.worker_toolchain(ours, None) == (os.environ["NVCC"], None)
    assert kb.worker_toolchain(ours, "4.2.0", lambda: cutlass) == (os.environ["NVCC"], cutlass)
    with pytest.raises(kb.ToolchainError, match=re.escape(f"nvcc is {ours!r}, the build's is 'release 13")):
        kb.worker_toolchain("release 13.0, V13.0.88", None)
    with pytest.raises(kb.ToolchainError, match=re.escape("CUTLASS headers are none, the build's 4.2.0")):
        kb.worker_toolchain(ours, "4.2.0", lambda: None)
    with pytest.raises(kb.ToolchainError, match=re.escape("CUTLASS headers are 4.2.0, the build's 3.9.2")):
        kb.worker_toolchain(ours, "3.9.2", lambda: cutlass)


def test_timeout_kills_the_build_and_leaves_no_entry(tmp_path):
    pidfile = tmp_path / "pids"
    nvcc = fake_nvcc(tmp_path, f'echo "compiling..."\nsleep 60 &\necho $! >> {pidfile}\nwait\n')
    folder = make_set(tmp_path, {"64_64_64.cu": GOOD})
    cfg = config(nvcc=nvcc, timeout_s=1.0)
    cache = tmp_path / "cache"
    start = time.monotonic()
    result = kb.build_one(scan_set(folder).files[0], config=cfg, cache_dir=cache)
    assert time.monotonic() - start < 30
    assert not result.ok and "timed out" in result.reason and "compiling..." in result.log
    assert cache_entries(cache) == []
    assert_gone(int(pidfile.read_text().split()[0]))  # the background sleep too


def assert_gone(pid: int) -> None:
    """``pid`` is gone within 5 s: nvcc's whole process group was killed."""
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    pytest.fail(f"nvcc's child process {pid} survived")


def test_an_interrupt_kills_the_builds_still_running(tmp_path):
    pidfile = tmp_path / "pids"
    nvcc = fake_nvcc(
        tmp_path,
        f"if grep -q 128_128_128 wrapper.cu; then sleep 60 & echo $! >> {pidfile}; wait; fi\n"
        f"while [ ! -s {pidfile} ]; do sleep 0.05; done\n"  # the fast one ends while the slow one runs
        'while [ "$1" != "-o" ]; do shift; done\necho module > "$2"\n',
    )
    folder = make_set(tmp_path, {"64_64_64.cu": GOOD, "128_128_128.cu": GOOD + "// slow\n"})

    def interrupt(file, result) -> None:
        raise KeyboardInterrupt  # Ctrl-C, while the slow one compiles

    # Kept, as a handler holds the exception: its traceback keeps build_all's frame alive.
    with pytest.raises(KeyboardInterrupt) as caught:
        kb.build_all(
            scan_set(folder).files,
            jobs=2,
            config=config(nvcc=nvcc),
            cache_dir=tmp_path / "cache",
            on_result=interrupt,
        )
    assert_gone(int(pidfile.read_text().split()[0]))
    assert caught.traceback


def test_failed_build_that_wrote_output_leaves_no_entry(tmp_path):
    # writes the output file (-o) and then fails, as a build killed or broken at link time would
    nvcc = fake_nvcc(
        tmp_path,
        'while [ "$1" != "-o" ]; do shift; done\necho partial > "$2"\necho "link error" >&2\nexit 1\n',
    )
    folder = make_set(tmp_path, {"64_64_64.cu": GOOD})
    cache = tmp_path / "cache"
    result = kb.build_one(scan_set(folder).files[0], config=config(nvcc=nvcc), cache_dir=cache)
    assert not result.ok and "link error" in result.log and "exit status 1" in result.reason
    assert cache_entries(cache) == []


def test_missing_nvcc_is_a_failed_result(tmp_path):
    folder = make_set(tmp_path, {"64_64_64.cu": GOOD})
    result = kb.build_one(
        scan_set(folder).files[0], config=config(nvcc=str(tmp_path / "no-nvcc")), cache_dir=tmp_path / "cache"
    )
    assert not result.ok and "cannot run" in result.log


def test_file_changed_since_scan(tmp_path):
    folder = make_set(tmp_path, {"64_64_64.cu": GOOD})
    f = scan_set(folder).files[0]
    f.path.write_text(GOOD + "// edited\n")
    result = kb.build_one(f, config=config(nvcc="/bin/false"), cache_dir=tmp_path / "cache")
    assert not result.ok and "changed" in result.reason


def test_stale_temporary_folders_are_cleaned(tmp_path):
    cache = tmp_path / "cache"
    old = cache / ".tmp-0123456789abcdef-x"
    new = cache / ".tmp-fedcba9876543210-y"
    old.mkdir(parents=True)
    new.mkdir()
    past = time.time() - kb.STALE_TMP_SECONDS - 60
    os.utime(old, (past, past))
    folder = make_set(tmp_path, {"64_64_64.cu": GOOD})
    kb.build_all(scan_set(folder).files, config=config(nvcc="/bin/false"), cache_dir=cache)
    assert not old.exists() and new.exists()


def test_build_all_of_nothing():
    assert kb.build_all([], config=config()) == {}


def test_a_build_without_a_cluster_imports_no_dask(tmp_path):
    """Dask is for --cluster alone: the plain path compiles (here nvcc is /bin/false, so it fails
    to) without importing it."""
    folder = make_set(tmp_path, {"64_64_64.cu": GOOD})
    code = f"""if True:
        import json, sys
        from cuda_l2_explorer.importer.harness import build as kb
        from cuda_l2_explorer.importer.kernelset import scan_set
        torch = kb.TorchBuildInfo("fake", (), (), 1, "/fake/python", "fake")
        config = kb.BuildConfig("sm_90a", "/bin/false", "fake", torch)
        files = scan_set({str(folder)!r}).files
        (result,) = kb.build_all(files, config=config, cache_dir={str(tmp_path / "cache")!r}).values()
        dask = sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed"))
        print(json.dumps([result.reason, dask]))
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    reason, dask = json.loads(out)
    assert reason.startswith("nvcc failed (exit status 1)") and dask == []
