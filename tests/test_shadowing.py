"""Started from a folder that holds db/, importer/ and explorer/ packages of its own, every
command still runs our installed code (SPEC §2: one import namespace, cuda_l2_explorer)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.fixture
def decoy_folder(tmp_path):
    for name in ("db", "importer", "explorer", "tuner"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise ImportError('the decoy {name} was imported')\n")
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ["sets"],
        ["stats", "--gpu", "h100", "--mode", "offline", "--baseline", "best-baseline"],
        ["lookup", "4096", "4096", "4096", "--gpu", "h100", "--limit", "2"],
        ["runs", "--gpu", "h100"],
        ["info"],
    ],
)
def test_commands_run_from_a_folder_with_decoy_packages(decoy_folder, args, monkeypatch):
    monkeypatch.delenv("CUDA_L2_EXPLORER_NO_BUNDLED")  # the bundled dataset, as a new user has it
    db = decoy_folder / "store.duckdb"
    done = subprocess.run(
        [sys.executable, "-m", "cuda_l2_explorer", "--db", str(db), *args],
        cwd=decoy_folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "decoy" not in done.stderr and done.stdout.strip()


def test_the_app_module_imports_from_a_folder_with_decoy_packages(decoy_folder):
    code = "import cuda_l2_explorer.app.app, cuda_l2_explorer.engine.bench, cuda_l2_explorer.tuner.families"
    done = subprocess.run([sys.executable, "-c", code], cwd=decoy_folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
