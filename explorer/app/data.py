"""The app's view of the engine: what a pane needs, loaded off the UI thread.

One ``DataSource`` per app opens the store for each call. DuckDB connections are not safe for
concurrent use, so every call goes through one lock; the app calls these from thread workers.
The engine (and with it DuckDB and Polars) is imported by the first call, in a worker: the app
draws its first frame without waiting for them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cuda_l2_explorer.db.errors import ExplorerError
from cuda_l2_explorer.db.shapes import Shape

if TYPE_CHECKING:
    import polars as pl
    from cuda_l2_explorer.db.store import Store
    from cuda_l2_explorer.engine.export import ExportResult
    from cuda_l2_explorer.engine.lookup import LookupResult


@dataclass(frozen=True)
class Selection:
    set_id: str
    gpu: str
    mode: str
    source: str

    @property
    def label(self) -> str:
        return f"{self.set_id} · {self.gpu} · {self.mode} · {self.source}"


def preferred_selection(
    selections: list[Selection], current: Selection | None, configs: dict[Selection, int] | None = None
) -> Selection | None:
    """The one to show: the current one if it is still there, else measured data first, then
    Hopper GPUs, then offline mode, then the most configs (``configs``: a whole grid before a
    partial measurement, such as the reference set's so far)."""
    if current in selections:
        return current
    counts = configs or {}
    return min(
        selections,
        key=lambda s: (
            s.source != "measured",
            s.gpu not in ("h100", "h200"),
            s.mode != "offline",
            -counts.get(s, 0),
        ),
        default=None,
    )


@dataclass(frozen=True)
class Snapshot:
    """What the app shows first, read in one opening of the store."""

    selections: list[Selection]
    stats: pl.DataFrame
    selection: Selection | None
    table: pl.DataFrame
    runs: pl.DataFrame


class DataSource:
    """Opens the store read-only for each call and closes it again: a benchmark (the one writer
    DuckDB allows) can commit between two of the app's queries, and the app sees its rows."""

    def __init__(self, db: Path | None, with_bundled: bool | None = None) -> None:
        self.db = db
        self.with_bundled = with_bundled
        self._lock = threading.Lock()

    @contextmanager
    def _store(self) -> Iterator[Store]:
        from cuda_l2_explorer.engine import browse

        with self._lock, browse.open_store(self.db, with_bundled=self.with_bundled) as store:
            yield store

    def selections(self) -> list[Selection]:
        with self._store() as store:
            return self._selections(store)

    @staticmethod
    def _selections(store: Store) -> list[Selection]:
        from cuda_l2_explorer.engine import browse

        return [Selection(*row) for row in browse.selections(store).iter_rows()]

    def snapshot(self, current: Selection | None) -> Snapshot:
        """Selections, stats and the preferred selection's table and runs, in one opening of the
        store (each opening costs about as much as a query: the first paint waits for these). The
        overview shows the headline baselines only, and every selection has a best-baseline row,
        so the selections are read off those stats rather than queried again."""
        import polars as pl
        from cuda_l2_explorer.engine import browse
        from cuda_l2_explorer.engine.stats import HEADLINE_BASELINES
        from cuda_l2_explorer.engine.stats import stats as speedup_stats

        with self._store() as store:
            stats = speedup_stats(store, browse.Filters(), HEADLINE_BASELINES)
            selections = sorted(
                {Selection(*row) for row in stats.select("set_id", "gpu", "mode", "source").iter_rows()},
                key=lambda s: (s.gpu, s.set_id, s.mode, s.source),
            )
            counts: dict[Selection, int] = {}
            for *key, n in stats.select("set_id", "gpu", "mode", "source", "configs").iter_rows():
                counts[Selection(*key)] = max(counts.get(Selection(*key), 0), int(n or 0))
            chosen = preferred_selection(selections, current, counts)
            if chosen is None:
                return Snapshot(selections, stats, None, pl.DataFrame(), pl.DataFrame())
            table, runs = self._selection_data(store, chosen)
        return Snapshot(selections, stats, chosen, table, runs)

    def selection_data(self, sel: Selection) -> tuple[pl.DataFrame, pl.DataFrame]:
        """A selection's config table and the runs behind it, in one opening of the store."""
        with self._store() as store:
            return self._selection_data(store, sel)

    @staticmethod
    def _selection_data(store: Store, sel: Selection) -> tuple[pl.DataFrame, pl.DataFrame]:
        from cuda_l2_explorer.engine import browse

        table = browse.config_table(store, sel.set_id, sel.gpu, sel.mode)
        filters = browse.Filters(gpu=sel.gpu, set_ids=(sel.set_id,), mode=sel.mode)
        runs = browse.runs(store, filters, "published" if sel.source == "published" else "bench")
        return table, runs

    def stats(self) -> pl.DataFrame:
        from cuda_l2_explorer.engine import browse
        from cuda_l2_explorer.engine.stats import stats as speedup_stats

        with self._store() as store:
            return speedup_stats(store, browse.resolve_filters(store))

    def config_table(self, sel: Selection) -> pl.DataFrame:
        from cuda_l2_explorer.engine import browse

        with self._store() as store:
            return browse.config_table(store, sel.set_id, sel.gpu, sel.mode)

    def published_vs_measured(self) -> tuple[pl.DataFrame, list[str]]:
        """Every set both published and measured on one GPU and mode, over the best baseline:
        the rows and the summary lines (engine.stats.published_vs_measured)."""
        from cuda_l2_explorer.engine import browse
        from cuda_l2_explorer.engine.stats import published_vs_measured

        with self._store() as store:
            comparison = published_vs_measured(store, browse.Filters())
        return comparison.rows, comparison.lines()

    def samples(self, sel: Selection, shape: Shape) -> pl.DataFrame:
        from cuda_l2_explorer.engine import browse

        with self._store() as store:
            return browse.samples(store, sel.set_id, sel.gpu, sel.mode, shape)

    def kernel_detail(self, set_id: str, shape: Shape) -> dict:
        from cuda_l2_explorer.engine import browse

        with self._store() as store:
            return browse.kernel_detail(store, set_id, shape)

    def export(self, query: Shape, set_id: str, fmt: str, out: Path, force: bool) -> ExportResult:
        """The CLI's ``export`` (same engine): the kernel of ``set_id`` lookup chooses for ``query``.
        The user chose that set's kernel in the kernel view, so it is exported even where lookup
        keeps the baseline (``--anyway``: the README and the summary say so)."""
        from cuda_l2_explorer.engine.export import export_kernel

        with self._store() as store:
            return export_kernel(store, query, fmt, out, set_=set_id, force=force, anyway=True)

    def lookup(self, shape: Shape, gpu: str | None, mode: str | None) -> LookupResult:
        from cuda_l2_explorer.engine.lookup import lookup

        with self._store() as store:
            return lookup(store, shape, gpu=gpu, mode=mode, limit=25)


def describe_error(exc: BaseException) -> str:
    if isinstance(exc, ExplorerError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
