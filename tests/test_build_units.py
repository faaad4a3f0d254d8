"""Several kernel files in one translation unit (importer/harness/build_units.py): which files
may share one, how they are grouped, and real nvcc builds of planted units against the fake torch
headers (tests/build_fixtures.py; with the real torch on a GPU: tests/gpu/test_kernel_build.py)."""

from __future__ import annotations

import json
import os

import pytest
from build_fixtures import PLANTED32, needs_nvcc
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.engine.bench import build_batch_size
from cuda_l2_explorer.importer.harness import build as kb
from cuda_l2_explorer.importer.harness.build_units import Traits, UnitFile, group, render_unit, shareable
from cuda_l2_explorer.importer.kernelset import scan_set

HEADER = "#include <torch/extension.h>\n#include <cute/tensor.hpp>\n"
ENTRY = "void cuda_l2_h100_fp32(torch::Tensor a, torch::Tensor b, torch::Tensor bc, torch::Tensor c) {}\n"


def test_a_plain_kernel_file_shares_and_says_what_it_brings():
    source = (
        HEADER
        + '#include "cutlass/cutlass.h"\n// #include "mine.h" in a comment\n'
        + "#define CHECK(x) (x)\n#define TILE 128\n#undef TILE\n"
        + ENTRY
    )
    traits = shareable(source)
    assert traits == Traits(
        ("<torch/extension.h>", "<cute/tensor.hpp>", '"cutlass/cutlass.h"'), ("CHECK", "TILE")
    )


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ('#include "mine.h"\n', "a header of its own folder"),
        ("#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED\n" + HEADER, "a macro before an include"),
        ('extern "C" void launch();\n', "extern C names clash across files"),
        ("namespace c10 { namespace detail { void torchInternalAssertFail(); } }\n", "a library's namespace"),
        ("namespace cute {\ntemplate <> struct X<1> {};\n}\n", "a library's namespace"),
        ("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}\n", "its own Python module"),
        ("#undef __CUDA_NO_HALF_OPERATORS__\n", "a header's macro undefined"),
    ],
)
def test_files_that_could_change_meaning_are_built_alone(extra, why):
    assert shareable(HEADER + extra + ENTRY) is None, why


def test_directives_in_comments_do_not_count():
    source = HEADER + '/* #include "mine.h"\n#undef X\n*/\n// extern C is fine here\n' + ENTRY
    assert shareable(source) is not None


def test_grouping_keeps_the_compilers_busy_and_lone_files_alone():
    t = Traits((), ())
    assert group([t] * 10, per_unit=4, slots=2) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert group([t] * 8, per_unit=4, slots=16) == [[i] for i in range(8)]  # enough compilers
    assert group([t, None, t, t], per_unit=4, slots=1) == [[0, 2, 3], [1]]
    assert group([None, None], per_unit=4, slots=1) == [[0], [1]]


def test_the_unit_wraps_each_file_in_its_module_namespace_and_binds_each():
    files = [
        UnitFile(
            "/sets/a/64_64_64.cu", "cuda_l2_h100_fp32", Traits(("<cute/tensor.hpp>",), ("M1",)), "cl2k_a"
        ),
        UnitFile("/sets/a/128_128_128.cu", "cuda_l2_h100_fp32", Traits(("<cute/tensor.hpp>",), ()), "cl2k_b"),
    ]
    text = render_unit(files, kb.BINDING_TEMPLATE)
    assert text.count("#include <cute/tensor.hpp>") == 1 and text.index("<torch/extension.h>") < text.index(
        "cute"
    )
    a, b = (
        text.index('namespace cl2k_a {\n#include "/sets/a/64_64_64.cu"\n}'),
        text.index("namespace cl2k_b {"),
    )
    assert a < text.index("#undef M1") < b
    assert "PYBIND11_MODULE(cl2k_a, m)" in text and "cl2k_b::cuda_l2_h100_fp32(a, b, b_col_major, c)" in text
    with pytest.raises(ValueError):
        render_unit([UnitFile('/x"y.cu', "f", Traits((), ()), "m")], kb.BINDING_TEMPLATE)


def test_a_bench_build_round_is_a_unit_for_every_compiler():
    assert build_batch_size(16, 4) == 64
    assert build_batch_size(2) == 8 and build_batch_size(2, 4) == 8


def test_per_unit_must_be_positive(cli, db_path):
    result = cli("--db", db_path, "bench", "--per-unit", "0", "--mnk", "64_64_64")
    assert result.code == 2 and "--per-unit" in result.err


# ----------------------------------------------------------------------------------------------
# Real builds (nvcc, fake torch headers)
# ----------------------------------------------------------------------------------------------

PICK = [Shape(128, 256, 512), Shape(256, 128, 1024), Shape(64, 128, 8192), Shape(96, 96, 96)]


@needs_nvcc
def test_planted_files_build_in_one_unit_and_share_one_module(tmp_path, fake_config):
    files = [scan_set(PLANTED32).by_shape()[s] for s in PICK]
    cache = tmp_path / "cache"
    results = kb.build_all(files, jobs=1, config=fake_config, cache_dir=cache, per_unit=4)
    assert all(results[f.path].ok for f in files), [results[f.path].log for f in files]
    modules = [results[f.path].module_path for f in files]
    assert len({m.parent.name for m in modules}) == 4  # an entry per file, named by its own key
    assert len({os.stat(m).st_ino for m in modules}) == 1  # one module on disk, linked
    keys = [results[f.path].key for f in files]
    for f, module in zip(files, modules, strict=True):
        meta = json.loads((module.parent / "build.json").read_text())
        assert meta["unit"] == keys and meta["source"] == str(f.path)
        assert f"namespace {kb.module_name(meta['key'])} {{" in (module.parent / kb.WRAPPER).read_text()
    again = kb.build_all(files, jobs=1, config=fake_config, cache_dir=cache, per_unit=4)
    assert all(again[f.path].cached for f in files)


@needs_nvcc
def test_a_unit_that_fails_is_built_a_file_at_a_time(tmp_path, fake_config):
    folder = tmp_path / "h100_F32F16F16F32"
    folder.mkdir()
    good = (PLANTED32 / "128_256_512.cu").read_text()
    (folder / "128_256_512.cu").write_text(good)
    (folder / "64_64_64.cu").write_text(good.replace("{", "{ this is not C++;", 1))
    (folder / "256_256_256.cu").write_text(good + "\n// another build key\n")
    files = scan_set(folder).files
    results = kb.build_all(files, jobs=1, config=fake_config, cache_dir=tmp_path / "cache", per_unit=4)
    by_name = {f.path.name: results[f.path] for f in files}
    assert not by_name["64_64_64.cu"].ok
    for name in ("128_256_512.cu", "256_256_256.cu"):
        assert by_name[name].ok and "built alone: the unit of 3 files failed" in by_name[name].log
        meta = json.loads((by_name[name].module_path.parent / "build.json").read_text())
        assert meta["unit"] is None
