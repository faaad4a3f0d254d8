"""Every write to the store outside the schema's migrations: one function per kind of record.

Callers above ``db`` never write SQL: they pass records here, inside ``Store.transaction()``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from cuda_l2_explorer.db.errors import StoreError
from cuda_l2_explorer.db.schema import DATA_TABLES
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store, tool_version

# ------------------------------------------------------------------------------------------------
# Harness runs (importer.harness.runner) and the tuner's search log (tuner.search)
# ------------------------------------------------------------------------------------------------

MEASUREMENT_COLUMNS: tuple[str, ...] = (
    "run_id", "m", "n", "k", "implementation", "metric", "padded", "l2", "unit", "n_samples",
    "calls_per_sample", "median", "p10", "p90", "mean", "p99", "min", "max", "status", "rel_error",
    "error_ratio", "message",
)  # fmt: skip
SAMPLE_COLUMNS: tuple[str, ...] = (
    "run_id",
    "m",
    "n",
    "k",
    "implementation",
    "metric",
    "padded",
    "idx",
    "value",
)
AUDIT_COLUMNS: tuple[str, ...] = ("run_id", "m", "n", "k", "implementation", "finding", "detail")
SEARCH_LOG_COLUMNS: tuple[str, ...] = (
    "run_id", "m", "n", "k", "candidate", "stage", "kernel", "family", "params", "variant", "status",
    "predicted_us", "median", "p10", "p90", "n_samples", "calls_per_sample", "rel_error", "error_ratio",
    "chosen", "message",
)  # fmt: skip
# The per-config tables a run's result replaces when a config is measured again.
_CONFIG_TABLES = ("measurements", "samples", "audit_findings", "search_log", "run_configs")


def record_gpu(store: Store, gpu: str, name: str, sm_count: int, l2_bytes: int, memory_bytes: int) -> None:
    """A measured GPU, described in full (a later measurement updates the description)."""
    store.con.execute(
        "INSERT INTO main.gpus (gpu, name, sm_count, l2_bytes, memory_bytes) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (gpu) DO UPDATE SET name = excluded.name, sm_count = excluded.sm_count, "
        "l2_bytes = excluded.l2_bytes, memory_bytes = excluded.memory_bytes",
        [gpu, name, sm_count, l2_bytes, memory_bytes],
    )


def start_run(
    store: Store,
    run_id: str,
    *,
    kind: str,
    set_id: str | None,
    gpu: str,
    mode: str,
    command_line: str,
    device: dict[str, Any],
    cutlass: str | None,
    params: dict[str, Any],
) -> None:
    """A new run in state 'running' with its provenance (``device``: the worker's hello info)."""
    store.con.execute(
        "INSERT INTO main.runs (run_id, kind, set_id, gpu, mode, status, tool_version, command_line, "
        "gpu_name, sm_count, l2_bytes, clock_start_mhz, driver, cuda, cublas, torch, cutlass, params) "
        "VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            run_id,
            kind,
            set_id,
            gpu,
            mode,
            tool_version(),
            command_line,
            device["gpu_name"],
            device["sm_count"],
            device["l2_bytes"],
            device.get("clock_sm_mhz"),
            device.get("driver"),
            device.get("cuda"),
            device.get("cublas"),
            device.get("torch"),
            cutlass,
            json.dumps(params),
        ],
    )


RESUMED_BY = " ; resumed by: "


def reopen_run(store: Store, run_id: str, command_line: str | None) -> None:
    """A resumed run is 'running' again, and its command line names every part that ran it
    (the first part's alone said nothing of the options the rest were measured under).
    ``command_line`` None: the call that already named itself continues its own run (its next
    batch), so nothing is added."""
    store.con.execute(
        "UPDATE main.runs SET status = 'running', command_line = CASE "
        "WHEN $cmd IS NULL THEN command_line WHEN command_line IS NULL THEN $cmd "
        "ELSE command_line || $sep || $cmd END WHERE run_id = $run",
        {"cmd": command_line, "sep": RESUMED_BY, "run": run_id},
    )


def finish_run(store: Store, run_id: str, status: str, clock_end_mhz: int | None) -> None:
    store.con.execute(
        "UPDATE main.runs SET status = ?, finished_at = current_timestamp, clock_end_mhz = ? "
        "WHERE run_id = ?",
        [status, clock_end_mhz, run_id],
    )


def clear_config(store: Store, run_id: str, m: int, n: int, k: int) -> None:
    """Forget one config of a run (its rows in every per-config table), before it is written again."""
    for table in _CONFIG_TABLES:
        store.con.execute(
            f"DELETE FROM main.{table} WHERE run_id = ? AND m = ? AND n = ? AND k = ?", [run_id, m, n, k]
        )


def insert_measurements(store: Store, rows: Sequence[Sequence[Any]]) -> None:
    """Rows in :data:`MEASUREMENT_COLUMNS` order."""
    store.insert_rows("measurements", MEASUREMENT_COLUMNS, rows)


def insert_samples(store: Store, rows: Sequence[Sequence[Any]]) -> None:
    """Rows in :data:`SAMPLE_COLUMNS` order."""
    store.insert_rows("samples", SAMPLE_COLUMNS, rows)


def insert_audit_findings(store: Store, rows: Sequence[Sequence[Any]]) -> None:
    """Rows in :data:`AUDIT_COLUMNS` order."""
    store.insert_rows("audit_findings", AUDIT_COLUMNS, rows)


def insert_search_log(store: Store, rows: Sequence[Sequence[Any]]) -> None:
    """Rows in :data:`SEARCH_LOG_COLUMNS` order."""
    store.insert_rows("search_log", SEARCH_LOG_COLUMNS, rows)


def record_config(
    store: Store,
    run_id: str,
    m: int,
    n: int,
    k: int,
    *,
    status: str,
    gpu_index: int,
    seconds: float | None,
    message: str | None,
    details: dict[str, Any],
) -> None:
    """The row that marks one config of a run as finished (what ``--resume`` skips)."""
    store.con.execute(
        "INSERT INTO main.run_configs (run_id, m, n, k, status, gpu_index, seconds, message, details) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [run_id, m, n, k, status, gpu_index, seconds, message, json.dumps(details)],
    )


# ------------------------------------------------------------------------------------------------
# Published speedups (importer.published) and the bundled dataset's build (importer.bundle)
# ------------------------------------------------------------------------------------------------


def delete_published(store: Store, set_id: str, mode: str) -> None:
    """A published (set, mode) and its run, before it is imported again."""
    store.con.execute("DELETE FROM main.published_speedups WHERE set_id = ? AND mode = ?", [set_id, mode])
    store.con.execute(
        "DELETE FROM main.runs WHERE kind = 'published' AND set_id = ? AND mode = ?", [set_id, mode]
    )


def delete_runs(store: Store, run_ids: list[str]) -> int:
    """Every row of these runs (a superseded measurement of a re-tuned set); how many runs existed."""
    if not run_ids:
        return 0
    marks = ", ".join("?" for _ in run_ids)
    query = f"SELECT count(*) FROM main.runs WHERE run_id IN ({marks})"
    (found,) = store.con.execute(query, run_ids).fetchone()
    for table in reversed(DATA_TABLES):  # dependants first
        columns = {row[0] for row in store.con.execute(f"DESCRIBE main.{table}").fetchall()}
        if "run_id" in columns:
            store.con.execute(f"DELETE FROM main.{table} WHERE run_id IN ({marks})", run_ids)
    return int(found)


def drop_foreign_sources(store: Store) -> None:
    """Blank the source and compiler log of every kernel not of our own sets: a dataset we ship
    holds our measurements of another system's kernels, never their code (each keeps the sha256
    of the exact file measured). A config's compile error keeps the compiler's diagnostics, not
    the lines of code nvcc quotes under them."""
    foreign = "SELECT set_id FROM main.kernel_sets WHERE origin <> 'ours'"
    store.con.execute(
        f"UPDATE main.kernels SET source = NULL, build_log = NULL WHERE set_id IN ({foreign}) "
        "AND (source IS NOT NULL OR build_log IS NOT NULL)"
    )
    rows = store.con.execute(
        "SELECT run_id, m, n, k, message FROM main.run_configs WHERE status = 'compile_error' "
        f"AND message IS NOT NULL AND run_id IN (SELECT run_id FROM main.runs WHERE set_id IN ({foreign}))"
    ).fetchall()
    for run_id, m, n, k, message in rows:
        kept = "\n".join(line for line in message.splitlines() if _DIAGNOSTIC.search(line))
        store.con.execute(
            "UPDATE main.run_configs SET message = ? WHERE run_id = ? AND m = ? AND n = ? AND k = ?",
            [kept, run_id, m, n, k],
        )


# A compiler's own lines (nvcc, gcc, the harness's summary), not the source lines it quotes.
_DIAGNOSTIC = re.compile(r"(error|warning|note)\s*[:#]|compilation terminated|^built alone|errors? detected")


def record_gpu_label(store: Store, gpu: str) -> None:
    """A GPU known only by its label (published files say nothing more)."""
    store.con.execute("INSERT INTO main.gpus (gpu) VALUES (?) ON CONFLICT DO NOTHING", [gpu])


def record_published_set(
    store: Store, set_id: str, name: str, gpu: str, accumulator: str, description: str
) -> None:
    store.con.execute(
        "INSERT INTO main.kernel_sets (set_id, name, gpu, accumulator, origin, description) "
        "VALUES (?, ?, ?, ?, 'published', ?) ON CONFLICT DO NOTHING",
        [set_id, name, gpu, accumulator, description],
    )


def record_published_run(
    store: Store,
    run_id: str,
    *,
    set_id: str,
    gpu: str,
    mode: str,
    command_line: str | None,
    source: str,
    source_sha256: str,
) -> None:
    store.con.execute(
        "INSERT INTO main.runs (run_id, kind, set_id, gpu, mode, status, finished_at, tool_version, "
        "command_line, source, source_sha256) "
        "VALUES (?, 'published', ?, ?, ?, 'complete', current_timestamp, ?, ?, ?, ?)",
        [run_id, set_id, gpu, mode, tool_version(), command_line, source, source_sha256],
    )


def load_bundled(store: Store, tables: dict[str, Path]) -> None:
    """Every row of a bundled dataset's Parquet files into ``store``'s tables (same schema)."""
    for table, path in tables.items():
        store.con.execute(f"INSERT INTO main.{table} SELECT * FROM read_parquet(?)", [str(path)])


def cite_source(store: Store, old: str, new: str) -> None:
    """Runs imported from ``old`` cite ``new`` instead (where the file is published)."""
    store.con.execute("UPDATE main.runs SET source = ? WHERE source = ?", [new, old])


# A measured store describes its GPU in full (SM count, L2): it wins over the label-only row a
# published import made. Several stores may measure one set (offline in one, server in another):
# the set and its kernels are kept from the first store, once checked to be the same kernels.
_MERGE_VERB = {"gpus": "INSERT OR REPLACE", "kernel_sets": "INSERT OR IGNORE", "kernels": "INSERT OR IGNORE"}


@contextmanager
def _attached_source(store: Store, source: Path) -> Iterator[None]:
    """The store file ``source`` attached read-only as ``src`` for the block."""
    store.con.execute("ATTACH ? AS src (READ_ONLY)", [str(source)])
    try:
        yield
    finally:
        store.con.execute("DETACH src")


def merge_store(store: Store, source: Path, replace_kernels: bool = False) -> list[str]:
    """Copy every data table of the store file ``source`` into ``store``, in one transaction.

    Returns the ids of (up to three) kernels that the two stores hold with different sources or
    parameters under one id; then nothing is copied. With ``replace_kernels`` the source's
    kernels replace those instead, and the source's description of their set replaces the older
    one (a set re-tuned since: each older run's params still record the kernels it measured).
    """
    with _attached_source(store, source), store.transaction():
        if replace_kernels:
            store.con.execute(
                "DELETE FROM main.kernels WHERE kernel_id IN (SELECT kernel_id FROM src.kernels)"
            )
        # published_speedups has no key index (migration 6): refuse a (set, mode) held twice.
        both = store.con.execute(
            "SELECT set_id, mode FROM src.published_speedups "
            "INTERSECT SELECT set_id, mode FROM main.published_speedups LIMIT 1"
        ).fetchone()
        if both:
            raise StoreError(f"both stores hold published speedups of {both[0]} {both[1]}: merge one of them")
        clash = store.con.execute(
            "SELECT s.kernel_id FROM src.kernels s JOIN main.kernels k USING (kernel_id) "
            "WHERE s.source_sha256 IS DISTINCT FROM k.source_sha256 "
            "OR s.params::TEXT IS DISTINCT FROM k.params::TEXT "
            "LIMIT 3"
        ).fetchall()
        if clash:
            return [row[0] for row in clash]
        for table in DATA_TABLES:
            verb = _MERGE_VERB.get(table, "INSERT")
            store.con.execute(f"{verb} INTO main.{table} BY NAME SELECT * FROM src.{table}")
        if replace_kernels:  # the re-tuned set says what it was tuned with now
            store.con.execute(
                "UPDATE main.kernel_sets m SET description = s.description FROM src.kernel_sets s "
                "WHERE m.set_id = s.set_id AND s.description IS NOT NULL"
            )
    return []


def merge_search_logs(store: Store, source: Path) -> None:
    """Copy the kernel searches of the store file ``source`` into ``store``, in one transaction:
    its tune runs with their per-config status and search log, and its GPUs; not the kernel set a
    search writes its picks to (a scratch set such as ``p/tuned`` whose kept picks were measured
    and merged into one of ours elsewhere)."""
    tune = "SELECT run_id FROM src.runs WHERE kind = 'tune'"
    with _attached_source(store, source), store.transaction():
        store.con.execute("INSERT OR REPLACE INTO main.gpus BY NAME SELECT * FROM src.gpus")
        for table in ("runs", "run_configs", "search_log"):
            store.con.execute(
                f"INSERT INTO main.{table} BY NAME SELECT * FROM src.{table} WHERE run_id IN ({tune})"
            )


# ------------------------------------------------------------------------------------------------
# Engine (engine.bench, engine.library, engine.export, cli)
# ------------------------------------------------------------------------------------------------


def upsert_kernel_set(
    store: Store,
    set_id: str,
    gpu: str,
    accumulator: str,
    origin: str,
    root: str,
    description: str | None = None,
) -> None:
    """A kernel set, named after ``set_id``'s first part; a set already stored keeps all but its
    folder and, when a new one is given, its description (where its files came from)."""
    store.con.execute(
        "INSERT INTO main.kernel_sets (set_id, name, gpu, accumulator, origin, root, description) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (set_id) DO UPDATE SET root = excluded.root, "
        "description = coalesce(excluded.description, description)",
        [set_id, set_id.split("/")[0], gpu, accumulator, origin, root, description],
    )


@dataclass(frozen=True)
class BuiltKernel:
    """A SPEC section 4 file of a set, with its source and how its build went."""

    set_id: str
    shape: Shape
    path: str
    source_sha256: str
    source: str
    pad: tuple[int | None, int | None, int | None] | None  # BM, BN, BK of the padding rule
    build_ok: bool
    build_log: str


def upsert_built_kernel(store: Store, kernel: BuiltKernel) -> None:
    """A fixed-shape kernel of a set; a stored one gets the new path, source and build outcome."""
    s = kernel.shape
    store.con.execute(
        "INSERT INTO main.kernels (kernel_id, set_id, m, n, k, path, source_sha256, source, pad_bm, "
        "pad_bn, pad_bk, runtime_shapes, build_status, build_log) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, false, ?, ?) "
        "ON CONFLICT (kernel_id) DO UPDATE SET path = excluded.path, "
        "source_sha256 = excluded.source_sha256, "
        "source = excluded.source, build_status = excluded.build_status, "
        "build_log = excluded.build_log",
        [
            f"{kernel.set_id}:{s}",
            kernel.set_id,
            s.m,
            s.n,
            s.k,
            kernel.path,
            kernel.source_sha256,
            kernel.source,
            *(kernel.pad or (None, None, None)),
            "ok" if kernel.build_ok else "compile_error",
            kernel.build_log,
        ],
    )


def upsert_library_kernel(
    store: Store, set_id: str, shape: Shape, path: str, family: str, params: str
) -> None:
    """A runtime-shape kernel of our library, stored as its parameters (JSON) rather than a source."""
    store.con.execute(
        "INSERT INTO main.kernels (kernel_id, set_id, m, n, k, path, runtime_shapes, family, params) "
        "VALUES (?, ?, ?, ?, ?, ?, true, ?, ?) ON CONFLICT (kernel_id) DO UPDATE SET "
        "path = excluded.path, family = excluded.family, params = excluded.params",
        [f"{set_id}:{shape}", set_id, shape.m, shape.n, shape.k, path, family, params],
    )


# ------------------------------------------------------------------------------------------------
# imp: bulk published imports through Arrow (importer.published)
# ------------------------------------------------------------------------------------------------


class ArrowStream(Protocol):
    """A table that exports the Arrow C stream interface (a Polars frame, a pyarrow table)."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...


def insert_published_speedups(
    store: Store,
    run_id: str,
    set_id: str,
    mode: str,
    speedups: ArrowStream | Mapping[str, Sequence[float]],
    baselines: Sequence[str],
) -> None:
    """One published file's speedups, given wide (columns m, n, k and one per baseline), stored
    long (one row per config and baseline); DuckDB unpivots them itself.

    ``speedups`` is an Arrow table (read through the Arrow C stream: no Python object per value,
    no pyarrow; 1M configs, 10M rows, in about 2 s on 2 idle cores) or columns as lists (each bound as
    one list parameter: 1000 configs in under 10 ms).
    """
    params: list[Any] = [run_id, set_id, mode]
    view = None
    if isinstance(speedups, Mapping):
        unnests = (
            f"unnest(?::{'BIGINT' if name in ('m', 'n', 'k') else 'DOUBLE'}[]) AS {_identifier(name)}"
            for name in speedups
        )
        source = f"(SELECT {', '.join(unnests)})"
        params += speedups.values()
    else:
        view = f"published_{run_id}"
        store.con.register(view, speedups.__arrow_c_stream__())
        source = _identifier(view)
    columns = ", ".join(_identifier(b) for b in baselines)
    try:
        store.con.execute(
            "INSERT INTO main.published_speedups (run_id, set_id, mode, m, n, k, baseline, speedup) "
            "SELECT ?, ?, ?, m, n, k, baseline, speedup "
            f"FROM (UNPIVOT {source} ON {columns} INTO NAME baseline VALUE speedup)",
            params,
        )
    finally:
        if view:
            store.con.unregister(view)


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
