"""pyproject's explicit package list and package data cover every package folder and data file
under the folders package-dir maps, so a new subpackage or data file never silently stays out of
the wheel (setuptools installs only what the list names)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _package_folders() -> dict[str, Path]:
    """{dotted name: folder} of every folder with an __init__.py under a mapped folder."""
    mapping = _setuptools()["package-dir"]
    mapped_folders = {(ROOT / folder).resolve() for folder in mapping.values()}
    found: dict[str, Path] = {}
    for name, folder in mapping.items():
        base = (ROOT / folder).resolve()
        if not (base / "__init__.py").is_file():  # mapped on its own as data (cutlass/): no code
            found[name] = base
        for init in sorted(base.rglob("__init__.py")):
            package = init.parent
            # A folder mapped on its own (db/ under a root mapped as '.') is named by its own mapping.
            if any(
                m != base and m in (package, *package.parents) and base in m.parents for m in mapped_folders
            ):
                continue
            relative = package.relative_to(base).parts
            found[".".join((name, *relative))] = package
    return found


def test_every_package_folder_is_listed():
    listed = set(_setuptools()["packages"])
    folders = _package_folders()
    missing = sorted(set(folders) - listed)
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {missing}"
    assert "cuda_l2_explorer.db" in folders and "cuda_l2_explorer.app.panes" in folders


def test_every_listed_package_has_a_folder():
    folders = _package_folders()
    stale = sorted(set(_setuptools()["packages"]) - set(folders))
    assert not stale, f"listed in pyproject.toml but no folder with an __init__.py: {stale}"


def test_every_data_file_in_a_package_folder_is_package_data():
    """Non-Python files inside a package's folder ship only when package-data names them."""
    folders = _package_folders()
    package_data = _setuptools().get("package-data", {})
    missing = []
    for name, folder in folders.items():
        nested = [f for n, f in folders.items() if n != name and folder in f.parents]
        for path in sorted(folder.rglob("*")):
            if not path.is_file() or path.suffix in {".py", ".pyc"} or "__pycache__" in path.parts:
                continue
            if any(sub in path.parents for sub in nested):  # belongs to a subpackage
                continue
            relative = path.relative_to(folder).as_posix()
            if not any(fnmatch.fnmatch(relative, glob) for glob in package_data.get(name, [])):
                missing.append(f"{name}: {relative}")
    assert not missing, "add to [tool.setuptools.package-data] in pyproject.toml:\n" + "\n".join(missing)
