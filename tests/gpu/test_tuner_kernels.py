"""Every kernel of the tuner library is correct on random inputs, on and off the grid.

Needs the built library (``python -m cuda_l2_explorer.tuner.build``; or
$CUDA_L2_EXPLORER_TUNER_LIB). Each kernel
runs its default variant (and, for stream-K kernels, forced stream-K and split-K) on fresh
N(0,1) inputs with C poisoned with NaN, against an fp32 reference (TF32 off); the error must be
finite and within the harness's correctness rule of cuBLAS-class error. A shape a kernel cannot
implement must say so through ``can_implement`` (and then the call must refuse, not run).
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
from cuda_l2_explorer.tuner.families import FAMILIES  # noqa: E402
from cuda_l2_explorer.tuner.native import TunerError, TunerLibrary, Variant, default_library  # noqa: E402

SHAPES = [
    (256, 256, 256),  # grid shapes
    (1024, 2048, 512),
    (64, 8192, 1024),
    (4096, 64, 4096),
    (4096, 14336, 4096),  # off-grid, as in issue 4
    (1, 4096, 4096),
    (777, 1000, 1032),
]
WORKSPACE_BYTES = 512 << 20


def _library() -> TunerLibrary:
    path = default_library()
    if path is None:
        pytest.skip("no tuner library built (python -m cuda_l2_explorer.tuner.build)")
    return TunerLibrary(path)


LIB = None


def _lib() -> TunerLibrary:
    global LIB
    if LIB is None:
        LIB = _library()
    return LIB


def _names() -> list[str]:
    """The CUTLASS kernels (our own families have theirs: tests/gpu/test_tuner_own.py)."""
    path = default_library()
    if path is None:
        return ["<none>"]
    lib = TunerLibrary(path)
    return [n for n in lib.names() if lib[n].params["family"] == "cutlass_sm90"] or ["<none>"]


_CACHE: dict[tuple[int, int, int], tuple] = {}


def _problem(m: int, n: int, k: int):
    key = (m, n, k)
    if key not in _CACHE:
        gen = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16, generator=gen)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16, generator=gen)
        bt = b.t().contiguous()
        torch.backends.cuda.matmul.allow_tf32 = False
        ref = a.float() @ b.float()
        half_err = float(torch.linalg.norm((a @ b).float() - ref) / torch.linalg.norm(ref))
        _CACHE[key] = (a, b, bt, ref, float(torch.linalg.norm(ref)), half_err)
    return _CACHE[key]


@pytest.fixture(scope="module")
def workspace():
    return torch.empty(WORKSPACE_BYTES, device="cuda", dtype=torch.uint8)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", _names())
def test_kernel_correct(name: str, shape: tuple[int, int, int], workspace) -> None:
    lib = _lib()
    if name not in lib.kernels:
        pytest.skip("no CUTLASS kernel in the library")
    kern = lib[name]
    m, n, k = shape
    a, b, bt, ref, ref_norm, torch_err = _problem(m, n, k)
    bptr = bt.data_ptr() if kern.params["b_major"] == "k" else b.data_ptr()
    variants = [Variant()]
    if kern.params["scheduler"] == "streamk":
        variants += [Variant(0, 1, 3), Variant(0, 1, 2, 3), Variant(2, 4, 0)]
    else:
        variants += [Variant(2, 4)]
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    stream = torch.cuda.current_stream().cuda_stream
    for v in variants:
        if not kern.can_implement(m, n, k, v):
            with pytest.raises(TunerError):
                kern(
                    a.data_ptr(),
                    bptr,
                    c.data_ptr(),
                    m,
                    n,
                    k,
                    v,
                    workspace.data_ptr(),
                    WORKSPACE_BYTES,
                    stream,
                )
            print(f"{name} {shape} {v.label}: cannot implement")
            continue
        if kern.workspace_bytes(m, n, k, v) > WORKSPACE_BYTES:
            print(f"{name} {shape} {v.label}: workspace above {WORKSPACE_BYTES} bytes, not run")
            continue
        c.fill_(float("nan"))
        kern(a.data_ptr(), bptr, c.data_ptr(), m, n, k, v, workspace.data_ptr(), WORKSPACE_BYTES, stream)
        torch.cuda.synchronize()
        finite = bool(torch.isfinite(c).all())
        err = float(torch.linalg.norm(c.float() - ref)) / ref_norm if finite else math.inf
        verdict = protocol.classify_correctness(err, torch_err, "F32F16F16F32", finite)
        assert verdict.status == "ok", f"{name} {shape} {v.label}: error {err:.3e} (torch {torch_err:.3e})"
        assert not verdict.findings, f"{name} {shape} {v.label}: {verdict.findings}"


def test_library_lists_kernels() -> None:
    lib = _lib()
    assert len(lib) > 0
    assert lib.build_info.get("cutlass")
    for name, kern in lib.kernels.items():
        assert kern.params["family"] in FAMILIES, name  # every family the catalog describes


def test_rejects_unaligned_n_and_k() -> None:
    lib = _lib()
    for kern in lib.kernels.values():
        assert not kern.can_implement(128, 100, 128)
        assert not kern.can_implement(128, 128, 100)
