"""Aggregates over published and measured speedups, checked against an independent computation."""

import math
import statistics

import pytest
from conftest import OFFLINE, read_fixture
from cuda_l2_explorer.db.reads import resolve_filters, stats
from cuda_l2_explorer.db.store import Store


def _expected(values):
    return {
        "geomean": statistics.geometric_mean(values),
        "mean": statistics.fmean(values),
        "win_rate": sum(v > 1 for v in values) / len(values),
        "loss_rate": sum(v < 1 for v in values) / len(values),
        "min": min(values),
        "max": max(values),
    }


def test_stats_match_an_independent_computation(cli, loaded_db):
    fixture = read_fixture(OFFLINE)
    result = cli("--db", loaded_db, "stats", "--mode", "offline", "--json")
    assert result.code == 0, result.err
    rows = {r["baseline"]: r for r in result.json()}
    assert set(rows) == {*fixture[(64, 64, 64)], "best-baseline"}
    for baseline in fixture[(64, 64, 64)]:
        expected = _expected([row[baseline] for row in fixture.values()])
        for key, value in expected.items():
            assert rows[baseline][key] == pytest.approx(value), (baseline, key)
        assert rows[baseline]["configs"] == 8
    best = [min(v for b, v in row.items() if not b.endswith("-max")) for row in fixture.values()]
    assert rows["best-baseline"]["geomean"] == pytest.approx(statistics.geometric_mean(best))
    # the first row of the report is the best-baseline one, then torch.matmul
    assert [r["baseline"] for r in result.json()][:2] == ["best-baseline", "torch.matmul"]


def test_stats_filters_and_csv(cli, loaded_db):
    result = cli(
        "--db", loaded_db, "stats", "--gpu", "h100", "--set", "cuda-l2", "--baseline", "cuBLAS-max", "--csv"
    )
    assert result.code == 0, result.err
    lines = result.out.strip().splitlines()
    assert lines[0].startswith("set_id,gpu,accumulator,mode,source,metric,harness,baseline,configs,geomean")
    assert all(",published,," in line for line in lines[1:])  # the reference system's own ratios
    assert len(lines) == 3  # offline and server
    assert {line.split(",")[3] for line in lines[1:]} == {"offline", "server"}


def test_measured_runs_enter_stats(db_path):
    from test_store import _insert_bench_run

    with Store.open(db_path) as store:
        with store.transaction():
            _insert_bench_run(store, "r1", 256, 512, 1024)
            _insert_bench_run(store, "r2", 512, 512, 1024)
        frame = stats(store, resolve_filters(store, set_="ours"), ("cuBLAS-nn",))
    row = frame.to_dicts()[0]
    assert row["source"] == "measured" and row["configs"] == 2
    assert row["geomean"] == pytest.approx(1.2) and row["win_rate"] == 1.0


def test_unknown_filters(cli, loaded_db):
    for args, word in ((("--gpu", "b200"), "h100"), (("--set", "nope"), "cuda-l2")):
        result = cli("--db", loaded_db, "stats", *args)
        assert result.code == 4 and word in result.err
        assert len(result.err.strip().splitlines()) == 1
    result = cli("--db", loaded_db, "stats", "--baseline", "cuBLAS-xx")
    assert result.code == 2
    result = cli("--db", loaded_db, "stats", "--mode", "batch")
    assert result.code == 2


def test_empty_store_says_how_to_fill_it(cli, db_path):
    result = cli("--db", db_path, "stats")
    assert result.code == 4 and "import-results" in result.err
    assert not db_path.exists()


def test_geomean_is_never_above_mean(cli, loaded_db):
    for row in cli("--db", loaded_db, "stats", "--json").json():
        assert row["geomean"] <= row["mean"] + 1e-12
        assert row["min"] <= row["geomean"] <= row["max"]
        assert math.isclose(row["win_rate"] + row["loss_rate"], 1.0) or row["win_rate"] + row["loss_rate"] < 1
