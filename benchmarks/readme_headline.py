"""Regenerate the README's headline tables from the bundled dataset (nothing typed by hand).

    python benchmarks/readme_headline.py          # rewrite the block in README.md
    python benchmarks/readme_headline.py --check  # exit 1 if README.md is out of date

The block between the ``headline`` markers holds, for each measured set of ours in the bundled
dataset: the device, date and command of its runs, ``stats`` per baseline and mode (geomean,
mean, win rate, worst) and ``stats --by-regime`` against the best of the seven baselines. The
numbers come from the same query API as the CLI, so the README matches what ``stats`` prints.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import polars as pl

from db.queries import Filters, stats, stats_by_regime
from db.store import Store

README = Path(__file__).resolve().parents[1] / "README.md"
START, END = "<!-- headline:start -->", "<!-- headline:end -->"
HEADLINE_BASELINES = (
    "best-baseline", "torch.matmul", "cuBLAS-max", "cuBLASLt-heuristic-max", "cuBLASLt-auto-tuning-max",
)  # fmt: skip


def _table(frame: pl.DataFrame) -> str:
    rows = ["| " + " | ".join(frame.columns) + " |", "|" + "|".join("---" for _ in frame.columns) + "|"]
    for row in frame.iter_rows():
        rows.append("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row) + " |")
    return "\n".join(rows)


def headline(store: Store) -> str:
    sets = store.query("SELECT set_id FROM all_kernel_sets WHERE origin = 'ours' ORDER BY set_id")["set_id"]
    out = []
    for set_id in sets.to_list():
        runs = store.query(
            "SELECT gpu_name, mode, started_at::DATE AS date, command_line FROM all_runs "
            "WHERE kind = 'bench' AND set_id = ? ORDER BY started_at",
            [set_id],
        )
        if runs.height == 0:
            continue
        filters = Filters(set_ids=(set_id,))
        per_baseline = (
            stats(store, filters, HEADLINE_BASELINES)
            .filter(pl.col("source") == "measured")
            .select(
                "gpu",
                "mode",
                "baseline",
                "configs",
                "geomean",
                "mean",
                "win_rate",
                pl.col("min").alias("worst"),
            )
        )
        per_regime = stats_by_regime(store, filters).select(
            "gpu", "mode", "regime", "configs", "geomean", "mean", "win_rate", pl.col("min").alias("worst")
        )
        out.append(
            f"**`{set_id}`**, measured with the harness "
            "(device time, cold L2; speedup = baseline time / ours):"
        )
        out.append("")
        for gpu_name, mode, day, command in runs.iter_rows():
            out.append(f"- {gpu_name}, {mode}, {day}: `{command}`")
        out += ["", _table(per_baseline), "", "Against the best of the seven baselines, per regime:", ""]
        out += [_table(per_regime), ""]
    out.append("Made by `python benchmarks/readme_headline.py` from the bundled dataset.")
    return "\n".join(out)


def render(readme: str, block: str) -> str:
    start, end = readme.index(START) + len(START), readme.index(END)
    return readme[:start] + "\n" + block + "\n" + readme[end:]


def bundled_headline() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        with Store.open(Path(tmp) / "empty.duckdb", read_only=False, with_bundled=True) as store:
            return headline(store)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check that README.md is up to date")
    args = ap.parse_args()
    text = README.read_text()
    new = render(text, bundled_headline())
    if args.check:
        if new != text:
            print("README.md's headline block is out of date: run python benchmarks/readme_headline.py")
            return 1
        return 0
    README.write_text(new)
    print(f"headline block of {README} rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
