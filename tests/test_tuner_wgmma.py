"""The wgmma split-K family (tuner/wgmma.py) on the CPU: configs and the emitted source."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from config_strategies import FIELD_VALUES
from cuda_l2_explorer.tuner import families, wgmma
from cuda_l2_explorer.tuner.config import SMEM_BYTES_SM90, ConfigError
from cuda_l2_explorer.tuner.families import kernel_from_dict
from cuda_l2_explorer.tuner.wgmma import WgmmaConfig, wgmma_catalog
from hypothesis import given, settings
from hypothesis import strategies as st


def test_catalog_is_valid_unique_and_covers_both_b_layouts() -> None:
    cat = wgmma_catalog()
    assert 4 <= len(cat) <= 48  # 16 shapes x 3 reductions (session 38)
    assert len({c.name for c in cat}) == len(cat)
    for c in cat:
        assert re.fullmatch(r"wgsk_\d+x\d+x\d+_s\d+_b[nk](_mc2)?(_rg|_rs)?", c.name), c.name
        assert kernel_from_dict(c.to_dict()) == c and c.user_tile() == (c.tile_m, c.tile_n)
        assert c.tile_m * c.tile_n * 4 <= c.smem_bytes() <= SMEM_BYTES_SM90  # the partial fits the buffers
    assert {c.b_major for c in cat} == {"n", "k"} and {c.tile_m for c in cat} == {64, 128}
    # Every shape three times: reduced in the cluster, through the workspace by the last split, and
    # through the workspace a slice by every split.
    by_reduce = {r: sorted(replace(c, reduce="cluster") for c in cat if c.reduce == r) for r in wgmma.REDUCES}
    assert by_reduce["cluster"] == by_reduce["global"] == by_reduce["sliced"]
    assert len(by_reduce["cluster"]) * 3 == len(cat)


def test_global_reduction_name_hash_and_workspace() -> None:
    """``reduce="global"`` is in the name and the dict (a kernel reducing in the cluster keeps the
    dict and hash it had before the field existed); its workspace holds a counter a tile, padded
    to FLAG_ALIGN bytes, and every split but the last one's fp32 partial."""
    one, rg = WgmmaConfig(64, 64, 64, 12), WgmmaConfig(64, 64, 64, 12, reduce="global")
    assert (one.name, rg.name) == ("wgsk_64x64x64_s12_bn", "wgsk_64x64x64_s12_bn_rg")
    assert "reduce" not in one.to_dict() and rg.to_dict()["reduce"] == "global"
    assert kernel_from_dict(rg.to_dict()) == rg and rg.config_hash != one.config_hash
    assert one.workspace_bytes(512, 512, 2) == 0 and rg.workspace_bytes(512, 512, 1) == 0
    # 512x512 in 64x64 tiles: 64 counters (256 bytes), then 64 tiles x 1 partial of 16 KB.
    assert rg.workspace_bytes(512, 512, 2) == 256 + 64 * 64 * 64 * 4
    # 200x264 in 128x128 tiles: 2 x 3 tiles, 24 counter bytes padded to 128; 3 partials each.
    big = WgmmaConfig(128, 128, 64, 6, reduce="global")
    assert big.workspace_bytes(200, 264, 4) == 128 + 6 * 3 * 128 * 128 * 4
    assert (rg.max_splits, rg.threads, rg.smem_bytes()) == (one.max_splits, one.threads, one.smem_bytes())


def test_sliced_reduction_name_and_workspace() -> None:
    """``reduce="sliced"`` parks every split's partial (the last one's too: each split sums a slice
    of all of them) behind two counters a tile (in, out)."""
    rs = WgmmaConfig(64, 64, 64, 12, reduce="sliced")
    assert rs.name == "wgsk_64x64x64_s12_bn_rs" and rs.to_dict()["reduce"] == "sliced"
    assert kernel_from_dict(rs.to_dict()) == rs
    others = {WgmmaConfig(64, 64, 64, 12, reduce=r).config_hash for r in ("cluster", "global")}
    assert rs.config_hash not in others
    assert rs.workspace_bytes(512, 512, 1) == 0
    # 512x512 in 64x64 tiles: 64 x 2 counters (512 bytes), then 64 tiles x 2 partials of 16 KB.
    assert rs.workspace_bytes(512, 512, 2) == 512 + 64 * 2 * 64 * 64 * 4
    # 200x264 in 128x128 tiles: 2 x 3 tiles, 48 counter bytes padded to 128; 4 partials each.
    big = WgmmaConfig(128, 128, 64, 6, reduce="sliced")
    assert big.workspace_bytes(200, 264, 4) == 128 + 6 * 4 * 128 * 128 * 4


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
        ({"tile_m": 64, "tile_n": 80}, "tile_n"),
        ({"tile_m": 64, "tile_n": 96}, "b_major='k'"),  # an N-major B: whole 64-column swizzle atoms
        ({"tile_m": 64, "tile_n": 64, "tile_k": 32}, "tile_k"),
        ({"tile_m": 64, "tile_n": 64, "stages": 1}, "stages"),
        ({"tile_m": 128, "tile_n": 256, "tile_k": 128, "stages": 4}, "fit"),
        ({"tile_m": 128, "tile_n": 256, "stages": 2}, "partial"),
        ({"tile_m": 64, "tile_n": 64, "b_major": "m"}, "b_major"),
        ({"tile_m": 64, "tile_n": 64, "family": "sm90_mma_tiny"}, "family"),
        ({"tile_m": 64, "tile_n": True}, "positive int"),
        ({"tile_m": 64, "tile_n": 64, "multicast_a": 4}, "multicast_a"),
        ({"tile_m": 64, "tile_n": 64, "reduce": "dsmem"}, "reduce"),
        ({"tile_m": 64, "tile_n": 64, "multicast_a": 2, "reduce": "global"}, "multicast_a must be 1"),
        ({"tile_m": 64, "tile_n": 64, "multicast_a": 2, "reduce": "sliced"}, "multicast_a must be 1"),
    ],
)
def test_invalid_configs_are_rejected(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        WgmmaConfig(**kwargs)


@settings(max_examples=300, deadline=None)
@given(
    tile_m=FIELD_VALUES,
    tile_n=FIELD_VALUES,
    tile_k=FIELD_VALUES,
    stages=FIELD_VALUES,
    multicast_a=FIELD_VALUES,
    b_major=st.text(max_size=2),
    reduce=st.sampled_from(["cluster", "global", "sliced", "", "x"]),
)
def test_any_parameters_give_a_valid_config_or_config_error(**kwargs: object) -> None:
    try:
        c = WgmmaConfig(**kwargs)  # type: ignore[arg-type]
    except ConfigError:
        return
    assert c.tile_m in wgmma.TILE_MS and c.tile_n in wgmma.TILE_NS and c.tile_k in wgmma.TILE_KS
    assert c.b_major == "k" or c.tile_n % 64 == 0
    assert 2 <= c.stages <= 12 and c.b_major in ("n", "k") and c.multicast_a in wgmma.MULTICASTS
    assert c.reduce in wgmma.REDUCES and (c.reduce == "cluster" or c.multicast_a == 1)
    assert c.tile_m * c.tile_n * 4 <= c.smem_bytes() - wgmma.BARRIER_BYTES <= SMEM_BYTES_SM90


def test_tu_instantiates_every_config_with_the_reduction_of_the_tiny_family() -> None:
    src = families.render_tu(wgmma_catalog())
    assert src == families.render_tu(list(wgmma_catalog()))
    for c in wgmma_catalog():
        b_k = "true" if c.b_major == "k" else "false"
        shape = f"{c.tile_m}, {c.tile_n}, {c.tile_k}, {c.stages}, {b_k}, {c.multicast_a}"
        assert f"WgShape<{shape}, {wgmma.REDUCES.index(c.reduce)}>" in src
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
        "atomicAdd(counter, 1)",  # the global reduction's count, and its reset for the next call
        "ld.acquire.gpu.global.b32",
        "*counter = 0;",
        "reduce_sliced<S, kQuads>",  # the sliced reduction: every split sums a slice
        "atomicAdd(departed, 1) == splits - 1",  # the last split out resets the counters
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor",  # its one-wave check
        "constexpr int kReduceInCluster = 0, kReduceByLastSplit = 1, kReduceSlicedAll = 2;",
    ):
        assert needle in src, needle
    for absent in ("cudaMalloc", "Synchronize", "cudaMemset"):  # a launch allocates and waits for nothing
        assert absent not in src, absent
