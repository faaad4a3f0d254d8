"""The tiny-shape family (tuner/tiny.py) on the CPU: configs, emitted source, the per-family build,
and the C ABI's host side (workspace sizes and status codes) from a library built here (nvcc
needed, no GPU: those entry points return before touching the device)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest
from config_strategies import FIELD_VALUES
from cuda_l2_explorer.importer.harness.build import CutlassInfo
from cuda_l2_explorer.tuner import build, emit, families, tiny
from cuda_l2_explorer.tuner.catalog import ConfigError, KernelConfig, first_catalog
from cuda_l2_explorer.tuner.config import SMEM_BYTES_SM90
from cuda_l2_explorer.tuner.families import full_catalog, kernel_from_dict
from cuda_l2_explorer.tuner.tiny import TinyConfig, tiny_catalog
from cuda_l2_explorer.tuner.wgmma import wgmma_catalog
from hypothesis import given, settings
from hypothesis import strategies as st

# Update deliberately when the template changes (and re-run the GPU correctness test).
GOLDEN_TINY_TU_SHA256 = "51da4a3d83b0c2b27d3271317c9b218ae6a48df1d20125478ad095ea3c2aad37"

ABI_SIGNATURES = (
    "L2X_API int l2x_gemm_{n}(const void* A, const void* B, void* C, int M, int N, int K, int raster,\n"
    "    int swizzle, int decomposition, int splits, void* workspace, size_t workspace_bytes,\n"
    "    cudaStream_t stream) {{",
    "L2X_API int l2x_gemm_{n}_workspace(int M, int N, int K, int raster, int swizzle, int decomposition,\n"
    "    int splits, size_t* bytes) {{",
    "L2X_API int l2x_gemm_{n}_can_implement(int M, int N, int K, int raster, int swizzle,\n"
    "    int decomposition, int splits) {{",
)


# ---------------------------------------------------------------------------- configs


def test_tiny_catalog_is_valid_unique_and_stable() -> None:
    cat = tiny_catalog()
    piped = [c for c in cat if c.loads == "smem"]
    direct = [c for c in cat if c.loads == "direct"]
    bulk = [c for c in cat if c.loads == "bulk"]
    tensor = [c for c in cat if c.loads == "tensor"]
    assert 6 <= len(piped) <= 16 and 6 <= len(direct) <= 16  # a handful of sharp kernels each
    assert 4 <= len(bulk) <= 16
    # every bulk tile fed by tensor copies too, and a few small tiles with K split over warp groups;
    # those of at most 32 rows also with four boxes a copy
    one_box = [c for c in tensor if c.copy_boxes == 1]
    whole = [c for c in one_box if c.warps_k == 1]
    assert [(c.tile_m, c.tile_n, c.tile_k) for c in whole] == [(c.tile_m, c.tile_n, c.tile_k) for c in bulk]
    assert 1 <= len(one_box) - len(whole) <= 8
    four = [dataclasses.replace(c, copy_boxes=4) for c in one_box if c.tile_m <= 32]
    slabs = [c for c in tensor if c.copy_boxes > 1 and not c.copy_pitched]
    # and the 16x32 split tile with four boxes a copy only: four and eight groups at K = 2048
    split16 = four[-3]
    deep = [dataclasses.replace(split16, warps_k=wk, tile_k=2048) for wk in (4, 8)]
    assert slabs == [*four, *deep] and len(four) >= 8 and split16.name == "tinyt_16x32x1024_w1x1x4_c4_bk"
    # and pitched where the extra lines fit
    pitched = [c for c in tensor if c.copy_pitched]
    assert pitched == [p for c in four if (p := tiny.pitched_twin(c))] and len(pitched) >= 8
    assert direct == tiny.direct_catalog() and bulk == tiny.bulk_catalog() and tensor == tiny.tensor_catalog()
    names = [c.name for c in cat]
    assert len(set(names)) == len(names)
    assert [c.name for c in tiny_catalog()] == names
    for c in cat:
        prefix = {"smem": "tiny", "direct": "tinyd", "bulk": "tinyb", "tensor": "tinyt"}[c.loads]
        assert re.fullmatch(prefix + r"_[A-Za-z0-9_]+", c.name), c.name
        assert TinyConfig.from_dict(c.to_dict()) == c
        assert kernel_from_dict(c.to_dict()) == c
        assert c.family == "sm90_mma_tiny" and c.user_tile() == (c.tile_m, c.tile_n)
    assert {c.b_major for c in cat} == {"n", "k"}
    assert {(c.tile_m, c.tile_n) for c in cat} >= {(64, 64), (64, 128), (128, 64), (128, 128)}


def test_full_catalog_is_first_plus_our_families_with_unique_names() -> None:
    full = full_catalog()
    assert full == [*first_catalog(), *tiny_catalog(), *wgmma_catalog()]
    assert len({c.name for c in full}) == len(full)


def test_kernel_from_dict_dispatches_on_family() -> None:
    cut = KernelConfig(128, 128)
    assert kernel_from_dict(cut.to_dict()) == cut
    with pytest.raises(ConfigError, match="family"):
        kernel_from_dict({**cut.to_dict(), "family": "triton"})
    with pytest.raises(ConfigError, match="family"):
        kernel_from_dict({"tile_m": 64, "tile_n": 64})
    with pytest.raises(ConfigError, match="unknown"):
        kernel_from_dict({**TinyConfig(64, 64).to_dict(), "swap_ab": True})


def test_name_and_hash_are_stable() -> None:
    c = TinyConfig(64, 128, 64, 2, 2, 3)
    assert c.name == "tiny_64x128x64_w2x2_s3_bn"
    assert TinyConfig(128, 128, 32, 2, 4, 4, b_major="k").name == "tiny_128x128x32_w2x4_s4_bk"
    assert c.config_hash == TinyConfig(64, 128, 64, 2, 2, 3).config_hash
    assert c.config_hash != TinyConfig(64, 128, 64, 2, 2, 4).config_hash
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.stages = 4  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"tile_m": 96, "tile_n": 64}, "tile_m"),
        ({"tile_m": 64, "tile_n": 48}, "tile_n"),
        ({"tile_m": 64, "tile_n": 64, "tile_k": 8}, "tile_k"),
        ({"tile_m": 16, "tile_n": 64, "warps_m": 2}, "warp tile M"),
        ({"tile_m": 64, "tile_n": 32, "warps_n": 4}, "warp tile N"),
        ({"tile_m": 128, "tile_n": 128, "warps_m": 2, "warps_n": 1}, "accumulators"),
        ({"tile_m": 256, "tile_n": 256, "warps_m": 4, "warps_n": 8}, "threads"),
        ({"tile_m": 64, "tile_n": 64, "stages": 1}, "stages"),
        ({"tile_m": 256, "tile_n": 256, "tile_k": 128, "warps_m": 4, "warps_n": 4, "stages": 4}, "fit"),
        ({"tile_m": 64, "tile_n": 64, "b_major": "m"}, "b_major"),
        ({"tile_m": 64, "tile_n": 64, "family": "cutlass_sm90"}, "family"),
        ({"tile_m": 64, "tile_n": True}, "positive int"),
        ({"tile_m": 64, "tile_n": 64, "warps_m": 0}, "positive int"),
    ],
)
def test_invalid_configs_are_rejected(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TinyConfig(**kwargs)


@settings(max_examples=300, deadline=None)
@given(
    tile_m=FIELD_VALUES,
    tile_n=FIELD_VALUES,
    tile_k=FIELD_VALUES,
    warps_m=FIELD_VALUES,
    warps_n=FIELD_VALUES,
    stages=FIELD_VALUES,
    b_major=st.text(max_size=2),
)
def test_any_parameters_give_a_valid_config_or_config_error(**kwargs: object) -> None:
    """Never another exception; what validates respects every constraint the template relies on."""
    try:
        c = TinyConfig(**kwargs)  # type: ignore[arg-type]
    except ConfigError:
        return
    assert c.tile_m in tiny.TILE_MS and c.tile_n in tiny.TILE_NS and c.tile_k in tiny.TILE_KS
    assert c.tile_m % (16 * c.warps_m) == 0 and c.tile_n % (16 * c.warps_n) == 0
    assert c.threads <= tiny.MAX_THREADS and 2 <= c.stages <= 8 and c.b_major in ("n", "k")
    assert c.smem_bytes() <= 227 * 1024


@settings(max_examples=100, deadline=None)
@given(tile_m=st.integers(1, 300).filter(lambda v: v not in tiny.TILE_MS))
def test_tile_m_outside_the_list_is_rejected(tile_m: int) -> None:
    with pytest.raises(ConfigError):
        TinyConfig(tile_m, 64)


# ---------------------------------------------------------------------------- split-K model


@settings(max_examples=300, deadline=None)
@given(
    k_chunks=st.integers(1, 4096),
    tile_k=st.sampled_from(tiny.TILE_KS),
    splits=st.integers(1, tiny.MAX_SPLITS),
)
def test_split_ranges_cover_every_k_tile_once(k_chunks: int, tile_k: int, splits: int) -> None:
    k = 8 * k_chunks
    ranges = tiny.split_ranges(k, tile_k, splits)
    k_tiles = -(-k // tile_k)
    assert len(ranges) == min(splits, k_tiles)
    assert ranges[0][0] == 0 and ranges[-1][1] == k_tiles
    assert all(b > a for a, b in ranges)  # no empty split (the kernel relies on it)
    assert all(ranges[i][1] == ranges[i + 1][0] for i in range(len(ranges) - 1))
    sizes = [b - a for a, b in ranges]
    assert max(sizes) - min(sizes) <= 1


def test_split_k_partials_fit_in_shared_memory() -> None:
    # the fp32 partial tile is parked where the pipeline's buffers were: it must fit a CTA
    for c in tiny_catalog():
        assert max(c.smem_bytes(), c.tile_m * c.tile_n * 4) <= SMEM_BYTES_SM90 - 1024, c.name


# ---------------------------------------------------------------------------- emitted source


def test_tiny_tu_is_deterministic_golden_and_cutlass_free() -> None:
    a = families.render_tu(tiny_catalog())
    assert a == families.render_tu(list(tiny_catalog()))
    assert hashlib.sha256(a.encode()).hexdigest() == GOLDEN_TINY_TU_SHA256
    assert "cutlass" not in a.lower().replace("kcutlasserror", "")
    assert "#include <cuda_fp16.h>" in a
    for needle in (
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
        "cp.async.cg.shared.global [%0], [%1], 16, %2;",
        "mapa.shared::cluster.u32",
        "ld.shared::cluster.v4.f32",
        "barrier.cluster.arrive.release.aligned",
        "cudaLaunchAttributeClusterDimension",
        "ld.global.nc.v4.u32",  # the register-direct kernels' loads
    ):
        assert needle in a, needle
    # no allocation, no synchronisation, no memset, no global atomics: a launch leaves no state
    for absent in ("cudaMalloc", "Synchronize", "cudaMemset", "atomic" + "Inc(", "atomicAdd("):
        assert absent not in a, absent


def test_tiny_tu_exports_the_emit_abi() -> None:
    src = families.render_tu(tiny_catalog())
    cutlass_src = families.render_tu([KernelConfig(128, 128)])
    for sig in ABI_SIGNATURES:  # the same text as the CUTLASS entry points
        assert sig.format(n="sm90_128x128x64_c1x1_coop_ps_sauto_bn") in cutlass_src
        for c in tiny_catalog():
            assert sig.format(n=c.name) in src, (c.name, sig)
    # status codes: the ABI's values (tuner/abi.py, which emit and tuner/native.py use too)
    from cuda_l2_explorer.tuner import abi

    enum = re.search(r"enum : int \{(.*?)\};", src, flags=re.S)
    assert enum is not None
    codes = dict(re.findall(r"(k[A-Z]\w+) = (\d+)", enum.group(1)))
    assert codes == {
        "kOk": str(abi.L2X_OK),
        "kCannotImplement": str(abi.L2X_CANNOT_IMPLEMENT),
        "kWorkspaceTooSmall": str(abi.L2X_WORKSPACE_TOO_SMALL),
        "kCudaError": str(abi.L2X_CUDA_ERROR),
        "kCutlassError": str(abi.L2X_CUTLASS_ERROR),
        "kInvalidArgument": str(abi.L2X_INVALID_ARGUMENT),
    }
    assert f"constexpr int kMaxSplits = {tiny.MAX_SPLITS};" in src
    assert "TinyShape<128, 128, 32, 2, 4, 4, true>" in src  # the K-major twin


def test_one_family_per_tu_and_cutlass_groups_unchanged() -> None:
    with pytest.raises(ValueError, match="family"):
        families.render_tu([KernelConfig(128, 128), TinyConfig(64, 64)])
    full = emit.group(full_catalog(), 4)
    first = emit.group(first_catalog(), 4)
    assert full[: len(first)] == first  # the CUTLASS TUs (and their cache keys) do not move
    assert all(len({c.family for c in g}) == 1 for g in full)
    assert sum(len(g) for g in full) == len(full_catalog())


def test_registry_lists_both_families() -> None:
    configs = [KernelConfig(128, 128), *tiny_catalog()]
    reg = emit.render_registry(configs, {"cutlass": "4.2.0"})
    names = re.findall(r'^  "((?:sm90|tiny[dbt]?)_[^"]+)",$', reg, flags=re.M)
    assert names == sorted(c.name for c in configs)
    params = [json.loads(p.replace('\\"', '"')) for p in re.findall(r'^  "(\{.*\})",$', reg, flags=re.M)]
    assert [kernel_from_dict(p).name for p in params] == names


# ---------------------------------------------------------------------------- nvcc


def _nvcc() -> str:
    nvcc = build.find_nvcc()
    if not nvcc:
        pytest.skip("nvcc not found")
    return nvcc


def test_one_tiny_tu_compiles_for_sm90a_without_cutlass(tmp_path: Path) -> None:
    nvcc = _nvcc()
    configs = [TinyConfig(64, 64, 32, 2, 2, 4), TinyConfig(128, 128, 32, 2, 4, 4, b_major="k")]
    result = build.compile_unit(configs, tmp_path, nvcc, None, build.nvcc_version(nvcc))
    assert result.obj is not None, result.error
    assert result.obj.stat().st_size > 10_000 and not result.cached
    cmd = json.loads(result.obj.with_suffix(".json").read_text())["command"]
    assert "-DNDEBUG" in cmd and not any(a.startswith("-I") for a in cmd)
    again = build.compile_unit(configs, tmp_path, nvcc, None, build.nvcc_version(nvcc))
    assert again.cached and again.obj == result.obj


def test_timeline_build_links_one_instrumented_tu_apart_from_latest(tmp_path: Path) -> None:
    """``--timeline``: the tiny kernels' step stamps on (one TU, its stamp array read by
    ``l2x_timeline``), a library of its own name that ``latest.json`` does not point at."""
    nvcc = _nvcc()
    names = ["tinyt_16x32x1024_w1x1x4_c4_bk", "tinyb_32x32x512_w2x1_bk"]
    configs = build.select(tiny_catalog(), ",".join(names))
    assert sorted(c.name for c in configs) == sorted(names)
    plain = build.build(configs, tmp_path, jobs=1, nvcc=nvcc)
    timed = build.build(configs, tmp_path, jobs=1, nvcc=nvcc, timeline=True)
    assert plain.library and timed.library and timed.library != plain.library
    assert [len(u.names) for u in timed.units] == [2]  # one TU: one stamp array, one reader
    assert json.loads((tmp_path / "lib" / "latest.json").read_text())["library"] == plain.library.name
    symbols = subprocess.run(["nm", "-D", str(timed.library)], capture_output=True, text=True).stdout
    assert " T l2x_timeline" in symbols
    plain_symbols = subprocess.run(["nm", "-D", str(plain.library)], capture_output=True, text=True).stdout
    assert "l2x_timeline" not in plain_symbols and "l2x_gemm_tinyb_32x32x512_w2x1_bk" in plain_symbols
    # the define reaches the source (and so the cache key); off, the stamps compile to nothing
    unit = build.plan_unit(configs, "v", None, (build.TIMELINE_DEFINE,))
    assert unit.source.startswith("#define L2X_TIMELINE 1\n")
    assert unit.key != build.plan_unit(configs, "v", None).key
    assert "#define L2X_STAMP_BY(thread, slot) ((void)0)" in unit.source


def test_timeline_build_and_only_refuse_what_they_cannot_do() -> None:
    with pytest.raises(build.BuildError, match="one of"):
        build.build([KernelConfig(128, 128)], timeline=True)
    mixed = [tiny_catalog()[0], wgmma_catalog()[0]]
    with pytest.raises(build.BuildError, match="one of"):
        build.build(mixed, timeline=True)


def test_wgmma_kernels_stamp_their_steps_in_a_timeline_build() -> None:
    """The wgmma family renders the same stamps as the tiny one (tuner/csrc/timeline.cuh): the
    producer thread stamps the start and the copies issued, the first consumer thread the landings
    and the MMAs; off, every stamp compiles to nothing."""
    configs = [c for c in wgmma_catalog() if c.name == "wgsk_64x64x64_s8_bn"]
    cutlass = CutlassInfo("/nowhere", (), "4.2.0")
    timed = build.plan_unit(configs, "v", cutlass, (build.TIMELINE_DEFINE,))
    assert timed.source.startswith("#define L2X_TIMELINE 1\n")
    stamps = ("L2X_STAMP(kStampStart)", "L2X_STAMP_BY(128, kStampFirstLanded)", "L2X_STAMP(kStampStored)")
    assert all(stamp in timed.source for stamp in stamps)
    assert timed.source.count("#ifndef L2X_TIMELINE_BLOCK") == 1
    plain = build.plan_unit(configs, "v", cutlass)
    assert "#define L2X_STAMP_BY(thread, slot) ((void)0)" in plain.source and plain.key != timed.key
    with pytest.raises(build.BuildError, match="not in the catalog: nope"):
        build.select(tiny_catalog(), "tinyt_16x32x1024_w1x1x4_c4_bk,nope")
    assert build.select(tiny_catalog(), None) == tiny_catalog()


# ---------------------------------------------------------------------------- register-direct kernels


def test_direct_config_keeps_earlier_names_and_hashes() -> None:
    """``loads`` is left out of a pipelined kernel's dict (its name and hash as before) and kept in a
    direct kernel's, whose name says ``tinyd`` and no stages."""
    piped = TinyConfig(64, 64, 32, 2, 2, 4)
    assert "loads" not in piped.to_dict() and piped.name == "tiny_64x64x32_w2x2_s4_bn"
    assert piped.config_hash == "bd6344b6621f"  # as bundled before the field existed
    d = TinyConfig(32, 32, 64, 2, 1, b_major="k", loads="direct")
    assert d.to_dict()["loads"] == "direct" and d.name == "tinyd_32x32x64_w2x1_bk"
    assert TinyConfig.from_dict(d.to_dict()) == d and kernel_from_dict(d.to_dict()) == d
    assert d.smem_bytes() == 0


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        (dict(b_major="n"), "K-major"),
        (dict(stages=4), "no pipeline"),
        (dict(tile_k=16), "tile_k"),
        (dict(tile_n=128, warps_n=2), "warp tile N"),  # 64 columns a warp
        (dict(tile_m=48, warps_m=2), "tile_m"),
        (dict(tile_m=32, warps_m=1, tile_k=256), "registers"),  # 32x32 warp tile at K = 256
        (dict(tile_m=64, tile_n=64, warps_m=4, warps_n=4, tile_k=256), "512 threads"),
        (dict(loads="global"), "loads"),
    ],
)
def test_direct_config_validation(fields: dict, match: str) -> None:
    base = dict(tile_m=32, tile_n=32, tile_k=64, warps_m=2, warps_n=1, b_major="k", loads="direct")
    with pytest.raises(ConfigError, match=match):
        TinyConfig(**{**base, **fields})


def test_direct_registers_count_fragments() -> None:
    # warp tile 16x32 at K = 128: A 2 rows x 4 blocks, B 4 columns x 4 blocks (4 registers each),
    # 4 n8 accumulators of 4
    assert TinyConfig(16, 32, 128, 1, 1, b_major="k", loads="direct").direct_registers() == 4 * 4 * 6 + 16
    assert all(c.direct_registers() <= tiny.MAX_DIRECT_REGISTERS for c in tiny.direct_catalog())


def test_direct_kernels_take_k_up_to_their_tile_data_parallel_only() -> None:
    from cuda_l2_explorer.tuner.search_space import variants_for

    d = TinyConfig(32, 32, 128, 2, 1, b_major="k", loads="direct").to_dict()
    fam = families.family_of(d)
    assert fam.supports(64, 64, 128, d) and not fam.supports(64, 64, 136, d)
    assert "at most 128" in (fam.why_not(64, 64, 256, d) or "")
    assert fam.decompositions(d) == (0, 1)
    assert all(v.splits == 1 for v in variants_for(64, 64, 128, d, 132))
    piped = TinyConfig(32, 32, 128, 2, 2, 6).to_dict()
    assert fam.supports(64, 64, 16384, piped) and 2 in fam.decompositions(piped)


# ---------------------------------------------------------------------------- bulk- and tensor-fed kernels


@pytest.mark.parametrize(("loads", "prefix", "spare"), [("bulk", "tinyb", 0), ("tensor", "tinyt", 1024)])
def test_panel_config_names_dict_and_panels(loads: str, prefix: str, spare: int) -> None:
    b = TinyConfig(32, 32, 512, 2, 1, b_major="k", loads=loads)
    assert b.name == f"{prefix}_32x32x512_w2x1_bk" and b.to_dict()["loads"] == loads
    assert TinyConfig.from_dict(b.to_dict()) == b and kernel_from_dict(b.to_dict()) == b
    # the A and B panels at K = tile_k (tensor: and the spare that aligns the swizzled boxes)
    assert b.smem_bytes() == (32 + 32) * 512 * 2 + spare
    panel_kernels = [*tiny.bulk_catalog(), *tiny.tensor_catalog()]
    assert all(c.smem_bytes() <= SMEM_BYTES_SM90 - 1024 for c in panel_kernels)


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        (dict(b_major="n"), "K-major"),
        (dict(stages=4), "no pipeline"),
        (dict(tile_k=32), "tile_k"),  # a panel is 64 to 512 halfs wide (a tensor copy's whole boxes of 64)
        (dict(tile_n=128, warps_n=2), "warp tile N"),
        (dict(tile_m=256, tile_n=128, warps_m=1, warps_n=4, tile_k=64), "accumulators"),
        (dict(tile_m=128, tile_n=128, warps_m=4, warps_n=4, tile_k=512), "over shared memory"),
        (dict(tile_m=64, tile_n=64, warps_m=4, warps_n=8), "512 threads"),
    ],
)
@pytest.mark.parametrize("loads", ["bulk", "tensor"])
def test_panel_config_validation(loads: str, fields: dict, match: str) -> None:
    base = dict(tile_m=32, tile_n=32, tile_k=256, warps_m=2, warps_n=1, b_major="k", loads=loads)
    with pytest.raises(ConfigError, match=match):
        TinyConfig(**{**base, **fields})


@pytest.mark.parametrize("loads", ["bulk", "tensor"])
def test_panel_kernels_take_k_up_to_their_tile_data_parallel_only(loads: str) -> None:
    from cuda_l2_explorer.tuner.search_space import sweep_group, variants_for

    b = TinyConfig(64, 64, 512, 4, 2, b_major="k", loads=loads).to_dict()
    fam = families.family_of(b)
    assert fam.supports(64, 64, 512, b) and not fam.supports(64, 64, 520, b)
    assert "shared memory" in (fam.why_not(64, 64, 1024, b) or "")
    assert fam.decompositions(b) == (0, 1)
    assert all(v.splits == 1 for v in variants_for(256, 256, 512, b, 132))
    assert sweep_group(b).endswith(f"/{loads}")


def test_warps_k_splits_k_over_warp_groups_of_panel_kernels_only() -> None:
    t = TinyConfig(32, 32, 512, 2, 1, b_major="k", loads="tensor", warps_k=2)
    assert t.name == "tinyt_32x32x512_w2x1x2_bk" and t.to_dict()["warps_k"] == 2 and t.threads == 128
    assert TinyConfig.from_dict(t.to_dict()) == t and kernel_from_dict(t.to_dict()) == t
    # the panels, one fp32 tile a group past the first (group 0 adds them), the swizzle's spare
    assert t.smem_bytes() == (32 + 32) * 512 * 2 + 32 * 32 * 4 + 1024
    one = TinyConfig(32, 32, 512, 2, 1, b_major="k", loads="tensor")
    assert "warps_k" not in one.to_dict() and one.name == "tinyt_32x32x512_w2x1_bk"  # earlier names kept
    # each group holds the whole tile's accumulators: the bound does not loosen with more groups
    with pytest.raises(ConfigError, match="accumulators"):
        TinyConfig(256, 128, 64, 1, 4, b_major="k", loads="bulk", warps_k=4)
    with pytest.raises(ConfigError, match="warps_k must be one of"):
        TinyConfig(32, 32, 512, 2, 1, b_major="k", loads="tensor", warps_k=3)
    with pytest.raises(ConfigError, match="panel kinds"):
        TinyConfig(32, 32, 128, 2, 1, b_major="k", loads="direct", warps_k=2)
    with pytest.raises(ConfigError, match="panel kinds"):
        TinyConfig(32, 32, 64, 2, 2, 4, warps_k=2)
    with pytest.raises(ConfigError, match="512 threads"):
        TinyConfig(64, 64, 512, 4, 2, b_major="k", loads="tensor", warps_k=4)
    eight = TinyConfig(16, 32, 1024, 1, 1, b_major="k", loads="tensor", warps_k=8, copy_boxes=4)
    assert eight.name == "tinyt_16x32x1024_w1x1x8_c4_bk" and eight.threads == 256
    assert eight.partial_bytes() == 7 * 16 * 32 * 4  # groups 1..7's fp32 tiles
    tu = families.render_tu([t])
    assert "using Shape = DirectShape<32, 32, 512, 2, 1, 2, 1, 0>;" in tu and "kPartialBytes" in tu


def test_copy_boxes_brings_several_boxes_a_tensor_copy() -> None:
    c = TinyConfig(16, 32, 1024, 1, 1, b_major="k", loads="tensor", warps_k=4, copy_boxes=4)
    assert c.name == "tinyt_16x32x1024_w1x1x4_c4_bk" and c.to_dict()["copy_boxes"] == 4
    assert TinyConfig.from_dict(c.to_dict()) == c and kernel_from_dict(c.to_dict()) == c
    one = dataclasses.replace(c, copy_boxes=1)
    # earlier names kept
    assert "copy_boxes" not in one.to_dict() and one.name == "tinyt_16x32x1024_w1x1x4_bk"
    assert c.smem_bytes() == one.smem_bytes()  # whole copies up to tile_k: the same panels
    with pytest.raises(ConfigError, match="copy_boxes must be one of"):
        dataclasses.replace(c, copy_boxes=3)
    with pytest.raises(ConfigError, match="tensor kind"):
        TinyConfig(32, 32, 512, 2, 1, b_major="k", loads="bulk", copy_boxes=4)
    with pytest.raises(ConfigError, match="whole copies"):
        TinyConfig(32, 32, 128, 2, 1, b_major="k", loads="tensor", copy_boxes=4)  # two boxes: no whole copy
    # a copy reads whole 64-k slabs of the matrix as it lies: K a multiple of 64
    fam = families.family_of(c.to_dict())
    assert fam.supports(64, 64, 192, c.to_dict()) and not fam.supports(64, 64, 96, c.to_dict())
    assert "multiple of 64" in (fam.why_not(64, 64, 96, c.to_dict()) or "")
    assert fam.supports(64, 64, 96, one.to_dict())
    tu = families.render_tu([c])
    assert "using Shape = DirectShape<16, 32, 1024, 1, 1, 4, 4, 0>;" in tu
    deep = dataclasses.replace(c, tile_k=2048)  # 193 KB of panels: fits; pitched, it would not
    assert deep in tiny.tensor_catalog() and tiny.pitched_twin(deep) is None
    assert fam.supports(64, 64, 2048, deep.to_dict()) and not fam.supports(64, 64, 2048, c.to_dict())
    assert "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes" in tu


def test_copy_pitched_lands_a_copys_rows_one_line_apart_more() -> None:
    four = dict(b_major="k", loads="tensor", warps_k=4, copy_boxes=4)
    c = TinyConfig(16, 32, 1024, 1, 1, **four, copy_pitched=True)
    assert c.name == "tinyt_16x32x1024_w1x1x4_p4_bk" and c.to_dict()["copy_pitched"] is True
    assert TinyConfig.from_dict(c.to_dict()) == c and kernel_from_dict(c.to_dict()) == c
    slabs = dataclasses.replace(c, copy_pitched=False)
    assert "copy_pitched" not in slabs.to_dict() and slabs.name == "tinyt_16x32x1024_w1x1x4_c4_bk"
    # four copies at K = 1024, each five lines a row where four boxes land
    assert c.smem_bytes() - slabs.smem_bytes() == (16 + 32) * 4 * 128
    with pytest.raises(ConfigError, match="copy_pitched needs copy_boxes"):
        dataclasses.replace(c, copy_boxes=1)
    big = TinyConfig(32, 64, 1024, 2, 2, b_major="k", loads="tensor", warps_k=2, copy_boxes=4)
    assert tiny.pitched_twin(big) is None  # 240 KB of panels: over shared memory
    fam = families.family_of(c.to_dict())
    assert not fam.supports(64, 64, 96, c.to_dict()) and fam.supports(64, 64, 192, c.to_dict())
    assert "using Shape = DirectShape<16, 32, 1024, 1, 1, 4, 4, 1>;" in families.render_tu([c])


def test_tiny_tu_renders_each_entry_kind_once_per_kernel() -> None:
    tu = families.render_tu(tiny_catalog())
    assert tu.count("using E = BulkEntry<Shape>;") == len(tiny.bulk_catalog())
    assert tu.count("using E = TensorEntry<Shape>;") == len(tiny.tensor_catalog())
    assert tu.count("using E = DirectEntry<Shape>;") == len(tiny.direct_catalog())
    assert "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes" in tu
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in tu
