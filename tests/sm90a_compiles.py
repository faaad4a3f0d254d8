"""The CPU suite's two CUTLASS SM90 compiles, ~45 s each: the tuner's emitted TU through the real
build path (test_tuner.py) and the cmake export's hgemm.cu with the export's own flags
(test_export.py). Both start as soon as the collection shows a test that needs them (conftest's
``pytest_collection_finish``), one per core of the CI's two, at the lowest CPU priority: they use
what the tests before them leave idle (subprocess waits, servers, sleeps) and yield the cores
whenever a test wants them, so a timing test does not feel them. The tests that need them wait
for what is left, if anything. Once a run: with ``pytest -n 2`` one worker compiles, the other
reads its results (tests/run_shared.py).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import pytest
from cuda_l2_explorer.engine.export import formats, plan_export, render_files, write_tree
from cuda_l2_explorer.tuner import build
from cuda_l2_explorer.tuner.catalog import KernelConfig
from export_fixtures import TINY, write_manifest
from run_shared import SharedJobs

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
    """The two compiles in two threads of the process of the run that claims them first
    (tests/run_shared.py: with ``pytest -n 2`` the other worker waits for their results)."""

    def __init__(self) -> None:
        self.jobs = SharedJobs("sm90a", threads=2)  # each thread waits on its nvcc

    @property
    def futures(self) -> tuple[Future, ...]:
        """This process's compiles, for the builds that wait for them (tests/background_builds.py)."""
        return tuple(self.jobs.futures.values())

    def _makers(self, nvcc: str, cutlass: build.CutlassInfo) -> dict[str, Callable[[Path], object]]:
        return {
            "tuner": lambda out: _compile_tuner_unit(out, nvcc, cutlass),
            "export": lambda out: _compile_export(out, nvcc, cutlass),
        }

    def start(self, nvcc: str, cutlass: build.CutlassInfo) -> None:
        self.jobs.start(self._makers(nvcc, cutlass))

    def results(self, nvcc: str, cutlass: build.CutlassInfo) -> Sm90aCompiles:
        makers = self._makers(nvcc, cutlass)
        tuner, export = (self.jobs.result(key, makers[key]) for key in ("tuner", "export"))
        return Sm90aCompiles(self.jobs.folder / "tuner", tuner, self.jobs.folder / "export" / "src", export)

    def close(self) -> None:
        self.jobs.close()


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
    return BACKGROUND.results(nvcc, cutlass)  # started at the collection (or now, if it missed them)
