"""The kernel library's evidence report (issue 4), read from a store filled on the device.

    python benchmarks/tuner/report.py STORE.duckdb OUT.md [--set SET_ID] [--manifest PATH]
    python benchmarks/tuner/report.py bundled OUT.md ...   # from the bundled dataset alone

The store holds the search (runs of kind 'tune' with their search_log) and the harness runs of
our set against the seven baselines (kind 'bench'). Everything below is computed from it:
headline aggregates through the same query API as ``stats``, then per regime, the fraction of
the physical floor, the worst configs, host latency of tiny shapes against torch.matmul, and
what the search measured.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from pathlib import Path

import polars as pl
from cuda_l2_explorer.db import reads
from cuda_l2_explorer.db.reads import Filters, stats, stats_by_regime
from cuda_l2_explorer.db.shapes import Shape, floor_seconds, regime
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.db.views import BEST
from cuda_l2_explorer.tuner import manifest as mf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the harness report
from harness_report import markdown_table as table


def _beyond_stats(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """What ``stats`` does not say: configs below 0.97 and the median fraction of the floor."""
    return frame.group_by(by).agg(
        (pl.col("speedup") < 0.97).sum().alias("below_0.97"),
        pl.col("floor_fraction").median().alias("floor_fraction_median"),
    )


def report(store: Store, set_id: str) -> str:
    runs = reads.runs_of_set_and_tunes(store, set_id)
    out = [f"# Our kernel library: `{set_id}` against the seven baselines", ""]
    out += ["## Runs", "", table(runs.drop("run_id")), ""]
    head = stats(store, Filters(set_ids=(set_id,)))
    out += ["## Headline (device time, cold L2; speedup = baseline time / our time)", ""]
    out += [table(head.filter(pl.col("source") == "measured").drop("set_id", "accumulator", "source")), ""]
    sp = reads.measured_speedups_of_set(store, set_id, BEST)
    if sp.height == 0:
        return "\n".join([*out, "No measured rows for this set."])
    shapes = [Shape(m, n, k) for m, n, k in sp.select("m", "n", "k").iter_rows()]
    gpus = sp["gpu"].to_list()
    sp = sp.with_columns(
        pl.Series("regime", [regime(s, g) for s, g in zip(shapes, gpus, strict=True)]),
        pl.Series(
            "floor_fraction",
            [
                (floor_seconds(s, g) or math.nan) / t
                for s, g, t in zip(shapes, gpus, sp["kernel_s"].to_list(), strict=True)
            ],
        ),
    )
    out += ["## Against the best of the seven baselines, by regime", ""]
    by_regime = stats_by_regime(store, Filters(set_ids=(set_id,))).filter(pl.col("source") == "measured")
    by_regime = by_regime.join(
        _beyond_stats(sp, ["gpu", "mode", "regime"]), on=["gpu", "mode", "regime"], maintain_order="left"
    )
    out += [table(by_regime.drop("set_id", "source")), ""]
    out += [table(_beyond_stats(sp, ["gpu", "mode"]).sort("gpu", "mode")), ""]
    kernels = reads.kernel_names_of_set(store, set_id)
    worst = (
        sp.join(kernels, on=["m", "n", "k"], how="left")
        .sort("speedup")
        .head(15)
        .select("gpu", "mode", "m", "n", "k", "regime", "speedup", "outcome",
                (pl.col("kernel_s") * 1e6).alias("ours_us"), (pl.col("baseline_s") * 1e6).alias("best_us"),
                "kernel", "variant")
    )  # fmt: skip
    out += ["## The 15 worst configs", "", table(worst), ""]
    host = reads.host_latency_kernel_and_torch(store, set_id)
    if host.height:
        wide = host.pivot(on="implementation", index=["mode", "m", "n", "k"], values="median")
        if {"kernel", "torch.matmul"} <= set(wide.columns):
            wide = wide.with_columns(
                pl.Series(
                    "regime", [regime(Shape(m, n, k)) for m, n, k in wide.select("m", "n", "k").iter_rows()]
                )
            ).filter(pl.col("regime") == "tiny")
            summary = wide.group_by("mode").agg(
                pl.len().alias("tiny_configs"),
                (pl.col("kernel").median() * 1e6).alias("ours_host_us_median"),
                (pl.col("torch.matmul").median() * 1e6).alias("torch_host_us_median"),
                (pl.col("torch.matmul") / pl.col("kernel")).log().mean().exp().alias("geomean_ratio"),
            )
            out += [
                "## Host latency of one call, tiny configs (ours vs torch.matmul)",
                "",
                table(summary),
                "",
            ]
    # The search's own view of its choice: the kept kernel against the fastest reference it
    # measured beside it (cuBLASLt's heuristic nn/tn, torch.matmul), geomean over the run's configs.
    search = reads.search_runs_summary(store)
    families = reads.family_counts_of_set(store, set_id)
    out += ["## The search", "", table(search.drop("run_id"), 3), "", table(families), ""]
    return "\n".join(out)


def manifest_section(data: dict) -> str:
    """The search's figure for the kept kernels (the faster of the searches that measured a
    config) against the harness's, both against their references: the gap is the winner's curse
    of keeping the minimum of noisy figures."""
    rows = [e for e in data["configs"] if e.get("search_time_us") and e.get("best_reference_us")]
    search = math.exp(sum(math.log(e["best_reference_us"] / e["search_time_us"]) for e in rows) / len(rows))
    return "\n".join(
        [
            "## The manifest's search figures",
            "",
            f"Kept kernels against the search's best reference (cuBLASLt heuristic nn/tn, torch.matmul), "
            f"as the search measured them, over {len(rows)} configs: geomean {search:.3f}.",
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", help="a store file, or 'bundled' for the dataset shipped in db/bundled")
    ap.add_argument("out", type=Path)
    ap.add_argument("--set", dest="set_id", default=None, help="set id (default: the only 'ours' set)")
    ap.add_argument("--manifest", type=Path, help="the set's manifest: the search figures it kept")
    args = ap.parse_args()
    bundled = args.store == "bundled"
    with Store.open(None if bundled else Path(args.store), read_only=True, with_bundled=bundled) as store:
        set_id = args.set_id or reads.newest_set_of_ours(store)
        text = report(store, set_id)
    if args.manifest:
        text += "\n" + manifest_section(mf.load(args.manifest)) + "\n"
    text += f"\nMade by `python benchmarks/tuner/report.py {shlex.join(sys.argv[1:])}`.\n"
    args.out.write_text(text + "\n")
    print(f"report written to {args.out}")


if __name__ == "__main__":
    main()
