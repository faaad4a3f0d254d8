"""Build the planted kernels (tests/kernelsets/planted) with importer/harness/build.py and run them.

Checks that every planted file builds against the real torch, that the cache serves a second
build, and that the kernels do what tests/kernelsets/planted/README.md says: `correct` agrees
with torch.matmul, `wrong` does not, `fp16acc` shows fp16-accumulation error, the audit faults
still compute the right C, and `tiles` runs only on padded inputs. `crash` and `hang` are built
but never run here: the harness runs those in a worker process it can kill.
Set CUDA_L2_EXPLORER_BUILD_CACHE to keep the builds between runs.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from cuda_l2_explorer.db.shapes import Shape  # noqa: E402
from cuda_l2_explorer.importer.harness import build as kb  # noqa: E402
from cuda_l2_explorer.importer.kernelset import padded_shape, scan_set  # noqa: E402

PLANTED = Path(__file__).resolve().parents[1] / "kernelsets" / "planted"
NEVER_RUN = {Shape(192, 64, 128), Shape(64, 64, 128)}  # crash, hang


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    cache = os.environ.get("CUDA_L2_EXPLORER_BUILD_CACHE") or str(tmp_path_factory.mktemp("kernel-cache"))
    f32 = scan_set(PLANTED, "h100", "F32F16F16F32")
    f16 = scan_set(PLANTED, "h100", "F16F16F16F16")
    config = kb.make_config("auto")
    results = kb.build_all(f32.files + f16.files, config=config, cache_dir=cache)
    return {"f32": f32, "f16": f16, "results": results, "config": config, "cache": cache}


def kernel(built, shape: Shape, acc: str = "f32"):
    """The loaded module of a planted kernel (``built``: a build fixture's dict)."""
    assert shape not in NEVER_RUN
    f = built[acc].by_shape()[shape]
    result = built["results"][f.path]
    assert result.ok, result.log
    return kb.load_module(result.module_path)


def rel_err(c, ref) -> float:
    c64 = c.double()
    if not torch.isfinite(c64).all():
        return math.inf
    return ((c64 - ref).norm() / ref.norm()).item()


def inputs(m: int, n: int, k: int, seed: int = 0):
    g = torch.Generator(device="cuda").manual_seed(seed + m * 7919 + n * 104729 + k)
    a = torch.randn(m, k, device="cuda", generator=g).half()
    b = torch.randn(k, n, device="cuda", generator=g).half()
    b_col = b.t().contiguous().t()
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    ref = a.double() @ b.double()
    torch_err = rel_err(torch.matmul(a, b), ref)
    return a, b, b_col, c, ref, torch_err


def test_every_planted_kernel_builds(built):
    results = built["results"]
    files = built["f32"].files + built["f16"].files
    assert len(results) == len(files) == 13  # 12 fp32-accumulating (legacy_stream among them), 1 fp16
    for f in files:
        assert results[f.path].ok, f"{f.rel}: {results[f.path].log}"
    by_shape = built["f32"].by_shape()
    same_a, same_b = by_shape[Shape(64, 64, 64)], by_shape[Shape(128, 256, 512)]
    assert results[same_a.path].module_path == results[same_b.path].module_path
    assert built["config"].arch.startswith("sm_")


def test_second_build_comes_from_the_cache(built):
    files = built["f32"].files
    again = kb.build_all(files, config=built["config"], cache_dir=built["cache"])
    for f in files:
        assert again[f.path].ok and again[f.path].cached
        assert again[f.path].module_path == built["results"][f.path].module_path


@pytest.mark.parametrize("shape", [(128, 256, 512), (64, 64, 64), (100, 200, 300), (1, 4096, 77)])
def test_correct_matches_torch(built, shape):
    run = kernel(built, Shape(128, 256, 512))  # runtime shapes: any (M, N, K)
    a, b, b_col, c, ref, torch_err = inputs(*shape)
    run(a, b, b_col, c)
    torch.cuda.synchronize()
    err = rel_err(c, ref)
    assert err < 2 * torch_err + 1e-4, (err, torch_err)


def test_same_module_loads_once(built):
    assert kernel(built, Shape(64, 64, 64)) is kernel(built, Shape(128, 256, 512))


def test_wrong_is_wrong(built):
    run = kernel(built, Shape(256, 128, 1024))
    a, b, b_col, c, ref, _ = inputs(256, 128, 1024)
    run(a, b, b_col, c)
    torch.cuda.synchronize()
    assert 0.05 < rel_err(c, ref) < math.inf


def test_fp16_accumulation_shows(built):
    run = kernel(built, Shape(64, 128, 8192))
    a, b, b_col, c, ref, torch_err = inputs(64, 128, 8192)
    run(a, b, b_col, c)
    torch.cuda.synchronize()
    err = rel_err(c, ref)
    assert err < 0.1 and err > 5 * torch_err, (err, torch_err)


def test_fp16_set_kernel(built):
    run = kernel(built, Shape(128, 256, 512), "f16")
    a, b, b_col, c, ref, _ = inputs(128, 256, 512)
    run(a, b, b_col, c)
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 2e-2


def test_side_stream_is_correct_only_after_a_device_sync(built):
    run = kernel(built, Shape(256, 256, 256))
    a, b, b_col, c, ref, torch_err = inputs(256, 256, 256)
    run(a, b, b_col, c)
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 2 * torch_err + 1e-4


def test_sync_per_call_is_correct(built):
    run = kernel(built, Shape(128, 128, 128))
    a, b, b_col, c, ref, torch_err = inputs(128, 128, 128)
    run(a, b, b_col, c)
    assert rel_err(c, ref) < 2 * torch_err + 1e-4  # no sync needed: the launcher did it


def test_alloc_per_call_allocates_every_call(built):
    run = kernel(built, Shape(512, 128, 256))
    a, b, b_col, c, ref, torch_err = inputs(512, 128, 256)
    run(a, b, b_col, c)
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 2 * torch_err + 1e-4
    before = torch.cuda.memory_stats()["allocation.all.allocated"]
    for _ in range(3):
        run(a, b, b_col, c)
    torch.cuda.synchronize()
    assert torch.cuda.memory_stats()["allocation.all.allocated"] - before >= 3


def test_cudamalloc_per_call_is_correct(built):
    run = kernel(built, Shape(256, 512, 128))
    a, b, b_col, c, ref, torch_err = inputs(256, 512, 128)
    run(a, b, b_col, c)
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 2 * torch_err + 1e-4


def test_tiles_needs_the_padding_rule(built):
    f = built["f32"].by_shape()[Shape(96, 96, 96)]
    run = kernel(built, f.shape)
    assert f.pad == (64, 64, 64)
    p = padded_shape(f.shape, f.pad)
    assert p == Shape(128, 128, 128)
    a, b, b_col, c, ref, torch_err = inputs(96, 96, 96)
    ap = torch.zeros(p.m, p.k, device="cuda", dtype=torch.float16)
    bp = torch.zeros(p.k, p.n, device="cuda", dtype=torch.float16)
    ap[:96, :96] = a
    bp[:96, :96] = b
    cp = torch.full((p.m, p.n), float("nan"), device="cuda", dtype=torch.float16)
    run(ap, bp, bp.t().contiguous().t(), cp)
    torch.cuda.synchronize()
    assert rel_err(cp[:96, :96], ref) < 2 * torch_err + 1e-4
    with pytest.raises(RuntimeError, match="padded"):
        run(a, b, b_col, c)


@pytest.fixture(scope="module")
def built_in_units(tmp_path_factory):
    """The fp32 planted set built again, four files to a translation unit (build_units.py)."""
    f32 = scan_set(PLANTED, "h100", "F32F16F16F32")
    config = kb.make_config("auto")
    cache = tmp_path_factory.mktemp("unit-cache")
    results = kb.build_all(f32.files, jobs=2, config=config, cache_dir=cache, per_unit=4)
    return {"f32": f32, "results": results}


def test_kernels_built_in_units_load_from_one_module_and_compute_their_own(built_in_units):
    results = built_in_units["results"]
    assert all(r.ok for r in results.values()), [r.log for r in results.values() if not r.ok]
    inodes = {os.stat(r.module_path).st_ino for r in results.values()}
    assert len(inodes) < len(results)  # modules were shared
    by_shape = built_in_units["f32"].by_shape()
    correct = kernel(built_in_units, Shape(128, 256, 512))
    wrong = kernel(built_in_units, Shape(256, 128, 1024))
    fp16acc = kernel(built_in_units, Shape(64, 128, 8192))
    assert len({correct, wrong, fp16acc}) == 3
    a, b, b_col, c, ref, torch_err = inputs(256, 128, 1024)
    correct(a, b, b_col, c)
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 2 * torch_err + 1e-4
    wrong(a, b, b_col, c)
    torch.cuda.synchronize()
    assert 0.05 < rel_err(c, ref) < math.inf
    a, b, b_col, c, ref, torch_err = inputs(64, 128, 8192)
    fp16acc(a, b, b_col, c)
    torch.cuda.synchronize()
    assert 5 * torch_err < rel_err(c, ref) < 0.1
    assert results[by_shape[Shape(96, 96, 96)].path].ok  # its own `Int` template, in its namespace
