"""GPU faults (issue 8): an out-of-bounds write caught by compute-sanitizer, and a 16384^3
benchmark that sizes its cold-L2 rotation and its fp64 check to a nearly full GPU."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]

ROOT = Path(__file__).resolve().parents[2]
FAULTS = ROOT / "tests" / "kernelsets" / "faults" / "h100_F32F16F16F32"


@pytest.mark.skipif(shutil.which("compute-sanitizer") is None, reason="compute-sanitizer not installed")
def test_out_of_bounds_write_is_caught_by_compute_sanitizer(tmp_path):
    from cuda_l2_explorer.importer.harness.build import build_all
    from cuda_l2_explorer.importer.kernelset import scan_set

    scan = scan_set(FAULTS)
    (result,) = build_all(scan.files, cache_dir=tmp_path / "cache").values()
    assert result.ok, result.log
    script = textwrap.dedent(f"""
        import sys, torch
        sys.path.insert(0, {str(ROOT)!r})
        from cuda_l2_explorer.importer.harness.build import load_module
        run = load_module({str(result.module_path)!r})
        a = torch.randn(64, 256, device="cuda", dtype=torch.half)
        b = torch.randn(256, 64, device="cuda", dtype=torch.half)
        c = torch.empty(64, 64, device="cuda", dtype=torch.half)
        run(a, b, b.t().contiguous().t(), c)
        torch.cuda.synchronize()
        print("max error", float((c.float() - a.float() @ b.float()).abs().max()))
    """)
    done = subprocess.run(
        ["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "9", sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        # Without torch's caching allocator every tensor is its own allocation, so memcheck sees
        # a write one element past C (inside a cached segment it would look legal).
        env={**os.environ, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"},
    )
    output = done.stdout + done.stderr
    assert "Invalid __global__ write" in output and "naive_gemm_oob" in output, output[-3000:]
    assert done.returncode == 9, output[-3000:]


def test_16384_cubed_sizes_itself_to_the_free_memory(tmp_path):
    """Leave ~14 GiB free, then bench 16384^3: rotation and the fp64 check must fit."""
    free, _ = torch.cuda.mem_get_info()
    hog = torch.empty(max(0, free - 14 * 2**30), dtype=torch.uint8, device="cuda")
    try:
        db = tmp_path / "store.duckdb"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "cuda_l2_explorer",
                "--db",
                str(db),
                "-q",
                "bench",
                "--mnk",
                "16384_16384_16384",
                "--baselines",
                "cuBLAS-nn,torch.matmul",
                "--samples",
                "3",
                "--warmup-s",
                "0",
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
            cwd=ROOT,
        )
    finally:
        del hog
        torch.cuda.empty_cache()
    assert done.returncode == 0, done.stderr[-2000:]
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    status, details = con.execute("SELECT status, details FROM run_configs").fetchone()
    rows = con.execute(
        "SELECT implementation, status FROM measurements WHERE metric = 'device_time'"
    ).fetchall()
    con.close()
    assert status == "done", details
    assert dict(rows) == {"cuBLAS-nn": "ok", "torch.matmul": "ok"}
    assert 1 <= json.loads(details)["rotation_sets"] <= 3
