"""Every kernel of our own families (tuner/tiny.py, tuner/wgmma.py) is correct, on and off the grid,
data parallel and split-K.

Needs a built library holding the families (``python -m cuda_l2_explorer.tuner.build --catalog tiny``,
``--catalog wgmma`` or the full catalog; $CUDA_L2_EXPLORER_TUNER_LIB). Fresh N(0,1) inputs, C
poisoned with NaN before every call, error against an fp32 reference (TF32 off) judged by the
harness's rule against torch's own fp16 GEMM. Each variant runs twice in a row, given a
"workspace" full of 0xFF bytes that every kernel and shape shares (a caller's buffer that other
kernels dirtied): split-K in a cluster needs none and must not read it; the second run must give
the same bits (the splits are summed in rank order). A kernel that reduces its splits through the
workspace (wgmma ``reduce="global"`` and ``"sliced"``) gets its own, sized as tuner/wgmma.py
computes it, zeroed where its counters are and 0xFF past them, and must leave the counters at
zero. The sliced reduction takes a split-K launch only when the whole grid is resident at once.
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU"),
]

from cuda_l2_explorer.importer.harness import protocol  # noqa: E402
from cuda_l2_explorer.tuner import tiny, wgmma  # noqa: E402
from cuda_l2_explorer.tuner.families import kernel_from_dict  # noqa: E402
from cuda_l2_explorer.tuner.native import TunerError, TunerLibrary, Variant, default_library  # noqa: E402

OWN_FAMILIES = (tiny.TINY_FAMILY, wgmma.WGMMA_FAMILY)

SHAPES = [
    (64, 64, 64),  # grid shapes
    (256, 256, 256),
    (64, 64, 16384),
    (256, 512, 8192),  # deep K, few tiles: the wgmma split-K family's regime
    (128, 4096, 64),
    (1024, 1024, 1024),
    (1, 4096, 4096),  # off-grid
    (777, 1000, 1032),
    (200, 264, 4104),  # an odd number of N tiles (64 or 128 wide): a multicast pair's partner past N
    (33, 40, 72),  # K past a 32-wide block (register-direct kernels), M and N past a tile
    (200, 264, 136),
    (200, 264, 192),  # M and N past a tile, K past a copy of four 64-k boxes (copy_boxes: slabs past K)
    (48, 200, 1984),  # K past 1024 (the 2048-deep panels) and past a four-box copy
]
assert tiny.MAX_SPLITS == wgmma.MAX_SPLITS
SPLITS = (1, 2, 3, 5, 8, tiny.MAX_SPLITS)
WORKSPACE_BYTES = 256 << 20


def _own_names() -> list[str]:
    path = default_library()
    if path is None:
        return ["<none>"]
    lib = TunerLibrary(path)
    return [n for n in lib.names() if lib[n].params["family"] in OWN_FAMILIES] or ["<none>"]


_LIB: list[TunerLibrary] = []


def _lib() -> TunerLibrary:
    if not _LIB:
        path = default_library()
        if path is None:
            pytest.skip("no tuner library built (python -m cuda_l2_explorer.tuner.build)")
        _LIB.append(TunerLibrary(path))
    return _LIB[0]


def _kernel(name: str):
    lib = _lib()
    if name not in lib.kernels:
        pytest.skip("no kernel of our own families in the library")
    return lib[name]


_PROBLEMS: dict[tuple[int, int, int], tuple] = {}


def _problem(m: int, n: int, k: int):
    key = (m, n, k)
    if key not in _PROBLEMS:
        gen = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16, generator=gen)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16, generator=gen)
        torch.backends.cuda.matmul.allow_tf32 = False
        ref = a.float() @ b.float()
        ref_norm = float(torch.linalg.norm(ref))
        torch_err = float(torch.linalg.norm((a @ b).float() - ref)) / ref_norm
        _PROBLEMS[key] = (a, b, b.t().contiguous(), ref, ref_norm, torch_err)
    return _PROBLEMS[key]


def _judged(c, ref, ref_norm: float, torch_err: float):
    """C's relative error against the fp32 reference and the harness's verdict on it."""
    finite = bool(torch.isfinite(c).all())
    err = float(torch.linalg.norm(c.float() - ref)) / ref_norm if finite else math.inf
    return err, protocol.classify_correctness(err, torch_err, "F32F16F16F32", finite)


@pytest.fixture(scope="module")
def workspace():
    return torch.full((WORKSPACE_BYTES,), 0xFF, device="cuda", dtype=torch.uint8)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", _own_names())
def test_own_kernel_correct_twice(name: str, shape: tuple[int, int, int], workspace) -> None:
    kern = _kernel(name)
    m, n, k = shape
    a, b, bt, ref, ref_norm, torch_err = _problem(m, n, k)
    bptr = bt.data_ptr() if kern.params["b_major"] == "k" else b.data_ptr()
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    stream = torch.cuda.current_stream().cuda_stream
    # A multicast pair and its splits are one cluster of at most MAX_SPLITS CTAs.
    max_splits = tiny.MAX_SPLITS // int(kern.params.get("multicast_a", 1))
    for splits in SPLITS:
        v = Variant(0, 1, 2, splits) if splits > 1 else Variant()
        if splits > max_splits:
            assert not kern.can_implement(m, n, k, v), f"{name} {shape} {v.label}: a cluster over 16 CTAs"
            continue
        must_fit, may_fit = _one_wave_bounds(kern, m, n, k, splits)
        implementable = kern.can_implement(m, n, k, v)
        label = f"{name} {shape} {v.label}: implementable {implementable}"
        if not _holds_k(kern, k, splits):
            assert not implementable, label
            continue
        assert must_fit <= implementable <= may_fit, f"{label}, fits at least {must_fit}, at most {may_fit}"
        if not implementable:
            continue
        ws, ws_bytes, counters = _workspace_for(kern, m, n, k, v, workspace)
        runs = []
        for attempt in range(2):
            c.fill_(float("nan"))
            kern(a.data_ptr(), bptr, c.data_ptr(), m, n, k, v, ws.data_ptr(), ws_bytes, stream)
            torch.cuda.synchronize()
            label = f"{name} {shape} {v.label} run {attempt + 1}"
            assert not ws[:counters].any(), f"{label}: the tile counters were not left at zero"
            err, verdict = _judged(c, ref, ref_norm, torch_err)
            assert verdict.status == "ok", f"{label}: error {err:.3e} (torch {torch_err:.3e})"
            assert not verdict.findings, f"{label}: {verdict.findings}"
            runs.append(c.clone())
        assert torch.equal(runs[0], runs[1]), f"{name} {shape} {v.label}: not deterministic"


@pytest.mark.parametrize("name", [n for n in _own_names() if n.startswith("tinyt")] or ["<none>"])
def test_tensor_maps_follow_the_shape_at_one_address(name: str, workspace) -> None:
    """A tensor-fed kernel keeps the maps it encoded by base, rows, k, box rows and boxes a copy
    (tiny_gemm.cuh's tile_map): one pair of buffers read as three shapes in turn, the first again
    last, gives every call the map of its own shape."""
    kern = _kernel(name)
    if kern.params.get("loads") != "tensor":
        pytest.skip("not a tensor-fed kernel")
    buf_a = torch.empty(128 * 512, device="cuda", dtype=torch.float16)
    buf_b = torch.empty(128 * 512, device="cuda", dtype=torch.float16)
    stream = torch.cuda.current_stream().cuda_stream
    for m, n, k in [(64, 128, 256), (128, 64, 128), (96, 128, 64), (64, 128, 256)]:  # K <= every tile_k
        a, _, bt, ref, ref_norm, torch_err = _problem(m, n, k)
        buf_a[: m * k].view(m, k).copy_(a)
        buf_b[: n * k].view(n, k).copy_(bt)
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        kern(
            buf_a.data_ptr(),
            buf_b.data_ptr(),
            c.data_ptr(),
            m,
            n,
            k,
            Variant(),
            workspace.data_ptr(),
            0,
            stream,
        )
        torch.cuda.synchronize()
        err, verdict = _judged(c, ref, ref_norm, torch_err)
        assert verdict.status == "ok", (
            f"{name} {m}x{n}x{k}, one address: error {err:.3e} (torch {torch_err:.3e})"
        )


def _holds_k(kern, k: int, splits: int) -> bool:
    """A one-pass tiny kernel (register-direct, bulk- or tensor-fed) runs K up to its tile_k, data
    parallel only, and K a multiple of 64 where a copy brings several boxes (the rest: always)."""
    if kern.params.get("loads") not in tiny.ONE_PASS_LOADS:
        return True
    whole_slabs = int(kern.params.get("copy_boxes", 1)) == 1 or k % tiny.BOX_K == 0
    return k <= int(kern.params["tile_k"]) and splits == 1 and whole_slabs


SMEM_PER_SM = 228 << 10  # sm_90: shared memory per SM, of which 1 KB a CTA is reserved


def _one_wave_bounds(kern, m: int, n: int, k: int, splits: int) -> tuple[bool, bool]:
    """(surely fits, may fit): whether the sliced reduction's grid is resident at once, bounded
    from below by one CTA an SM and from above by shared memory (registers, which the device's
    occupancy query also counts, can only lower it: wgsk_128x96's 384 threads hold one CTA an SM
    where its 113 KB of shared memory would allow two). Every other kernel fits at once."""
    if kern.params.get("reduce") != "sliced" or splits == 1:
        return True, True
    cfg = kernel_from_dict(kern.params)
    effective = min(splits, -(-k // cfg.tile_k))
    if effective == 1:
        return True, True
    ctas = -(-m // cfg.tile_m) * -(-n // cfg.tile_n) * effective
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    return ctas <= sms, ctas <= sms * (SMEM_PER_SM // (cfg.smem_bytes() + 1024))


def _workspace_for(kern, m: int, n: int, k: int, v: Variant, shared):
    """(buffer, bytes, counter bytes) for one call: the shared dirty buffer where the kernel needs
    none, else its own: counters zeroed, the partials' region 0xFF (written before it is read)."""
    need = kern.workspace_bytes(m, n, k, v)
    cfg = kernel_from_dict(kern.params)
    if kern.params["family"] != wgmma.WGMMA_FAMILY or cfg.reduce == "cluster":
        assert need == 0, f"{kern.name}: {need} workspace bytes"
        return shared, WORKSPACE_BYTES, 0
    splits = min(v.splits, -(-k // cfg.tile_k))  # the kernel clamps splits to the K tiles
    assert need == cfg.workspace_bytes(m, n, splits), f"{kern.name} {v.label}: C and Python disagree"
    if need == 0:
        return shared, WORKSPACE_BYTES, 0
    tiles = -(-m // cfg.tile_m) * -(-n // cfg.tile_n)
    per_tile = 2 if cfg.reduce == "sliced" else 1  # in and out, or in
    counters = -(-tiles * per_tile * 4 // wgmma.FLAG_ALIGN) * wgmma.FLAG_ALIGN
    ws = torch.full((need,), 0xFF, device="cuda", dtype=torch.uint8)
    ws[:counters] = 0
    return ws, need, counters


@pytest.mark.parametrize("name", _own_names())
def test_own_global_reduction_needs_its_workspace(name: str) -> None:
    """Split-K through the workspace refuses a missing or short one (kWorkspaceTooSmall)."""
    kern = _kernel(name)
    if kern.params.get("reduce") not in ("global", "sliced"):
        pytest.skip("reduces in a cluster")
    m, n, k = 256, 512, 8192
    a, b, *_ = _problem(m, n, k)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    v = Variant(0, 1, 2, 4)
    need = kern.workspace_bytes(m, n, k, v)
    assert need > 0
    ws = torch.zeros(need, device="cuda", dtype=torch.uint8)
    for ptr, size in ((None, 0), (ws.data_ptr(), need - 16)):
        with pytest.raises(TunerError, match="workspace too small"):
            kern(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k, v, ptr, size, 0)


@pytest.mark.parametrize("name", _own_names())
def test_own_rejects_unaligned_n_and_k(name: str, workspace) -> None:
    kern = _kernel(name)
    for m, n, k in [(128, 100, 128), (128, 128, 100), (64, 4, 64), (64, 64, 12)]:
        for v in (Variant(), Variant(0, 1, 2, 4)):
            assert not kern.can_implement(m, n, k, v)
    a = torch.zeros(128, 128, device="cuda", dtype=torch.float16)
    with pytest.raises(TunerError):
        kern(a.data_ptr(), a.data_ptr(), a.data_ptr(), 128, 100, 128, Variant(), workspace.data_ptr(), 0, 0)
