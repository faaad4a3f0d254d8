"""The DuckDB store: opening, migrations, the bundled dataset beside it, and typed queries.

A store is one DuckDB file owned by the user (default in the XDG data dir). A read-only bundled
dataset (Parquet files shipped with the package) is layered beside it through TEMP views named
``all_<table>``: every query reads those views, so the CLI and the TUI see the user's rows and the
bundled rows together. The user's own copy of a published (set, mode) hides the bundled one.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
from cuda_l2_explorer.db import bundled as bundled_dataset
from cuda_l2_explorer.db.env import positive_seconds
from cuda_l2_explorer.db.errors import StoreError
from cuda_l2_explorer.db.schema import DATA_TABLES, MIGRATIONS, SCHEMA_VERSION

if TYPE_CHECKING:  # polars stays out of the GPU harness's imports (it runs on the device)
    import polars as pl

ENV_DB = "CUDA_L2_EXPLORER_DB"
# How long an open waits for another process's lock (a benchmark commits in ~10-50 ms).
ENV_LOCK_WAIT = "CUDA_L2_EXPLORER_LOCK_WAIT_S"
DEFAULT_LOCK_WAIT_S = 10.0
ENV_NO_BUNDLED = "CUDA_L2_EXPLORER_NO_BUNDLED"
_INSERT_CHUNK = 500


def tool_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cuda-l2-explorer")
    except PackageNotFoundError:  # imported without an installed distribution (a bare copy)
        return "0+unknown"


def default_store_path() -> Path:
    """``$CUDA_L2_EXPLORER_DB`` or ``<XDG data dir>/cuda-l2-explorer/store.duckdb``."""
    env = os.environ.get(ENV_DB)
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_path

    return user_data_path("cuda-l2-explorer", appauthor=False) / "store.duckdb"


def new_id() -> str:
    return uuid.uuid4().hex


class StoreLocked(StoreError):
    """Another process holds the store's lock (DuckDB allows one writer, or many readers)."""


# Extensions stay off: a file of another kind (SQLite, Parquet) must be refused, never make DuckDB
# download and load a reader for it (over plain HTTP) or open it as an in-memory database.
_CONNECT_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
# A DuckDB file starts with an 8-byte checksum and this magic (its main header).
_DUCKDB_MAGIC = (8, b"DUCK")
_NOT_DUCKDB = "store {path} is not a DuckDB database or is corrupt; move it aside"
_OTHER_KINDS = {
    b"SQLite format 3\x00": "a SQLite database",
    b"PAR1": "a Parquet file",
    b"PK\x03\x04": "a zip archive",
    b"\x1f\x8b": "a gzip file",
}


def explain_error(path: Path, exc: Exception) -> StoreError | None:
    """A DuckDB error met while opening or reading the store at ``path``, as the store's own fault
    (truncated, corrupt, locked, read-only), or None when it says nothing about the file."""
    text = str(exc)
    if "Could not read enough bytes" in text:
        return StoreError(
            f"store {path} is truncated (cut short by a copy, a full disk or a crash): DuckDB read past "
            "its end; restore it from a copy or move it aside"
        )
    if "not a valid DuckDB database" in text or "Corrupt" in text or "checksum" in text.lower():
        return StoreError(_NOT_DUCKDB.format(path=path))
    if re.search(r"\block\b", text, re.IGNORECASE):  # "Could not set lock", not "block"
        holder = re.search(r"PID (\d+)", text)
        who = f" (process {holder.group(1)})" if holder else ""
        return StoreLocked(f"store {path} is in use by another process{who}; try again when it ends")
    if "Permission denied" in text or "Read-only file system" in text:
        return StoreError(f"store {path} is read-only; pass a writable --db")
    return None


def _explain_open_error(path: Path, exc: Exception) -> StoreError:
    error = explain_error(path, exc)
    if error is not None:
        return error
    text = str(exc)
    if "newer" in text.lower() or "version" in text.lower():
        return StoreError(f"store {path} was written by a newer DuckDB ({text.splitlines()[0]})")
    return StoreError(f"cannot open store {path}: {text.splitlines()[0] if text else exc!r}")


def _check_store_file(path: Path) -> None:
    """Refuse what cannot be a store before DuckDB touches it: a path under a file, a FIFO or a
    device (opening those could block or read forever), and a file of another kind."""
    try:
        for folder in path.parents:
            if folder.exists():
                if not folder.is_dir():
                    raise StoreError(f"store path {path} is under {folder}, which is a file, not a folder")
                break
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:  # a folder on the way that cannot be searched
        raise StoreError(f"cannot open store {path}: {exc.strerror or exc}") from exc
    if stat.S_ISDIR(mode):
        raise StoreError(f"store path {path} is a directory; pass a file path to --db")
    if not stat.S_ISREG(mode):
        raise StoreError(f"store path {path} is not a regular file (a pipe or a device); pass a file")
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise StoreError(f"cannot open store {path}: {exc.strerror or exc}") from exc
    offset, magic = _DUCKDB_MAGIC
    if head[offset : offset + len(magic)] != magic:
        kind = next((name for start, name in _OTHER_KINDS.items() if head.startswith(start)), None)
        if kind is None and head:
            raise StoreError(_NOT_DUCKDB.format(path=path))
        what = kind or "an empty file"
        raise StoreError(f"{path} is not a DuckDB store: it is {what}; pass another --db or move it aside")


def _is_read_only_file(path: Path) -> bool:
    """A store the user made read-only (no write bit), honoured even for root."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return False
    return not (mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) or not os.access(path, os.W_OK)


@functools.cache
def _current_schema() -> dict[str, list[tuple[str, str]]]:
    """{table: [(column, type), ...]} of a store at SCHEMA_VERSION (built once, in memory)."""
    store = Store(duckdb.connect(":memory:", config=_CONNECT_CONFIG), None, read_only=False)
    store._migrate()
    schema = store._schema()
    store.close()
    return schema


class _PolarsTypes(dict):
    """DuckDB type name -> Polars type, for the plain types; None (inferred) for the rest."""

    def __missing__(self, name: str):
        import polars as pl

        table = {"VARCHAR": pl.String, "BOOLEAN": pl.Boolean, "DOUBLE": pl.Float64, "FLOAT": pl.Float64}
        table |= {t: pl.Int64 for t in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT")}
        self[name] = table.get(name)
        return self[name]


_POLARS_TYPES = _PolarsTypes()


class Store:
    """One connection to the user's store (or an in-memory one) with the bundled data beside it."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path | None, read_only: bool) -> None:
        self.con = con
        self.path = path
        self.read_only = read_only
        self.bundled_dir: Path | None = None
        # The views made so far: ``all_<table>`` per table (with its own_/bundled_ layers) and the
        # derived ones (db.views), each made once, when open asks for it or a read first needs it.
        self._bundled_tables: dict[str, Path] = {}
        self._table_schema: dict[str, list[tuple[str, str]]] | None = None
        self._stored_schema: dict[str, list[tuple[str, str]]] = {}
        self._own_viewed: set[str] = set()
        self._viewed: set[str] = set()
        self._derived = False

    # ----------------------------------------------------------------- opening
    @classmethod
    def open(
        cls,
        path: Path | str | None = None,
        *,
        read_only: bool = False,
        with_bundled: bool | None = None,
        bundled_dir: Path | None = None,
        views: bool = True,
        lazy_views: bool = False,
    ) -> Store:
        """Open (creating and migrating when writable) the store at ``path``.

        ``read_only`` opens never write: a store that does not exist yet is replaced by an empty
        in-memory one, so browsing the bundled dataset needs no writable disk, and a store of an
        older schema is read through without being migrated.
        ``lazy_views``: make no view now; each read makes the ``all_<table>`` views it needs
        (:meth:`use_tables`), so a command that reads a few tables (lookup) does not pay for
        binding every view over the bundled dataset.
        """
        target = Path(path).expanduser() if path is not None else default_store_path()
        if with_bundled is None:
            with_bundled = not os.environ.get(ENV_NO_BUNDLED)
        _check_store_file(target)
        if read_only and not target.exists():
            store = cls(duckdb.connect(":memory:", config=_CONNECT_CONFIG), None, read_only=False)
            store._migrate()
            store.read_only = True
        else:
            if not read_only:
                cls.check_writable(target)
            store = cls(cls._connect(target, read_only), target, read_only)
            store._check_version_and_migrate()
        if not views:  # a writer's short session (one benchmark commit) reads nothing
            return store
        if with_bundled:
            directory = bundled_dir or bundled_dataset.default_dir()
            store._bundled_tables = bundled_dataset.table_files(directory)
            store.bundled_dir = directory if store._bundled_tables else None
        if not lazy_views:
            store.use_derived_views()
        return store

    @staticmethod
    def check_writable(path: Path | str | None) -> Path:
        """The store's path, refused as open would refuse it for writing (a folder, a read-only
        file, a folder that cannot be made or written in), without opening it: an import checks
        it before its downloads, not after them."""
        target = Path(path).expanduser() if path is not None else default_store_path()
        _check_store_file(target)
        if _is_read_only_file(target):
            raise StoreError(f"store {target} is read-only; pass a writable --db")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the store's folder {target.parent}: {exc.strerror}") from exc
        if not target.exists() and not os.access(target.parent, os.W_OK):
            raise StoreError(f"cannot create the store in {target.parent}: the folder is not writable")
        return target

    @staticmethod
    def _connect(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
        """Connect, waiting with backoff while another process holds the lock.

        Writers (a benchmark) keep the file only for one commit and readers (the CLI, the app)
        only for one query, so a wait of a few seconds at most lets everyone through in turn.
        """
        import time

        wait = positive_seconds(ENV_LOCK_WAIT, DEFAULT_LOCK_WAIT_S)
        deadline = time.monotonic() + wait
        delay = 0.01
        while True:
            try:
                return duckdb.connect(str(path), read_only=read_only, config=_CONNECT_CONFIG)
            except (duckdb.Error, OSError) as exc:
                error = _explain_open_error(path, exc)
                if not isinstance(error, StoreLocked) or time.monotonic() + delay > deadline:
                    raise error from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.25)

    def _stored_version(self) -> int | None:
        try:
            has_table = self.con.execute(
                "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'schema_info' "
                "AND schema_name = 'main' AND database_name = current_database()"
            ).fetchone()
        except duckdb.Error as exc:
            raise _explain_open_error(self.path or Path(":memory:"), exc) from exc
        if not has_table or has_table[0] == 0:
            return None
        row = self.con.execute("SELECT max(version) FROM schema_info").fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def _check_version_and_migrate(self) -> None:
        version = self._stored_version()
        if version is None and self._has_foreign_tables():
            raise StoreError(f"{self.path} is a DuckDB file but not a cuda-l2-explorer store")
        if version is not None and version > SCHEMA_VERSION:
            raise StoreError(
                f"store {self.path} has schema v{version}, newer than this cuda-l2-explorer "
                f"(v{SCHEMA_VERSION}); upgrade cuda-l2-explorer to use it"
            )
        if version == SCHEMA_VERSION:
            return
        if self.read_only:
            # Browsing never writes: an older store is read as it is (the views fill what later
            # migrations added with NULLs and empty tables); the next writing command migrates it.
            return
        self._migrate()

    def _has_foreign_tables(self) -> bool:
        row = self.con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' "
            "AND database_name = current_database()"
        ).fetchone()
        return bool(row and row[0])

    def _migrate(self) -> None:
        current = self._stored_version() or 0
        pending = [m for m in MIGRATIONS if m[0] > current]
        if not pending:
            return
        with self.transaction():
            for version, description, statements in pending:
                for statement in statements:
                    self.con.execute(statement)
                self.con.execute(
                    "INSERT INTO schema_info (version, description, tool_version) VALUES (?, ?, ?)",
                    [version, description, tool_version()],
                )

    # ------------------------------------------------------- bundled dataset
    def _schema(self) -> dict[str, list[tuple[str, str]]]:
        """{table: [(column, type), ...]} of the main schema, in one catalog query."""
        rows = self.con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE schema_name = 'main' AND database_name = current_database() "
            "ORDER BY table_name, column_index"
        ).fetchall()
        schema: dict[str, list[tuple[str, str]]] = {}
        for table, column, dtype in rows:
            schema.setdefault(table, []).append((column, dtype))
        return schema

    def _columns(self, table: str) -> list[tuple[str, str]]:
        """(column, type) of ``table`` in the current schema (what every view of it shows)."""
        if self._table_schema is None:
            self._stored_schema = self._schema()
            # A store at this version has the current schema: building it in memory again (a second
            # connection and every migration) would cost a read command a third of its time.
            current = self._stored_version() == SCHEMA_VERSION
            self._table_schema = self._stored_schema if current else _current_schema()
        return self._table_schema[table]

    def _create_own_view(self, table: str) -> None:
        """``own_<table>``: the user's rows of ``table`` in the current schema.

        A store of the current version reads its tables as they are. An older one, opened
        read-only and so not migrated, reads columns and tables of later migrations as NULL/empty.
        """
        columns = self._columns(table)
        present = dict(self._stored_schema.get(table, []))
        select = ", ".join(c if c in present else f"NULL::{t} AS {c}" for c, t in columns)
        source = f"FROM main.{table}" if present else "LIMIT 0"
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW own_{table} AS SELECT {select} {source}")

    def _create_bundled_view(self, table: str) -> None:
        """``bundled_<table>``: the bundled dataset's rows (none without it) in the current schema."""
        columns = [c for c, _ in self._columns(table)]
        parquet = self._bundled_tables.get(table)
        if parquet is None:
            own = f"SELECT {', '.join(columns)} FROM own_{table}"
            self.con.execute(f"CREATE OR REPLACE TEMP VIEW bundled_{table} AS {own} LIMIT 0")
            return
        types = dict(self._columns(table))
        present = {
            r[0] for r in self.con.execute("SELECT name FROM parquet_schema(?)", [str(parquet)]).fetchall()
        }
        # Columns added by later migrations read as NULL from an older bundle.
        select = ", ".join(c if c in present else f"NULL::{types[c]} AS {c}" for c in columns)
        self.con.execute(
            f"CREATE OR REPLACE TEMP VIEW bundled_{table} AS "
            f"SELECT {select} FROM read_parquet({sql_literal(str(parquet))})"
        )

    def use_tables(self, *tables: str) -> None:
        """Make the ``all_<table>`` views of ``tables`` that are not made yet: the user's rows plus
        the visible bundled rows (the user's own copy of a published set and mode hides the
        bundled one)."""
        missing = [t for t in tables if t not in self._viewed]
        if not missing:
            return
        # The published rows' shadowing reads the user's published speedups.
        own_needed = {*missing, "published_speedups"} & set(DATA_TABLES)
        for table in sorted(own_needed - self._own_viewed):
            self._create_own_view(table)
            self._own_viewed.add(table)
        shadowed_published = (
            "EXISTS (SELECT 1 FROM own_published_speedups p WHERE p.set_id = b.set_id AND p.mode = b.mode)"
        )
        shadow = {
            "gpus": "gpu NOT IN (SELECT gpu FROM own_gpus)",
            "kernel_sets": "set_id NOT IN (SELECT set_id FROM own_kernel_sets)",
            "kernels": "kernel_id NOT IN (SELECT kernel_id FROM own_kernels)",
            "runs": f"NOT (b.kind = 'published' AND {shadowed_published})",
            "published_speedups": f"NOT {shadowed_published}",
        }
        for table in missing:
            if table not in DATA_TABLES:
                raise ValueError(f"no data table {table!r}")
            self._create_bundled_view(table)
            columns = ", ".join(c for c, _ in self._columns(table))
            where = shadow.get(table, "true")
            self.con.execute(
                f"CREATE OR REPLACE TEMP VIEW all_{table} AS "
                f"SELECT {columns}, false AS bundled FROM own_{table} "
                f"UNION ALL SELECT {columns}, true AS bundled FROM bundled_{table} AS b WHERE {where}"
            )
            self._viewed.add(table)

    def use_derived_views(self) -> None:
        """Make every ``all_<table>`` view and the derived views over them (db.views)."""
        self.use_tables(*DATA_TABLES)
        if self._derived:
            return
        from cuda_l2_explorer.db import views

        for statement in (*views.DERIVED_VIEWS, *views.FINDINGS_VIEWS):
            self.con.execute(statement)
        self._derived = True

    # ---------------------------------------------------------------- access
    @contextmanager
    def transaction(self) -> Iterator[None]:
        if self.read_only:
            raise StoreError("store is open read-only")
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        else:
            self.con.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> pl.DataFrame:
        """Run a query and return a Polars frame (built without pyarrow)."""
        import polars as pl

        cursor = self.con.execute(sql, params or [])
        # Columns keep their SQL type even when every value is NULL or there is no row (an older
        # store's missing columns, a set without runs): string functions then work on them.
        schema = [(d[0], _POLARS_TYPES[str(d[1])]) for d in cursor.description or []]
        rows = cursor.fetchall()
        if not rows:
            return pl.DataFrame(schema=[(name, dtype or pl.Null) for name, dtype in schema])
        return pl.DataFrame(rows, schema=schema, orient="row", infer_schema_length=None)

    def scalar(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        row = self.con.execute(sql, params or []).fetchone()
        return row[0] if row else None

    def insert_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Insert many rows quickly: multi-row VALUES statements, parameters bound."""
        placeholder = "(" + ", ".join("?" for _ in columns) + ")"
        head = f"INSERT INTO main.{table} ({', '.join(columns)}) VALUES "
        for start in range(0, len(rows), _INSERT_CHUNK):
            chunk = rows[start : start + _INSERT_CHUNK]
            self.con.execute(head + ", ".join([placeholder] * len(chunk)), [v for r in chunk for v in r])

    def schema_version(self) -> int | None:
        return self._stored_version()

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ----------------------------------------------------------------------------------------------
# Moving a store file between machines (caller: benchmarks/store_pack.py)
# ----------------------------------------------------------------------------------------------


def export_store_files(store: Path, folder: Path) -> None:
    """Write every table of the store file into ``folder`` (zstd Parquet and the schema's SQL)."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        con.execute(f"EXPORT DATABASE {sql_literal(str(folder))} (FORMAT parquet, COMPRESSION zstd)")
    finally:
        con.close()


def import_store_files(folder: Path, store: Path) -> None:
    """Make a new store file from a folder that ``export_store_files`` wrote."""
    con = duckdb.connect(str(store))
    try:
        con.execute(f"IMPORT DATABASE {sql_literal(str(folder))}")
    finally:
        con.close()


def sql_literal(text: str) -> str:
    """A string as a quoted SQL literal, for the statements that take no parameters (paths)."""
    return "'" + text.replace("'", "''") + "'"
