"""Bulk published imports (issue 19 item 7): the columnar reader agrees with the row reader, a large
file imports in seconds with bounded memory, a small one never loads Polars, and the store keeps
one copy of a published (set, mode) without a key index."""

import json
import random
import subprocess
import sys

import pytest
from conftest import OFFLINE, UPSTREAM
from cuda_l2_explorer.db import writes
from cuda_l2_explorer.db.errors import BadInputError, StoreError
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.db.views import PUBLISHED_COLUMNS
from cuda_l2_explorer.importer import published
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_import_files import MALFORMED, NAME

HEADER = ",".join(["mnk", *PUBLISHED_COLUMNS])


def both_readers(data: bytes):
    """(columnar result or None, row reader result or the BadInputError it raised)."""
    header = published._header(published._text(data, "f"), "f")
    positions = published._column_positions([h.strip() for h in header], "f")
    columnar = published._read_columnar(data, header, positions)
    try:
        rows = published._read_rows(published._text(data, "f"), "f", positions, len(header))
    except BadInputError as exc:
        rows = exc
    return columnar, rows


def assert_same(columnar, rows) -> None:
    assert not isinstance(rows, BadInputError), f"columnar took a file the row reader refuses: {rows}"
    frame, inconsistent = columnar
    assert frame.columns == ["m", "n", "k", *PUBLISHED_COLUMNS]
    assert (frame.to_dict(as_series=False), inconsistent) == rows


def plain_rows(draw_dims, draw_values, count: int) -> list[str]:
    lines, seen = [], set()
    while len(lines) < count:
        dims = draw_dims()
        if dims in seen:
            continue
        seen.add(dims)
        lines.append("_".join(map(str, dims)) + "," + ",".join(draw_values()))
    return lines


def speedup_text(x: float) -> str:
    return f"{x:.3f}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dims=st.lists(st.tuples(*[st.integers(1, 2**31 - 1)] * 3), min_size=1, max_size=30, unique=True),
    # The valid speedups (published.SPEEDUP_RANGE): a value outside is refused by either reader.
    values=st.lists(st.floats(0.6, 999.0, allow_nan=False, allow_infinity=False), min_size=10, max_size=10),
    forms=st.lists(st.sampled_from(["{:.3f}", "{!r}", "{:e}", "{:.0f}.", "+{:.2f}", "{:E}"]), min_size=10),
    crlf=st.booleans(),
    bom=st.booleans(),
    permute=st.randoms(use_true_random=False),
)
def test_columnar_reader_takes_plain_files_and_reads_them_as_the_row_reader(
    dims, values, forms, crlf, bom, permute
):
    names = ["mnk", *PUBLISHED_COLUMNS]
    order = list(range(11))
    permute.shuffle(order)
    lines = [",".join(names[i] for i in order)]
    for row, (m, n, k) in enumerate(dims):
        cells = [f"{m}_{n}_{k}", *(forms[(row + j) % len(forms)].format(v) for j, v in enumerate(values))]
        lines.append(",".join(cells[i] for i in order))
    end = "\r\n" if crlf else "\n"
    data = ("\ufeff" if bom else "").encode() + (end.join(lines) + end).encode()
    columnar, rows = both_readers(data)
    assert columnar is not None, "the columnar reader declined a plain file"
    assert_same(columnar, rows)


# Cells the two readers might read differently: each is declined (the row reader decides) or read alike.
ODD_CELLS = [
    " 1.5", "1.5 ", "\t2", "1_0", "nan", "inf", "-1", "0", "0.0", "", "1e400", "1e-400", "1e-320",
    "\u0661", "1.5e", "e5", ".", "+", "0x10", "1,5", '"1.5"', "9" * 50, "\xa01",
]  # fmt: skip
ODD_MNK = ["0_1_1", "1_1", "a_b_c", " 8_8_8", "8_8_8 ", "2147483648_1_1", "0008_8_8", "8__8", "8_8_8_8"]


@settings(max_examples=200, deadline=None)
@given(
    shapes=st.lists(
        st.sampled_from(["8_8_8", "16_8_8", "8_16_8", "1_1_1", "64_4096_64"]),
        min_size=1,
        max_size=5,
        unique=True,
    ),
    odd=st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 10), st.sampled_from(ODD_CELLS + ODD_MNK)), max_size=2
    ),
    extra_lines=st.lists(st.sampled_from(["", " ", ",,,,,,,,,,", "\r", ",,", "8_8_8"]), max_size=2),
)
def test_columnar_reader_never_takes_what_the_row_reader_reads_otherwise(shapes, odd, extra_lines):
    """Plain files with one or two odd cells or lines: the columnar reader declines or reads alike."""
    rows = [[mnk, *["1.25"] * 10] for mnk in shapes]
    for row, column, cell in odd:
        rows[row % len(rows)][column] = cell
    data = ("\n".join([HEADER, *(",".join(r) for r in rows), *extra_lines]) + "\n").encode()
    columnar, result = both_readers(data)
    event("columnar reader: " + ("took the file" if columnar is not None else "declined"))
    if columnar is not None:
        assert_same(columnar, result)


@pytest.mark.parametrize("path", sorted(UPSTREAM.glob("*.csv")), ids=lambda p: p.name)
def test_columnar_reader_reads_the_published_files_as_the_row_reader(path):
    columnar, rows = both_readers(path.read_bytes())
    assert columnar is not None
    assert_same(columnar, rows)


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_files_get_the_row_readers_message_through_the_columnar_path(monkeypatch, tmp_path, case):
    data = MALFORMED[case].encode()
    with pytest.raises(BadInputError) as row_error:
        published.parse_published_csv(data, NAME)
    monkeypatch.setattr(published, "COLUMNAR_MIN_BYTES", 0)
    with pytest.raises(BadInputError) as columnar_error:
        published.parse_published_csv(data, NAME)
    assert str(columnar_error.value) == str(row_error.value)


def write_large_file(path, configs: int, seed: int = 1) -> dict:
    """A plain §5 file of ``configs`` configs; returns the count and the sum of its speedups."""
    rnd = random.Random(seed)
    side = round(configs ** (1 / 3)) + 1
    shapes = [
        (8 * m, 8 * n, 8 * k)
        for m in range(1, side + 1)
        for n in range(1, side + 1)
        for k in range(1, side + 1)
    ]
    total = 0.0
    with path.open("w") as f:
        f.write(HEADER + "\n")
        for m, n, k in shapes[:configs]:
            cells = [f"{rnd.uniform(0.5, 2.0):.3f}" for _ in PUBLISHED_COLUMNS]
            total += sum(float(c) for c in cells)
            f.write(f"{m}_{n}_{k}," + ",".join(cells) + "\n")
    return {"rows": configs * len(PUBLISHED_COLUMNS), "sum": total}


_IMPORT_AND_MEASURE = r"""
import json, re, sys, time
from cuda_l2_explorer.cli import main
start = time.perf_counter()
code = main(["--db", sys.argv[1], "-q", "import-results", sys.argv[2]])
# VmHWM, not ru_maxrss: getrusage keeps the forking parent's peak across exec (pytest's own).
peak_kb = int(re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read()).group(1))
print(json.dumps({"code": code, "seconds": time.perf_counter() - start, "peak_mb": peak_kb / 1024,
                  "polars_loaded": "polars" in sys.modules}))
"""


def import_in_a_process(db, csv_path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_AND_MEASURE, str(db), str(csv_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_large_file_imports_in_seconds_with_bounded_memory(tmp_path, db_path):
    """200k configs (2M rows, 12 MB): the 500-row statements took ~3 min and 1+ GB for this."""
    big = tmp_path / "cuda_l2_h200_F32F16F16F32_speedup_offline.csv"
    expected = write_large_file(big, 200_000)
    measured = import_in_a_process(db_path, big)
    assert measured["code"] == 0
    assert measured["seconds"] < 30, measured
    # Python, DuckDB and Polars take ~90 MB; the file's frame 21 MB; DuckDB's insert buffers the rest.
    assert measured["peak_mb"] < 400, measured
    with Store.open(db_path, read_only=True, with_bundled=False) as store:
        count, total = store.con.execute(
            "SELECT count(*), sum(speedup) FROM all_published_speedups WHERE set_id = ?",
            ["cuda-l2/h200_F32F16F16F32"],
        ).fetchone()
    assert count == expected["rows"]
    assert total == pytest.approx(expected["sum"], rel=1e-12)


def test_a_small_file_imports_without_loading_polars(db_path):
    """Polars takes 0.17 s to import: more than the rest of a 1000-config import."""
    measured = import_in_a_process(db_path, OFFLINE)
    assert measured["code"] == 0
    assert not measured["polars_loaded"]


def test_migration_5_keeps_published_rows_and_drops_the_key_index(tmp_path):
    from test_store import _make_store_at_version

    path = tmp_path / "v4.duckdb"
    _make_store_at_version(path, 4)
    import duckdb

    con = duckdb.connect(str(path))
    con.execute(
        "INSERT INTO published_speedups VALUES (?, ?, 'offline', 8, 8, 8, 'torch.matmul', 1.5)",
        ["r", "s/h100_F32F16F16F32"],
    )
    con.close()
    with Store.open(path, with_bundled=False) as store:
        assert store.scalar("SELECT speedup FROM main.published_speedups") == 1.5
        kinds = store.con.execute(
            "SELECT constraint_type FROM duckdb_constraints() WHERE table_name = 'published_speedups'"
        ).fetchall()
    assert ("PRIMARY KEY",) not in kinds and ("CHECK",) in kinds


def test_merging_a_store_that_holds_the_same_published_set_is_refused(cli, tmp_path):
    first, second = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    for db in (first, second):
        assert cli("--db", db, "-q", "import-results", OFFLINE).code == 0
    with Store.open(first, with_bundled=False) as store:
        before = store.scalar("SELECT count(*) FROM main.published_speedups")
        with pytest.raises(StoreError, match="both stores hold published speedups of cuda-l2/h100"):
            writes.merge_store(store, second)
        assert store.scalar("SELECT count(*) FROM main.published_speedups") == before


def test_the_store_is_opened_only_after_every_input_is_read_and_checked(cli, tmp_path):
    """A long parse never holds the store's lock: the store is not even created when the last of
    several inputs turns out bad."""
    bad = tmp_path / "cuda_l2_a100_F32F16F16F32_speedup_offline.csv"
    bad.write_text(MALFORMED["negative cell"])
    store = tmp_path / "new.duckdb"
    assert cli("--db", store, "import-results", OFFLINE, bad).code == 3
    assert not store.exists()
