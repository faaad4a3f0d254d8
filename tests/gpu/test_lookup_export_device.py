"""Issue 16 on the device: lookup names this machine's GPU, and the launcher export writes for the
issue's shapes either runs correctly at that shape (against torch.matmul in fp32) or was refused
with a clear error: 1x1x1 and 7x13x17 (N and K not multiples of 8: refused), 1x4096x4096 and
3000x4096x14336 (any M: built as the torch package and run). Issue 15: the repository's own set
(kernels/h100_F32F16F16F32) exported for five off-grid model shapes -- whichever kernel lookup
picks there, CUTLASS or the tiny family's cluster split-K -- builds and matches torch.

Two CUTLASS builds in parallel (a few minutes on 16 cores); needs CUTLASS headers ($CUTLASS_DIR
or the nvidia-cutlass wheel) and nvcc.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU"),
]

from cuda_l2_explorer.db.errors import NotFoundError  # noqa: E402
from cuda_l2_explorer.db.shapes import Shape  # noqa: E402
from cuda_l2_explorer.engine.export import export_plan, plan_export  # noqa: E402
from cuda_l2_explorer.engine.lookup import detect_machine_gpu  # noqa: E402
from cuda_l2_explorer.tuner.build import find_cutlass  # noqa: E402
from export_fixtures import write_manifest  # noqa: E402

REFUSED = [Shape(1, 1, 1), Shape(7, 13, 17)]
BUILT = [Shape(1, 4096, 4096), Shape(3000, 4096, 14336)]
# Decode at batch 16, a Llama-7B MLP at 128 tokens, Mistral-7B's MLP, a Llama-13B MLP at 2048
# tokens, and a narrow deep-K projection (the tiny family's cluster split-K).
MODEL_SHAPES = [Shape(16, 4096, 4096), Shape(128, 4096, 11008), Shape(4096, 14336, 4096),
                Shape(2048, 5120, 13824), Shape(64, 96, 8192)]  # fmt: skip
KERNELS_DIR = Path(__file__).resolve().parents[2] / "kernels"
OUR_SET = KERNELS_DIR / "h100_F32F16F16F32" / "manifest.json"
BUILD_TIMEOUT_S = 900

CHECK = r"""
import json, sys, torch
import {package} as pkg
m, n, k = json.loads(sys.argv[1])
torch.backends.cuda.matmul.allow_tf32 = False
g = torch.Generator(device="cuda").manual_seed(m + n + k)
a = torch.randn(m, k, device="cuda", dtype=torch.float16, generator=g)
b = torch.randn(k, n, device="cuda", dtype=torch.float16, generator=g)
c = pkg.matmul(a, b)
torch.cuda.synchronize()
ref = a.float() @ b.float()
err = ((c.float() - ref).norm() / ref.norm()).item()
base = ((torch.matmul(a, b).float() - ref).norm() / ref.norm()).item()
print(json.dumps({{"error": err, "torch_error": base, "finite": bool(torch.isfinite(c).all())}}))
"""


def test_lookup_names_this_machines_gpu() -> None:
    label = detect_machine_gpu()
    assert label in ("h100", "h200"), label


@pytest.mark.parametrize("shape", REFUSED, ids=str)
def test_unaligned_shapes_are_refused_with_a_clear_error(tmp_path, shape) -> None:
    manifest = write_manifest(tmp_path / "kernels" / "h100_F32F16F16F32" / "manifest.json")
    for anyway in (False, True):
        with pytest.raises(NotFoundError, match="N and K must be multiples of 8"):
            plan_export(None, shape, manifests=[manifest], anyway=anyway)


def _build_and_check(root: Path, manifest: Path, shape: Shape) -> dict:
    plan = plan_export(None, shape, manifests=[manifest], anyway=True)  # the fixture's timings
    out = root / str(shape) / "export"
    export_plan(plan, "torch", out)
    package = next(p.name for p in (out / "src").iterdir())
    target = root / str(shape) / "site"
    cutlass = find_cutlass()
    env = {**os.environ, **({"CUTLASS_DIR": cutlass.root} if cutlass else {})}
    pip = [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index"]
    built = subprocess.run(
        [*pip, "--target", str(target), "."], cwd=out, env=env, capture_output=True, text=True,
        timeout=BUILD_TIMEOUT_S,
    )  # fmt: skip
    if built.returncode != 0:
        return {"ok": False, "log": built.stderr[-6000:]}
    kernel = getattr(plan.kernel, "config", None)
    env["PYTHONPATH"] = os.pathsep.join([str(target), env.get("PYTHONPATH", "")])
    ran = subprocess.run(
        [sys.executable, "-c", CHECK.format(package=package), json.dumps(shape.astuple())],
        cwd=root, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if ran.returncode != 0:
        return {"ok": False, "log": ran.stderr[-6000:]}
    name = kernel.name if kernel is not None else "spec4"
    return {
        "ok": True,
        "config": str(plan.config),
        "kernel": name,
        **json.loads(ran.stdout.strip().splitlines()[-1]),
    }


def _build_all_and_check(root: Path, manifest: Path, shapes: list[Shape]) -> dict[Shape, dict]:
    if find_cutlass() is None:
        pytest.skip("CUTLASS headers not found")
    with ThreadPoolExecutor(max_workers=len(shapes)) as pool:
        built = pool.map(lambda s: _build_and_check(root, manifest, s), shapes)
        results = dict(zip(shapes, built, strict=True))
    for shape, result in results.items():
        assert result["ok"], f"{shape}:\n{result['log']}"
        errors = f"error {result['error']:.2e}, torch.matmul {result['torch_error']:.2e}"
        print(f"{shape} (kernel of {result['config']}): {errors}")
        assert result["finite"] and result["error"] <= max(4 * result["torch_error"], 2e-3), result
    return results


def test_exported_launcher_runs_at_the_issue_shapes(tmp_path) -> None:
    manifest = write_manifest(tmp_path / "kernels" / "h100_F32F16F16F32" / "manifest.json")
    _build_all_and_check(tmp_path, manifest, BUILT)


@pytest.mark.parametrize("device", ["h100", "h200"])
def test_our_set_exports_for_model_shapes(tmp_path, device) -> None:
    """Each of our sets (the H200 one re-searched there, with its one-buffer and convert kernels)."""
    _build_all_and_check(tmp_path, KERNELS_DIR / f"{device}_F32F16F16F32" / "manifest.json", MODEL_SHAPES)


def _first_picks(manifest: Path, wanted) -> dict[str, Shape]:
    """Each kernel whose name ``wanted`` accepts, at the first grid config the set picks it for."""
    first: dict[str, Shape] = {}
    for entry in json.loads(manifest.read_text())["configs"]:
        if wanted(entry["kernel_name"]):
            first.setdefault(entry["kernel_name"], Shape(entry["m"], entry["n"], entry["k"]))
    return first


def test_our_set_exports_its_96_wide_kernels(tmp_path) -> None:
    """Session 24's skinny tiles (64/128/256 x 96, B K-major or swap-AB): one grid config the set
    picks each at, exported from the set, built, and checked against torch."""
    first = _first_picks(OUR_SET, lambda name: "x96x" in name)
    assert first, "the set picks no 96-wide kernel"
    results = _build_all_and_check(tmp_path, OUR_SET, sorted(first.values()))
    assert {r["kernel"] for r in results.values()} == set(first)


def test_h200_set_exports_its_tensor_fed_picks(tmp_path) -> None:
    """The H200 set's tensor-fed tiny picks (one box a copy, four through a slab-major 3D map, four
    pitched, the K = 2048 panels): each kernel at the first grid config the set picks it for,
    exported from the set (the exported launcher encodes its own tensor maps), built, and checked
    against torch."""
    h200 = KERNELS_DIR / "h200_F32F16F16F32" / "manifest.json"
    first = _first_picks(h200, lambda name: name.startswith("tinyt"))
    assert any("_c4_" in name for name in first) and any("_p4_" in name for name in first), first
    results = _build_all_and_check(tmp_path, h200, sorted(first.values()))
    assert {r["kernel"] for r in results.values()} == set(first)
