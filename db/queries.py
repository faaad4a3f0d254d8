"""The query API: everything the CLI and the TUI read from the store, as Polars frames."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from db.errors import NotFoundError, UsageError
from db.store import Store
from db.views import BEST, REPORT_ORDER

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
    """Every kernel set with the GPUs, modes and number of configs it has data for."""
    return store.query(
        """
        WITH data AS (
            SELECT set_id, mode, m, n, k FROM all_published_speedups
            UNION SELECT r.set_id, r.mode, x.m, x.n, x.k
            FROM all_measurements x JOIN all_runs r USING (run_id)
        )
        SELECT s.set_id, s.name, s.gpu, s.accumulator, s.origin,
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
    """Check each filter against the store; unknown values raise with the known ones listed."""
    sets = kernel_sets(store)
    if sets.height == 0:
        raise NotFoundError(
            "the store holds no kernel sets yet; import some with "
            "`cuda-l2-explorer import-results --upstream` or a CSV path"
        )
    if mode is not None and mode not in MODES:
        raise UsageError(f"mode must be offline or server (got {mode!r})")
    if gpu is not None:
        gpu = gpu.strip().lower()
        known = sorted(set(sets["gpu"].to_list()))
        if gpu not in known:
            raise NotFoundError(f"unknown GPU {gpu!r}; the store has {', '.join(known)}")
        sets = sets.filter(pl.col("gpu") == gpu)
    set_ids = None
    if set_ is not None:
        chosen = sets.filter((pl.col("set_id") == set_) | (pl.col("name") == set_))
        if chosen.height == 0:
            known = sorted(set(sets["set_id"].to_list()) | set(sets["name"].to_list()))
            where = f" for GPU {gpu}" if gpu else ""
            raise NotFoundError(f"unknown kernel set {set_!r}{where}; known: {', '.join(known)}")
        set_ids = tuple(chosen["set_id"].to_list())
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
    """Aggregates per set, GPU, mode, source and baseline (SPEC §7): geomean first."""
    where, params = filters.where()
    if baselines:
        unknown = [b for b in baselines if b not in REPORT_ORDER]
        if unknown:
            raise UsageError(f"unknown baseline {unknown[0]!r}; known: {', '.join(REPORT_ORDER)}")
        where += f" AND baseline IN ({', '.join('?' for _ in baselines)})"
        params += list(baselines)
    order = "CASE baseline " + " ".join(f"WHEN '{b}' THEN {i}" for i, b in enumerate(REPORT_ORDER)) + " END"
    return store.query(
        f"""
        SELECT set_id, gpu, accumulator, mode, source, baseline,
               count(*) AS configs,
               exp(avg(ln(speedup))) AS geomean,
               avg(speedup) AS mean,
               avg(CASE WHEN outcome = 'win' THEN 1.0 ELSE 0.0 END) AS win_rate,
               avg(CASE WHEN outcome = 'loss' THEN 1.0 ELSE 0.0 END) AS loss_rate,
               min(speedup) AS min,
               max(speedup) AS max
        FROM speedups WHERE {where}
        GROUP BY set_id, gpu, accumulator, mode, source, baseline
        ORDER BY set_id, gpu, mode, source, {order}
        """,
        params,
    )


def config_candidates(store: Store, filters: Filters) -> pl.DataFrame:
    """One row per (set, GPU, mode, source, config) with what lookup ranks on.

    ``speedup_best`` is the speedup over the best baseline at that config; measured rows also
    carry the kernel's time (unpadded and, when measured, with the padding copy) and the best
    baseline's time.
    """
    where, params = filters.where("s")
    return store.query(
        f"""
        WITH best AS (
            SELECT set_id, gpu, mode, source, m, n, k, run_id, speedup, kernel_s, baseline_s
            FROM speedups WHERE baseline = '{BEST}'
        ),
        padded AS (
            SELECT run_id, m, n, k, median AS kernel_padded_s FROM measured_times
            WHERE implementation = 'kernel' AND padded
        )
        SELECT s.set_id, ks.name AS set_name, s.gpu, s.mode, s.source, s.m, s.n, s.k,
               coalesce(kn.runtime_shapes, false) AS runtime_shapes,
               s.speedup AS speedup_best, s.kernel_s, p.kernel_padded_s,
               s.baseline_s AS best_baseline_s, s.run_id, r.source AS run_source,
               r.started_at AS run_date
        FROM best s
        JOIN all_kernel_sets ks USING (set_id)
        LEFT JOIN all_kernels kn ON kn.set_id = s.set_id AND kn.m = s.m AND kn.n = s.n AND kn.k = s.k
        LEFT JOIN padded p ON p.run_id = s.run_id AND p.m = s.m AND p.n = s.n AND p.k = s.k
        LEFT JOIN all_runs r ON r.run_id = s.run_id
        WHERE {where}
        """,
        params,
    )
