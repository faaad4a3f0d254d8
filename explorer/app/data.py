"""The app's view of the engine: what a pane needs, loaded off the UI thread.

One ``DataSource`` per app owns the store connection. DuckDB connections are not safe for
concurrent use, so every call goes through one lock; the app calls these from thread workers.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from db import queries
from db.errors import ExplorerError
from db.lookup import LookupResult, lookup
from db.shapes import Shape
from db.store import Store


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
    def __init__(self, db: Path | None, with_bundled: bool | None = None) -> None:
        self.db = db
        self.with_bundled = with_bundled
        self._store: Store | None = None
        self._lock = threading.Lock()

    def _open(self) -> Store:
        if self._store is None:
            self._store = Store.open(self.db, read_only=True, with_bundled=self.with_bundled)
        return self._store

    def close(self) -> None:
        """Give the file up (a benchmark needs to write it); the next call reopens it."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def selections(self) -> list[Selection]:
        with self._lock:
            frame = queries.selections(self._open())
        return [Selection(*row) for row in frame.iter_rows()]

    def stats(self) -> pl.DataFrame:
        with self._lock:
            store = self._open()
            return queries.stats(store, queries.resolve_filters(store))

    def config_table(self, sel: Selection) -> pl.DataFrame:
        with self._lock:
            return queries.config_table(self._open(), sel.set_id, sel.gpu, sel.mode)

    def samples(self, sel: Selection, shape: Shape) -> pl.DataFrame:
        with self._lock:
            return queries.samples(self._open(), sel.set_id, sel.gpu, sel.mode, *shape.astuple())

    def kernel_detail(self, set_id: str, shape: Shape) -> dict:
        with self._lock:
            return queries.kernel_detail(self._open(), set_id, *shape.astuple())

    def lookup(self, shape: Shape, gpu: str | None, mode: str | None) -> LookupResult:
        with self._lock:
            store = self._open()
            return lookup(store, shape, queries.resolve_filters(store, gpu=gpu, mode=mode), limit=25)


def describe_error(exc: BaseException) -> str:
    if isinstance(exc, ExplorerError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
