"""Hostile input and faults on the CPU side (issue 8): fuzzed M/N/K through the CLI and lookup,
spreadsheet formulas in exported tables, a full disk during an import, a foreign WAL."""

import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
from conftest import OFFLINE, SERVER
from cuda_l2_explorer.app.table_io import export_frame, rows_as_text, safe_cell
from cuda_l2_explorer.db.store import Store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]

dims = st.one_of(
    st.integers(-(10**13), 10**13).map(str),
    st.text(alphabet="0123456789eE+-._xX* ", min_size=0, max_size=12),
    st.text(max_size=8),
    st.sampled_from(["0", "-1", "1e3", "abc", "10**12", "0x40", " 7 ", "٣", "\x00", "1_000"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=dims, n=dims, k=dims)
def test_lookup_fuzzed_dimensions(cli, loaded_db, m, n, k):
    result = cli("--db", loaded_db, "lookup", "--json", "--", m, n, k)
    assert result.code in (0, 2), result.err  # an answer or a usage error, never a crash
    if result.code == 2:
        assert result.out == "" and len(result.err.strip().splitlines()) == 1
    else:
        for candidate in result.json()["candidates"]:
            assert candidate["m"] > 0


def test_formula_cells_are_defused():
    assert safe_cell('=HYPERLINK("x")') == '\'=HYPERLINK("x")'
    assert safe_cell("+1") == "'+1" and safe_cell("@sum") == "'@sum" and safe_cell("-2") == "'-2"
    assert safe_cell(-2.0) == -2.0 and safe_cell("h100") == "h100"
    text = rows_as_text(["set_id", "x"], [["=cmd|' /C calc'!A0", 1.5]], "csv")
    assert "'=cmd" in text
    md = rows_as_text(["a"], [["x|y"]], "markdown")
    assert "x\\|y" in md


def test_exported_csv_cannot_run_formulas(tmp_path):
    frame = pl.DataFrame({"set_id": ["=1+1", "ok"], "speedup": [1.0, 2.0]})
    path = export_frame(frame, tmp_path / "t.csv")
    assert path.read_text().splitlines()[1].startswith("'=1+1")
    parquet = export_frame(frame, tmp_path / "t.parquet")
    assert pl.read_parquet(parquet)["set_id"][0] == "=1+1"  # data files keep the value as is


def test_full_disk_during_import_leaves_the_store_usable(db_path, cli, tmp_path):
    """RLIMIT_FSIZE stands in for a full disk: the import fails with one line, nothing is lost."""
    assert cli("--db", db_path, "-q", "import-results", OFFLINE).code == 0
    size = db_path.stat().st_size
    big = [str(p) for p in sorted((ROOT / "tests/data/upstream").glob("*.csv"))]
    script = textwrap.dedent(f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, ({size + 200_000}, {size + 200_000}))
        sys.path.insert(0, {str(ROOT)!r})
        from cuda_l2_explorer.cli import main
        sys.exit(main(["--db", {str(db_path)!r}, "-q", "import-results", *{big!r}]))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode in (5, 6), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    with Store.open(db_path, read_only=True) as store:  # the earlier import is intact
        assert store.scalar("SELECT count(*) FROM all_published_speedups") == 80
    assert cli("--db", db_path, "-q", "import-results", SERVER).code == 0  # and it still takes writes
