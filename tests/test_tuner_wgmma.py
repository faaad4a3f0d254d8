"""The wgmma split-K family (tuner/wgmma.py) on the CPU: configs and the emitted source."""

from __future__ import annotations

import re

import pytest
from cuda_l2_explorer.tuner import families, wgmma
from cuda_l2_explorer.tuner.config import SMEM_BYTES_SM90, ConfigError
from cuda_l2_explorer.tuner.families import kernel_from_dict
from cuda_l2_explorer.tuner.wgmma import WgmmaConfig, wgmma_catalog
from hypothesis import given, settings
from hypothesis import strategies as st


def test_catalog_is_valid_unique_and_covers_both_b_layouts() -> None:
    cat = wgmma_catalog()
    assert 4 <= len(cat) <= 16
    assert len({c.name for c in cat}) == len(cat)
    for c in cat:
        assert re.fullmatch(r"wgsk_\d+x\d+x\d+_s\d+_b[nk](_mc2)?", c.name), c.name
        assert kernel_from_dict(c.to_dict()) == c and c.user_tile() == (c.tile_m, c.tile_n)
        assert c.tile_m * c.tile_n * 4 <= c.smem_bytes() <= SMEM_BYTES_SM90  # the partial fits the buffers
    assert {c.b_major for c in cat} == {"n", "k"} and {c.tile_m for c in cat} == {64, 128}


def test_multicast_names_splits_and_hashes() -> None:
    """A multicast pair is in the name and halves the splits a cluster holds; a config without one
    keeps the dict (and so the hash and name) it had before the field existed."""
    one, pair = WgmmaConfig(128, 128, 64, 6), WgmmaConfig(128, 128, 64, 6, multicast_a=2)
    assert (one.name, pair.name) == ("wgsk_128x128x64_s6_bn", "wgsk_128x128x64_s6_bn_mc2")
    assert (one.max_splits, pair.max_splits) == (wgmma.MAX_SPLITS, wgmma.MAX_SPLITS // 2)
    assert "multicast_a" not in one.to_dict() and pair.to_dict()["multicast_a"] == 2
    assert one.config_hash == "703d09220b2c"  # the hash library fc9d1115's kernel was built under
    assert kernel_from_dict(pair.to_dict()) == pair and pair.config_hash != one.config_hash
    assert (one.threads, one.smem_bytes()) == (pair.threads, pair.smem_bytes())


def test_name_threads_and_shared_memory() -> None:
    c = WgmmaConfig(128, 256, 64, 4)
    assert c.name == "wgsk_128x256x64_s4_bn"
    assert c.threads == 384  # a producer warpgroup and two consumers
    assert c.smem_bytes() == 4 * (128 + 256) * 64 * 2 + wgmma.BARRIER_BYTES
    assert c.config_hash != WgmmaConfig(128, 256, 64, 3).config_hash


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"tile_m": 32, "tile_n": 64}, "tile_m"),
        ({"tile_m": 64, "tile_n": 96}, "tile_n"),
        ({"tile_m": 64, "tile_n": 64, "tile_k": 32}, "tile_k"),
        ({"tile_m": 64, "tile_n": 64, "stages": 1}, "stages"),
        ({"tile_m": 128, "tile_n": 256, "tile_k": 128, "stages": 4}, "fit"),
        ({"tile_m": 128, "tile_n": 256, "stages": 2}, "partial"),
        ({"tile_m": 64, "tile_n": 64, "b_major": "m"}, "b_major"),
        ({"tile_m": 64, "tile_n": 64, "family": "sm90_mma_tiny"}, "family"),
        ({"tile_m": 64, "tile_n": True}, "positive int"),
        ({"tile_m": 64, "tile_n": 64, "multicast_a": 4}, "multicast_a"),
    ],
)
def test_invalid_configs_are_rejected(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        WgmmaConfig(**kwargs)


_ints = st.one_of(st.integers(-4, 300), st.booleans(), st.none(), st.text(max_size=2))


@settings(max_examples=300, deadline=None)
@given(tile_m=_ints, tile_n=_ints, tile_k=_ints, stages=_ints, multicast_a=_ints, b_major=st.text(max_size=2))
def test_any_parameters_give_a_valid_config_or_config_error(**kwargs: object) -> None:
    try:
        c = WgmmaConfig(**kwargs)  # type: ignore[arg-type]
    except ConfigError:
        return
    assert c.tile_m in wgmma.TILE_MS and c.tile_n in wgmma.TILE_NS and c.tile_k in wgmma.TILE_KS
    assert 2 <= c.stages <= 12 and c.b_major in ("n", "k") and c.multicast_a in wgmma.MULTICASTS
    assert c.tile_m * c.tile_n * 4 <= c.smem_bytes() - wgmma.BARRIER_BYTES <= SMEM_BYTES_SM90


def test_tu_instantiates_every_config_with_the_reduction_of_the_tiny_family() -> None:
    src = families.render_tu(wgmma_catalog())
    assert src == families.render_tu(list(wgmma_catalog()))
    for c in wgmma_catalog():
        b_k = "true" if c.b_major == "k" else "false"
        assert f"WgShape<{c.tile_m}, {c.tile_n}, {c.tile_k}, {c.stages}, {b_k}, {c.multicast_a}>" in src
        assert f"L2X_API int l2x_gemm_{c.name}_can_implement(" in src
    for needle in (
        "#include <cute/tensor.hpp>",
        "SM90_TMA_LOAD",
        "SM90_TMA_LOAD_MULTICAST",  # the pairs' shared A
        "warpgroup_arrive()",
        "cluster_sum<kMaxSplits / kMc>",  # the DSMEM reduction both our families share
        "ld.shared::cluster.v4.f32",
        "cudaLaunchAttributeClusterDimension",
        f"constexpr int kMaxSplits = {wgmma.MAX_SPLITS};",
    ):
        assert needle in src, needle
    for absent in ("cudaMalloc", "Synchronize", "cudaMemset", "atomicAdd("):  # a launch leaves no state
        assert absent not in src, absent
