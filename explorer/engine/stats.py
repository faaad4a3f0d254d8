"""Aggregate speedups (SPEC §7: geometric mean first) per set, GPU, mode, source and baseline or
regime, and the overview of a store. Thin over ``db.reads``, which holds the SQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda_l2_explorer.db import reads
from cuda_l2_explorer.db.errors import UsageError
from cuda_l2_explorer.db.reads import Filters
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.db.views import HEADLINE_BASELINES

__all__ = ["HEADLINE_BASELINES", "headline", "stats", "stats_by_regime"]

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
