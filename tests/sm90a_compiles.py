"""The CPU suite's two CUTLASS SM90 compiles, ~45 s each: the tuner's emitted TU through the real
build path (test_tuner.py) and the cmake export's hgemm.cu with the export's own flags
(test_export.py). The first test that asks starts both, one per core of the CI's two, so that the
other finds its result ready: together they cost one compile's time instead of two."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from cuda_l2_explorer.engine.export import formats, plan_export, render_files, write_tree
from cuda_l2_explorer.tuner import build
from cuda_l2_explorer.tuner.catalog import KernelConfig
from export_fixtures import TINY, write_manifest

TUNER_CONFIG = KernelConfig(128, 128)  # a persistent cooperative kernel


@dataclass
class Sm90aCompiles:
    tuner_dir: Path  # compile_unit's output folder (its cache)
    tuner: build.UnitResult
    export_dir: Path  # the rendered cmake tree; hgemm.o beside hgemm.cu on success
    export: subprocess.CompletedProcess


def _compile_tuner_unit(out: Path, nvcc: str, cutlass: build.CutlassInfo) -> build.UnitResult:
    return build.compile_unit([TUNER_CONFIG], out, nvcc, cutlass, build.nvcc_version(nvcc))


def _compile_export(folder: Path, nvcc: str, cutlass: build.CutlassInfo) -> subprocess.CompletedProcess:
    manifest = write_manifest(folder / "kernels" / "h100_F32F16F16F32" / "manifest.json")
    plan = plan_export(None, TINY, manifests=[manifest], anyway=True, machine_gpu="h100")
    src = folder / "src"
    write_tree(render_files(plan, "cmake"), src)
    cmd = [nvcc, *formats.nvcc_flags(plan), *(f"-I{d}" for d in cutlass.include_dirs), "-c", "hgemm.cu"]
    return subprocess.run([*cmd, "-o", "hgemm.o"], cwd=src, capture_output=True, text=True, timeout=1200)


@pytest.fixture(scope="session")
def sm90a_compiles(tmp_path_factory) -> Sm90aCompiles:
    nvcc, cutlass = build.find_nvcc(), build.find_cutlass()
    if not nvcc:
        pytest.skip("nvcc not found")
    if cutlass is None:
        pytest.skip("CUTLASS headers not found (CUTLASS_DIR or the nvidia-cutlass wheel)")
    tuner_dir, export_dir = tmp_path_factory.mktemp("sm90a-tuner"), tmp_path_factory.mktemp("sm90a-export")
    with ThreadPoolExecutor(2) as pool:  # each thread waits on its nvcc process
        tuner = pool.submit(_compile_tuner_unit, tuner_dir, nvcc, cutlass)
        export = pool.submit(_compile_export, export_dir, nvcc, cutlass)
        return Sm90aCompiles(tuner_dir, tuner.result(), export_dir / "src", export.result())
