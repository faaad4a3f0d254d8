"""The query API: everything the CLI and the TUI read from the store, as Polars frames."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from cuda_l2_explorer.db.errors import NotFoundError, UsageError
from cuda_l2_explorer.db.shapes import L2_SPAN_FACTOR, Shape
from cuda_l2_explorer.db.store import Store, sql_literal
from cuda_l2_explorer.db.views import BASELINES, BEST, HEADLINE_BASELINES, HEADLINE_METRIC, REPORT_ORDER

if TYPE_CHECKING:  # polars is imported where frames are built: the GPU worker side has none
    import polars as pl

MODES = ("offline", "server")


@dataclass(frozen=True)
class Filters:
    """Resolved filters: each is None (any) or a value known to exist in the store."""

    gpu: str | None = None
    set_ids: tuple[str, ...] | None = None
    mode: str | None = None

    def where(self, alias: str = "") -> tuple[str, list]:
        prefix = f"{alias}." if alias else ""
        clauses, params = ["true"], []
        if self.gpu is not None:
            clauses.append(f"{prefix}gpu = ?")
            params.append(self.gpu)
        if self.set_ids is not None:
            clauses.append(f"{prefix}set_id IN ({', '.join('?' for _ in self.set_ids)})")
            params.extend(self.set_ids)
        if self.mode is not None:
            clauses.append(f"{prefix}mode = ?")
            params.append(self.mode)
        return " AND ".join(clauses), params


def kernel_sets(store: Store) -> pl.DataFrame:
    """Every kernel set with the GPU it was made for (``gpu``), the GPUs, modes and number of
    configs it has data for (a set made for the H100 may be measured on an H200 too)."""
    return store.query(
        """
        WITH data AS (
            SELECT p.set_id, r.gpu, p.mode, p.m, p.n, p.k
            FROM all_published_speedups p JOIN all_runs r USING (run_id)
            UNION SELECT r.set_id, r.gpu, r.mode, x.m, x.n, x.k
            FROM all_measurements x JOIN all_runs r USING (run_id)
        )
        SELECT s.set_id, s.name, s.gpu, s.accumulator, s.origin,
               coalesce(string_agg(DISTINCT d.gpu, ',' ORDER BY d.gpu), '') AS data_gpus,
               coalesce(string_agg(DISTINCT d.mode, ',' ORDER BY d.mode), '') AS modes,
               count(DISTINCT (d.m, d.n, d.k)) FILTER (WHERE d.m IS NOT NULL) AS configs,
               s.bundled
        FROM all_kernel_sets s LEFT JOIN data d USING (set_id)
        GROUP BY ALL ORDER BY s.gpu, s.name, s.accumulator
        """
    )


def resolve_filters(
    store: Store, gpu: str | None = None, set_: str | None = None, mode: str | None = None
) -> Filters:
    """Check each filter against the store; unknown values raise with the known ones listed.

    Plain tuples, no Polars: lookup, the one command that must answer fast, calls it first."""
    store.use_tables("kernel_sets", "runs")
    sets = store.con.execute("SELECT set_id, name FROM all_kernel_sets").fetchall()
    if not sets:
        raise NotFoundError(
            "the store holds no kernel sets yet; import some with "
            "`cuda-l2-explorer import-results --upstream` or a CSV path"
        )
    if mode is not None and mode not in MODES:
        raise UsageError(f"mode must be offline or server (got {mode!r})")
    if gpu is not None:
        gpu = gpu.strip().lower()
        # A set is labelled with the GPU it was made for; measured runs say where they ran.
        pairs = store.con.execute(
            "SELECT set_id, gpu FROM all_kernel_sets UNION SELECT set_id, gpu FROM all_runs "
            "WHERE set_id IS NOT NULL"
        ).fetchall()
        known = sorted({g for _, g in pairs})
        if gpu not in known:
            raise NotFoundError(f"unknown GPU {gpu!r}; the store has {', '.join(known)}")
        with_gpu = {s for s, g in pairs if g == gpu}
        sets = [row for row in sets if row[0] in with_gpu]
    set_ids = None
    if set_ is not None:
        chosen = [set_id for set_id, name in sets if set_ in (set_id, name)]
        if not chosen:
            known = sorted({value for row in sets for value in row})
            where = f" for GPU {gpu}" if gpu else ""
            raise NotFoundError(f"unknown kernel set {set_!r}{where}; known: {', '.join(known)}")
        set_ids = tuple(chosen)
    return Filters(gpu=gpu, set_ids=set_ids, mode=mode)


def speedups(store: Store, filters: Filters, baselines: tuple[str, ...] | None = None) -> pl.DataFrame:
    where, params = filters.where()
    if baselines:
        where += f" AND baseline IN ({', '.join('?' for _ in baselines)})"
        params += list(baselines)
    return store.query(
        f"SELECT * FROM speedups WHERE {where} ORDER BY set_id, gpu, mode, m, n, k, baseline", params
    )


def stats(store: Store, filters: Filters, baselines: tuple[str, ...] | None = None) -> pl.DataFrame:
    """Aggregates per set, GPU, mode, source and baseline (SPEC §7): geomean first.

    ``l2_span_lt2x``: how many of the configs were measured over input sets spanning less than 2x
    the L2 (``l2_span``: cold L2 as SPEC §7 asks it fell short there); NULL for published rows."""
    where, params = _baseline_where(filters, baselines)
    return store.query(
        f"""
        SELECT set_id, gpu, accumulator, mode, source, metric, harness, baseline,
               count(*) AS configs,
               -- summed in one order: a figure at a rounding edge must not change with the scan order
               exp(avg(ln(speedup) ORDER BY speedup)) AS geomean,
               avg(speedup ORDER BY speedup) AS mean,
               avg(CASE WHEN outcome = 'win' THEN 1.0 ELSE 0.0 END) AS win_rate,
               avg(CASE WHEN outcome = 'loss' THEN 1.0 ELSE 0.0 END) AS loss_rate,
               min(speedup) AS min,
               max(speedup) AS max,
               CASE WHEN source = 'measured'
                    THEN count(*) FILTER (WHERE l2.l2_span < {L2_SPAN_FACTOR}) END AS l2_span_lt2x
        FROM speedups LEFT JOIN l2_span l2 USING (run_id, m, n, k) WHERE {where}
        GROUP BY set_id, gpu, accumulator, mode, source, metric, harness, baseline
        ORDER BY set_id, gpu, mode, source, harness, {_REPORT_ORDER_SQL}
        """,
        params,
    )


_REPORT_ORDER_SQL = (
    "CASE baseline " + " ".join(f"WHEN '{b}' THEN {i}" for i, b in enumerate(REPORT_ORDER)) + " END"
)


def _baseline_where(filters: Filters, baselines: tuple[str, ...] | None) -> tuple[str, list]:
    """``filters``' clause, narrowed to ``baselines`` (each checked against the known names)."""
    where, params = filters.where()
    if baselines:
        unknown = [b for b in baselines if b not in REPORT_ORDER]
        if unknown:
            raise UsageError(f"unknown baseline {unknown[0]!r}; known: {', '.join(REPORT_ORDER)}")
        where += f" AND baseline IN ({', '.join('?' for _ in baselines)})"
        params += list(baselines)
    return where, params


def published_vs_measured(
    store: Store, filters: Filters, baselines: tuple[str, ...] = (BEST,)
) -> pl.DataFrame:
    """The ``published_vs_measured`` view (db.views) over ``baselines``, each config with its regime
    on its GPU: per baseline, then config."""
    import polars as pl
    from cuda_l2_explorer.db.shapes import regime

    where, params = _baseline_where(filters, baselines)
    frame = store.query(
        f"SELECT * FROM published_vs_measured WHERE {where} "
        f"ORDER BY set_id, gpu, mode, {_REPORT_ORDER_SQL}, m, n, k",
        params,
    )
    regimes = [regime(Shape(m, n, k), g) for m, n, k, g in frame.select("m", "n", "k", "gpu").iter_rows()]
    return frame.insert_column(frame.columns.index("baseline"), pl.Series("regime", regimes, dtype=pl.String))


def published_without_measurement(store: Store, filters: Filters) -> list[tuple[str, str, str]]:
    """(set_id, gpu, mode) with published speedups that no harness-3 run of the set measured on
    that GPU and mode (what ``published_vs_measured`` leaves out)."""
    where, params = filters.where()
    return store.con.execute(
        f"SELECT DISTINCT set_id, gpu, mode FROM published_long WHERE {where} "
        f"EXCEPT SELECT DISTINCT set_id, gpu, mode FROM published_vs_measured ORDER BY ALL",
        params,
    ).fetchall()


RUN_KINDS = ("published", "bench", "tune")


def runs(store: Store, filters: Filters, kind: str | None = None) -> pl.DataFrame:
    """Every run with its provenance (SPEC §7), newest first: where each number came from.
    ``configs`` counts the configs the run finished (a published import: the file's rows)."""
    if kind is not None and kind not in RUN_KINDS:
        raise UsageError(f"kind must be one of {', '.join(RUN_KINDS)} (got {kind!r})")
    where, params = filters.where("r")
    if kind is not None:
        where += " AND r.kind = ?"
        params.append(kind)
    return store.query(
        f"""
        WITH done AS (
            SELECT run_id, count(*) AS configs FROM all_run_configs GROUP BY run_id
            UNION ALL
            SELECT r.run_id, count(DISTINCT (p.m, p.n, p.k)) FROM all_runs r
            JOIN all_published_speedups p ON p.set_id = r.set_id AND p.mode = r.mode
            WHERE r.kind = 'published' GROUP BY r.run_id
        ),
        metrics AS (
            SELECT run_id, string_agg(DISTINCT metric, ',' ORDER BY metric) AS metrics
            FROM all_measurements GROUP BY run_id
        )
        SELECT r.run_id, r.kind, r.set_id, r.gpu, r.mode, r.status,
               strftime(r.started_at, '%Y-%m-%d %H:%M') AS started,
               strftime(r.finished_at, '%Y-%m-%d %H:%M') AS finished,
               coalesce(d.configs, 0) AS configs,
               json_extract_string(r.params, '$.harness_version') AS harness,
               CASE WHEN r.kind = 'published' THEN 'published' ELSE mt.metrics END AS metrics,
               json_extract_string(r.params, '$.protocol.samples')::INTEGER AS samples,
               CASE WHEN r.mode = 'server'
                    THEN json_extract_string(r.params, '$.protocol.target_qps')::DOUBLE END AS target_qps,
               json_extract_string(r.params, '$.l2') AS l2,
               r.gpu_name, r.sm_count, r.l2_bytes, r.clock_start_mhz, r.clock_end_mhz,
               r.driver, r.cuda, r.cublas, r.torch, r.cutlass, r.tool_version,
               r.command_line AS command, r.source, r.bundled
        FROM all_runs r LEFT JOIN done d USING (run_id) LEFT JOIN metrics mt USING (run_id)
        WHERE {where}
        ORDER BY r.started_at DESC, r.run_id
        """,
        params,
    )


HEADLINE = HEADLINE_BASELINES[1:]  # the config table has its own best-baseline column


def selections(store: Store) -> pl.DataFrame:
    """Every (set, GPU, mode, source) that has data: what the app lets you pick."""
    return store.query(
        "SELECT DISTINCT set_id, gpu, mode, source FROM speedups ORDER BY gpu, set_id, mode, source"
    )


def config_table(store: Store, set_id: str, gpu: str, mode: str) -> pl.DataFrame:
    """One row per config of a set on a GPU in a mode: kernel time, speedups, floor, status, audit.

    Configs whose kernel was incorrect, crashed or timed out are kept (with their status) even
    though they have no speedups.
    """
    import polars as pl
    from cuda_l2_explorer.db.shapes import floor_seconds, regime

    pivots = ", ".join(f"max(speedup) FILTER (WHERE baseline = '{b}') AS \"vs {b}\"" for b in HEADLINE)
    frame = store.query(
        f"""
        WITH sp AS (SELECT * FROM speedups WHERE set_id = ? AND gpu = ? AND mode = ?),
        configs AS (
            SELECT DISTINCT m, n, k FROM sp
            UNION
            SELECT DISTINCT x.m, x.n, x.k FROM all_measurements x JOIN all_runs r USING (run_id)
            WHERE r.set_id = ? AND r.gpu = ? AND r.mode = ? AND x.implementation = 'kernel'
        ),
        kernel AS (
            SELECT x.m, x.n, x.k, arg_max(x.status, r.started_at) AS status,
                   arg_max(x.message, r.started_at) AS message
            FROM all_measurements x JOIN all_runs r USING (run_id)
            WHERE r.set_id = ? AND r.gpu = ? AND r.mode = ? AND x.implementation = 'kernel'
              AND x.metric = 'device_time' AND NOT x.padded
            GROUP BY ALL
        ),
        audit AS (
            SELECT a.m, a.n, a.k, string_agg(DISTINCT a.finding, ',' ORDER BY a.finding) AS audit
            FROM findings a JOIN all_runs r USING (run_id)
            WHERE r.set_id = ? AND r.gpu = ? AND r.mode = ?
            GROUP BY ALL
        ),
        wide AS (
            SELECT m, n, k, max(kernel_s) FILTER (WHERE baseline = '{BEST}') * 1e6 AS kernel_us,
                   max(baseline_s) FILTER (WHERE baseline = '{BEST}') * 1e6 AS best_baseline_us,
                   max(speedup) FILTER (WHERE baseline = '{BEST}') AS speedup,
                   max(outcome) FILTER (WHERE baseline = '{BEST}') AS outcome,
                   {pivots}
            FROM sp GROUP BY m, n, k
        )
        SELECT c.m, c.n, c.k, w.kernel_us, w.best_baseline_us, w.speedup, w.outcome,
               {", ".join(f'w."vs {b}"' for b in HEADLINE)},
               coalesce(kn.status, CASE WHEN w.speedup IS NULL THEN NULL ELSE 'ok' END) AS status,
               coalesce(au.audit, '') AS audit, kn.message
        FROM configs c
        LEFT JOIN wide w USING (m, n, k)
        LEFT JOIN kernel kn USING (m, n, k)
        LEFT JOIN audit au USING (m, n, k)
        ORDER BY c.m, c.n, c.k
        """,
        [set_id, gpu, mode] * 4,
    )
    if frame.height == 0:
        return frame
    shapes = [Shape(m, n, k) for m, n, k in frame.select("m", "n", "k").iter_rows()]
    floors = [floor_seconds(s, gpu) for s in shapes]
    kernel = frame["kernel_us"].to_list()
    return frame.with_columns(
        pl.Series("regime", [regime(s, gpu) for s in shapes]),
        pl.Series(
            "floor_frac",
            [None if f is None or t is None else f * 1e6 / t for f, t in zip(floors, kernel, strict=True)],
            dtype=pl.Float64,
        ),
    )


def samples(store: Store, set_id: str, gpu: str, mode: str, m: int, n: int, k: int) -> pl.DataFrame:
    """Per-sample device times (microseconds) of every implementation at one config."""
    return store.query(
        "SELECT s.implementation, s.padded, s.idx, s.value * 1e6 AS us FROM all_samples s "
        "JOIN all_runs r USING (run_id) WHERE r.set_id = ? AND r.gpu = ? AND r.mode = ? "
        "AND s.m = ? AND s.n = ? AND s.k = ? AND s.metric = 'device_time' ORDER BY ALL",
        [set_id, gpu, mode, m, n, k],
    )


def kernel_detail(store: Store, set_id: str, m: int, n: int, k: int) -> dict:
    """Source, parameters, build log, correctness and audit rows of one kernel (when stored)."""
    kernel = store.query(
        "SELECT * EXCLUDE (bundled) FROM all_kernels WHERE set_id = ? AND m = ? AND n = ? AND k = ?",
        [set_id, m, n, k],
    )
    # sm_clock_mhz: the SM clock as the config's timing ended (the harness's worker reads it),
    # which power state the figure was taken in: large shapes run at the power limit, below boost.
    measured = store.query(
        "SELECT r.gpu, r.mode, x.padded, x.status, x.rel_error, x.error_ratio, x.median * 1e6 AS median_us, "
        "TRY_CAST(json_extract_string(c.details, '$.sm_clock_after_timing_mhz') AS INTEGER) AS sm_clock_mhz, "
        "x.message FROM all_measurements x JOIN all_runs r USING (run_id) "
        "LEFT JOIN all_run_configs c ON c.run_id = x.run_id AND c.m = x.m AND c.n = x.n AND c.k = x.k "
        "WHERE r.set_id = ? AND x.m = ? AND x.n = ? AND x.k = ? AND x.implementation = 'kernel' "
        "AND x.metric = 'device_time' ORDER BY r.gpu, r.mode, x.padded",
        [set_id, m, n, k],
    )
    audit = store.query(
        "SELECT DISTINCT r.gpu, r.mode, a.finding, a.detail FROM findings a JOIN all_runs r "
        "USING (run_id) WHERE r.set_id = ? AND a.m = ? AND a.n = ? AND a.k = ? ORDER BY ALL",
        [set_id, m, n, k],
    )
    return {
        "kernel": kernel.to_dicts()[0] if kernel.height else None,
        "measurements": measured,
        "audit": audit,
        "search_log": search_log(store, m, n, k),
    }


def search_log(store: Store, m: int, n: int, k: int) -> pl.DataFrame:
    """Every candidate the kernel search measured for this config (newest run first; within a
    run the finalists first, fastest first), cuBLASLt's heuristic choice among them."""
    return store.query(
        "SELECT r.gpu, r.started_at::DATE AS date, s.stage, s.candidate, s.status, s.chosen, "
        "s.median * 1e6 AS median_us, s.p10 * 1e6 AS p10_us, s.p90 * 1e6 AS p90_us, "
        "s.predicted_us, s.rel_error, s.message FROM all_search_log s JOIN all_runs r USING (run_id) "
        "WHERE s.m = ? AND s.n = ? AND s.k = ? "
        "ORDER BY r.started_at DESC, s.stage DESC, s.median NULLS LAST, s.candidate",
        [m, n, k],
    )


def stats_by_regime(store: Store, filters: Filters, baseline: str = BEST) -> pl.DataFrame:
    """Aggregates over ``baseline`` per set, GPU, mode, source and regime (tiny, skinny, small-K,
    large: db.shapes.regime on the set's GPU), geomean first, as ``stats`` does per baseline."""
    import polars as pl
    from cuda_l2_explorer.db.shapes import REGIMES, regime

    if baseline not in REPORT_ORDER:
        raise UsageError(f"unknown baseline {baseline!r}; known: {', '.join(REPORT_ORDER)}")
    where, params = filters.where()
    frame = store.query(
        f"SELECT set_id, gpu, mode, source, metric, harness, m, n, k, speedup, outcome, "
        f"l2.l2_span < {L2_SPAN_FACTOR} AS l2_short "
        f"FROM speedups LEFT JOIN l2_span l2 USING (run_id, m, n, k) WHERE {where} AND baseline = ?",
        [*params, baseline],
    )
    if frame.height == 0:
        return frame
    regimes = [regime(Shape(m, n, k), g) for m, n, k, g in frame.select("m", "n", "k", "gpu").iter_rows()]
    order = {r: i for i, r in enumerate(REGIMES)}
    return (
        frame.with_columns(pl.Series("regime", regimes))
        .group_by("set_id", "gpu", "mode", "source", "metric", "harness", "regime")
        .agg(
            pl.len().alias("configs"),
            pl.col("speedup").log().mean().exp().alias("geomean"),
            pl.col("speedup").mean().alias("mean"),
            (pl.col("outcome") == "win").mean().alias("win_rate"),
            (pl.col("outcome") == "loss").mean().alias("loss_rate"),
            pl.col("speedup").min().alias("min"),
            pl.col("speedup").max().alias("max"),
            pl.col("l2_short").sum().alias("l2_span_lt2x"),
        )
        .with_columns(
            pl.col("regime").replace_strict(order, return_dtype=pl.Int64).alias("_order"),
            pl.when(pl.col("source") == "measured").then(pl.col("l2_span_lt2x")).alias("l2_span_lt2x"),
        )
        .sort("set_id", "gpu", "mode", "source", "_order")
        .drop("_order")
    )


# ------------------------------------------------------------------------------------------------
# Harness runs (importer.harness.runner), published imports (importer.published), tuner search
# (tuner.search)
# ------------------------------------------------------------------------------------------------


def done_configs(store: Store, run_id: str) -> set[Shape]:
    """The configs of a run that are finished (have a run_configs row)."""
    rows = store.con.execute("SELECT m, n, k FROM main.run_configs WHERE run_id = ?", [run_id]).fetchall()
    return {Shape(*r) for r in rows}


def run_gpu(store: Store, run_id: str) -> str | None:
    """The GPU label a run measures on (a resumed run continues on that GPU type)."""
    row = store.con.execute("SELECT gpu FROM main.runs WHERE run_id = ?", [run_id]).fetchone()
    return row[0] if row else None


def configs_with_status(store: Store, run_id: str, statuses: Sequence[str]) -> list[Shape]:
    """The configs of a run that ended with one of ``statuses``, in shape order."""
    marks = ", ".join("?" for _ in statuses)
    rows = store.con.execute(
        f"SELECT m, n, k FROM main.run_configs WHERE run_id = ? AND status IN ({marks}) ORDER BY m, n, k",
        [run_id, *statuses],
    ).fetchall()
    return [Shape(*r) for r in rows]


def autotune_choices(
    store: Store, gpu: str, accumulator: str, cublas: str | None, l2: str
) -> dict[Shape, dict[str, int]]:
    """Per config, the cuBLASLt auto-tuning algorithm (heuristic index per layout) that the latest
    harness-3 offline run on this GPU chose, under the same cuBLAS, accumulator and L2 state:
    server mode keeps it instead of tuning again (the index names the same algorithm only there)."""
    rows = store.con.execute(
        """SELECT c.m, c.n, c.k,
                  TRY_CAST(json_extract_string(c.details, '$.autotune.nn.chosen') AS INTEGER),
                  TRY_CAST(json_extract_string(c.details, '$.autotune.tn.chosen') AS INTEGER)
           FROM main.run_configs c JOIN main.runs r USING (run_id)
           WHERE r.kind = 'bench' AND r.mode = 'offline' AND r.gpu = ? AND c.status = 'done'
             AND r.cublas IS NOT DISTINCT FROM ?
             AND json_extract_string(r.params, '$.harness_version') = '3'
             AND json_extract_string(r.params, '$.protocol.timing') = 'graph'
             AND json_extract_string(r.params, '$.accumulator') = ?
             AND json_extract_string(r.params, '$.l2') = ?
           ORDER BY r.started_at, c.finished_at""",
        [gpu, cublas, accumulator, l2],
    ).fetchall()
    choices: dict[Shape, dict[str, int]] = {}
    for m, n, k, nn, tn in rows:  # later runs overwrite earlier ones
        chosen = {layout: idx for layout, idx in (("nn", nn), ("tn", tn)) if idx is not None}
        if chosen:
            choices[Shape(m, n, k)] = chosen
    return choices


def _kernel_identity(entry: Mapping[str, Any] | None) -> Any:
    """A run's kernel entry with its library named by the file alone: a library's file name is its
    content hash (tuner/build.py), the folder it was built or unpacked in says nothing."""
    library = (entry or {}).get("library")
    if not library or "path" not in library:
        return entry
    return {**entry, "library": {**library, "path": PurePath(library["path"]).name}}


def offline_audits(
    store: Store, gpu: str, set_id: str | None, kernels: Mapping[str, Any], codes: Sequence[str]
) -> dict[Shape, dict[str, Any]]:
    """Per config, the launcher audit of the latest harness-3 offline run on this GPU that ran the
    very same kernel (``kernels``: the run params' entry per config, the built module's or the
    library's content-hashed path, kernel and variant) and measured it correctly: {"run_id",
    "findings": [[code, detail], ...]} with the findings among ``codes`` (none: a clean launcher).
    Server mode keeps it instead of auditing again: the audit observes the launcher, not the mode."""
    runs = store.con.execute(
        """SELECT run_id, params FROM main.runs
           WHERE kind = 'bench' AND mode = 'offline' AND gpu = ? AND set_id IS NOT DISTINCT FROM ?
             AND json_extract_string(params, '$.harness_version') = '3'
           ORDER BY started_at""",
        [gpu, set_id],
    ).fetchall()
    audits: dict[Shape, dict[str, Any]] = {}
    for run_id, params in runs:  # later runs overwrite earlier ones
        ran = json.loads(params).get("kernels") or {}
        same = {
            key
            for key, entry in kernels.items()
            if entry and _kernel_identity(ran.get(key)) == _kernel_identity(entry)
        }
        if not same:
            continue
        measured = store.con.execute(
            """SELECT DISTINCT m, n, k FROM main.measurements
               WHERE run_id = ? AND implementation = 'kernel' AND status = 'ok'""",
            [run_id],
        ).fetchall()
        found: dict[Shape, list[list[str]]] = {}
        for m, n, k, code, detail in store.con.execute(
            f"""SELECT m, n, k, finding, detail FROM main.audit_findings
                WHERE run_id = ? AND implementation = 'kernel'
                  AND finding IN ({", ".join("?" for _ in codes)})""",
            [run_id, *codes],
        ).fetchall():
            found.setdefault(Shape(m, n, k), []).append([code, detail])
        for m, n, k in measured:
            shape = Shape(m, n, k)
            if str(shape) in same:
                audits[shape] = {"run_id": run_id, "findings": sorted(found.get(shape, []))}
    return audits


def resumable_run(
    store: Store, run_id: str | None, set_id: str | None, mode: str, kind: str
) -> tuple[str, str] | None:
    """(run_id, params JSON) of the run ``run_id`` of this kind, or, without an id, of the latest
    unfinished run of this kind, set and mode; None when there is none."""
    if run_id:
        row = store.con.execute(
            "SELECT run_id, params FROM main.runs WHERE run_id = ? AND kind = ?", [run_id, kind]
        ).fetchone()
    else:
        row = store.con.execute(
            "SELECT run_id, params FROM main.runs WHERE kind = ? AND status <> 'complete' "
            "AND set_id IS NOT DISTINCT FROM ? AND mode = ? ORDER BY started_at DESC LIMIT 1",
            [kind, set_id, mode],
        ).fetchone()
    return (row[0], row[1]) if row else None


def published_runs(store: Store, set_id: str, mode: str) -> list[tuple[str, str]]:
    """(run_id, source_sha256) of the published import of (set, mode), if any (tuples: an import
    does not load Polars for this)."""
    return store.con.execute(
        "SELECT run_id, source_sha256 FROM main.runs WHERE kind = 'published' AND set_id = ? AND mode = ?",
        [set_id, mode],
    ).fetchall()


def chosen_search_rows(store: Store, run_ids: Sequence[str]) -> list[tuple]:
    """The kept candidate of every config of the search runs ``run_ids``, oldest run first:
    (m, n, k, kernel, params, variant, median, p10, p90, run_id, gpu, gpu_name, started_at,
    run params, candidates measured, best reference, its median)."""
    marks = ", ".join("?" for _ in run_ids)
    return store.con.execute(
        f"""
        SELECT s.m, s.n, s.k, s.kernel, s.params, s.variant, s.median, s.p10, s.p90, s.run_id,
               r.gpu, r.gpu_name, r.started_at, r.params,
               (SELECT count(*) FROM main.search_log c WHERE c.run_id = s.run_id AND c.m = s.m
                  AND c.n = s.n AND c.k = s.k AND c.stage = 1) AS measured,
               (SELECT arg_min(b.candidate, {{'median': b.median, 'name': b.candidate}})
                  FROM main.search_log b WHERE b.run_id = s.run_id
                  AND b.m = s.m AND b.n = s.n AND b.k = s.k AND b.family = 'baseline'
                  AND b.status = 'ok') AS ref_name,
               (SELECT min(b.median) FROM main.search_log b WHERE b.run_id = s.run_id
                  AND b.m = s.m AND b.n = s.n AND b.k = s.k AND b.family = 'baseline'
                  AND b.status = 'ok') AS ref_median
        FROM main.search_log s JOIN main.runs r USING (run_id)
        WHERE s.chosen AND s.run_id IN ({marks})
        ORDER BY r.started_at
        """,
        list(run_ids),
    ).fetchall()


# ------------------------------------------------------------------------------------------------
# Harness validation (benchmarks/harness/v3/table.py)
# ------------------------------------------------------------------------------------------------


def measured_medians(store: Store, metrics: Sequence[str]) -> list[tuple]:
    """(run_id, m, n, k, implementation, padded, metric, median, p10, p90, status) of every
    measurement of the given metrics in this store's own runs."""
    marks = ", ".join("?" for _ in metrics)
    return store.con.execute(
        f"""
        SELECT run_id, m, n, k, implementation, padded, metric, median, p10, p90, status
        FROM main.measurements WHERE metric IN ({marks}) ORDER BY ALL
        """,
        list(metrics),
    ).fetchall()


def audit_rows(store: Store) -> list[tuple]:
    """(run_id, m, n, k, implementation, finding, detail) of this store's own runs."""
    return store.con.execute(
        "SELECT run_id, m, n, k, implementation, finding, detail FROM main.audit_findings ORDER BY ALL"
    ).fetchall()


# ------------------------------------------------------------------------------------------------
# Engine (engine.bench, engine.library, engine.export, cli)
# ------------------------------------------------------------------------------------------------


def kernel_set_count(store: Store) -> int:
    return store.scalar("SELECT count(*) FROM all_kernel_sets")


def set_folders(store: Store, set_: str, limit: int = 2) -> list[tuple[str, str]]:
    """(name, folder) of the stored sets whose id or name is ``set_`` (sets with a folder only)."""
    rows = store.con.execute(
        "SELECT name, root FROM all_kernel_sets WHERE (set_id = ? OR name = ?) AND root IS NOT NULL LIMIT ?",
        [set_, set_, limit],
    ).fetchall()
    return [(row[0], row[1]) for row in rows]


def library_kernel(store: Store, set_id: str, shape: Shape) -> dict:
    """A stored kernel of our library: its parameters (JSON), its set's device label and accumulator,
    and the harness version of the newest run of the set (``harness``, None without runs)."""
    return store.query(
        "SELECT k.params, s.gpu AS device, s.accumulator, r.harness FROM all_kernels k "
        "JOIN all_kernel_sets s USING (set_id) LEFT JOIN (SELECT set_id, max(harness) AS harness "
        "FROM run_harness GROUP BY ALL) r USING (set_id) "
        "WHERE k.set_id = ? AND k.m = ? AND k.n = ? AND k.k = ?",
        [set_id, shape.m, shape.n, shape.k],
    ).to_dicts()[0]


def source_kernel(store: Store, set_id: str, shape: Shape) -> dict:
    """A stored SPEC section 4 kernel (path, source, padding tiles, runtime_shapes) with its set's
    device label and accumulator."""
    return store.query(
        "SELECT k.path, k.source, k.pad_bm, k.pad_bn, k.pad_bk, k.runtime_shapes, s.gpu AS device, "
        "s.accumulator FROM all_kernels k JOIN all_kernel_sets s USING (set_id) "
        "WHERE k.set_id = ? AND k.m = ? AND k.n = ? AND k.k = ?",
        [set_id, shape.m, shape.n, shape.k],
    ).to_dicts()[0]


def config_speedups(
    store: Store, set_id: str, gpu: str, mode: str, source: str, shape: Shape, run_id: str | None
) -> pl.DataFrame:
    """(baseline, speedup, baseline_s) of one config of a set, from one run (None: published)."""
    return store.query(
        "SELECT baseline, speedup, baseline_s FROM speedups WHERE set_id = ? AND gpu = ? AND mode = ? "
        "AND source = ? AND m = ? AND n = ? AND k = ? AND run_id IS NOT DISTINCT FROM ?",
        [set_id, gpu, mode, source, shape.m, shape.n, shape.k, run_id],
    )


def run_gpu_name(store: Store, run_id: str) -> str | None:
    return store.scalar("SELECT gpu_name FROM all_runs WHERE run_id = ?", [run_id])


# ------------------------------------------------------------------------------------------------
# Evidence reports (benchmarks/*.py)
# ------------------------------------------------------------------------------------------------


def bench_runs_with_provenance(store: Store) -> pl.DataFrame:
    """Every benchmark run with its device, software and command, oldest first."""
    return store.query(
        "SELECT run_id, set_id, mode, status, gpu, gpu_name, sm_count, l2_bytes, driver, cuda, cublas, "
        "torch, clock_start_mhz, clock_end_mhz, started_at, finished_at, command_line, params "
        "FROM all_runs WHERE kind = 'bench' ORDER BY started_at"
    )


def run_config_outcomes(store: Store, run_id: str) -> pl.DataFrame:
    """Configs of one run per status, with the worker seconds they took."""
    return store.query(
        "SELECT status, count(*) AS configs, sum(seconds) AS worker_seconds FROM all_run_configs "
        "WHERE run_id = ? GROUP BY status ORDER BY status",
        [run_id],
    )


def measured_speedups_over_best(store: Store) -> pl.DataFrame:
    """Measured speedups of every set over the best of the seven baselines, per config."""
    return store.query(
        "SELECT mode, m, n, k, baseline, speedup FROM speedups WHERE source = 'measured' AND baseline = ?",
        [BEST],
    )


def device_time_rows_per_implementation(store: Store) -> pl.DataFrame:
    """Unpadded device-time rows per mode and implementation: count, median (us), rows not ok."""
    return store.query(
        "SELECT r.mode, x.implementation, count(*) AS configs, median(x.median) * 1e6 AS median_us, "
        "sum(CASE WHEN x.status <> 'ok' THEN 1 ELSE 0 END) AS not_ok FROM all_measurements x "
        "JOIN all_runs r USING (run_id) WHERE x.metric = 'device_time' AND NOT x.padded "
        "GROUP BY ALL ORDER BY r.mode, x.implementation"
    )


def audit_finding_counts(store: Store) -> pl.DataFrame:
    """Each audit finding with the number of configs it was found for and one example detail."""
    return store.query(
        "SELECT finding, count(DISTINCT (run_id, m, n, k)) AS configs, any_value(detail) AS example "
        "FROM findings GROUP BY finding ORDER BY finding"
    )


def device_time_rows_not_ok(store: Store) -> pl.DataFrame:
    """Device-time rows whose status is not 'ok' (so left out of speedups), message cut to 120."""
    return store.query(
        "SELECT r.mode, x.m, x.n, x.k, x.implementation, x.status, x.rel_error, x.error_ratio, "
        "left(coalesce(x.message, ''), 120) AS message "
        "FROM all_measurements x JOIN all_runs r USING (run_id) "
        "WHERE x.metric = 'device_time' AND x.status NOT IN ('ok') ORDER BY ALL"
    )


def our_set_ids(store: Store) -> list[str]:
    """Set ids of our own kernel sets (origin 'ours'), sorted."""
    frame = store.query("SELECT set_id FROM all_kernel_sets WHERE origin = 'ours' ORDER BY set_id")
    return frame["set_id"].to_list() if frame.height else []


def newest_set_of_ours(store: Store) -> str | None:
    """The most recently created set of ours, or None."""
    return store.scalar(
        "SELECT set_id FROM all_kernel_sets WHERE origin = 'ours' ORDER BY created_at DESC LIMIT 1"
    )


def bench_run_headlines(store: Store, set_id: str) -> pl.DataFrame:
    """Benchmark runs of one set: device name, mode, date, harness version, command; oldest first."""
    return store.query(
        "SELECT gpu_name, mode, started_at::DATE AS date, "
        "json_extract_string(params, '$.harness_version') AS harness, command_line FROM all_runs "
        "WHERE kind = 'bench' AND set_id = ? ORDER BY started_at",
        [set_id],
    )


def measured_speedups_of_ours_over_best(store: Store) -> pl.DataFrame:
    """Measured speedups of our sets over the best of the seven baselines, per set, GPU, mode, config."""
    return store.query(
        "SELECT s.set_id, s.gpu, s.mode, s.m, s.n, s.k, s.speedup FROM speedups s JOIN all_kernel_sets k "
        "USING (set_id) WHERE k.origin = 'ours' AND s.source = 'measured' AND s.baseline = ? "
        "ORDER BY ALL",
        [BEST],
    )


def runs_of_set_and_tunes(store: Store, set_id: str) -> pl.DataFrame:
    """Benchmark runs of one set and every tune run, command lines cut to 140 characters."""
    return store.query(
        "SELECT run_id, kind, mode, status, gpu_name, driver, cuda, cublas, torch, started_at, finished_at, "
        "left(command_line, 140) || CASE WHEN length(command_line) > 140 THEN ' ...' ELSE '' END "
        "AS command_line FROM all_runs WHERE (kind = 'bench' AND set_id = ?) OR kind = 'tune' "
        "ORDER BY started_at",
        [set_id],
    )


def measured_speedups_of_set(store: Store, set_id: str, baseline: str) -> pl.DataFrame:
    """Measured speedups of one set over ``baseline`` per config, with both times (s)."""
    return store.query(
        "SELECT s.gpu, s.mode, s.m, s.n, s.k, s.speedup, s.outcome, s.kernel_s, s.baseline_s "
        "FROM speedups s WHERE s.set_id = ? AND s.source = 'measured' AND s.baseline = ?",
        [set_id, baseline],
    )


def kernel_names_of_set(store: Store, set_id: str) -> pl.DataFrame:
    """Per config of a set of ours: the kernel name and variant its params record."""
    return store.query(
        "SELECT m, n, k, json_extract_string(params, '$.kernel_name') AS kernel, "
        "json_extract_string(params, '$.variant') AS variant FROM all_kernels WHERE set_id = ?",
        [set_id],
    )


def host_latency_kernel_and_torch(store: Store, set_id: str) -> pl.DataFrame:
    """Host latency medians (s) of a set's kernel and torch.matmul, per mode and config, ok rows,
    from the newest bench run of each mode that measured the config."""
    return store.query(
        "SELECT r.mode, x.m, x.n, x.k, x.implementation, "
        "arg_max(x.median, r.started_at) AS median FROM all_measurements x "
        "JOIN all_runs r USING (run_id) WHERE r.set_id = ? AND x.metric = 'host_latency' "
        "AND x.status = 'ok' AND NOT x.padded AND x.implementation IN ('kernel', 'torch.matmul') "
        "GROUP BY ALL",
        [set_id],
    )


def search_runs_summary(store: Store) -> pl.DataFrame:
    """Per tune run: configs, candidates measured per stage, seconds, and the geomean of the kept
    kernel against the fastest reference the search measured beside it."""
    return store.query(
        """
        WITH per_config AS (
            SELECT run_id, m, n, k,
                   min(median) FILTER (WHERE family = 'baseline' AND status = 'ok')
                     / min(median) FILTER (WHERE chosen) AS vs_reference
            FROM all_search_log GROUP BY ALL
        )
        SELECT r.run_id, r.started_at, r.gpu_name, count(DISTINCT (s.m, s.n, s.k)) AS configs,
               count(*) FILTER (WHERE s.stage = 1) AS stage1_measured,
               count(*) FILTER (WHERE s.stage = 2 AND s.family <> 'baseline') AS stage2_measured,
               (SELECT sum(seconds) FROM all_run_configs c WHERE c.run_id = r.run_id) AS seconds,
               (SELECT exp(avg(ln(vs_reference))) FROM per_config p WHERE p.run_id = r.run_id)
                   AS geomean_vs_reference
        FROM all_search_log s JOIN all_runs r USING (run_id) GROUP BY ALL ORDER BY r.started_at
        """
    )


def family_counts_of_set(store: Store, set_id: str) -> pl.DataFrame:
    """Configs of a set per kernel family."""
    return store.query(
        "SELECT family, count(*) AS configs FROM all_kernels WHERE set_id = ? GROUP BY ALL ORDER BY ALL",
        [set_id],
    )


def offline_device_times_side_by_side(
    labelled_stores: Sequence[tuple[str, Path]],
) -> list[tuple]:
    """(m, n, k, implementation, us per store...) of the first store's configs, read from each store
    file (opened read-only, as it is): median offline device time per call of ok rows, in us."""
    import duckdb

    con = duckdb.connect()
    try:
        for i, (_, path) in enumerate(labelled_stores):
            con.execute(f"ATTACH {sql_literal(str(path))} AS s{i} (READ_ONLY)")
        parts = [
            f"SELECT {sql_literal(label)} AS src, m.m, m.n, m.k, implementation, median * 1e6 AS us "
            f"FROM s{i}.measurements m JOIN s{i}.runs r USING (run_id) "
            "WHERE metric = 'device_time' AND m.status = 'ok' AND r.mode = 'offline' "
            "AND (m.m, m.n, m.k) IN (SELECT (m, n, k) FROM s0.measurements)"
            for i, (label, _) in enumerate(labelled_stores)
        ]
        labels = ", ".join(sql_literal(label) for label, _ in labelled_stores)
        return con.execute(
            f"PIVOT ({' UNION ALL '.join(parts)}) ON src IN ({labels}) "
            "USING min(us) GROUP BY m, n, k, implementation ORDER BY m, n, k, implementation"
        ).fetchall()
    finally:
        con.close()


# ------------------------------------------------------------------------------------------------
# Manifests (tuner.manifest.with_bench_evidence)
# ------------------------------------------------------------------------------------------------


def kernel_figures_of_run(store: Store, set_id: str, run_id: str) -> list[tuple]:
    """Per config of bench run ``run_id`` of ``set_id``: (m, n, k, kernel median, p10, p90, best
    baseline, its median, harness version)."""
    return store.con.execute(
        """
        SELECT t.m, t.n, t.k, t.median, t.p10, t.p90, b.baseline, b.median, r.harness
        FROM measured_times t
        JOIN run_harness r USING (run_id)
        LEFT JOIN (
            SELECT run_id, m, n, k, arg_min(baseline, {'median': median, 'name': baseline}) AS baseline,
                   min(median) AS median
            FROM measured_baselines
            WHERE baseline NOT LIKE '%-max' AND baseline <> 'best-baseline'
            GROUP BY ALL
        ) b ON b.run_id = t.run_id AND b.m = t.m AND b.n = t.n AND b.k = t.k
        WHERE t.run_id = ? AND t.set_id = ? AND t.implementation = 'kernel' AND NOT t.padded
        """,
        [run_id, set_id],
    ).fetchall()


def config_details(store: Store) -> dict[tuple[int, int, int], dict]:
    """{(m, n, k): the details JSON a harness worker reported} of this store's own runs."""
    import json

    rows = store.con.execute("SELECT m, n, k, details FROM main.run_configs").fetchall()
    return {(m, n, k): json.loads(d) if d else {} for m, n, k, d in rows}


# ------------------------------------------------------------------------------------------------
# Lookup (issue 16: engine.lookup, engine.export.plan)
# ------------------------------------------------------------------------------------------------

# What lookup reads: a store opened with lazy views makes only these (Store.use_tables).
LOOKUP_TABLES = ("kernel_sets", "runs", "kernels", "measurements", "published_speedups")
LOOKUP_COLUMNS = (
    "set_id", "set_name", "accumulator", "gpu", "mode", "source", "m", "n", "k", "runtime_shapes",
    "family", "tile_m", "has_source", "library", "speedup_best", "outcome", "best_baseline",
    "kernel_s", "kernel_p10_s", "kernel_p90_s", "kernel_padded_s", "kernel_padded_p10_s",
    "kernel_padded_p90_s", "best_baseline_s", "baseline_p10_s", "baseline_p90_s", "run_id",
    "run_source", "run_date",
)  # fmt: skip


def lookup_rows(
    store: Store, filters: Filters, accumulator: str | None = None, covering: Shape | None = None
) -> list[dict]:
    """One row per (set, GPU, mode, source, config, run) with what lookup ranks on, as plain dicts
    (no Polars: lookup must answer in a fraction of a second).

    ``speedup_best`` / ``outcome`` are over the best of the seven baselines there and
    ``best_baseline`` names it (the fastest; ties go to the first name); measured rows also carry
    the kernel's time (unpadded and, when measured, with the padding copy) and the best
    baseline's, each with its p10 and p90 (the run-to-run spread). The kernel's family, its tile_m,
    and whether its source (an imported SPEC section 4 file) or parameters (ours) are stored say
    what can run a shape and what export can write out. ``covering``: only the configs that cover
    that shape and the sets whose kernels take runtime shapes (what can run it; a fraction of the
    rows for most shapes).

    The figures are those of the ``speedups`` view (same metric per mode, same harness and status
    rules), computed here from the tables in one pass over each: the view builds every baseline's
    ratio and -max pair first, three times the work, and lookup needs only the best.
    """
    store.use_tables(*LOOKUP_TABLES)
    scope, scope_params = "true", []
    if covering is not None:
        # The runtime-shape sets as values: DuckDB filters a literal list inside the views, a
        # subquery only after them (twice the time).
        sql = "SELECT DISTINCT set_id FROM all_kernels WHERE runtime_shapes"
        runtime = [r[0] for r in store.con.execute(sql).fetchall()]
        marks = ", ".join("?" for _ in runtime) or "NULL"
        scope = f"((m >= ? AND n >= ? AND k >= ?) OR set_id IN ({marks}))"
        scope_params = [*covering.astuple(), *runtime]
    sets_where, sets_params = ("accumulator = ?", [accumulator]) if accumulator is not None else ("true", [])
    runs_where, runs_params = filters.where("r")
    published_where, published_params = Filters(None, filters.set_ids, filters.mode).where("p")
    gpu_where, gpu_params = ("s.gpu = ?", [filters.gpu]) if filters.gpu is not None else ("true", [])
    metric = " ".join(f"WHEN '{mode}' THEN '{name}'" for mode, name in HEADLINE_METRIC.items())
    seven = ", ".join(f"'{b}'" for b in BASELINES)
    fastest = "{'median': median, 'name': implementation}"  # the fastest baseline; ties: by name
    baseline = "implementation <> 'kernel' AND NOT padded"
    rows = store.con.execute(
        f"""
        WITH sets AS (SELECT set_id, name, accumulator, gpu FROM all_kernel_sets WHERE {sets_where}),
        runs AS (
            SELECT run_id, set_id, gpu, mode FROM all_runs r
            WHERE kind IN ('bench', 'tune') AND {runs_where}
              -- harness 1/2 rows (issue-bound time) in an older store read without migrating
              AND coalesce(json_extract_string(params, '$.harness_version'), '') NOT IN ('1', '2')
        ),
        measured AS (
            SELECT r.set_id, r.gpu, r.mode, x.run_id, x.m, x.n, x.k,
                   max(median) FILTER (WHERE implementation = 'kernel' AND NOT padded) AS kernel_s,
                   max(p10) FILTER (WHERE implementation = 'kernel' AND NOT padded) AS kernel_p10_s,
                   max(p90) FILTER (WHERE implementation = 'kernel' AND NOT padded) AS kernel_p90_s,
                   max(median) FILTER (WHERE implementation = 'kernel' AND padded) AS kernel_padded_s,
                   max(p10) FILTER (WHERE implementation = 'kernel' AND padded) AS kernel_padded_p10_s,
                   max(p90) FILTER (WHERE implementation = 'kernel' AND padded) AS kernel_padded_p90_s,
                   arg_min(implementation, {fastest}) FILTER (WHERE {baseline}) AS best_baseline,
                   min(median) FILTER (WHERE {baseline}) AS best_baseline_s,
                   arg_min(p10, {fastest}) FILTER (WHERE {baseline}) AS baseline_p10_s,
                   arg_min(p90, {fastest}) FILTER (WHERE {baseline}) AS baseline_p90_s
            FROM all_measurements x JOIN runs r USING (run_id)
            WHERE x.metric = CASE r.mode {metric} END AND x.status = 'ok'
              AND x.implementation IN ('kernel', {seven}) AND {scope}
            GROUP BY ALL
        ),
        published AS (
            SELECT p.set_id, s.gpu, p.mode, p.m, p.n, p.k, any_value(p.run_id) AS run_id,
                   min(p.speedup) AS speedup_best,
                   arg_min(p.baseline, {{'speedup': p.speedup, 'name': p.baseline}}) AS best_baseline
            FROM all_published_speedups p JOIN sets s USING (set_id)
            WHERE p.baseline IN ({seven}) AND {published_where} AND {gpu_where} AND {scope}
            GROUP BY ALL
        ),
        per_config AS (
            SELECT x.set_id, x.gpu, x.mode, 'measured' AS source, x.m, x.n, x.k,
                   best_baseline_s / kernel_s AS speedup_best,
                   CASE WHEN kernel_p90_s < baseline_p10_s THEN 'win'
                        WHEN kernel_p10_s > baseline_p90_s THEN 'loss' ELSE 'same' END AS outcome,
                   best_baseline, kernel_s, kernel_p10_s, kernel_p90_s, kernel_padded_s,
                   kernel_padded_p10_s, kernel_padded_p90_s, best_baseline_s, baseline_p10_s,
                   baseline_p90_s, run_id
            FROM measured x WHERE kernel_s IS NOT NULL AND best_baseline_s IS NOT NULL
            UNION ALL
            SELECT set_id, gpu, mode, 'published', m, n, k, speedup_best,
                   CASE WHEN speedup_best > 1 THEN 'win' WHEN speedup_best < 1 THEN 'loss' ELSE 'same' END,
                   best_baseline, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, run_id
            FROM published
        )
        SELECT c.set_id, s.name, s.accumulator, c.gpu, c.mode, c.source, c.m, c.n, c.k,
               coalesce(kn.runtime_shapes, false), kn.family,
               TRY_CAST(json_extract_string(kn.params, '$.kernel.tile_m') AS INTEGER),
               kn.source IS NOT NULL, coalesce(json_exists(kn.params, '$.kernel'), false),
               c.speedup_best, c.outcome, c.best_baseline, c.kernel_s, c.kernel_p10_s, c.kernel_p90_s,
               c.kernel_padded_s, c.kernel_padded_p10_s, c.kernel_padded_p90_s, c.best_baseline_s,
               c.baseline_p10_s, c.baseline_p90_s, c.run_id
        FROM per_config c JOIN sets s USING (set_id)
        LEFT JOIN all_kernels kn ON kn.set_id = c.set_id AND kn.m = c.m AND kn.n = c.n AND kn.k = c.k
        """,
        [*sets_params, *runs_params, *scope_params, *published_params, *gpu_params, *scope_params],
    ).fetchall()
    # Joining all_runs above costs more than the rest of the query (its shadowing predicate):
    # the few runs are read on their own.
    runs = {
        r[0]: r[1:] for r in store.con.execute("SELECT run_id, source, started_at FROM all_runs").fetchall()
    }
    return [dict(zip(LOOKUP_COLUMNS, (*row, *runs.get(row[-1], (None, None))), strict=True)) for row in rows]


def set_accumulators(store: Store, gpu: str | None = None) -> dict[str, str]:
    """{set_id: accumulator} of every kernel set (made for ``gpu`` or measured on it, when given)."""
    store.use_tables("kernel_sets", "runs")
    if gpu is None:
        return dict(store.con.execute("SELECT set_id, accumulator FROM all_kernel_sets").fetchall())
    return dict(
        store.con.execute(
            "SELECT set_id, accumulator FROM all_kernel_sets WHERE gpu = ? OR set_id IN "
            "(SELECT set_id FROM all_runs WHERE gpu = ?)",
            [gpu, gpu],
        ).fetchall()
    )


def tuned_set_ids(store: Store) -> set[str]:
    """The user's own sets of our kernels (``tune`` makes them), the bundled one left out."""
    store.use_tables("kernel_sets")
    rows = store.con.execute(
        "SELECT set_id FROM all_kernel_sets WHERE origin = 'ours' AND NOT bundled"
    ).fetchall()
    return {r[0] for r in rows}
