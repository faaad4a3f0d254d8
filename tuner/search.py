"""The per-shape kernel search, orchestrated from the CPU side: plan, store, manifest.

The search runs through importer.bench's machinery (one worker process per GPU, crash and hang
isolation, one transaction per finished config, ``--resume``) as a run of kind ``tune``; the GPU
side of one config is tuner.search_gpu. Every candidate's figures land in the ``search_log``
table; the kept kernel of each config is the fastest correct stage-2 finalist, and it becomes
that config's manifest entry (tuner.manifest).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.importer.bench import (
    HARNESS_VERSION,
    BenchPlan,
    Outcome,
    ProgressCallback,
    run_plan,
    store_opener,
)
from cuda_l2_explorer.importer.protocol import ProtocolSettings
from cuda_l2_explorer.tuner.native import library_cutlass_version

SEARCH_COLUMNS = (
    "run_id", "m", "n", "k", "candidate", "stage", "kernel", "family", "params", "variant", "status",
    "predicted_us", "median", "p10", "p90", "n_samples", "calls_per_sample", "rel_error", "error_ratio",
    "chosen", "message",
)  # fmt: skip


def search_plan(
    shapes: Sequence[Shape],
    library: Path,
    gpus: Sequence[int] = (0,),
    *,
    limit: int = 16,
    finalists: int = 4,
    stage2_samples: int = 10,
    timeout_s: float = 300.0,
) -> BenchPlan:
    return BenchPlan(
        shapes=list(shapes),
        settings=ProtocolSettings(mode="offline", samples=stage2_samples),
        baselines=(),
        gpus=list(gpus),
        timeout_s=timeout_s,
        kind="tune",
        cutlass=library_cutlass_version(library),
        search={
            "library": str(Path(library).resolve()),
            "limit": limit,
            "finalists": finalists,
            "stage2_samples": stage2_samples,
        },
    )


def record_search(store: Store, run_id: str, shape: Shape, outcome: Outcome, gpu: int) -> None:
    """One config's search log and its run_configs row, in one transaction."""
    key = [run_id, shape.m, shape.n, shape.k]
    best = outcome.info.get("best")
    rows = []
    for r in outcome.rows:
        params = r.get("params") or {}
        rows.append(
            (
                *key,
                r["candidate"],
                r["stage"],
                r["kernel"],
                params.get("family"),
                json.dumps(params, sort_keys=True),
                json.dumps(r["variant"], sort_keys=True),
                r["status"],
                r.get("predicted_us"),
                r.get("median"),
                r.get("p10"),
                r.get("p90"),
                r.get("n_samples"),
                r.get("calls_per_sample"),
                r.get("rel_error"),
                r.get("error_ratio"),
                r["stage"] == 2 and r["candidate"] == best,
                r.get("message"),
            )
        )
    for name, ref in (outcome.info.get("references") or {}).items():
        rows.append(
            (*key, name, 2, name, "baseline", None, None, ref["status"], None, ref["median"], ref["p10"],
             ref["p90"], None, None, None, None, False, None)
        )  # fmt: skip
    with store.transaction():
        for table in ("search_log", "run_configs"):
            store.con.execute(f"DELETE FROM main.{table} WHERE run_id = ? AND m = ? AND n = ? AND k = ?", key)
        store.insert_rows("search_log", SEARCH_COLUMNS, rows)
        store.con.execute(
            "INSERT INTO main.run_configs (run_id, m, n, k, status, gpu_index, seconds, message, details) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                *key,
                outcome.status if best or outcome.status != "done" else "error",
                gpu,
                outcome.info.get("seconds"),
                outcome.message or (None if best or outcome.status != "done" else "no correct candidate"),
                json.dumps(outcome.info),
            ],
        )


def run_search(
    store_path: Path | None,
    plan: BenchPlan,
    command_line: str,
    resume: tuple[str, dict] | None = None,
    progress: ProgressCallback | None = None,
) -> tuple[str, dict]:
    return run_plan(store_opener(store_path), plan, command_line, resume, progress, recorder=record_search)


def manifest_entries(store: Store, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The kept kernel of every config of ``run_ids`` (a later run wins for the same config)."""
    if not run_ids:
        return []
    marks = ", ".join("?" for _ in run_ids)
    rows = store.con.execute(
        f"""
        SELECT s.m, s.n, s.k, s.kernel, s.params, s.variant, s.median, s.p10, s.p90, s.run_id,
               r.gpu, r.gpu_name, r.started_at, r.params,
               (SELECT count(*) FROM main.search_log c WHERE c.run_id = s.run_id AND c.m = s.m
                  AND c.n = s.n AND c.k = s.k AND c.stage = 1) AS measured,
               (SELECT arg_min(b.candidate, b.median) FROM main.search_log b WHERE b.run_id = s.run_id
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
    entries: dict[tuple[int, int, int], dict[str, Any]] = {}
    for (m, n, k, kernel, params, variant, med, p10, p90, run_id, gpu, gpu_name, started, run_params,
         measured, ref_name, ref_median) in rows:  # fmt: skip
        harness = json.loads(run_params or "{}").get("harness_version", HARNESS_VERSION)
        entries[(m, n, k)] = {
            "m": m,
            "n": n,
            "k": k,
            "kernel_name": kernel,
            "kernel": json.loads(params),
            "variant": json.loads(variant),
            "time_us": round(med * 1e6, 3),
            "p10_us": round(p10 * 1e6, 3),
            "p90_us": round(p90 * 1e6, 3),
            "best_reference": ref_name,
            "best_reference_us": round(ref_median * 1e6, 3) if ref_median else None,
            "gpu": gpu,
            "gpu_name": gpu_name,
            "date": (started.date() if hasattr(started, "date") else date.today()).isoformat(),
            "mode": "offline",
            "harness_version": harness,
            "run_id": run_id,
            "candidates": measured,
        }
    return list(entries.values())
