"""export --force replaces only what an export wrote (issue 19 item 1). It used to remove any
target whole: `--out .` or `--out ''` wiped the working folder and `--out ~` a home folder.
Every test here works in its own temporary folders (HOME included), so the old behaviour, had it
come back, would delete only those."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cuda_l2_explorer.db.errors import UsageError
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.engine.export import write_tree
from cuda_l2_explorer.engine.export import writer as writer_module
from export_fixtures import SPEC4_SET, spec4_store, write_manifest

MANIFEST = writer_module.MANIFEST_NAME
FILES = {"README.md": "hello\n", "pkg/__init__.py": "x = 1\n", "pkg/csrc/k.cu": "// k\n"}
NEW = {"README.md": "new\n", "other/k.cu": "// new\n"}


@pytest.fixture
def manifest(tmp_path) -> Path:
    return write_manifest(tmp_path / "kernels" / "h100_F32F16F16F32" / "manifest.json")


def _export(cli, manifest, out, *extra):
    return cli(
        "--db", manifest.parent.parent.parent / "s.duckdb", "export", "64", "64", "64",
        "--format", "cuda-l2", "--out", out, "--manifest", manifest, *extra,
    )  # fmt: skip


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()}


def _refused(result, *words: str) -> None:
    assert result.code == 2, (result.code, result.err)
    assert len(result.err.strip().splitlines()) == 1, result.err
    for word in words:
        assert word in result.err, result.err


@pytest.mark.parametrize("out", [".", "", "..", "../.."])
def test_the_working_folder_and_those_above_it_are_never_a_target(cli, manifest, tmp_path, monkeypatch, out):
    work = tmp_path / "home" / "work" / "project"
    work.mkdir(parents=True)
    (work / "notes.txt").write_text("mine")
    (tmp_path / "home" / "work" / "thesis.tex").write_text("mine too")
    monkeypatch.chdir(work)
    before = _tree(tmp_path / "home")
    _refused(_export(cli, manifest, out, "--force"), "current folder or one above it")
    _refused(_export(cli, manifest, out), "current folder or one above it")
    assert _tree(tmp_path / "home") == before and Path.cwd() == work


def test_the_home_folder_is_never_a_target(cli, manifest, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / "precious.txt").write_text("mine")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path / "kernels")  # not below the home folder
    _refused(_export(cli, manifest, "~", "--force"), "home folder")
    assert _tree(home) == {"precious.txt": "mine"}


def test_force_refuses_a_folder_no_export_wrote(cli, manifest, tmp_path):
    out = tmp_path / "project"
    out.mkdir()
    (out / "main.py").write_text("mine")
    _refused(_export(cli, manifest, out, "--force"), "no export wrote it")
    assert _tree(out) == {"main.py": "mine"}


def test_force_replaces_a_previous_export(cli, manifest, tmp_path):
    out = tmp_path / "out"
    assert _export(cli, manifest, out).code == 0
    written = _tree(out)
    assert MANIFEST in written and "README.md" in written
    result = cli(
        "--db", tmp_path / "s.duckdb", "export", "64", "64", "64", "--format", "torch",
        "--out", out, "--manifest", manifest, "--force",
    )  # fmt: skip
    assert result.code == 0, result.err
    now = _tree(out)
    assert "h100_F32F16F16F32/64_64_64.cu" not in now and "setup.py" in now
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda out: (out / "pkg" / "notes.txt").write_text("mine"), ["pkg/notes.txt", "no export wrote"]),
        (lambda out: (out / "pkg" / "csrc" / "k.cu").write_text("// my fix\n"), ["pkg/csrc/k.cu", "changed"]),
        (lambda out: (out / "build").mkdir(), ["build/"]),
        (lambda out: (out / "link").symlink_to("/etc"), ["link"]),
        (lambda out: (out / MANIFEST).write_text("{}"), ["cannot be read"]),
        (lambda out: (out / MANIFEST).unlink(), ["no export wrote it"]),
    ],
    ids=["added-file", "edited-file", "added-folder", "added-link", "bad-manifest", "no-manifest"],
)
def test_force_refuses_an_export_the_user_changed(tmp_path, change, words):
    out = tmp_path / "out"
    write_tree(FILES, out)
    change(out)
    before = {p.relative_to(out) for p in out.rglob("*")}
    with pytest.raises(writer_module.NotOurExport) as caught:
        write_tree(NEW, out, force=True)
    for word in words:
        assert word in str(caught.value)
    assert {p.relative_to(out) for p in out.rglob("*")} == before
    assert not (out / "other").exists()


def test_files_an_export_wrote_that_the_user_deleted_are_no_obstacle(tmp_path):
    out = tmp_path / "out"
    write_tree(FILES, out)
    (out / "pkg" / "csrc" / "k.cu").unlink()
    write_tree(NEW, out, force=True)
    assert _tree(out).keys() == {"README.md", "other/k.cu", MANIFEST}


def test_a_file_written_during_the_swap_puts_the_old_folder_back(tmp_path, monkeypatch):
    """Someone writes into the folder between the check and the swap: the last look before the
    delete sees it, the two folders are swapped back, and the export is refused."""
    out = tmp_path / "out"
    write_tree(FILES, out)
    real_rename = os.rename

    def rename_after_a_write(src, dst):
        if Path(src) == out and Path(dst).name == "old":
            (out / "late.txt").write_text("written meanwhile")
        return real_rename(src, dst)

    monkeypatch.setattr(writer_module.os, "rename", rename_after_a_write)
    with pytest.raises(writer_module.NotOurExport, match=r"late\.txt"):
        write_tree(NEW, out, force=True)
    assert (out / "late.txt").read_text() == "written meanwhile"
    assert _tree(out).keys() == {*FILES, MANIFEST, "late.txt"}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_the_manifest_lists_each_file_with_its_hash(tmp_path):
    import hashlib
    import json

    written = write_tree(FILES, tmp_path / "out")
    assert written[-1] == tmp_path / "out" / MANIFEST
    data = json.loads((tmp_path / "out" / MANIFEST).read_text())
    assert data["files"] == {rel: hashlib.sha256(text.encode()).hexdigest() for rel, text in FILES.items()}


def test_the_root_is_never_a_target():
    with pytest.raises(UsageError, match="root"):
        write_tree(FILES, "/", force=True)


async def test_the_app_dialog_refuses_an_empty_folder_field(db_path, tmp_path, monkeypatch):
    """An empty folder field used to mean '.', and with the checkbox ticked, the working folder."""
    from cuda_l2_explorer.app.app import ExplorerApp
    from cuda_l2_explorer.app.screens import ExportKernelScreen
    from test_app import SIZE, _ready

    spec4_store(db_path)
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("mine")
    monkeypatch.chdir(work)
    app = ExplorerApp(db_path, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        dialog = ExportKernelScreen(SPEC4_SET, Shape(80, 80, 80))  # what the kernel view's x opens
        await app.push_screen(dialog)
        await pilot.pause()
        dialog.query_one("#export-force").value = True
        for typed in ("", "   ", "."):
            dialog.query_one("#export-dir").value = typed
            dialog.query_one("#export-dir").focus()
            await pilot.press("enter")
            await pilot.pause()
            assert app.screen is dialog
        messages = [n.message for n in app._notifications]
        assert any("type the folder" in m for m in messages), messages
        assert any("current folder" in m for m in messages), messages
    assert _tree(work) == {"notes.txt": "mine"}
