"""The README's headline tables are what the bundled dataset says (issue 7: nothing typed by hand)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location(
        "readme_headline", ROOT / "benchmarks" / "readme_headline.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_headline_block_and_plots_match_the_bundled_data() -> None:
    gen = _generator()
    readme = (ROOT / "README.md").read_text()
    block, svgs = gen.bundled_headline()
    assert gen.render(readme, block) == readme, "run python benchmarks/readme_headline.py"
    assert svgs, "the bundled dataset has a measured set of ours: there is a plot"
    for name, svg in svgs.items():
        assert (gen.PLOTS / name).read_text() == svg, f"{name}: run python benchmarks/readme_headline.py"
        assert f"docs/plots/{name}" in readme


def _measured_best_baseline_rows(cli, monkeypatch, tmp_path) -> list[dict]:
    import json

    monkeypatch.delenv("CUDA_L2_EXPLORER_NO_BUNDLED", raising=False)
    result = cli(
        "--db", tmp_path / "s.duckdb", "stats", "--set", "ours", "--baseline", "best-baseline", "--json"
    )
    assert result.code == 0, result.err
    rows = [r for r in json.loads(result.out) if r["source"] == "measured"]
    assert rows, "the bundled dataset has measured runs of our set"
    return rows


def test_each_plot_has_one_point_per_measured_config(cli, monkeypatch, tmp_path) -> None:
    gen = _generator()
    _, svgs = gen.bundled_headline()
    for row in _measured_best_baseline_rows(cli, monkeypatch, tmp_path):
        svg = svgs[gen.plot_name(row["set_id"], row["gpu"], row["mode"])]
        assert svg.count("<circle") == row["configs"] + len(gen.REGIME_COLOURS)  # points + legend


def test_headline_agrees_with_stats_on_the_cli(cli, monkeypatch, tmp_path) -> None:
    readme = (ROOT / "README.md").read_text()
    for row in _measured_best_baseline_rows(cli, monkeypatch, tmp_path):
        line = (
            f"| {row['gpu']} | {row['mode']} | {row['metric']} | best-baseline | {row['configs']} "
            f"| {row['geomean']:.3f} |"
        )
        assert line in readme
