"""Plot the reference system's published speedups against our harness-3 measurement of the same
kernels (issue 17), from a store, as a plain SVG per (set, GPU, mode): what `stats
--published-vs-measured` prints, drawn.

    python benchmarks/refset/plot_published_vs_measured.py --db STORE [--set cuda-l2] [--gpu h100]
        [--mode offline] [--baseline best-baseline] [--out docs/plots]

Each config is a point: x its published speedup, y our measured speedup over the same baseline
(both log scale), coloured by the verdict (contradicted: a published win measured as a loss beyond
the run-to-run spread). Points on the diagonal agree; below it the measurement is lower than the
claim. A ring marks a config whose kernel carries audit findings (per-call sync or allocation,
extra streams, fp16 accumulation ...). Configs without a measured ratio (incorrect or failed: no
metric) are ticks under the axis at their published figure, on the plot of the mode's own metric.
The summary lines are the engine's. Exit 4 when the store holds no measurement of a published set
(the message names the bench command that makes one).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from cuda_l2_explorer.db.errors import ExplorerError
from cuda_l2_explorer.db.reads import resolve_filters
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.db.views import HEADLINE_METRIC
from cuda_l2_explorer.engine.stats import published_vs_measured

ROOT = Path(__file__).resolve().parents[2]
PLOTS = ROOT / "docs" / "plots"
VERDICT_COLOURS = {
    "contradicted": "#d62728",
    "no-win-either": "#ff7f0e",
    "same": "#7f7f7f",
    "confirmed": "#2ca02c",
    "measured-win-only": "#1f77b4",
}
NO_RATIO_COLOUR = "#9467bd"


def plot_name(set_id: str, gpu: str, mode: str, baseline: str, metric: str) -> str:
    """One file per set, GPU, mode and baseline; a metric other than the mode's own (the isolated
    call of kernels that could not be captured in a graph) gets a file of its own."""
    suffix = "" if metric == HEADLINE_METRIC.get(mode) else f"_{metric}"
    return f"published_vs_measured_{set_id.split('/')[0]}_{gpu}_{mode}_{baseline}{suffix}.svg"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def scatter_svg(rows: list[dict], title: str, summary: str) -> str:
    """Measured against published (log2 both), the diagonal and the lines at 1.0: deterministic
    for the same rows."""
    width, height, left, right, top, bottom = 760, 580, 60, 190, 82, 70
    plot_w, plot_h = width - left - right, height - top - bottom
    figures = [r["published"] for r in rows] + [r["measured"] for r in rows if r["measured"] is not None]
    lim = max(1.0, math.ceil((max(abs(math.log2(v)) for v in figures) + 0.05) * 4) / 4)  # a margin

    def px(v: float) -> float:
        return left + (math.log2(v) + lim) / (2 * lim) * plot_w

    def py(v: float) -> float:
        return top + (lim - math.log2(v)) / (2 * lim) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
        f'font-size="11"><rect width="100%" height="100%" fill="white"/>',
        f'<text x="{left}" y="18" font-size="13">{_escape(title)}</text>',
    ]
    # The summary, wrapped at about 110 characters a line.
    words, line, lines = summary.split(), "", []
    for word in words:
        if len(line) + len(word) > 110:
            lines.append(line)
            line = ""
        line = f"{line} {word}".strip()
    lines.append(line)
    for i, text in enumerate(lines[:4]):
        parts.append(f'<text x="{left}" y="{34 + 13 * i}" fill="#444">{_escape(text)}</text>')
    for tick in range(math.ceil(-lim * 2), math.floor(lim * 2) + 1):
        v = 2 ** (tick / 2)
        colour = "#444" if tick == 0 else "#ddd"
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="{colour}"/>'
        )
        parts.append(
            f'<line x1="{px(v):.1f}" x2="{px(v):.1f}" y1="{top}" y2="{top + plot_h}" stroke="{colour}"/>'
        )
        parts.append(f'<text x="{left - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.2f}x</text>')
        parts.append(f'<text x="{px(v):.1f}" y="{top + plot_h + 14}" text-anchor="middle">{v:.2f}x</text>')
    low, high = 2**-lim, 2**lim
    parts.append(
        f'<line x1="{px(low):.1f}" y1="{py(low):.1f}" x2="{px(high):.1f}" y2="{py(high):.1f}" '
        'stroke="#888" stroke-dasharray="4 3"/>'
    )
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 22}" text-anchor="middle">'
        "published speedup (the reference system's CSV)</text>"
    )
    parts.append(
        f'<text x="14" y="{top + plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + plot_h / 2})">measured speedup (harness 3, this GPU)</text>'
    )
    for r in sorted(rows, key=lambda r: (r["m"], r["n"], r["k"])):
        x = px(r["published"])
        if r["measured"] is None:
            y = top + plot_h + 24
            parts.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y - 5}" y2="{y + 5}" stroke="{NO_RATIO_COLOUR}"/>'
            )
            continue
        y = py(r["measured"])
        colour = VERDICT_COLOURS[r["verdict"]]
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.6" fill="{colour}" fill-opacity="0.75"/>')
        if r["audit"]:
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="none" stroke="#000" stroke-width="0.8"/>'
            )
    legend = [(verdict, colour, "dot") for verdict, colour in VERDICT_COLOURS.items()]
    legend += [("audit findings", "#000", "ring"), ("no measured ratio", NO_RATIO_COLOUR, "tick")]
    for i, (label, colour, mark) in enumerate(legend):
        y = top + 14 + 18 * i
        cx = width - right + 20
        if mark == "dot":
            parts.append(f'<circle cx="{cx}" cy="{y - 4}" r="4" fill="{colour}"/>')
        elif mark == "ring":
            parts.append(f'<circle cx="{cx}" cy="{y - 4}" r="5" fill="none" stroke="{colour}"/>')
        else:
            parts.append(f'<line x1="{cx}" x2="{cx}" y1="{y - 9}" y2="{y + 1}" stroke="{colour}"/>')
        parts.append(f'<text x="{cx + 10}" y="{y}">{label}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def plots(store: Store, set_: str | None, gpu: str | None, mode: str | None, baseline: str) -> dict[str, str]:
    """File name -> SVG text for each (set, GPU, mode, metric) both published and measured: ratios
    of different metrics are never drawn on one plot. The configs with no measured ratio (no
    metric) are ticks on the plot of the mode's own metric, with their summary line."""
    import polars as pl

    comparison = published_vs_measured(store, resolve_filters(store, gpu, set_, mode), (baseline,))
    keys = ["set_id", "gpu", "mode", "metric"]
    summaries = dict(zip(comparison.summary.select(keys).iter_rows(), comparison.lines(), strict=True))
    out = {}
    for (set_id, g, m), rows in comparison.rows.group_by(keys[:3], maintain_order=True):
        own = HEADLINE_METRIC.get(m, m)
        no_ratio = rows.filter(pl.col("metric").is_null())
        metrics = [x for x in rows["metric"].unique(maintain_order=True) if x is not None]
        if no_ratio.height and own not in metrics:
            metrics.insert(0, own)
        for metric in metrics:
            group, lines = rows.filter(pl.col("metric") == metric), [summaries.get((set_id, g, m, metric))]
            if metric == own and no_ratio.height:
                group, lines = pl.concat([group, no_ratio]), [*lines, summaries[set_id, g, m, None]]
            title = f"{set_id} on {g}, {m}: published vs measured speedup over {baseline}"
            if metric != own:
                title += f" (measured: {metric.replace('_', ' ')})"
            svg = scatter_svg(group.to_dicts(), title, " ".join(line for line in lines if line))
            out[plot_name(set_id, g, m, baseline, metric)] = svg
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="a store with a measurement of a published set")
    ap.add_argument("--no-bundled", action="store_true", help="leave the bundled dataset out")
    ap.add_argument("--set", dest="set_", help="kernel set name or id (default: every one)")
    ap.add_argument("--gpu")
    ap.add_argument("--mode")
    ap.add_argument("--baseline", default="best-baseline")
    ap.add_argument("--out", type=Path, default=PLOTS, help=f"folder for the SVGs (default {PLOTS})")
    args = ap.parse_args(argv)
    try:
        with Store.open(args.db, read_only=True, with_bundled=False if args.no_bundled else None) as store:
            svgs = plots(store, args.set_, args.gpu, args.mode, args.baseline)
    except ExplorerError as exc:
        print(f"plot_published_vs_measured: {exc}", file=sys.stderr)
        return exc.exit_code
    args.out.mkdir(parents=True, exist_ok=True)
    for name, svg in svgs.items():
        (args.out / name).write_text(svg)
        print(args.out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
