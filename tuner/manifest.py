"""The kernel set's manifest: per config, the kernel the search kept and the evidence for it.

``kernels/<device>_<ACC>/manifest.json`` (format below) is the source of truth of our set: the
per-config SPEC §4 sources beside it are materialised from it deterministically, the harness
runs the set from it through the compiled library, and export reads kernels from it.

    {"format": "cuda-l2-explorer/kernel-manifest", "version": 1, "device": "h100",
     "accumulator": "F32F16F16F32", "configs": [
        {"m": .., "n": .., "k": .., "kernel_name": .., "kernel": {<compile-time parameters>},
         "variant": {"raster": .., "swizzle": .., "decomposition": .., "splits": ..},
         "time_us": .., "p10_us": .., "p90_us": .., "best_reference": .., "best_reference_us": ..,
         "gpu": "h100", "gpu_name": .., "date": "YYYY-MM-DD", "mode": "offline",
         "harness_version": .., "run_id": .., "candidates": ..}, ...]}

Entries are sorted by (m, n, k) and written with sorted keys, so the same data gives the same
bytes. Merging keeps, per config, the entry of the newer run for the same GPU.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

FORMAT = "cuda-l2-explorer/kernel-manifest"
VERSION = 1
ENTRY_FIELDS = ("m", "n", "k", "kernel_name", "kernel", "variant", "time_us", "gpu", "date", "run_id")
VARIANT_FIELDS = ("raster", "swizzle", "decomposition", "splits")


class ManifestError(ValueError):
    """A manifest that does not follow the format above."""


def empty(device: str, accumulator: str = "F32F16F16F32") -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "device": device, "accumulator": accumulator, "configs": []}


def validate(data: Mapping[str, Any]) -> None:
    if data.get("format") != FORMAT:
        raise ManifestError(f"not a kernel manifest (format {data.get('format')!r})")
    if data.get("version") != VERSION:
        raise ManifestError(f"manifest version {data.get('version')!r} is not supported (expected {VERSION})")
    for key in ("device", "accumulator"):
        if not isinstance(data.get(key), str):
            raise ManifestError(f"manifest field {key!r} must be a string")
    configs = data.get("configs")
    if not isinstance(configs, list):
        raise ManifestError("manifest field 'configs' must be a list")
    seen: set[tuple[int, int, int]] = set()
    for i, entry in enumerate(configs):
        missing = [f for f in ENTRY_FIELDS if f not in entry]
        if missing:
            raise ManifestError(f"configs[{i}] lacks {', '.join(missing)}")
        shape = (entry["m"], entry["n"], entry["k"])
        if not all(isinstance(x, int) and x > 0 for x in shape):
            raise ManifestError(f"configs[{i}]: m, n, k must be positive integers")
        if shape in seen:
            raise ManifestError(f"configs[{i}]: {shape} appears twice")
        seen.add(shape)
        variant = entry["variant"]
        if not isinstance(variant, dict) or sorted(variant) != sorted(VARIANT_FIELDS):
            raise ManifestError(f"configs[{i}]: variant must have exactly {', '.join(VARIANT_FIELDS)}")
        if not isinstance(entry["kernel"], dict) or "family" not in entry["kernel"]:
            raise ManifestError(f"configs[{i}]: kernel must be a parameter object with a family")
        if not (isinstance(entry["time_us"], int | float) and entry["time_us"] > 0):
            raise ManifestError(f"configs[{i}]: time_us must be a positive number")


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ManifestError(f"cannot read manifest {path}: {exc}") from exc
    validate(data)
    return data


def dumps(data: Mapping[str, Any]) -> str:
    ordered = dict(data)
    ordered["configs"] = sorted(data["configs"], key=lambda e: (e["m"], e["n"], e["k"]))
    return json.dumps(ordered, indent=1, sort_keys=True) + "\n"


def save(data: Mapping[str, Any], path: Path) -> None:
    """Validate, then replace ``path`` atomically (a crash leaves the old manifest intact)."""
    validate(data)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".manifest.", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(dumps(data))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def merge(
    data: Mapping[str, Any], entries: Iterable[Mapping[str, Any]], keep_faster: bool = False
) -> dict[str, Any]:
    """``data`` with ``entries`` added; an entry replaces the existing one for its config (with
    ``keep_faster``, only when its measured time is lower: a re-search of some configs with more
    kernels keeps the old choice where it does not improve on it)."""
    by_shape = {(e["m"], e["n"], e["k"]): dict(e) for e in data["configs"]}
    for entry in entries:
        key = (entry["m"], entry["n"], entry["k"])
        old = by_shape.get(key)
        if keep_faster and old is not None and old["time_us"] <= entry["time_us"]:
            continue
        by_shape[key] = dict(entry)
    return {**data, "configs": list(by_shape.values())}


def lookup(data: Mapping[str, Any], m: int, n: int, k: int) -> dict[str, Any] | None:
    return next((dict(e) for e in data["configs"] if (e["m"], e["n"], e["k"]) == (m, n, k)), None)


def with_bench_evidence(data: Mapping[str, Any], store: Any, set_id: str, run_id: str) -> dict[str, Any]:
    """``data`` with each config's harness figures from bench run ``run_id`` of ``set_id``: the
    kernel's median device time (SPEC §7 offline, the search's own figure kept as
    ``search_time_us``) and the best of the seven baselines with its time."""
    rows = store.con.execute(
        """
        SELECT t.m, t.n, t.k, t.median, t.p10, t.p90, b.baseline, b.median, r.harness
        FROM measured_times t
        JOIN (SELECT run_id, json_extract_string(params, '$.harness_version') AS harness FROM all_runs) r
          USING (run_id)
        LEFT JOIN (
            SELECT run_id, m, n, k, arg_min(baseline, median) AS baseline, min(median) AS median
            FROM measured_baselines
            WHERE baseline NOT LIKE '%-max' AND baseline <> 'best-baseline'
            GROUP BY ALL
        ) b ON b.run_id = t.run_id AND b.m = t.m AND b.n = t.n AND b.k = t.k
        WHERE t.run_id = ? AND t.set_id = ? AND t.implementation = 'kernel' AND NOT t.padded
        """,
        [run_id, set_id],
    ).fetchall()
    figures = {(m, n, k): rest for m, n, k, *rest in rows}
    configs = []
    for entry in data["configs"]:
        entry = dict(entry)
        found = figures.get((entry["m"], entry["n"], entry["k"]))
        if found is not None:
            median, p10, p90, baseline, baseline_s, harness = found
            entry.setdefault("search_time_us", entry["time_us"])
            entry.update(
                time_us=round(median * 1e6, 3),
                p10_us=round(p10 * 1e6, 3),
                p90_us=round(p90 * 1e6, 3),
                best_baseline=baseline,
                best_baseline_us=None if baseline_s is None else round(baseline_s * 1e6, 3),
                bench_run_id=run_id,
                harness_version=harness or entry.get("harness_version"),
            )
        configs.append(entry)
    return {**data, "configs": configs}
