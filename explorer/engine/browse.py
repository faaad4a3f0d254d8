"""What the CLI prints and the app's panes show of the store: kernel sets, runs, a set's configs,
per-sample times and a kernel's detail. Thin over ``db.reads``, which holds the SQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from cuda_l2_explorer.db import reads
from cuda_l2_explorer.db.reads import Filters, resolve_filters
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "Filters",
    "config_table",
    "kernel_detail",
    "kernel_sets",
    "open_store",
    "resolve_filters",
    "runs",
    "samples",
    "selections",
    "store_info",
    "version",
]


def open_store(db: Path | None, *, write: bool = False, with_bundled: bool | None = None) -> Store:
    """The store at ``db`` (default: $CUDA_L2_EXPLORER_DB or the user data dir), read-only unless
    ``write``; ``with_bundled`` None: the bundled dataset unless $CUDA_L2_EXPLORER_NO_BUNDLED."""
    return Store.open(db, read_only=not write, with_bundled=with_bundled)


def version() -> str:
    from cuda_l2_explorer.db.store import tool_version

    return tool_version()


def store_info(db: Path | None, with_bundled: bool | None = None) -> dict:
    """The store's path and schema version, the bundled dataset and how many kernel sets there are."""
    from cuda_l2_explorer.db import bundled
    from cuda_l2_explorer.db.schema import SCHEMA_VERSION
    from cuda_l2_explorer.db.store import default_store_path

    path = db.expanduser() if db else default_store_path()
    with open_store(db, with_bundled=with_bundled) as store:
        return {
            "version": version(),
            "store": str(path),
            "store_exists": path.exists(),
            "schema_version": SCHEMA_VERSION,
            "store_schema_version": store.schema_version() if path.exists() else None,
            "bundled_dataset": str(store.bundled_dir) if store.bundled_dir else None,
            "bundled_manifest": bundled.manifest(store.bundled_dir) if store.bundled_dir else None,
            "kernel_sets": reads.kernel_set_count(store),
        }


def kernel_sets(store: Store) -> pl.DataFrame:
    """Every kernel set with the GPUs, modes and number of configs it has data for."""
    return reads.kernel_sets(store)


def runs(store: Store, filters: Filters, kind: str | None = None) -> pl.DataFrame:
    """Every run with its provenance, newest first (``kind``: published, bench or tune)."""
    return reads.runs(store, filters, kind)


def selections(store: Store) -> pl.DataFrame:
    """Every (set, GPU, mode, source) that has data."""
    return reads.selections(store)


def config_table(store: Store, set_id: str, gpu: str, mode: str) -> pl.DataFrame:
    """One row per config of a set on a GPU in a mode: times, speedups, floor, status, audit."""
    return reads.config_table(store, set_id, gpu, mode)


def samples(store: Store, set_id: str, gpu: str, mode: str, shape: Shape) -> pl.DataFrame:
    """Per-sample device times (microseconds) of every implementation at one config."""
    return reads.samples(store, set_id, gpu, mode, *shape.astuple())


def kernel_detail(store: Store, set_id: str, shape: Shape) -> dict:
    """Source, parameters, build log, correctness, audit and search log of one kernel. A kernel of
    our library is stored as parameters: its source is the SPEC §4 file they render to."""
    detail = reads.kernel_detail(store, set_id, *shape.astuple())
    kernel = detail["kernel"]
    if kernel and not kernel.get("source") and kernel.get("params"):
        from cuda_l2_explorer.tuner.materialize import render_config_source

        params = json.loads(kernel["params"])
        if "kernel" in params:
            entry = {"m": shape.m, "n": shape.n, "k": shape.k, **params}
            # as export renders it: the set's device names the entry point (cuda_l2_h200_fp32)
            row = reads.library_kernel(store, set_id, shape)
            kernel["source"] = render_config_source(entry, row["device"], row["accumulator"])
    return detail
