"""CLI conventions: help, version, exit codes, one-line errors, JSON shapes, NO_COLOR."""

import functools
import hashlib
import os
import subprocess
import sys
from http.server import SimpleHTTPRequestHandler

import duckdb
import pytest
from conftest import UPSTREAM, loopback_server
from cuda_l2_explorer.cli import COMMANDS, build_parser

SUBCOMMANDS = [c for c in COMMANDS if c]


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("command", [None, *SUBCOMMANDS])
def test_help_everywhere(cli, command):
    args = [command, "--help"] if command else ["--help"]
    with pytest.raises(SystemExit) as exit_info:
        cli(*args)
    assert exit_info.value.code == 0


def test_help_text_lists_exit_codes(capsys):
    build_parser().print_help()
    assert "exit codes" in capsys.readouterr().out


def test_version(cli, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli("--version")
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("cuda-l2-explorer ")


@pytest.mark.parametrize("bad", ["0", "-1", "1e3", "abc", str(10**12), "10**12", "1.5", ""])
def test_bad_dimensions_exit_2_with_one_line(cli, loaded_db, bad):
    before = digest(loaded_db)
    for position in range(3):
        dims = ["64", "64", "64"]
        dims[position] = bad
        result = cli("--db", loaded_db, "lookup", "--", *dims)
        assert result.code == 2, (dims, result.err)
        assert result.out == ""
        assert len(result.err.strip().splitlines()) == 1
        assert "MNK"[position] in result.err or "positive" in result.err
    assert digest(loaded_db) == before


def test_unknown_command_and_option_are_usage_errors(cli):
    for args in (["frobnicate"], ["stats", "--nope"], ["lookup", "1", "2"]):
        result = cli(*args)
        assert result.code == 2 and len(result.err.strip().splitlines()) == 1


def test_lookup_json_shape(cli, loaded_db):
    data = cli("--db", loaded_db, "lookup", "1000", "1000", "1000", "--json").json()
    assert {"query", "covered", "message", "candidates"} <= set(data)  # the fields before issue 16
    assert {"answer", "keep_baseline", "gpu", "gpu_choice", "mode", "accumulator", "notes"} <= set(data)
    first = data["candidates"][0]
    assert {
        "rank",
        "tier",
        "set_id",
        "gpu",
        "mode",
        "m",
        "n",
        "k",
        "runs_at",
        "predicted_speedup",
        "predicted_basis",
        "evidence",
    } <= set(first)
    assert {"source", "config", "run_id", "from", "date"} <= set(first["evidence"])
    # every figure names its metric: a published ratio is never labelled a device time
    metrics = {(c["evidence"]["source"], c["metric"], c["evidence"]["metric"]) for c in data["candidates"]}
    assert metrics <= {("measured", "device_time", "device_time"), ("published", "published", "published")}
    assert "measure" in data


def test_lookup_text_keeps_messages_off_stdout(cli, loaded_db):
    result = cli("--db", loaded_db, "lookup", "20000", "64", "64")
    assert result.code == 0
    assert "nothing covers" in result.err and "nothing covers" not in result.out
    answer, header = result.out.splitlines()[:2]
    assert answer.startswith("answer: keep ") and "no kernel here can run 20000_64_64" in answer
    assert header.split()[:2] == ["rank", "tier"]


def test_sets_and_info(cli, loaded_db):
    sets = cli("--db", loaded_db, "sets", "--json").json()
    assert sets == [
        {
            "set_id": "cuda-l2/h100_F32F16F16F32",
            "name": "cuda-l2",
            "gpu": "h100",
            "accumulator": "F32F16F16F32",
            "origin": "published",
            "data_gpus": "h100",
            "modes": "offline,server",
            "configs": 8,
            "bundled": False,
        }
    ]
    info = cli("--db", loaded_db, "info", "--json").json()
    assert info["store_exists"] and info["store_schema_version"] == info["schema_version"]
    assert cli("--db", loaded_db, "info").code == 0


def test_overview(cli, loaded_db, db_path):
    result = cli("--db", loaded_db, "overview")
    assert result.code == 0 and "best-baseline" in result.out
    empty = cli("--db", db_path.with_name("empty.duckdb"), "overview")
    assert empty.code == 0 and "empty" in empty.err


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


def test_corrupt_store(cli, tmp_path):
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(b"\x00garbage" * 4096)
    before = digest(bad)
    # --upstream downloads every published file before it opens the store: from a mirror of them
    # on loopback (the real host may be out of reach, or slow), so that it gets to the store.
    mirror = functools.partial(_QuietFiles, directory=str(UPSTREAM))
    with loopback_server(mirror) as url:
        upstream = ["import-results", "--upstream", "--upstream-base", url]
        for args in (["stats"], ["lookup", "64", "64", "64"], upstream):
            result = cli("--db", bad, *args)
            assert result.code == 6, result.err
            assert len(result.err.strip().splitlines()) == 1
    assert digest(bad) == before


def test_newer_schema_store(cli, loaded_db):
    con = duckdb.connect(str(loaded_db))
    con.execute("INSERT INTO schema_info (version, description, tool_version) VALUES (42, 'x', 'y')")
    con.close()
    before = digest(loaded_db)
    result = cli("--db", loaded_db, "stats")
    assert result.code == 6 and "newer" in result.err
    from conftest import OFFLINE

    assert cli("--db", loaded_db, "import-results", OFFLINE).code == 6
    assert digest(loaded_db) == before


def test_read_only_store(cli, loaded_db):
    from conftest import OFFLINE

    os.chmod(loaded_db, 0o444)
    try:
        result = cli("--db", loaded_db, "import-results", OFFLINE)
        assert result.code == 6 and "read-only" in result.err
        assert cli("--db", loaded_db, "stats").code == 0
    finally:
        os.chmod(loaded_db, 0o644)


def test_an_import_refuses_a_store_it_cannot_write_before_downloading(cli, loaded_db, tmp_path):
    """A read-only store, or a folder where none can be made, is said before the downloads (it
    was said after all eight published files had been fetched), and nothing is requested."""
    requests: list[str] = []

    class Counted(_QuietFiles):
        def do_GET(self):
            requests.append(self.path)
            super().do_GET()

    mirror = functools.partial(Counted, directory=str(UPSTREAM))
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the store's folder would go")
    os.chmod(loaded_db, 0o444)
    try:
        with loopback_server(mirror) as url:
            upstream = ["import-results", "--upstream", "--upstream-base", url]
            read_only = cli("--db", loaded_db, *upstream)
            no_folder = cli("--db", blocked / "store.duckdb", *upstream)
            kernels = cli("--db", blocked / "store.duckdb", "import-kernels", f"{url}/set.tar.gz")
            assert requests == []
            fresh = cli("--db", tmp_path / "fresh.duckdb", *upstream)
            assert fresh.code == 0 and requests  # the mirror serves
    finally:
        os.chmod(loaded_db, 0o644)
    assert read_only.code == 6 and "read-only" in read_only.err
    assert no_folder.code == 6 and "which is a file, not a folder" in no_folder.err
    assert kernels.code == 6 and "which is a file, not a folder" in kernels.err


def test_locked_store(cli, loaded_db):
    from conftest import OFFLINE, store_locked_by_another_process

    with store_locked_by_another_process(loaded_db):
        result = cli("--db", loaded_db, "import-results", OFFLINE)
    assert result.code == 6 and "in use" in result.err
    assert len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize("bad", ["soon", "0", "-1", "nan"])
def test_a_bad_lock_wait_is_a_usage_error(cli, loaded_db, monkeypatch, bad):
    monkeypatch.setenv("CUDA_L2_EXPLORER_LOCK_WAIT_S", bad)
    result = cli("--db", loaded_db, "stats")
    assert result.code == 2
    assert result.err.strip() == (
        "cuda-l2-explorer: error: CUDA_L2_EXPLORER_LOCK_WAIT_S must be a positive number of seconds, "
        f"got {bad!r}"
    )


def test_console_script_and_module_entry_points(loaded_db, tmp_path):
    env = {**os.environ, "NO_COLOR": "1"}
    for cmd in (["cuda-l2-explorer"], [sys.executable, "-m", "cuda_l2_explorer"]):
        exe = (
            cmd
            if cmd[0] != "cuda-l2-explorer"
            else [os.path.join(os.path.dirname(sys.executable), "cuda-l2-explorer")]
        )
        done = subprocess.run(
            [*exe, "--db", str(loaded_db), "stats", "--json"], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.lstrip().startswith("[")
        bad = subprocess.run(
            [*exe, "--db", str(loaded_db), "lookup", "0", "1", "1"], capture_output=True, text=True, env=env
        )
        assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1


def test_no_color(monkeypatch):
    from cuda_l2_explorer.cli import output

    class Tty:
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert output.use_color(Tty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not output.use_color(Tty())
