"""Builds that a few tests only read, each made once a test run: the project's wheel (test_bundled,
test_wheel_export), the native baselines library (test_native_build) and one library of each of
our own families (test_tuner_own_abi: 15-20 s of nvcc for the wgmma one). Like the SM90 compiles
(tests/sm90a_compiles.py), they start in the background as soon as the collection shows a test
that asks for them (conftest's ``pytest_collection_finish``), at the lowest CPU priority, so they
use what the tests leave idle; the tests wait for what is left, if anything. One build at a time,
and the one that includes CUTLASS headers only once the SM90 compiles are done: no more nvcc at
once than before (the CI's memory). Once a run: with ``pytest -n 2`` one worker builds, the
other reads its results (tests/run_shared.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from cuda_l2_explorer.importer.harness import toolchain
from cuda_l2_explorer.tuner import build, tiny, wgmma
from cuda_l2_explorer.tuner.families import family_of
from run_shared import SharedJobs

ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------------- our own families

OWN_CONFIGS = [tiny.TinyConfig(64, 64, 64, 2, 2, 4), wgmma.WgmmaConfig(64, 64, 64, 8)]
# Built beside a family's config, in the same translation unit (no second compile).
SLICED = wgmma.WgmmaConfig(64, 64, 64, 8, reduce="sliced")
TWINS = {OWN_CONFIGS[1]: [SLICED]}


def own_configs_of(config) -> list:
    """What one library holds: the config and its twins."""
    return [config, *TWINS.get(config, [])]


def own_skip_reason(config) -> str | None:
    if not build.find_nvcc():
        return "nvcc not found"
    if family_of(config).needs_cutlass and build.find_cutlass() is None:
        return "CUTLASS headers not found (CUTLASS_DIR or the nvidia-cutlass wheel)"
    return None


# ---------------------------------------------------------------------------- the jobs


@dataclass(frozen=True)
class Tools:
    """Found when the builds start: a test may point NVCC or CUTLASS_DIR elsewhere meanwhile."""

    nvcc: str | None
    cutlass: build.CutlassInfo | None
    env: dict[str, str]


def _wheel(out: Path, tools: Tools) -> Path:
    """The wheel of the repository as it is, built from a folder of links to its entries (not its
    VCS, virtual environment or build outputs), so that the checkout gets no build/ folder."""
    view = out / "source"
    view.mkdir()
    for entry in ROOT.iterdir():
        if not entry.name.startswith(".") and entry.name not in ("build", "dist"):
            if not entry.name.endswith(".egg-info"):
                (view / entry.name).symlink_to(entry)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out / "dist"), str(view)],
        check=True,
        capture_output=True,
        timeout=300,
        env=tools.env,
    )
    (wheel,) = (out / "dist").glob("cuda_l2_explorer-*.whl")
    return wheel


def _native(out: Path, tools: Tools) -> Path:
    from cuda_l2_explorer.importer.harness import baselines

    return baselines.build_baselines(out, nvcc=tools.nvcc)


def _own(config) -> Callable[[Path, Tools], build.BuildResult]:
    def make(out: Path, tools: Tools) -> build.BuildResult:
        return build.build(
            own_configs_of(config), out, jobs=1, nvcc=tools.nvcc, cutlass=tools.cutlass, log=lambda _m: None
        )

    return make


@dataclass(frozen=True)
class Job:
    fixture: str  # a collected test that asks for this fixture starts the job
    make: Callable[[Path, Tools], object]  # builds into an empty folder of its own
    heavy: bool = False  # CUTLASS headers: waits for the SM90 compiles


def _native_wanted() -> bool:
    return toolchain.find_nvcc() is not None and toolchain.find_cublas_dev() is not None


JOBS: dict[str, tuple[Job, Callable[[], bool]]] = {
    "wheel": (Job("project_wheel", _wheel), lambda: True),
    "native": (Job("native_built", _native), _native_wanted),
    **{
        config.name: (
            Job("own_abi_built", _own(config), heavy=family_of(config).needs_cutlass),
            lambda c=config: own_skip_reason(c) is None,
        )
        for config in OWN_CONFIGS
    },
}


class _Background:
    """The builds, one at a time, in a thread of the process of the run that claims them first
    (tests/run_shared.py: with ``pytest -n 2`` the other worker waits for their results)."""

    def __init__(self) -> None:
        self.jobs = SharedJobs("builds", threads=1)  # one at a time
        self.tools: Tools | None = None

    def _maker(self, key: str) -> Callable[[Path], object]:
        if self.tools is None:
            self.tools = Tools(build.find_nvcc(), build.find_cutlass(), dict(os.environ))
        make, tools = JOBS[key][0].make, self.tools
        return lambda out: make(out, tools)

    def start(self, fixtures: set[str], after: tuple[Future, ...] = ()) -> None:
        wanted = {
            key: self._maker(key)
            for key, (job, is_wanted) in JOBS.items()
            if job.fixture in fixtures and key not in self.jobs.futures and is_wanted()
        }
        # The one that includes CUTLASS headers waits for the SM90 compiles: they are wanted earlier.
        self.jobs.start(wanted, after={key: after for key in wanted if JOBS[key][0].heavy})

    def result(self, key: str):
        """The job's result (its exception, raised here); started now if the collection missed it."""
        return self.jobs.result(key, self._maker(key))

    def close(self) -> None:
        self.jobs.close()


BACKGROUND = _Background()


def start_if_needed(items, after: tuple[Future, ...] = ()) -> None:
    fixtures = {name for item in items for name in getattr(item, "fixturenames", ())}
    if fixtures & {job.fixture for job, _ in JOBS.values()}:
        BACKGROUND.start(fixtures, after)
