"""The per-shape kernel search, orchestrated from the CPU side: plan, store, manifest.

The search runs through the harness's runner (one worker process per GPU, crash and hang
isolation, one transaction per finished config, ``--resume``) as a run of kind ``tune``; the GPU
side of one config is tuner.search_worker. Every candidate's figures land in the ``search_log``
table; the kept kernel of each config is the fastest correct stage-2 finalist, and it becomes
that config's manifest entry (tuner.manifest).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from cuda_l2_explorer.db import reads, writes
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.importer.harness.plan import BenchPlan
from cuda_l2_explorer.importer.harness.protocol import HARNESS_VERSION, ProtocolSettings
from cuda_l2_explorer.importer.harness.runner import Outcome, ProgressCallback, run_plan, store_opener
from cuda_l2_explorer.tuner.native import library_cutlass_version

# The worker module that serves search jobs and runs kernels of our compiled library: every plan
# with library kernels names it.
TUNER_WORKER = "cuda_l2_explorer.tuner.search_worker"


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
        job="search",
        worker=TUNER_WORKER,
        cutlass=library_cutlass_version(library),
        job_fields={
            "library": str(Path(library).resolve()),
            "limit": limit,
            "finalists": finalists,
            "stage2_samples": stage2_samples,
        },
    )


def record_search(store: Store, run_id: str, shape: Shape, outcome: Outcome, gpu: int) -> None:
    """One config's search log and its run_configs row, in one transaction."""
    key = (run_id, shape.m, shape.n, shape.k)
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
        writes.clear_config(store, *key)
        writes.insert_search_log(store, rows)
        writes.record_config(
            store,
            *key,
            status=outcome.status if best or outcome.status != "done" else "error",
            gpu_index=gpu,
            seconds=outcome.info.get("seconds"),
            message=outcome.message or (None if best or outcome.status != "done" else "no correct candidate"),
            details=outcome.info,
        )


def run_search(
    store_path: Path | None,
    plan: BenchPlan,
    command_line: str,
    resume: tuple[str, dict] | None = None,
    progress: ProgressCallback | None = None,
) -> tuple[str, dict]:
    # A search keeps one GPU type's picks (its manifest is per GPU): GPUs of several types are refused.
    return run_plan(
        store_opener(store_path),
        plan,
        command_line,
        resume,
        progress,
        recorder=record_search,
        mixed_gpus=False,
    )


def manifest_entries(store: Store, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The kept kernel of every config of ``run_ids`` (a later run wins for the same config)."""
    if not run_ids:
        return []
    rows = reads.chosen_search_rows(store, run_ids)
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
