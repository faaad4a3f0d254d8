"""The native cuBLAS / cuBLASLt baselines (importer/harness/baselines.py) agree with torch.matmul.

Every baseline -- cuBLAS nn/tn, cuBLASLt heuristic nn/tn and each cuBLASLt auto-tuning candidate
nn/tn -- is run on fresh N(0,1) inputs into a C poisoned with NaN, and its relative Frobenius
error against an fp64 reference must be close to torch.matmul's own error (SPEC section 7).
Set CUDA_L2_EXPLORER_BASELINES_LIB to test a prebuilt library instead of building one.
"""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from cuda_l2_explorer.importer.harness import baselines as native  # noqa: E402

SHAPES = [(64, 64, 64), (128, 4096, 512), (4096, 4096, 4096), (8, 8192, 1024), (2048, 256, 16384)]
LAYOUTS = ["nn", "tn"]
ABS_BOUND_32F = 2e-3  # fp16 output rounding alone is ~3e-4
ABS_BOUND_16F = 5e-2  # fp16 accumulation over K = 16384


def rel_err(c, ref) -> float:
    c64 = c.double()
    if not torch.isfinite(c64).all():
        return math.inf
    return ((c64 - ref).norm() / ref.norm()).item()


@pytest.fixture(scope="module")
def lib():
    return native.load_baselines()


@pytest.fixture(scope="module")
def ctx32(lib):
    with native.CublasBaselines(lib=lib) as ctx:
        yield ctx


@pytest.fixture(scope="module")
def ctx16(lib):
    with native.CublasBaselines(lib=lib, compute16=True) as ctx:
        yield ctx


_DATA: dict = {}


def data(M, N, K):
    """Fresh N(0,1) inputs per shape, B in both layouts, the fp64 reference and torch's error."""
    if (M, N, K) not in _DATA:
        _DATA.clear()  # keep one shape's tensors alive at a time
        g = torch.Generator(device="cuda").manual_seed(M * 1_000_003 + N * 1009 + K)
        a = torch.randn(M, K, device="cuda", generator=g).half()
        b = torch.randn(K, N, device="cuda", generator=g).half()
        b_col = b.t().contiguous().t()  # KxN, column-major (SPEC section 4)
        ref = a.double() @ b.double()
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
        torch.matmul(a, b, out=c)
        torch_err = rel_err(c, ref)
        torch_err16 = None
        if hasattr(torch.backends.cuda.matmul, "allow_fp16_accumulation"):
            old = torch.backends.cuda.matmul.allow_fp16_accumulation
            try:
                torch.backends.cuda.matmul.allow_fp16_accumulation = True
                torch_err16 = rel_err(torch.matmul(a, b), ref)
            finally:
                torch.backends.cuda.matmul.allow_fp16_accumulation = old
        _DATA[(M, N, K)] = (a, b, b_col, ref, torch_err, torch_err16)
    return _DATA[(M, N, K)]


def run_all(ctx, M, N, K, layout):
    """{name: error} for cuBLAS and every cuBLASLt candidate, each into a NaN-poisoned C."""
    a, b, b_col, ref, _, _ = data(M, N, K)
    bb = b if layout == "nn" else b_col
    stream = native.current_stream()
    errs = {}
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    c.fill_(float("nan"))
    ctx.cublas(layout, M, N, K, a.data_ptr(), bb.data_ptr(), c.data_ptr(), stream)
    torch.cuda.synchronize()
    errs[f"cuBLAS-{layout}"] = rel_err(c, ref)
    plan = ctx.lt_prepare(layout, M, N, K, max_algos=native.MAX_ALGOS)
    assert plan.n_algos >= 1
    for i in range(plan.n_algos):
        c.fill_(float("nan"))
        ctx.lt(plan, i, a.data_ptr(), bb.data_ptr(), c.data_ptr(), stream)
        torch.cuda.synchronize()
        errs[f"cuBLASLt-{layout}[{i}]"] = rel_err(c, ref)
    return errs, plan


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_fp32_accumulate_baselines_match_torch(ctx32, shape, layout):
    M, N, K = shape
    torch_err = data(M, N, K)[4]
    assert torch_err < ABS_BOUND_32F
    errs, plan = run_all(ctx32, M, N, K, layout)
    bound = min(ABS_BOUND_32F, 1.5 * torch_err + 1e-4)
    bad = {k: v for k, v in errs.items() if not v <= bound}
    assert not bad, f"torch err {torch_err:.3e}, bound {bound:.3e}, {plan.n_algos} candidates; failing: {bad}"


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_fp16_accumulate_baselines(ctx16, shape, layout):
    M, N, K = shape
    _, _, _, _, torch_err, torch_err16 = data(M, N, K)
    errs, _plan = run_all(ctx16, M, N, K, layout)
    ref_err = max(errs[f"cuBLAS-{layout}"], torch_err16 or 0.0, torch_err)
    assert errs[f"cuBLAS-{layout}"] < ABS_BOUND_16F
    bound = min(ABS_BOUND_16F, 4 * ref_err + 1e-3)
    bad = {k: v for k, v in errs.items() if not v <= bound}
    assert not bad, f"cuBLAS-16F err {ref_err:.3e}, bound {bound:.3e}; failing: {bad}"


def test_context_and_versions(ctx32, ctx16):
    info = ctx32.info()
    assert info["workspace_bytes"] == native.DEFAULT_WORKSPACE_BYTES == ctx32.workspace_bytes
    assert info["compute"] == "32F" and ctx16.compute == "16F"
    assert info["device"] == torch.cuda.current_device()
    v = ctx32.versions()
    assert v["abi"] == native.ABI_VERSION
    assert int(v["cublas"].split(".")[0]) >= 12 and int(v["cublaslt"].split(".")[0]) >= 12
    assert v["cublas_paths"], "the loaded cuBLAS should be visible in /proc/self/maps"


def test_plans_are_cached_and_info_is_reported(ctx32):
    p1 = ctx32.lt_prepare("nn", 256, 512, 128, max_algos=4)
    p2 = ctx32.lt_prepare("nn", 256, 512, 128, max_algos=4)
    assert p1.handle == p2.handle and 1 <= p1.n_algos <= 4
    p3 = ctx32.lt_prepare("tn", 256, 512, 128, max_algos=4)
    assert p3.handle != p1.handle
    info = ctx32.lt_algo_info(p1, 0)
    assert info["workspace_bytes"] <= ctx32.workspace_bytes
    with pytest.raises(native.NativeError):
        ctx32.lt_algo_info(p1, p1.n_algos + 100)


def test_errors_are_reported(ctx32):
    a = torch.randn(64, 64, device="cuda").half()
    c = torch.empty(64, 64, device="cuda", dtype=torch.float16)
    plan = ctx32.lt_prepare("nn", 64, 64, 64, max_algos=1)
    with pytest.raises(native.NativeError, match="out of range"):
        ctx32.lt(plan, 1000, a.data_ptr(), a.data_ptr(), c.data_ptr())
    with pytest.raises(native.NativeError, match="aligned"):
        ctx32.lt(plan, 0, a.data_ptr() + 2, a.data_ptr(), c.data_ptr())
    with pytest.raises(native.NativeError, match="positive"):
        ctx32.cublas("nn", 0, 64, 64, a.data_ptr(), a.data_ptr(), c.data_ptr())
    with pytest.raises(ValueError):
        ctx32.cublas("nt", 64, 64, 64, a.data_ptr(), a.data_ptr(), c.data_ptr())


def test_side_stream_and_tensor_args(ctx32):
    M, N, K = 512, 1024, 256
    a = torch.randn(M, K, device="cuda").half()
    b = torch.randn(K, N, device="cuda").half()
    ref = a.double() @ b.double()
    s = torch.cuda.Stream()
    for layout, bb in (("nn", b), ("tn", b.t().contiguous().t()), ("tn", b.t().contiguous())):
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
        m, n, k, pa, pb, pc = native.CublasBaselines.tensor_args(layout, a, bb, c)
        assert (m, n, k) == (M, N, K)
        plan = ctx32.lt_prepare(layout, m, n, k)
        torch.cuda.synchronize()
        with torch.cuda.stream(s):
            ctx32.cublas(layout, m, n, k, pa, pb, pc, native.current_stream())
            s.synchronize()
            assert rel_err(c, ref) < ABS_BOUND_32F
            c.fill_(float("nan"))
            ctx32.lt(plan, 0, pa, pb, pc, native.current_stream())
            s.synchronize()
            assert rel_err(c, ref) < ABS_BOUND_32F
    with pytest.raises(ValueError):
        native.CublasBaselines.tensor_args("tn", a, b, torch.empty(M, N, device="cuda", dtype=torch.float16))


def test_no_device_memory_taken_per_call(ctx32):
    """After warm-up the baselines allocate nothing (SPEC section 7's audit applies to them too)."""
    M, N, K = 1024, 1024, 1024
    a = torch.randn(M, K, device="cuda").half()
    b = torch.randn(K, N, device="cuda").half()
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    plan = ctx32.lt_prepare("nn", M, N, K, max_algos=8)
    stream = native.current_stream()

    def burst():
        for _ in range(20):
            ctx32.cublas("nn", M, N, K, a.data_ptr(), b.data_ptr(), c.data_ptr(), stream)
            for i in range(plan.n_algos):
                ctx32.lt(plan, i, a.data_ptr(), b.data_ptr(), c.data_ptr(), stream)
        torch.cuda.synchronize()

    burst()
    free_before = torch.cuda.mem_get_info()[0]
    burst()
    assert torch.cuda.mem_get_info()[0] == free_before
