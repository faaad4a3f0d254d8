"""Issue 19's hostile-input findings outside export, fetch and the store: numbers too long for
int(), spreadsheet formulas in the CLI's CSV, speedups no run can produce, untrusted kernel sets."""

from __future__ import annotations

import pytest
from conftest import OFFLINE
from cuda_l2_explorer.db.errors import UsageError
from cuda_l2_explorer.db.shapes import parse_dim, parse_mnk

HUGE = "1" * 5000  # int() refuses strings over 4300 digits with a ValueError


@pytest.mark.parametrize(
    "text",
    [HUGE, "0" * 5000, "+" + "9" * 11, "0" * 30 + "12345678901"],
    ids=["5000-digits", "5000-zeros", "11-nines", "zeros-then-11-digits"],
)
def test_numbers_too_long_for_a_dimension_are_a_usage_error(text):
    with pytest.raises(UsageError) as caught:
        parse_dim(text, "M")
    assert len(str(caught.value)) < 200  # one short line, not 5000 digits
    with pytest.raises(UsageError):
        parse_mnk(f"{text}_64_64")


def test_leading_zeros_still_parse():
    assert parse_dim("0" * 5000 + "64") == 64


def test_cli_lookup_of_a_huge_number_is_a_usage_error(cli, loaded_db):
    result = cli("--db", loaded_db, "lookup", HUGE, "64", "64")
    assert result.code == 2, result.err
    assert len(result.err.strip().splitlines()) == 1 and "internal error" not in result.err


async def test_app_lookup_of_a_huge_number_is_shown_not_raised(app_db):
    from cuda_l2_explorer.app.app import ExplorerApp
    from test_app import SIZE, _ready

    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        await pilot.press("5")
        box = app.query_one("#lookup-input")
        box.value = f"{HUGE} 64 64"
        box.focus()
        await pilot.press("enter")
        await _ready(pilot)
        assert any("digits" in n.message for n in app._notifications)
    assert app.return_code in (None, 0)  # the app kept running: no traceback exit


def test_cli_csv_defuses_formulas_as_the_app_does(cli, db_path, tmp_path, monkeypatch):
    """A file named like a formula, imported by a relative path, is the run's source: in
    ``runs --csv`` its cell starts with a quote, the same cell the app's table export writes."""
    import csv
    import io
    import shutil

    from cuda_l2_explorer.app.table_io import rows_as_text

    monkeypatch.chdir(tmp_path)
    name = '=HYPERLINK("evil.example")+1.csv'
    shutil.copyfile(OFFLINE, tmp_path / name)
    labels = ["--gpu", "h100", "--accumulator", "F32F16F16F32", "--mode", "offline"]
    assert cli("--db", db_path, "-q", "import-results", name, *labels).code == 0
    result = cli("--db", db_path, "runs", "--csv")
    assert result.code == 0, result.err
    row = next(csv.DictReader(io.StringIO(result.out)))
    assert row["source"] == "'" + name
    assert row["configs"] == "8"  # numbers stay numbers
    app_text = rows_as_text(["source"], [[name]], "csv").splitlines()[1]
    assert app_text.strip('"').replace('""', '"') == row["source"]


@pytest.mark.parametrize("value", ["1e308", "1e-320", "5000", "0.0001"])
def test_speedups_no_run_can_produce_are_refused(cli, db_path, tmp_path, value):
    """1e308 made the arithmetic mean inf and 1e-320 (a denormal) a zero in the geomean's product.
    (test_published_figures imports every published file, 0.198 to 3.479, within the range.)"""
    lines = OFFLINE.read_text().splitlines()
    head, first, *rest = lines
    cells = first.split(",")
    cells[3] = value
    bad = tmp_path / OFFLINE.name
    bad.write_text("\n".join([head, ",".join(cells), *rest]) + "\n")
    result = cli("--db", db_path, "import-results", bad)
    assert result.code == 3, result.err
    assert "outside the range" in result.err and len(result.err.strip().splitlines()) == 1
    assert not db_path.exists()


def test_bench_help_and_readme_say_a_kernel_set_is_code(capsys):
    from pathlib import Path

    from cuda_l2_explorer.cli import main

    with pytest.raises(SystemExit) as done:
        main(["bench", "--help"])
    assert done.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "run with your user's privileges" in shown and "no sandbox" in shown and "container" in shown
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    assert "**Untrusted kernel sets.**" in readme and "it is no sandbox" in readme


def _exit_code_table() -> dict[int, str]:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    rows = [line.split("|")[1:-1] for line in text.splitlines() if line.startswith("| ")]
    return {int(cells[0]): " ".join(cells[1:]) for cells in rows if cells[0].strip().isdigit()}


def test_the_readme_exit_code_table_is_true(cli, loaded_db, tmp_path, monkeypatch):
    """Each issue-19 case, run for real, exits with the code whose README row names it."""
    import os
    import sqlite3

    from export_fixtures import write_manifest

    table = _exit_code_table()
    assert sorted(table) == [0, 1, 2, 3, 4, 5, 6, 7, 130]
    labels = ["--gpu", "h100", "--accumulator", "F32F16F16F32", "--mode", "offline"]
    fresh = tmp_path / "fresh.duckdb"
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("mine")
    monkeypatch.chdir(work)
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    foreign = tmp_path / "other.db"
    with sqlite3.connect(foreign) as con:
        con.execute("CREATE TABLE t (x)")
    kernels = write_manifest(tmp_path / "kernels" / "h100_F32F16F16F32" / "manifest.json")
    truncated = tmp_path / "cut.duckdb"
    truncated.write_bytes(loaded_db.read_bytes()[: loaded_db.stat().st_size // 2])
    cases = [
        ("more digits than any dimension", 2, ["lookup", HUGE, "1", "1"]),
        (
            "the working folder",
            2,
            [
                "export",
                "64",
                "64",
                "64",
                "--format",
                "cuda-l2",
                "--out",
                ".",
                "--force",
                "--manifest",
                kernels,
            ],
        ),
        ("a device", 3, ["import-results", "/dev/zero", *labels, "--max-bytes", "1000"]),
        ("a FIFO nobody writes to", 5, ["import-results", fifo, *labels, "--timeout", "0.2"]),
        ("a SQLite", 6, ["--db", foreign, "sets"]),
        ("truncated", 6, ["--db", truncated, "stats"]),
        ("`--db` under a regular file", 6, ["--db", work / "notes.txt" / "s.duckdb", "sets"]),
    ]
    for words, code, argv in cases:
        result = cli("--db", fresh, *argv) if argv[0] != "--db" else cli(*argv)
        assert result.code == code, (words, result.err)
        assert words in table[code], (words, table[code])
    assert (work / "notes.txt").read_text() == "mine"
