"""Aggregate speedups (SPEC §7: geometric mean first) per set, GPU, mode, source and baseline or
regime, the overview of a store, and the reference system's published speedups set beside our
measurement of its kernels (issue 17). Thin over ``db.reads``, which holds the SQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cuda_l2_explorer.db import reads
from cuda_l2_explorer.db.errors import NotFoundError, UsageError
from cuda_l2_explorer.db.reads import Filters
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.db.views import BEST, HEADLINE_BASELINES

__all__ = [
    "HEADLINE_BASELINES",
    "PublishedVsMeasured",
    "headline",
    "measure_command",
    "published_vs_measured",
    "stats",
    "stats_by_regime",
]

if TYPE_CHECKING:
    import polars as pl


def stats(store: Store, filters: Filters, baselines: tuple[str, ...] | None = None) -> pl.DataFrame:
    """Per set, GPU, mode, source and baseline (every baseline unless ``baselines``)."""
    return reads.stats(store, filters, baselines)


def stats_by_regime(store: Store, filters: Filters, baselines: tuple[str, ...] = ()) -> pl.DataFrame:
    """Per regime (tiny, skinny, small-K, large) against one baseline (default best-baseline)."""
    if len(baselines) > 1:
        raise UsageError("--by-regime takes at most one --baseline")
    return reads.stats_by_regime(store, filters, *baselines)


def headline(store: Store) -> pl.DataFrame:
    """Each set's speedup over the headline baselines: what the app and the CLI's overview show."""
    return reads.stats(store, reads.resolve_filters(store), HEADLINE_BASELINES)


@dataclass(frozen=True)
class PublishedVsMeasured:
    """Per config the published ratio beside our measurement (``rows``: db.views'
    ``published_vs_measured`` with each config's regime) and, per set, GPU, mode and baseline,
    what they add up to (``summary``)."""

    rows: pl.DataFrame
    summary: pl.DataFrame

    def lines(self) -> list[str]:
        """The summary, one line per set, GPU, mode, baseline and metric (a kernel that could not be
        captured in a graph is compared by its isolated call, apart from the device times), and
        one for the configs with no measured ratio, which have no metric."""
        out = []
        for r in self.summary.iter_rows(named=True):
            if r["metric"] is None:
                out.append(
                    f"{r['set_id']} on {r['gpu']}, {r['mode']}, over {r['baseline']}: {r['no_ratio']} "
                    f"measured config(s) have no measured ratio (incorrect or failed: see status), "
                    f"{r['audited']} of them with audit findings."
                )
                continue
            head = f"{r['set_id']} on {r['gpu']}, {r['mode']}, over {r['baseline']} ({r['metric']}):"
            if r["compared"]:
                figures = (
                    f"{r['compared']} configs compared, geomean published {r['geomean_published']:.3f} "
                    f"vs measured {r['geomean_measured']:.3f}; the measurement contradicts "
                    f"{r['contradicted']} (published win, measured loss beyond the spread), confirms "
                    f"{r['confirmed']}"
                )
            else:
                figures = "no config with a measured ratio to compare"
            tail = f"; {r['audited']} of {r['configs']} measured configs carry audit findings"
            out.append(f"{head} {figures}{tail}.")
        return out

    def to_json(self) -> dict[str, list[dict]]:
        """``rows`` (each config, as before) and ``summary`` (each line's figures, its text as
        ``line``): what the table form prints to stderr, for a script to read."""
        rows = self.rows.to_dicts()
        summary = [{**r, "line": line} for r, line in zip(self.summary.to_dicts(), self.lines(), strict=True)]
        return {"rows": rows, "summary": summary}


def measure_command(set_id: str, configs: Sequence[Shape] = (), mode: str = "offline") -> str:
    """The command that measures a published set's kernels under its own set id (SPEC §4 folder
    ``<device>_<ACC>`` of a checkout of the reference system): ``configs``, else the whole grid."""
    name, _, folder = set_id.partition("/")
    shapes = f"--mnk {','.join(str(c) for c in configs)}" if configs else "--grid"
    where = f"--set <checkout>/kernels/{folder} --set-name {name}"
    return f"cuda-l2-explorer bench {where} {shapes} --mode {mode}"


def published_vs_measured(
    store: Store, filters: Filters, baselines: tuple[str, ...] = (BEST,)
) -> PublishedVsMeasured:
    """Each config of a set both published and measured (same GPU, same mode): the published
    speedup beside our harness-3 measurement of the same kernel, with its status and the audit's
    findings, and a summary per set, GPU, mode and baseline. Geomeans are over the configs that
    have both ratios, so the two are over the same configs. Raises NotFoundError naming the
    command that would measure a published set when nothing was measured."""
    import polars as pl

    rows = reads.published_vs_measured(store, filters, baselines or (BEST,))
    if rows.height == 0:
        missing = reads.published_without_measurement(store, filters)
        if not missing:
            raise NotFoundError("no published speedups match these filters")
        # The example names a Hopper set where there is one: what this product measures on.
        set_id, gpu, _ = min(missing, key=lambda m: (m[1] not in ("h100", "h200"), m))
        others = len({(s, g) for s, g, _ in missing}) - 1
        also = f" (and {others} other published set(s) alike)" if others else ""
        raise NotFoundError(
            f"{set_id} has published speedups on {gpu} but no harness-3 measurement of its kernels"
            f"{also}; measure them on that GPU with `{measure_command(set_id)}`"
        )
    both = pl.col("measured").is_not_null()
    group = ["set_id", "gpu", "mode", "baseline"]
    summary = rows.group_by(*group, "metric", maintain_order=True).agg(
        pl.len().alias("configs"),
        both.sum().alias("compared"),
        pl.col("published").filter(both).log().mean().exp().alias("geomean_published"),
        pl.col("measured").filter(both).log().mean().exp().alias("geomean_measured"),
        (pl.col("verdict") == "contradicted").sum().alias("contradicted"),
        (pl.col("verdict") == "confirmed").sum().alias("confirmed"),
        (pl.col("verdict") == "same").sum().alias("same"),
        (pl.col("audit") != "").sum().alias("audited"),
        (~both).sum().alias("no_ratio"),
    )
    # Per set, GPU, mode and baseline as the rows come, its configs without a ratio (metric NULL)
    # after the metrics' lines.
    first = pl.int_range(pl.len()).min().over(group)
    summary = summary.sort(first, pl.col("metric").is_null(), maintain_order=True)
    return PublishedVsMeasured(rows, summary)
