"""The tuner's CPU side: catalog validation and determinism, emitted source, build plumbing,
and one emitted translation unit compiled (not run) for sm_90a with nvcc when the toolchain and
CUTLASS headers are present (skipped otherwise)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re

import pytest
from cuda_l2_explorer.tuner import build, emit, families
from cuda_l2_explorer.tuner.catalog import ConfigError, KernelConfig, first_catalog, smoke_catalog
from sm90a_compiles import TUNER_CONFIG

# Update deliberately when the template changes (and re-run the GPU correctness test).
GOLDEN_SMOKE_TU_SHA256 = "54af1dc5dfccd1ac72053de4a8e7b25171010af88510df7a3cfb9b34d5513627"


# ---------------------------------------------------------------------------- catalog


def test_first_catalog_is_valid_unique_and_stable() -> None:
    cat = first_catalog()
    assert 10 <= len(cat) <= 96  # a few dozen: the whole library builds in ~12 min on 2 cores
    names = [c.name for c in cat]
    assert len(set(names)) == len(names)
    assert [c.name for c in first_catalog()] == names
    for c in cat:
        assert re.fullmatch(r"[A-Za-z0-9_]+", c.name), c.name
        assert KernelConfig.from_dict(c.to_dict()) == c
    # the regimes of issue 4 are represented
    assert any(c.swap_ab for c in cat)
    assert any(c.scheduler == "streamk" for c in cat)
    assert any(c.schedule == "pingpong" for c in cat)
    assert any(c.cluster_m * c.cluster_n > 1 for c in cat)
    assert any(c.b_major == "k" for c in cat)


def test_name_and_hash_are_stable() -> None:
    c = KernelConfig(128, 256, cluster_m=2)
    assert c.name == "sm90_128x256x64_c2x1_coop_ps_sauto_bn"
    assert KernelConfig(128, 64, swap_ab=True, scheduler="streamk").name.endswith("_coop_sk_sauto_bn_swap")
    assert c.config_hash == KernelConfig(128, 256, cluster_m=2).config_hash
    assert c.config_hash != KernelConfig(128, 256).config_hash


PP_176 = {"tile_m": 128, "tile_n": 176, "schedule": "pingpong"}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"tile_m": 64, "tile_n": 128}, "cooperative"),  # cooperative needs tile M >= 128
        ({"tile_m": 96, "tile_n": 128, "schedule": "pingpong"}, "tile_m"),
        ({"tile_m": 128, "tile_n": 24}, "tile_n"),
        ({"tile_m": 128, "tile_n": 512}, "tile_n"),
        ({"tile_m": 128, "tile_n": 128, "tile_k": 48}, "tile_k"),
        ({"tile_m": 128, "tile_n": 128, "cluster_m": 3}, "cluster"),
        ({"tile_m": 128, "tile_n": 128, "cluster_m": 4, "cluster_n": 2}, "cluster"),
        ({"tile_m": 128, "tile_n": 128, "schedule": "pingpong", "scheduler": "streamk"}, "stream-K"),
        ({"tile_m": 256, "tile_n": 256, "tile_k": 128}, "shared memory"),
        ({"tile_m": 128, "tile_n": 128, "stages": 1}, "stages"),
        ({"tile_m": 128, "tile_n": 256, "stages": 7}, "fit"),
        ({"tile_m": 128, "tile_n": 128, "schedule": "warp"}, "schedule"),
        ({"tile_m": 128, "tile_n": 128, "b_major": "m"}, "b_major"),
        ({"tile_m": 128, "tile_n": 128, "family": "triton"}, "family"),
        ({"tile_m": 128, "tile_n": True}, "positive int"),
        ({"tile_m": 128, "tile_n": 160, "schedule": "pingpong", "epi_n": 48}, "epi_n"),  # 160 % 48
        ({"tile_m": 128, "tile_n": 160, "schedule": "pingpong", "epi_n": 40}, "epi_n"),  # not 16-wide
        ({"tile_m": 128, "tile_n": 128, "schedule": "pingpong", "epi_n": "wide"}, "epi_n"),
        # 5 stages of 128x176 (190 KB) and two 64x176 subtiles (44 KB) overrun 227 KB
        ({"tile_m": 128, "tile_n": 176, "schedule": "pingpong", "stages": 5, "epi_n": 176}, "fit"),
        # one buffer of D leaves room for a fifth 128x176 stage, not a sixth (6 x 38 KB + 22 KB)
        ({**PP_176, "stages": 6, "epi_n": 176, "epi_buffers": 1}, "fit"),
        ({**PP_176, "epi_n": 176, "epi_buffers": 2}, "epi_buffers"),
        ({**PP_176, "epi_buffers": 1}, "epi_n"),
    ],
)
def test_invalid_configs_are_rejected(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        KernelConfig(**kwargs)


def test_from_dict_rejects_unknown_fields() -> None:
    with pytest.raises(ConfigError):
        KernelConfig.from_dict({"tile_m": 128, "tile_n": 128, "raster": 1})


def test_config_is_frozen() -> None:
    c = KernelConfig(128, 128)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.tile_m = 256  # type: ignore[misc]


def test_explicit_epilogue_subtile() -> None:
    auto = KernelConfig(128, 160, schedule="pingpong", cluster_m=2, stages=5, swap_ab=True)
    wide = KernelConfig(128, 160, schedule="pingpong", cluster_m=2, stages=5, swap_ab=True, epi_n=160)
    # the default stays out of the dict, so kernels built before the field keep name, dict and hash
    assert "epi_n" not in auto.to_dict() and auto.name == "sm90_128x160x64_c2x1_pp_ps_s5_bn_swap"
    assert auto.config_hash == "bace7490a739"
    assert wide.name == auto.name + "_e160" and wide.to_dict()["epi_n"] == 160
    assert KernelConfig.from_dict(wide.to_dict()) == wide and wide.config_hash != auto.config_hash
    assert wide.epi_smem() == 2 * 64 * 160 * 2  # two buffers of one warpgroup's 64 rows
    assert KernelConfig(256, 128, epi_n=64).epi_smem() == 2 * 128 * 64 * 2  # cooperative: 128 rows
    src = families.render_tu([auto, wide])
    assert src.count("cutlass::epilogue::collective::EpilogueTileAuto") == 1
    assert "Shape<_64, _160>, float, float," in src


def test_convert_epilogue() -> None:
    alpha = KernelConfig(128, 176, schedule="pingpong", cluster_n=2, stages=4, swap_ab=True, epi_n=176)
    convert = dataclasses.replace(alpha, epilogue="convert")
    # the default stays out of the dict: the kernels built before the field keep name and hash
    assert "epilogue" not in alpha.to_dict() and alpha.name == "sm90_128x176x64_c1x2_pp_ps_s4_bn_swap_e176"
    assert convert.name == alpha.name + "_cv" and convert.to_dict()["epilogue"] == "convert"
    assert KernelConfig.from_dict(convert.to_dict()) == convert
    assert convert.config_hash != alpha.config_hash
    src = families.render_tu([alpha, convert])
    # one kernel's namespace defines the callbacks and hands them to the epilogue builder
    assert src.count("struct ConvertAcc") == 1
    assert src.count("cutlass::epilogue::TmaWarpSpecialized,\n    ConvertAcc>::CollectiveOp;") == 1
    assert src.count("cutlass::epilogue::TmaWarpSpecialized>::CollectiveOp;") == 1
    with pytest.raises(ConfigError, match="epilogue"):
        KernelConfig(128, 128, epilogue="scale")  # type: ignore[arg-type]


def test_one_epilogue_buffer() -> None:
    two = KernelConfig(
        128, 176, schedule="pingpong", cluster_n=2, stages=4, swap_ab=True, epi_n=176, epilogue="convert"
    )
    one = dataclasses.replace(two, stages=5, epi_buffers=1)  # the room of one buffer: a fifth stage
    # the default stays out of the dict: the kernels built before the field keep name and hash
    assert "epi_buffers" not in two.to_dict() and two.name == "sm90_128x176x64_c1x2_pp_ps_s4_bn_swap_e176_cv"
    assert one.name == two.name.replace("_s4_", "_s5_").replace("_cv", "_d1_cv")
    assert one.to_dict()["epi_buffers"] == 1
    assert KernelConfig.from_dict(one.to_dict()) == one
    assert (two.epi_smem(), one.epi_smem()) == (2 * 64 * 176 * 2, 64 * 176 * 2)
    src = families.render_tu([two, one])
    # one kernel's namespace defines the one-buffer builder and builds its epilogue with it
    assert src.count("struct OneBufferEpilogueBuilder") == 1
    assert src.count("CollectiveEpilogue = typename OneBufferEpilogueBuilder<") == 1
    assert src.count("CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<") == 1


def test_user_tile_follows_swap() -> None:
    assert KernelConfig(128, 32, swap_ab=True).user_tile() == (32, 128)
    assert KernelConfig(128, 32).user_tile() == (128, 32)


# ---------------------------------------------------------------------------- emission


def test_emitted_tu_is_deterministic_and_golden() -> None:
    a = families.render_tu(smoke_catalog())
    b = families.render_tu(list(smoke_catalog()))
    assert a == b
    assert hashlib.sha256(a.encode()).hexdigest() == GOLDEN_SMOKE_TU_SHA256


def test_emitted_tu_contents() -> None:
    src = families.render_tu(smoke_catalog())
    assert "torch" not in src
    for c in smoke_catalog():
        for suffix in ("", "_workspace", "_can_implement"):
            assert f"L2X_API int l2x_gemm_{c.name}{suffix}(" in src
    # beta = 0 through a void-C epilogue: C is never read
    assert "void, LayoutD, 8," in src
    assert "cutlass::gemm::StreamKScheduler" in src
    assert "cutlass::gemm::PersistentScheduler" in src
    assert "Entry<Gemm, true, false, false>" in src  # the swap-AB kernel
    assert "cudaMalloc" not in src and "cudaDeviceSynchronize" not in src


def test_layouts() -> None:
    row, col = emit.ROW, emit.COL
    assert emit.layouts(KernelConfig(128, 128)) == (row, row, row)
    assert emit.layouts(KernelConfig(128, 128, b_major="k")) == (row, col, row)
    assert emit.layouts(KernelConfig(128, 64, swap_ab=True)) == (col, col, col)
    assert emit.layouts(KernelConfig(128, 64, swap_ab=True, b_major="k")) == (row, col, col)


def test_grouping_is_order_independent() -> None:
    cat = first_catalog()
    g1 = emit.group(cat, 4)
    g2 = emit.group(list(reversed(cat)), 4)
    assert g1 == g2
    assert sum(len(g) for g in g1) == len(cat)
    assert all(len(g) <= 4 for g in g1)


def test_registry_lists_configs_sorted() -> None:
    reg = emit.render_registry(list(reversed(smoke_catalog())), {"cutlass": "4.2.0"})
    names = re.findall(r'^  "(sm90_[^"]+)",$', reg, flags=re.M)
    assert names == sorted(c.name for c in smoke_catalog())
    assert f"const int kCount = {len(names)};" in reg
    params = re.findall(r'^  "(\{.*\})",$', reg, flags=re.M)
    assert json.loads(params[0].replace('\\"', '"'))["tile_m"] == 128


def test_unit_key_depends_on_inputs() -> None:
    k = build.unit_key("src", "release 13.0", "4.2.0")
    assert k == build.unit_key("src", "release 13.0", "4.2.0")
    assert k != build.unit_key("src2", "release 13.0", "4.2.0")
    assert k != build.unit_key("src", "release 13.1", "4.2.0")
    assert k != build.unit_key("src", "release 13.0", "4.3.0")
    assert "-DNDEBUG" in build.COMPILE_FLAGS


# ---------------------------------------------------------------------------- compile only


def test_one_emitted_tu_compiles_for_sm90a(sm90a_compiles) -> None:
    """One persistent cooperative kernel, compiled to an object file (about 1-2 minutes; beside the
    export's compile: tests/sm90a_compiles.py)."""
    # Through the real build path: the emitted TU, the flags, the cache and the atomic rename.
    result = sm90a_compiles.tuner
    assert result.obj is not None, result.error
    assert result.obj.stat().st_size > 10_000 and not result.cached
    nvcc, cutlass = build.find_nvcc(), build.find_cutlass()
    version = build.nvcc_version(nvcc)
    again = build.compile_unit([TUNER_CONFIG], sm90a_compiles.tuner_dir, nvcc, cutlass, version)
    assert again.cached and again.obj == result.obj
