"""The app's view of the engine: what a pane needs, loaded off the UI thread.

One ``DataSource`` per app opens the store for each call. DuckDB connections are not safe for
concurrent use, so every call goes through one lock; the app calls these from thread workers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
from cuda_l2_explorer.db.errors import ExplorerError
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.engine import browse
from cuda_l2_explorer.engine.export import ExportResult, export_kernel
from cuda_l2_explorer.engine.lookup import LookupResult, lookup
from cuda_l2_explorer.engine.stats import stats as speedup_stats

if TYPE_CHECKING:
    from cuda_l2_explorer.db.store import Store


@dataclass(frozen=True)
class Selection:
    set_id: str
    gpu: str
    mode: str
    source: str

    @property
    def label(self) -> str:
        return f"{self.set_id} · {self.gpu} · {self.mode} · {self.source}"


class DataSource:
    """Opens the store read-only for each call and closes it again: a benchmark (the one writer
    DuckDB allows) can commit between two of the app's queries, and the app sees its rows."""

    def __init__(self, db: Path | None, with_bundled: bool | None = None) -> None:
        self.db = db
        self.with_bundled = with_bundled
        self._lock = threading.Lock()

    @contextmanager
    def _store(self) -> Iterator[Store]:
        with self._lock, browse.open_store(self.db, with_bundled=self.with_bundled) as store:
            yield store

    def selections(self) -> list[Selection]:
        with self._store() as store:
            frame = browse.selections(store)
        return [Selection(*row) for row in frame.iter_rows()]

    def stats(self) -> pl.DataFrame:
        with self._store() as store:
            return speedup_stats(store, browse.resolve_filters(store))

    def config_table(self, sel: Selection) -> pl.DataFrame:
        with self._store() as store:
            return browse.config_table(store, sel.set_id, sel.gpu, sel.mode)

    def runs(self, sel: Selection) -> pl.DataFrame:
        """The runs behind a selection: its published import, or the benchmark runs that measured it."""
        filters = browse.Filters(gpu=sel.gpu, set_ids=(sel.set_id,), mode=sel.mode)
        with self._store() as store:
            return browse.runs(store, filters, "published" if sel.source == "published" else "bench")

    def samples(self, sel: Selection, shape: Shape) -> pl.DataFrame:
        with self._store() as store:
            return browse.samples(store, sel.set_id, sel.gpu, sel.mode, shape)

    def kernel_detail(self, set_id: str, shape: Shape) -> dict:
        with self._store() as store:
            return browse.kernel_detail(store, set_id, shape)

    def export(self, query: Shape, set_id: str, fmt: str, out: Path, force: bool) -> ExportResult:
        """The CLI's ``export`` (same engine): the kernel of ``set_id`` lookup chooses for ``query``.
        The user chose that set's kernel in the kernel view, so it is exported even where lookup
        keeps the baseline (``--anyway``: the README and the summary say so)."""
        with self._store() as store:
            return export_kernel(store, query, fmt, out, set_=set_id, force=force, anyway=True)

    def lookup(self, shape: Shape, gpu: str | None, mode: str | None) -> LookupResult:
        with self._store() as store:
            return lookup(store, shape, gpu=gpu, mode=mode, limit=25)


def describe_error(exc: BaseException) -> str:
    if isinstance(exc, ExplorerError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
