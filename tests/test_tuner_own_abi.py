"""The host side of our own families' C ABI (tuner/tiny.py, tuner/wgmma.py) from a library built
here: shape checks, workspace sizes and status codes (nvcc needed, no GPU: these entry points
return before touching the device). The wgmma family needs CUTLASS's CuTe headers."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from background_builds import BACKGROUND, OWN_CONFIGS, SLICED, TWINS, own_configs_of, own_skip_reason
from cuda_l2_explorer.tuner import build, tiny, wgmma
from cuda_l2_explorer.tuner.families import family_of
from cuda_l2_explorer.tuner.native import L2X_CANNOT_IMPLEMENT, TunerError, TunerLibrary, Variant


@pytest.fixture(scope="module", params=OWN_CONFIGS, ids=lambda c: c.family)
def own_abi_built(request) -> tuple[tiny.TinyConfig | wgmma.WgmmaConfig, build.BuildResult]:
    """One family's config built into a library once; the tests read it (each compile costs 15-20 s
    of the CI's few minutes: it runs in the background from the start, tests/background_builds.py)."""
    config = request.param
    reason = own_skip_reason(config)
    if reason:
        pytest.skip(reason)
    res = BACKGROUND.result(config.name)
    assert res.library is not None and res.compiled == [c.name for c in own_configs_of(config)], res.failed
    return config, res


def test_built_library_host_abi(own_abi_built) -> None:
    config, res = own_abi_built
    needs_cutlass = family_of(config).needs_cutlass
    lib = TunerLibrary(res.library)
    assert (lib.build_info["cutlass"] != build.NO_CUTLASS) == needs_cutlass
    kern = lib[config.name]
    assert kern.params == config.to_dict()
    max_splits = family_of(config).max_splits
    assert max_splits == 16
    for m, n, k, splits in [(64, 64, 16384, 16), (777, 1000, 1032, 4), (64, 64, 64, 8), (1, 4096, 4096, 16)]:
        v = Variant(0, 1, 2, splits)
        assert kern.workspace_bytes(m, n, k, v) == 0  # split-K reduces in the cluster, on chip
        assert kern.can_implement(m, n, k, v)
    assert kern.workspace_bytes(256, 256, 256) == 0
    assert kern.can_implement(1, 8, 8) and kern.can_implement(777, 1000, 1032, Variant(2, 8))
    assert not kern.can_implement(128, 100, 128) and not kern.can_implement(128, 128, 100)
    assert not kern.can_implement(128, 128, 128, Variant(0, 1, 3))  # no stream-K
    assert not kern.can_implement(128, 128, 128, Variant(0, 1, 2, max_splits + 1))
    assert not kern.can_implement(128, 128, 128, Variant(0, 1, 1, 2))  # splits need split-K
    assert not kern.can_implement(0, 128, 128) and not kern.can_implement(128, 128, 128, Variant(3))
    assert not kern.can_implement(128, 128, 128, Variant(0, 3))
    assert not kern.can_implement(65535 * config.tile_m + 1, 64, 64)  # M tiles run along grid y
    with pytest.raises(TunerError) as exc:  # refused before any device work
        kern(1 << 20, 1 << 20, 1 << 20, 128, 100, 128)
    assert exc.value.status == L2X_CANNOT_IMPLEMENT
    with pytest.raises(TunerError) as exc:
        kern(1 << 20, (1 << 20) + 8, 1 << 20, 64, 64, 64)
    assert exc.value.status == L2X_CANNOT_IMPLEMENT  # B not 16-byte aligned


def test_the_library_is_named_by_its_contents_not_its_folder(own_abi_built, tmp_path) -> None:
    """The same objects linked in another folder give a library of the same name: the name is what
    a store's measurements and reused audits refer to, and a rebuild elsewhere (the device's /tmp,
    another checkout) must match it."""
    config, res = own_abi_built
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(res.library.parent.parent / "obj", elsewhere / "obj")
    again = build.build(own_configs_of(config), elsewhere, jobs=1, log=lambda _msg: None)
    assert all(unit.cached for unit in again.units)
    assert again.library is not None and again.library.parent == elsewhere / "lib"
    assert again.library.name == res.library.name


def test_kernels_have_internal_linkage(own_abi_built) -> None:
    """Only the C ABI is global: an exported package, a torch extension and the library may hold
    the same instantiation in one process, and a weak global kernel symbol resolves to another
    module's copy, whose launch fails (the wgmma family's first cmake export did: status 1)."""
    config, res = own_abi_built
    nm = shutil.which("nm")
    if not nm:
        pytest.skip("nm not found")
    (unit,) = res.units
    assert unit.obj is not None, unit.error
    listing = subprocess.run([nm, "-C", "--defined-only", str(unit.obj)], capture_output=True, text=True)
    ours = [
        line.split(" ", 2)[2]
        for line in listing.stdout.splitlines()
        if line.split(" ")[1:2] and line.split(" ")[1] in "TWVDRB" and ("l2x_" in line or "_kernel<" in line)
    ]
    names = [config.name, *(twin.name for twin in TWINS.get(config, []))]
    suffixes = ("", "_workspace", "_can_implement")
    exported = {f"l2x_gemm_{name}{suffix}" for name in names for suffix in suffixes}
    assert exported <= set(ours)
    leaked = [name for name in ours if name not in exported and "(anonymous namespace)" not in name]
    assert not leaked, leaked[:3]


def test_sliced_reduction_host_abi(own_abi_built) -> None:
    """The kernel's workspace arithmetic is the Python one's (two counters a tile, every split's
    partial), asked with no device; whether a split-K launch fits in one wave needs the device, so
    a grid no GPU holds at once cannot be implemented."""
    config, res = own_abi_built
    if SLICED not in TWINS.get(config, []):
        pytest.skip("the sliced reduction is the wgmma family's")
    kern = TunerLibrary(res.library)[SLICED.name]
    assert kern.params == SLICED.to_dict()
    for m, n, k, splits in [(512, 512, 8192, 2), (200, 264, 4096, 4), (64, 64, 16384, 16), (64, 64, 128, 16)]:
        effective = min(splits, -(-k // SLICED.tile_k))
        expected = SLICED.workspace_bytes(m, n, effective)
        assert kern.workspace_bytes(m, n, k, Variant(0, 1, 2, splits)) == expected, (m, n, k, splits)
    assert kern.workspace_bytes(512, 512, 8192, Variant(0, 1, 1)) == 0
    assert kern.can_implement(512, 512, 8192, Variant(0, 1, 1))  # data parallel: no reduction
    assert not kern.can_implement(16384, 16384, 16384, Variant(0, 1, 2, 16))  # 1M CTAs: never one wave
