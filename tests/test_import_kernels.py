"""Kernel sets from archives, archive URLs and GitHub repositories (import-kernels, bench --set
URL): the sources parsed, archives unpacked safely into the cache, and real downloads from an HTTP
server on loopback (GitHub's API stood in for by CUDA_L2_EXPLORER_GITHUB_API)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import pytest
from conftest import loopback_server
from cuda_l2_explorer.db.errors import BadInputError, IOFailure, UsageError
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.importer.fetch import FetchOptions, fetch_url
from cuda_l2_explorer.importer.remote_set import (
    UnpackLimits,
    fetch_sets,
    parse_source,
    unpack,
    unpack_cached,
)
from hypothesis import given
from hypothesis import strategies as st

PLANTED = Path(__file__).parent / "kernelsets" / "planted"
F32 = "h100_F32F16F16F32"


def _add(tar: tarfile.TarFile, name: str, data: bytes = b"", **fields) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in fields.items():
        setattr(info, key, value)
    tar.addfile(info, io.BytesIO(data) if data else None)


def _tarball(top: str, mode: str = "w:gz") -> bytes:
    """The planted set (two <device>_<ACC> folders) under ``top``/kernels/, as GitHub packs a repository."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as tar:
        tar.add(PLANTED, arcname=f"{top}/kernels", filter=lambda i: None if i.name.endswith(".md") else i)
        _add(tar, f"{top}/README.md", b"a repository\n")
    return buffer.getvalue()


# ----------------------------------------------------------------------------------------------
# Sources
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "archive", "subpath", "name"),
    [
        ("https://github.com/o/CUDA-L2", "https://api.github.com/repos/o/CUDA-L2/tarball", "", "cuda-l2"),
        (
            "https://github.com/o/CUDA-L2.git/",
            "https://api.github.com/repos/o/CUDA-L2/tarball",
            "",
            "cuda-l2",
        ),
        (
            f"https://github.com/o/CUDA-L2/tree/main/kernels/{F32}",
            "https://api.github.com/repos/o/CUDA-L2/tarball/main",
            f"kernels/{F32}",
            "cuda-l2",
        ),
        ("https://github.com/o/r/tree/v1.2", "https://api.github.com/repos/o/r/tarball/v1.2", "", "r"),
        (
            f"https://github.com/o/r#kernels/{F32}/",
            "https://api.github.com/repos/o/r/tarball",
            f"kernels/{F32}",
            "r",
        ),
        ("https://h.example/x/my%20set.tar.gz#a/./b", "https://h.example/x/my%20set.tar.gz", "a/b", "my set"),
        ("http://h.example/sets.zip", "http://h.example/sets.zip", "", "sets"),
        ("http://h.example/", "http://h.example/", "", "h.example"),
    ],
)
def test_sources_name_their_archive_folder_and_set_name(text, archive, subpath, name):
    source = parse_source(text)
    assert (source.archive, source.subpath, source.name) == (archive, subpath, name)
    assert source.remote


@pytest.mark.parametrize(
    "text",
    [
        "https://github.com/o",
        "https://github.com/o/r/pulls",
        "https://github.com/o/r/tree",
        "https://github.com/o/r/tree/main/kernels#kernels",  # the folder twice
        "https://github.com/o;rm/r",
        "https://h.example/set.tar.gz#../../etc",
        "",
    ],
)
def test_malformed_sources_are_usage_errors(text):
    with pytest.raises(UsageError):
        parse_source(text)


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/o/CUDA-L2/archive/refs/heads/main.zip",
        "https://github.com/o/CUDA-L2/releases/download/v1/sets.tar.gz",
    ],
)
def test_a_github_download_link_is_fetched_as_it_is(url):
    source = parse_source(f"{url}#kernels")
    assert (source.archive, source.subpath, source.name) == (url, "kernels", "cuda-l2")
    assert "codeload.github.com" in source.redirect_hosts  # where GitHub sends the bytes from


def test_a_missing_archive_file_is_an_io_failure(tmp_path):
    with pytest.raises(IOFailure, match="no such archive"):
        parse_source(str(tmp_path / "nothing.tar.gz"))


def test_the_github_api_root_can_be_moved(monkeypatch):
    monkeypatch.setenv("CUDA_L2_EXPLORER_GITHUB_API", "https://ghe.example/api/v3/")
    assert parse_source("https://github.com/o/r").archive == "https://ghe.example/api/v3/repos/o/r/tarball"


@given(st.text(max_size=40))
def test_a_fragment_never_leads_out_of_the_archive(fragment):
    try:
        source = parse_source(f"https://h.example/set.tar#{fragment}")
    except UsageError:
        return
    parts = source.subpath.split("/") if source.subpath else []
    assert ".." not in parts and "" not in parts and "." not in parts
    assert not source.subpath.startswith("/")


# ----------------------------------------------------------------------------------------------
# Unpacking
# ----------------------------------------------------------------------------------------------


def _hostile_tar() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        _add(tar, "top/ok/64_64_64.cu", b"ok")
        _add(tar, "/tmp/absolute.cu", b"x")
        _add(tar, "../escaped.cu", b"x")
        _add(tar, "top/a/../../../escaped2.cu", b"x")
        _add(tar, "top/link", type=tarfile.SYMTYPE, linkname="/etc/passwd")
        _add(tar, "top/hard", type=tarfile.LNKTYPE, linkname="top/ok/64_64_64.cu")
        _add(tar, "top/fifo", type=tarfile.FIFOTYPE)
        _add(tar, "top/dev", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
        _add(tar, "top/ok/64_64_64.cu/inner", b"clash")  # under a file
    return buffer.getvalue()


def test_unpacking_takes_regular_files_only_and_nothing_outside(tmp_path):
    dest = tmp_path / "dest"
    dest.mkdir()
    files, size, skipped = unpack(_hostile_tar(), dest)
    assert (files, size) == (1, 2)
    assert (dest / "top/ok/64_64_64.cu").read_bytes() == b"ok"
    reasons = dict(skipped)
    assert set(reasons) == {
        "/tmp/absolute.cu",
        "../escaped.cu",
        "top/a/../../../escaped2.cu",
        "top/link",
        "top/hard",
        "top/fifo",
        "top/dev",
        "top/ok/64_64_64.cu/inner",
    }
    assert "link" in reasons["top/link"] and "outside" in reasons["../escaped.cu"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dest"]  # nothing escaped
    assert not any(p.is_symlink() for p in dest.rglob("*"))
    assert not Path("/tmp/absolute.cu").exists()


def test_a_zip_is_unpacked_the_same_way(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr(f"s/{F32}/64_64_64.cu", "ok")
        z.writestr("../escaped.cu", "x")
        link = zipfile.ZipInfo("s/link")
        link.external_attr = 0o120777 << 16  # a symbolic link, as zip -y stores one
        z.writestr(link, "/etc/passwd")
    dest = tmp_path / "dest"
    dest.mkdir()
    files, _, skipped = unpack(buffer.getvalue(), dest)
    assert files == 1 and (dest / f"s/{F32}/64_64_64.cu").read_text() == "ok"
    assert {name for name, _ in skipped} == {"../escaped.cu", "s/link"}
    assert not (dest / "s/link").exists()


def test_limits_on_members_and_unpacked_bytes(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for i in range(5):
            _add(tar, f"f{i}", b"\0" * 1000)
    data = buffer.getvalue()
    for limits, words in ((UnpackLimits(max_members=4), "members"), (UnpackLimits(max_bytes=4500), "bytes")):
        dest = tmp_path / words
        dest.mkdir()
        with pytest.raises(BadInputError, match=words):
            unpack(data, dest, limits)


# Named ids: the truncated tarball's gzip header holds the time it was made, so the data differs
# between the xdist workers' collections a second apart (and they must collect the same test ids).
@pytest.mark.parametrize(
    "data",
    [b"", b"just some text, no archive\n" * 10, _tarball("t")[:300], b"PK\x03\x04broken"],
    ids=["empty", "text", "truncated-tarball", "broken-zip"],
)
def test_what_is_no_archive_or_is_broken_is_bad_input(tmp_path, data):
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(BadInputError):
        unpack(data, dest)


def test_the_cache_unpacks_each_archive_once_and_replaces_a_partial_entry(tmp_path):
    data = _tarball("o-r-abc")
    source = parse_source(f"https://h.example/x.tar.gz#kernels/{F32}")
    first = unpack_cached(data, source, tmp_path)
    assert not first.reused and first.folder.name == "o-r-abc" and first.files == 14
    again = unpack_cached(data, source, tmp_path)
    assert again.reused and again.folder == first.folder
    # An entry a killed process left without its completion record is unpacked again, whole.
    (first.folder.parents[1] / "source.json").unlink()
    (first.folder / "kernels" / F32 / "64_64_64.cu").unlink()
    redone = unpack_cached(data, source, tmp_path)
    assert not redone.reused and (redone.folder / "kernels" / F32 / "64_64_64.cu").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".unpack-")] == []


def test_processes_unpacking_the_same_archive_at_once_share_one_entry(tmp_path):
    archive = tmp_path / "set.tar.gz"
    archive.write_bytes(_tarball("top"))
    cache = tmp_path / "cache"
    code = (
        "import sys, json; from pathlib import Path; "
        "from cuda_l2_explorer.importer.remote_set import fetch_sets; "
        "f = fetch_sets(sys.argv[1], cache=Path(sys.argv[2])); "
        "print(json.dumps([str(p) for p in f.folders]))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(archive), str(cache)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4
    assert len(set(outputs)) == 1 and len(json.loads(outputs[0])) == 2
    entries = list(cache.iterdir())
    assert len(entries) == 1 and not entries[0].name.startswith(".")  # one entry, no temporary left


# ----------------------------------------------------------------------------------------------
# Downloads from a real server on loopback
# ----------------------------------------------------------------------------------------------

TOP = "o-CUDA-L2-0123abc"
TARBALL = _tarball(TOP)


class _Handler(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def log_message(self, *args):
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/gzip") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.hits.append(self.path)
        port = self.server.server_address[1]
        if self.path in ("/sets/planted.tar.gz", "/codeload/o/CUDA-L2/tar.gz/main"):
            self._send(200, TARBALL)
        elif self.path == "/sets/planted.zip":
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w") as z:
                for path in sorted(PLANTED.rglob("*.cu")):
                    z.write(path, f"planted/{path.relative_to(PLANTED)}")
            self._send(200, buffer.getvalue(), "application/zip")
        elif self.path.startswith("/api/repos/o/CUDA-L2/tarball"):  # GitHub's API: a redirect to codeload
            self._redirect("/codeload/o/CUDA-L2/tar.gz/main")
        elif self.path == "/offsite.tar.gz":
            self._redirect(f"http://localhost:{port}/sets/planted.tar.gz")
        elif self.path == "/login.tar.gz":
            self._send(200, b"<html>sign in</html>", "text/html")
        else:
            self._send(404, b"not found", "text/plain")


@pytest.fixture(scope="module")
def _server_url():
    with loopback_server(_Handler) as url:  # one server for the module: each shutdown costs 0.5 s
        yield url


@pytest.fixture
def server(_server_url, monkeypatch):
    _Handler.hits = []
    monkeypatch.setenv("CUDA_L2_EXPLORER_GITHUB_API", f"{_server_url}/api")
    return _server_url


def _kernel_sets(db_path: Path) -> list[tuple]:
    with Store.open(db_path, read_only=True, with_bundled=False) as store:
        return store.con.execute(
            "SELECT set_id, origin, root, description FROM kernel_sets ORDER BY set_id"
        ).fetchall()


def test_a_github_repository_imports_every_set_it_holds(cli, db_path, server, tmp_path):
    result = cli("--db", db_path, "import-kernels", "https://github.com/o/CUDA-L2", "--json")
    assert result.code == 0, result.err
    rows = result.json()
    assert [(r["set_id"], r["kernels"]) for r in rows] == [
        ("cuda-l2/h100_F16F16F16F16", 1),
        (f"cuda-l2/{F32}", 12),
    ]
    assert rows[1]["padded"] == 1  # 256_512_128.cu declares its tiles
    assert _Handler.hits == ["/api/repos/o/CUDA-L2/tarball", "/codeload/o/CUDA-L2/tar.gz/main"]
    stored = _kernel_sets(db_path)
    assert [s[0] for s in stored] == ["cuda-l2/h100_F16F16F16F16", f"cuda-l2/{F32}"]
    for _, origin, root, description in stored:
        assert origin == "imported"
        assert Path(root).is_dir() and Path(root).is_relative_to(tmp_path / "set-cache")
        assert Path(root).parent.parent.name == TOP
        assert "https://github.com/o/CUDA-L2" in description and "sha256" in description
    assert "bench --set SET_ID" in result.err
    # The sets are known by name now: the same folder for `bench --set cuda-l2/...`.
    from cuda_l2_explorer.engine.bench import _resolve_set
    from cuda_l2_explorer.engine.feedback import SILENT

    resolved = _resolve_set(f"cuda-l2/{F32}", db_path, SILENT)
    assert str(resolved.path) == stored[1][2]
    assert resolved.name == "cuda-l2"  # measured as cuda-l2/..., beside its published rows, not kernels/...


def test_sets_lists_an_imported_set_and_says_it_has_no_results_yet(cli, db_path):
    assert cli("--db", db_path, "import-kernels", PLANTED / F32, "-q").code == 0
    listed = cli("--db", db_path, "sets", "--json")
    assert listed.code == 0
    (row,) = listed.json()
    assert (row["set_id"], row["origin"], row["configs"]) == (f"planted/{F32}", "imported", 0)
    assert f"no results yet (planted/{F32})" in listed.err and "bench --set SET_ID" in listed.err


def test_a_tree_url_picks_its_ref_and_folder(cli, db_path, server):
    url = f"https://github.com/o/CUDA-L2/tree/main/kernels/{F32}"
    result = cli("--db", db_path, "import-kernels", url, "--json", "--set-name", "ref")
    assert result.code == 0, result.err
    assert [r["set_id"] for r in result.json()] == [f"ref/{F32}"]
    assert _Handler.hits[0] == "/api/repos/o/CUDA-L2/tarball/main"


@pytest.mark.parametrize("archive", ["planted.tar.gz", "planted.zip"])
def test_an_archive_url_with_a_folder_after_the_hash(cli, db_path, server, archive):
    folder = f"kernels/{F32}" if archive.endswith(".tar.gz") else F32
    result = cli("--db", db_path, "import-kernels", f"{server}/sets/{archive}#{folder}", "--json")
    assert result.code == 0, result.err
    # GitHub-style top folder o-CUDA-L2-0123abc/kernels/: the set's parent names it (as for a folder)
    name = "kernels" if archive.endswith(".tar.gz") else "planted"
    assert [r["set_id"] for r in result.json()] == [f"{name}/{F32}"]


def test_a_second_import_of_the_same_bytes_reuses_the_cache(cli, db_path, server):
    url = f"{server}/sets/planted.tar.gz"
    assert cli("--db", db_path, "import-kernels", url).code == 0
    again = cli("--db", db_path, "import-kernels", url)
    assert again.code == 0 and "reused from the cache" in again.err
    assert len(_kernel_sets(db_path)) == 2


@pytest.mark.parametrize(
    ("path", "code", "words"),
    [
        ("/nowhere.tar.gz", 5, ["404"]),
        ("/offsite.tar.gz", 5, ["another host"]),
        ("/login.tar.gz", 3, ["not an archive", "text/html"]),
        ("/sets/planted.tar.gz#kernels/none", 2, ["no folder 'kernels/none'"]),
        ("/sets/planted.tar.gz#kernels/h100_F32F16F16F32/64_64_64.cu", 2, ["no folder"]),
    ],
)
def test_failures_are_one_line_and_leave_no_store(cli, db_path, server, path, code, words):
    result = cli("--db", db_path, "import-kernels", f"{server}{path}", "--retries", "0")
    assert result.code == code, result.err
    assert len(result.err.strip().splitlines()) == 1, result.err
    for word in words:
        assert word in result.err
    assert not db_path.exists()


def test_an_archive_over_the_download_limit_is_refused(cli, db_path, server):
    result = cli("--db", db_path, "import-kernels", f"{server}/sets/planted.tar.gz", "--max-bytes", "1000")
    assert result.code == 3 and "limit" in result.err


def test_a_redirect_to_an_allowed_host_is_followed(server):
    body = fetch_url(f"{server}/offsite.tar.gz", FetchOptions(redirect_hosts=frozenset({"localhost"})))
    assert body == TARBALL


def test_bench_takes_an_archive_url_and_asks_which_set(cli, db_path, server, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # a CPU machine: bench stops at the GPU
    several = cli("--db", db_path, "bench", "--set", f"{server}/sets/planted.tar.gz", "--mnk", "64_64_64")
    assert several.code == 2, several.err
    assert f"#kernels/{F32}" in several.err and "import-kernels" in several.err
    one = cli(
        "--db", db_path, "bench", "--set", f"{server}/sets/planted.tar.gz#kernels/{F32}", "--mnk", "64_64_64"
    )
    assert one.code == 7, one.err  # fetched, unpacked and scanned; no GPU to measure on


def test_bench_names_a_downloaded_set_and_records_where_it_came_from(server):
    from cuda_l2_explorer.engine.imports import kernel_set_folder

    folder = kernel_set_folder(f"https://github.com/o/CUDA-L2#kernels/{F32}")
    assert folder.path.name == F32 and folder.path.parent.parent.name == TOP
    assert folder.name == "cuda-l2"  # the published set's name: published and measured side by side
    assert folder.description.startswith("from https://github.com/o/CUDA-L2#kernels/")


def test_a_local_folder_and_a_local_archive_import_alike(cli, db_path, tmp_path):
    folder = cli("--db", db_path, "import-kernels", PLANTED, "--json")
    assert folder.code == 0, folder.err
    assert [r["set_id"] for r in folder.json()] == ["planted/h100_F16F16F16F16", f"planted/{F32}"]
    archive = tmp_path / "mine.tar.bz2"
    with tarfile.open(archive, "w:bz2") as tar:
        tar.add(PLANTED / F32, arcname=F32)
    result = cli("--db", db_path, "import-kernels", archive, "--json")
    assert result.code == 0, result.err
    assert [r["set_id"] for r in result.json()] == [f"mine/{F32}"]  # no parent: the archive's name


def test_fetch_sets_finds_no_set_in_an_archive_without_one(tmp_path):
    archive = tmp_path / "empty.tar"
    with tarfile.open(archive, "w") as tar:
        _add(tar, "top/README.md", b"nothing here")
    with pytest.raises(BadInputError, match="no <device>_<ACC>"):
        fetch_sets(str(archive), cache=tmp_path / "cache")
    assert os.listdir(tmp_path / "cache")  # the archive stays unpacked: the message names its content


@pytest.mark.parametrize("fragment", [f"kernels/{F32}", F32])
def test_a_folder_is_found_from_the_top_folder_or_from_the_archive_root(tmp_path, fragment):
    archive = tmp_path / "snapshot.tar.gz"  # one top folder, kernels/, as `tar czf x kernels` makes
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(PLANTED / F32, arcname=f"kernels/{F32}")
        tar.add(PLANTED / "h100_F16F16F16F16", arcname="kernels/h100_F16F16F16F16")
    fetched = fetch_sets(f"{archive}#{fragment}", cache=tmp_path / "cache")
    assert [f.name for f in fetched.folders] == [F32]


def test_building_the_cli_parser_loads_no_archive_code():
    """Every command builds the whole parser: import-kernels' defaults must not load the unpacker
    (tarfile, zipfile, the fetcher: ~26 ms on every command when they did)."""
    from conftest import modules_loaded_after

    unpacker = (
        "cuda_l2_explorer.importer.remote_set",
        "cuda_l2_explorer.importer.fetch",
        "tarfile",
        "zipfile",
    )
    code = "from cuda_l2_explorer.cli.dispatch import build_parser; build_parser()"
    assert modules_loaded_after(code, unpacker) == []
