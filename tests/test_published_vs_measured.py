"""Published vs measured (issue 17): the reference set's published speedups beside our harness-3
measurement of the same kernels, checked against the planted figures (tests/pvm_fixtures.py) and
the fixture CSV read independently."""

import csv
import io
import statistics

import polars as pl
import pytest
from conftest import OFFLINE, read_fixture
from cuda_l2_explorer.db.errors import NotFoundError
from cuda_l2_explorer.db.reads import resolve_filters
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.engine.stats import published_vs_measured
from pvm_fixtures import (
    CASES,
    DEVICE,
    SET_ID,
    SEVEN,
    expected_best,
    expected_isolated_best,
    expected_reference_best,
    plant_measured_reference_set,
)

VERDICTS = {
    Shape(64, 64, 64): "contradicted",
    Shape(64, 64, 128): "no-win-either",
    Shape(64, 128, 64): "measured-win-only",
    Shape(128, 64, 64): "confirmed",
    Shape(1024, 1024, 1024): "same",
    Shape(1024, 1024, 2048): "contradicted",  # not capturable: compared by its isolated call
    Shape(2048, 1024, 1024): None,  # incorrect
}


NOT_CAPTURED = Shape(1024, 1024, 2048)


@pytest.fixture
def pvm_db(loaded_db):
    plant_measured_reference_set(loaded_db)
    return loaded_db


def _comparison(db, baselines=("best-baseline",), **filters):
    with Store.open(db, read_only=True) as store:
        return published_vs_measured(store, resolve_filters(store, **filters), baselines)


def _published_best(shape: Shape) -> float:
    return min(read_fixture(OFFLINE)[shape.astuple()][b] for b in SEVEN)


def test_each_measured_config_beside_its_published_figure(pvm_db):
    rows = {Shape(r["m"], r["n"], r["k"]): r for r in _comparison(pvm_db).rows.iter_rows(named=True)}
    # the published-only config (16384^3) and the unmeasured server mode are left out
    assert set(rows) == set(CASES)
    assert {(r["set_id"], r["gpu"], r["mode"], r["baseline"]) for r in rows.values()} == {
        (SET_ID, "h100", "offline", "best-baseline")
    }
    for shape, row in rows.items():
        assert row["published"] == pytest.approx(_published_best(shape)), shape
        assert row["verdict"] == VERDICTS[shape], shape
        expected = expected_isolated_best(shape) if shape == NOT_CAPTURED else expected_best(shape)
        if VERDICTS[shape] is None:  # no measured ratio, so no metric to name (not device_time)
            assert row["measured"] is None and row["measured_best"] is None and row["metric"] is None
        else:
            assert row["metric"] == ("isolated_call" if shape == NOT_CAPTURED else "device_time")
            assert row["measured"] == pytest.approx(expected), shape
            assert row["measured_best"] == pytest.approx(expected)
            assert row["measured_lo"] < row["measured"] < row["measured_hi"]
    assert rows[Shape(64, 64, 64)]["audit"] == "sync_per_call"
    assert rows[Shape(1024, 1024, 2048)]["audit"] == "alloc_per_call,not-capturable"
    assert rows[Shape(2048, 1024, 1024)]["audit"] == "fp16_accumulation_suspected"
    assert rows[Shape(2048, 1024, 1024)]["status"] == "incorrect"
    assert rows[Shape(2048, 1024, 1024)]["error_ratio"] == pytest.approx(300.0)
    # measurement caveats apart from the audit: the tiny configs' inputs span < 2x the L2
    assert rows[Shape(64, 128, 64)]["audit"] == ""
    assert rows[Shape(64, 128, 64)]["caveats"] == "l2-span-<2x,timing-mismatch"
    assert rows[Shape(1024, 1024, 1024)]["caveats"] == ""
    # the reference system's own metric (2MNK / host time) is kept for the eager-only kernel too
    for shape in (Shape(128, 64, 64), Shape(1024, 1024, 2048)):
        assert rows[shape]["reference_speedup"] == pytest.approx(expected_reference_best(shape))
        assert rows[shape]["reference_tflops"] == pytest.approx(
            2 * shape.m * shape.n * shape.k / (CASES[shape][0] * 1e-6 + 10e-6) / 1e12
        )
    assert rows[Shape(2048, 1024, 1024)]["reference_speedup"] is None  # incorrect: no ok figure


def test_other_baselines_keep_the_best_baseline_ratio_beside_them(pvm_db):
    rows = _comparison(pvm_db, ("torch.matmul", "cuBLAS-max")).rows
    assert rows["baseline"].unique(maintain_order=True).to_list() == ["torch.matmul", "cuBLAS-max"]
    fixture = read_fixture(OFFLINE)
    for row in rows.iter_rows(named=True):
        shape = Shape(row["m"], row["n"], row["k"])
        assert row["published"] == pytest.approx(fixture[shape.astuple()][row["baseline"]])
        # the planted torch.matmul is 1.10x the fastest baseline's time, cuBLAS-max 1.12x
        factor = 1.10 if row["baseline"] == "torch.matmul" else 1.12
        if shape == NOT_CAPTURED:  # isolated calls: each planted 3 us above the device time
            kernel_us, fastest_us, *_ = CASES[shape]
            assert row["measured"] == pytest.approx((fastest_us * factor + 3) / (kernel_us + 3))
            assert row["measured_best"] == pytest.approx(expected_isolated_best(shape))
        elif row["measured"] is not None:
            assert row["measured"] == pytest.approx(expected_best(shape) * factor)
            assert row["measured_best"] == pytest.approx(expected_best(shape))


def test_summary_adds_up_the_rows(pvm_db):
    comparison = _comparison(pvm_db)
    # device times, the not-capturable kernel's isolated call and the configs with no ratio (and
    # so no metric) are summarised apart
    summary, isolated, unmeasured = comparison.summary.to_dicts()
    metrics = (summary["metric"], isolated["metric"], unmeasured["metric"])
    assert metrics == ("device_time", "isolated_call", None)
    compared = [s for s, v in VERDICTS.items() if v is not None and s != NOT_CAPTURED]
    assert summary["configs"] == 5 and summary["compared"] == 5 and summary["no_ratio"] == 0
    assert (unmeasured["configs"], unmeasured["compared"], unmeasured["no_ratio"]) == (1, 0, 1)
    assert unmeasured["audited"] == 1 and unmeasured["geomean_published"] is None
    assert summary["geomean_published"] == pytest.approx(
        statistics.geometric_mean([_published_best(s) for s in compared])
    )
    assert summary["geomean_measured"] == pytest.approx(
        statistics.geometric_mean([expected_best(s) for s in compared])
    )
    assert (summary["contradicted"], summary["confirmed"], summary["same"]) == (1, 1, 1)
    assert summary["audited"] == 1
    assert (isolated["configs"], isolated["compared"], isolated["contradicted"]) == (1, 1, 1)
    assert isolated["geomean_measured"] == pytest.approx(expected_isolated_best(NOT_CAPTURED))
    line, isolated_line, unmeasured_line = comparison.lines()
    assert "5 configs compared" in line and "contradicts 1" in line and "1 of 5" in line
    assert "(isolated_call): 1 configs compared" in isolated_line
    assert "device_time" not in unmeasured_line and "None" not in unmeasured_line
    assert "over best-baseline: 1 measured config(s) have no measured ratio" in unmeasured_line


def test_the_newest_run_of_a_config_is_the_one_compared(pvm_db):
    faster = {Shape(64, 64, 64): (2.0, 2.2, "ok", True, [])}
    plant_measured_reference_set(pvm_db, faster)
    rows = {Shape(r["m"], r["n"], r["k"]): r for r in _comparison(pvm_db).rows.iter_rows(named=True)}
    assert rows[Shape(64, 64, 64)]["verdict"] == "confirmed"
    assert rows[Shape(64, 64, 64)]["audit"] == ""  # the old run's finding is not carried over
    assert rows[Shape(64, 64, 128)]["verdict"] == "no-win-either"  # still from the first run


def test_a_measurement_on_another_gpu_is_not_set_beside_the_published_one(loaded_db):
    plant_measured_reference_set(loaded_db, device={**DEVICE, "gpu_name": "NVIDIA H200"})
    with pytest.raises(NotFoundError, match="no harness-3 measurement"):
        _comparison(loaded_db)


def test_cli_table_json_csv_and_summary(cli, pvm_db):
    text = cli("--db", pvm_db, "stats", "--published-vs-measured")
    assert text.code == 0, text.err
    head = text.out.splitlines()[0].split()
    assert head[:8] == ["set_id", "gpu", "mode", "m", "n", "k", "regime", "baseline"]
    assert "run_id" not in head and len(text.out.splitlines()) == 8
    assert "contradicts 1 (published win, measured loss beyond the spread)" in text.err
    data = cli("--db", pvm_db, "stats", "--published-vs-measured", "--json").json()
    rows = data["rows"]
    assert len(rows) == 7 and all(r["run_id"] for r in rows)
    assert {r["verdict"] for r in rows} == set(VERDICTS.values())
    # the summary the table form prints to stderr, its figures and its line per metric
    summary = data["summary"]
    assert [s["metric"] for s in summary] == ["device_time", "isolated_call", None]
    assert [s["line"] for s in summary] == text.err.strip().splitlines()[-3:]
    assert (summary[0]["compared"], summary[0]["contradicted"], summary[0]["audited"]) == (5, 1, 1)
    assert summary[0]["geomean_measured"] == pytest.approx(
        statistics.geometric_mean([expected_best(s) for s, v in VERDICTS.items() if v and s != NOT_CAPTURED])
    )
    out = cli("--db", pvm_db, "-q", "stats", "--published-vs-measured", "--csv", "--baseline", "cuBLAS-nn")
    assert out.err == ""
    table = list(csv.DictReader(io.StringIO(out.out)))
    assert len(table) == 7 and {r["baseline"] for r in table} == {"cuBLAS-nn"}


def test_cli_usage_and_the_command_that_would_measure(cli, loaded_db):
    result = cli("--db", loaded_db, "stats", "--published-vs-measured")
    assert result.code == 4
    assert "cuda-l2/h100_F32F16F16F32 has published speedups on h100" in result.err
    assert "bench --set <checkout>/kernels/h100_F32F16F16F32 --set-name cuda-l2" in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert cli("--db", loaded_db, "stats", "--published-vs-measured", "--by-regime").code == 2
    assert cli("--db", loaded_db, "stats", "--published-vs-measured", "--baseline", "cuBLAS-xx").code == 2


def _plot_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "refset" / "plot_published_vs_measured.py"
    spec = importlib.util.spec_from_file_location("plot_published_vs_measured", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_plot_draws_each_config_where_its_figures_put_it(pvm_db, tmp_path, capsys):
    import xml.etree.ElementTree as ET

    script = _plot_script()
    assert script.main(["--db", str(pvm_db), "--out", str(tmp_path / "plots")]) == 0
    name = "published_vs_measured_cuda-l2_h100_offline_best-baseline"
    names = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert names == [f"{name}.svg", f"{name}_isolated_call.svg"]  # one metric a plot
    svg_path = tmp_path / "plots" / f"{name}.svg"
    assert str(svg_path) in capsys.readouterr().out
    svg = svg_path.read_text()
    ns = "{http://www.w3.org/2000/svg}"
    circles = ET.fromstring(svg).iter(f"{ns}circle")
    dots = [c for c in circles if c.get("fill-opacity")]
    assert len(dots) == 5  # the configs with a measured ratio
    colours = {c.get("fill") for c in dots}
    assert colours == {script.VERDICT_COLOURS[v] for s, v in VERDICTS.items() if v and s != NOT_CAPTURED}
    isolated = (tmp_path / "plots" / f"{name}_isolated_call.svg").read_text()
    assert "(measured: isolated call)" in isolated and "(isolated_call): 1 configs compared" in isolated
    assert svg.count(f'stroke="{script.NO_RATIO_COLOUR}"') == 1 + 1  # the incorrect config, the legend
    assert svg.count('r="5" fill="none" stroke="#000"') == 1 + 1  # 64^3's sync_per_call, the legend
    assert "5 configs compared" in svg and "contradicts 1" in svg
    # the contradicted config sits below the diagonal: measured 0.733 against published 1.25
    (red,) = [c for c in dots if c.get("fill") == script.VERDICT_COLOURS["contradicted"]]
    lines = [line for line in ET.fromstring(svg).iter(f"{ns}line") if line.get("stroke") == "#444"]
    (one_y,) = [float(line.get("y1")) for line in lines if line.get("y1") == line.get("y2")]
    (one_x,) = [float(line.get("x1")) for line in lines if line.get("x1") == line.get("x2")]
    assert float(red.get("cx")) > one_x and float(red.get("cy")) > one_y  # right of 1.0x, below 1.0x
    # the device-time plot also holds the config with no ratio (no metric), as a tick
    rows = _comparison(pvm_db).rows
    device_rows = rows.filter(pl.col("metric").is_null() | (pl.col("metric") == "device_time")).to_dicts()
    device_rows.sort(key=lambda r: r["metric"] is None)
    assert svg == script.scatter_svg(device_rows, *_title_and_summary(pvm_db))  # deterministic
    assert "have no measured ratio" in svg and "have no measured ratio" not in isolated


def _title_and_summary(db):
    comparison = _comparison(db)
    title = f"{SET_ID} on h100, offline: published vs measured speedup over best-baseline"
    lines = comparison.lines()
    return title, f"{lines[0]} {lines[2]}"


def test_plot_says_what_would_measure_a_published_set(loaded_db, tmp_path, capsys):
    assert _plot_script().main(["--db", str(loaded_db), "--out", str(tmp_path / "plots")]) == 4
    assert "--set-name cuda-l2" in capsys.readouterr().err
    assert not (tmp_path / "plots").exists()
