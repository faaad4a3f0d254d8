"""The CPU suite's two CUTLASS SM90 compiles, ~45 s each: the tuner's emitted TU through the real
build path (test_tuner.py) and the cmake export's hgemm.cu with the export's own flags
(test_export.py). Both start as soon as the collection shows a test that needs them (conftest's
``pytest_collection_finish``), one per core of the CI's two, at the lowest CPU priority: they use
what the tests before them leave idle (subprocess waits, servers, sleeps) and yield the cores
whenever a test wants them, so a timing test does not feel them. The tests that need them wait
for what is left, if anything.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
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


class _Background:
    """The two compiles in two threads; each thread lowers its own priority first (Linux keeps a
    nice value per thread), and the nvcc processes it starts inherit it."""

    def __init__(self) -> None:
        self.pool: ThreadPoolExecutor | None = None
        self.folders: tuple[Path, Path] | None = None
        self.futures: tuple[Future, Future] | None = None

    def start(self, nvcc: str, cutlass: build.CutlassInfo) -> None:
        if self.futures is not None:
            return
        base = Path(tempfile.mkdtemp(prefix="sm90a-compiles-"))
        tuner_dir, export_dir = base / "tuner", base / "export"
        tuner_dir.mkdir()
        export_dir.mkdir()
        self.folders = (tuner_dir, export_dir)
        self.pool = ThreadPoolExecutor(2, thread_name_prefix="sm90a")  # each thread waits on its nvcc
        self.futures = (
            self.pool.submit(_lowest_priority, _compile_tuner_unit, tuner_dir, nvcc, cutlass),
            self.pool.submit(_lowest_priority, _compile_export, export_dir, nvcc, cutlass),
        )

    def results(self) -> Sm90aCompiles:
        assert self.futures is not None and self.folders is not None
        tuner, export = self.futures
        return Sm90aCompiles(self.folders[0], tuner.result(), self.folders[1] / "src", export.result())

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        if self.folders is not None:
            shutil.rmtree(self.folders[0].parent, ignore_errors=True)


def _lowest_priority(fn, *args):
    with contextlib.suppress(OSError, AttributeError):  # not Linux: run at the usual priority
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    return fn(*args)


BACKGROUND = _Background()


def _toolchain() -> tuple[str | None, build.CutlassInfo | None]:
    return build.find_nvcc(), build.find_cutlass()


def start_if_needed(items) -> None:
    """Start the compiles when a collected test uses them and the toolchain is there."""
    if not any("sm90a_compiles" in getattr(item, "fixturenames", ()) for item in items):
        return
    nvcc, cutlass = _toolchain()
    if nvcc and cutlass is not None:
        BACKGROUND.start(nvcc, cutlass)


@pytest.fixture(scope="session")
def sm90a_compiles() -> Sm90aCompiles:
    nvcc, cutlass = _toolchain()
    if not nvcc:
        pytest.skip("nvcc not found")
    if cutlass is None:
        pytest.skip("CUTLASS headers not found (CUTLASS_DIR or the nvidia-cutlass wheel)")
    BACKGROUND.start(nvcc, cutlass)  # already running unless the collection missed it
    return BACKGROUND.results()
