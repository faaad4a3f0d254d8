"""Regenerate the README's headline tables and speedup plot from the bundled dataset (nothing
typed by hand).

    python benchmarks/readme_headline.py          # rewrite the block in README.md and the plots
    python benchmarks/readme_headline.py --check  # exit 1 if either is out of date

The block between the ``headline`` markers holds, for each measured set of ours in the bundled
dataset: the device, date and command of its runs, ``stats`` per baseline and mode (geomean,
mean, win rate, worst) and ``stats --by-regime`` against the best of the seven baselines. The
numbers come from the same query API as the CLI, so the README matches what ``stats`` prints.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import polars as pl
from cuda_l2_explorer.db import reads
from cuda_l2_explorer.db.reads import Filters, stats, stats_by_regime
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.db.views import HEADLINE_BASELINES

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/: the harness report
from harness_report import markdown_table as table

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PLOTS = ROOT / "docs" / "plots"
REGIME_COLOURS = {"tiny": "#1f77b4", "skinny": "#ff7f0e", "small-K": "#2ca02c", "large": "#d62728"}
START, END = "<!-- headline:start -->", "<!-- headline:end -->"


def headline(store: Store) -> str:
    out = []
    for set_id in reads.our_set_ids(store):
        runs = reads.bench_run_headlines(store, set_id)
        if runs.height == 0:
            continue
        filters = Filters(set_ids=(set_id,))
        per_baseline = (
            stats(store, filters, HEADLINE_BASELINES)
            .filter(pl.col("source") == "measured")
            .select(
                "gpu",
                "mode",
                "metric",
                "baseline",
                "configs",
                "geomean",
                "mean",
                "win_rate",
                pl.col("min").alias("worst"),
            )
        )
        per_regime = stats_by_regime(store, filters).select(
            "gpu",
            "mode",
            "metric",
            "regime",
            "configs",
            "geomean",
            "mean",
            "win_rate",
            pl.col("min").alias("worst"),
        )
        # Only harness-3 rows enter speedups (device time); older runs are listed apart.
        current = runs.filter(pl.col("harness").cast(pl.Int64, strict=False) >= 3)
        earlier = runs.filter(~(pl.col("harness").cast(pl.Int64, strict=False) >= 3).fill_null(True))
        out.append(
            f"**`{set_id}`**, measured with the harness: offline device time (SPEC §7: calls back to "
            "back in a CUDA graph, cold L2); server mode, the isolated call of each arrival; "
            "speedup = baseline time / ours, within one metric:"
        )
        out.append("")
        for gpu_name, mode, day, harness, command in current.iter_rows():
            out.append(f"- {gpu_name}, {mode}, {day}, harness {harness}: `{command}`")
        if earlier.height:
            out += ["", "Earlier runs, timed by harness 1/2 (issue-bound time; in no table here):", ""]
            for gpu_name, mode, day, harness, command in earlier.iter_rows():
                out.append(f"- {gpu_name}, {mode}, {day}, harness {harness or '?'}: `{command}`")
        out += ["", table(per_baseline), "", "Against the best of the seven baselines, per regime:", ""]
        out += [table(per_regime), ""]
        for (gpu, mode), _ in per_regime.group_by(["gpu", "mode"], maintain_order=True):
            name = plot_name(set_id, gpu, mode)
            out += [f"![speedup over the best baseline, {set_id}, {gpu}, {mode}](docs/plots/{name})", ""]
    out.append("Made by `python benchmarks/readme_headline.py` from the bundled dataset.")
    return "\n".join(out)


def plot_name(set_id: str, gpu: str, mode: str) -> str:
    return f"speedup_{set_id.split('/')[0]}_{gpu}_{mode}.svg"


def speedup_svg(points: list[tuple[float, float, str]], title: str) -> str:
    """Speedup over the best baseline (log scale) against problem size (2MNK, log scale), one
    colour per regime, a line at 1.0: a plain SVG, deterministic for the same points."""
    width, height, left, right, top, bottom = 760, 380, 60, 130, 30, 45
    xs = [math.log2(x) for x, _, _ in points]
    ys = [math.log2(y) for _, y, _ in points]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    y_lim = max(1.0, math.ceil(max(abs(v) for v in ys) * 4) / 4)

    def px(v: float) -> float:
        return left + (v - x0) / (x1 - x0) * (width - left - right)

    def py(v: float) -> float:
        return top + (y_lim - v) / (2 * y_lim) * (height - top - bottom)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
        f'font-size="11"><rect width="100%" height="100%" fill="white"/>',
        f'<text x="{left}" y="18" font-size="13">{title}</text>',
    ]
    for tick in range(math.ceil(-y_lim * 2), math.floor(y_lim * 2) + 1):
        v = tick / 2
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{py(v):.1f}" y2="{py(v):.1f}" '
                     f'stroke="{"#444" if tick == 0 else "#ddd"}"/>')  # fmt: skip
        parts.append(f'<text x="{left - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{2**v:.2f}x</text>')
    for e in range(x0, x1 + 1, 4):
        parts.append(f'<text x="{px(e):.1f}" y="{height - bottom + 16}" text-anchor="middle">2^{e}</text>')
    parts.append(f'<text x="{(left + width - right) / 2}" y="{height - 8}" text-anchor="middle">'
                 "problem size 2MNK (FLOP)</text>")  # fmt: skip
    for (_, _, reg), lx, ly in sorted(zip(points, xs, ys, strict=True)):
        parts.append(f'<circle cx="{px(lx):.1f}" cy="{py(ly):.1f}" r="2.2" fill="{REGIME_COLOURS[reg]}" '
                     'fill-opacity="0.7"/>')  # fmt: skip
    for i, (reg, colour) in enumerate(REGIME_COLOURS.items()):
        y = top + 14 + 18 * i
        parts.append(f'<circle cx="{width - right + 16}" cy="{y - 4}" r="4" fill="{colour}"/>')
        parts.append(f'<text x="{width - right + 26}" y="{y}">{reg}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def plots(store: Store) -> dict[str, str]:
    """File name -> SVG text for every measured (set of ours, GPU, mode)."""
    from cuda_l2_explorer.db.shapes import Shape, regime

    frame = reads.measured_speedups_of_ours_over_best(store)
    out = {}
    for (set_id, gpu, mode), group in frame.group_by(["set_id", "gpu", "mode"], maintain_order=True):
        points = [
            (2.0 * m * n * k, sp, regime(Shape(m, n, k), gpu))
            for m, n, k, sp in group.select("m", "n", "k", "speedup").iter_rows()
        ]
        title = f"{set_id} on {gpu}, {mode}: speedup over the best of the seven baselines"
        out[plot_name(set_id, gpu, mode)] = speedup_svg(points, title)
    return out


def render(readme: str, block: str) -> str:
    start, end = readme.index(START) + len(START), readme.index(END)
    return readme[:start] + "\n" + block + "\n" + readme[end:]


def bundled_headline() -> tuple[str, dict[str, str]]:
    """The README block and the plots, from the bundled dataset alone."""
    with tempfile.TemporaryDirectory() as tmp:
        with Store.open(Path(tmp) / "empty.duckdb", read_only=False, with_bundled=True) as store:
            return headline(store), plots(store)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check that README.md is up to date")
    args = ap.parse_args()
    text = README.read_text()
    block, svgs = bundled_headline()
    new = render(text, block)
    stale = [
        name
        for name, svg in svgs.items()
        if not (PLOTS / name).is_file() or (PLOTS / name).read_text() != svg
    ]
    if args.check:
        if new != text or stale:
            print(
                "README.md's headline block or plots are out of date: "
                "run python benchmarks/readme_headline.py"
            )
            return 1
        return 0
    README.write_text(new)
    PLOTS.mkdir(parents=True, exist_ok=True)
    for name, svg in svgs.items():
        (PLOTS / name).write_text(svg)
    print(f"headline block of {README} and {len(svgs)} plot(s) in {PLOTS} rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
