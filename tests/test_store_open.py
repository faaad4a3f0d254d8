"""Opening the store from what a user may pass as --db (issue 19 items 6 and 9): files of another
kind, a truncated store, a path under a file, a FIFO, and an older store that read commands
browse without writing a byte (the app opens the store the same way: engine.browse.open_store)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import polars as pl
import pytest
from conftest import OFFLINE
from cuda_l2_explorer.db.store import Store

READ_COMMANDS = [
    ["sets"],
    ["stats"],
    ["runs"],
    ["runs", "--csv"],
    ["info"],
    ["overview"],
    ["lookup", "64", "64", "64"],
]


def _one_line_error(result, code: int, *words: str) -> None:
    assert result.code == code, (result.code, result.err)
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert "internal error" not in result.err and "writing the store failed" not in result.err
    for word in words:
        assert word in result.err, result.err


def _foreign(tmp_path, kind: str):
    if kind == "sqlite":
        path = tmp_path / "other.db"
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE t (x)")
        con.commit()
        con.close()
        return path, "SQLite"
    path = tmp_path / "table.parquet"
    pl.DataFrame({"x": [1, 2]}).write_parquet(path)
    return path, "Parquet"


@pytest.mark.parametrize("kind", ["sqlite", "parquet"])
def test_a_file_of_another_kind_is_not_a_store(cli, tmp_path, kind):
    """DuckDB would autoload a SQLite reader (a download over plain HTTP) or open a Parquet file
    as an in-memory database that silently drops every write; both are refused up front."""
    path, name = _foreign(tmp_path, kind)
    before = path.read_bytes()
    _one_line_error(cli("--db", path, "sets"), 6, "not a DuckDB store", name)
    _one_line_error(cli("--db", path, "-q", "import-results", OFFLINE), 6, "not a DuckDB store")
    assert path.read_bytes() == before
    assert not (tmp_path / f"{path.name}.wal").exists()


def test_connections_never_install_or_load_extensions(db_path):
    with Store.open(db_path) as store:
        for setting in ("autoinstall_known_extensions", "autoload_known_extensions"):
            assert store.scalar(f"SELECT current_setting('{setting}')") is False
    with Store.open(db_path, read_only=True) as store:
        assert store.scalar("SELECT current_setting('autoload_known_extensions')") is False


def test_an_empty_file_is_not_a_store(cli, tmp_path):
    path = tmp_path / "empty.duckdb"
    path.touch()
    _one_line_error(cli("--db", path, "stats"), 6, "empty file")


# Cuts that fall in blocks the commands read. A cut inside blocks no query touches goes unnoticed
# (DuckDB's header block count is no lower bound on the file size: free tail blocks are trimmed).
@pytest.mark.parametrize("keep", [0.1, 0.3, 0.5])
def test_a_truncated_store_says_so(cli, loaded_db, keep):
    """Cut short in what a command reads, a read command and a write command both say 'truncated'
    (exit 6), never 'writing the store failed' (a read command writes nothing) nor an internal error."""
    data = loaded_db.read_bytes()
    loaded_db.write_bytes(data[: int(len(data) * keep)])
    _one_line_error(cli("--db", loaded_db, "stats"), 6, "is truncated")
    _one_line_error(cli("--db", loaded_db, "-q", "import-results", OFFLINE), 6, "is truncated")


def test_db_under_a_regular_file(cli, tmp_path):
    (tmp_path / "notes.txt").write_text("a file")
    path = tmp_path / "notes.txt" / "store.duckdb"
    _one_line_error(cli("--db", path, "sets"), 6, "notes.txt", "not a folder")
    _one_line_error(cli("--db", path, "-q", "import-results", OFFLINE), 6, "not a folder")
    assert (tmp_path / "notes.txt").read_text() == "a file"


def test_a_fifo_as_the_store_is_refused_at_once(tmp_path):
    fifo = tmp_path / "store.fifo"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-m", "cuda_l2_explorer", "--db", str(fifo), "sets"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 6, done.stderr
    assert "not a regular file" in done.stderr


def test_read_commands_browse_an_older_store_without_writing(cli, tmp_path):
    """Every read command on a v1 store answers (exit 0) and leaves the file byte for byte."""
    from test_store import _make_store_at_version

    path = tmp_path / "old.duckdb"
    _make_store_at_version(path, 1)
    before = path.read_bytes()
    for argv in READ_COMMANDS:
        result = cli("--db", path, *argv)
        assert result.code == 0, (argv, result.err)
    assert "old/h100_F32F16F16F32" in cli("--db", path, "sets").out
    assert path.read_bytes() == before
    assert not path.with_name("old.duckdb.wal").exists()
