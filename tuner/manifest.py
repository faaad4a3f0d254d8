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

from cuda_l2_explorer.db.errors import BadInputError, IOFailure
from cuda_l2_explorer.importer.fetch import FetchOptions, read_local
from cuda_l2_explorer.tuner.config import ConfigError
from cuda_l2_explorer.tuner.families import kernel_from_dict
from cuda_l2_explorer.tuner.native import Variant

FORMAT = "cuda-l2-explorer/kernel-manifest"
VERSION = 1
ENTRY_FIELDS = ("m", "n", "k", "kernel_name", "kernel", "variant", "time_us", "gpu", "date", "run_id")
VARIANT_FIELDS = ("raster", "swizzle", "decomposition", "splits")
MAX_BYTES = 16 << 20


class ManifestError(BadInputError):
    """A manifest that does not follow the format above (bad input: exit code 3)."""


def empty(device: str, accumulator: str = "F32F16F16F32") -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "device": device, "accumulator": accumulator, "configs": []}


def validate(data: Any, origin: str = "manifest") -> None:
    """Check the format, every entry's fields, and that each kernel and variant parse."""
    if not isinstance(data, dict):
        raise ManifestError(f"{origin}: a manifest is a JSON object")
    if data.get("format") != FORMAT:
        raise ManifestError(
            f"{origin}: not a kernel manifest, not a {FORMAT} file (format {data.get('format')!r})"
        )
    if data.get("version") != VERSION:
        raise ManifestError(
            f"{origin}: version {data.get('version')!r} is not supported (expected {VERSION})"
        )
    for key in ("device", "accumulator"):
        if not isinstance(data.get(key), str):
            raise ManifestError(f"{origin}: field {key!r} must be a string")
    configs = data.get("configs")
    if not isinstance(configs, list):
        raise ManifestError(f"{origin}: field 'configs' must be a list")
    seen: set[tuple[int, int, int]] = set()
    for i, entry in enumerate(configs):
        where = f"{origin}: configs[{i}]"
        if not isinstance(entry, dict):
            raise ManifestError(f"{where} is not an object")
        for dim in ("m", "n", "k"):
            value = entry.get(dim)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ManifestError(f"{where}: {dim} must be a positive integer, got {value!r}")
        missing = [f for f in ENTRY_FIELDS if f not in entry]
        if missing:
            raise ManifestError(f"{where} lacks {', '.join(missing)}")
        shape = (entry["m"], entry["n"], entry["k"])
        if shape in seen:
            raise ManifestError(f"{where}: {shape} appears twice")
        seen.add(shape)
        if not isinstance(entry["variant"], dict) or sorted(entry["variant"]) != sorted(VARIANT_FIELDS):
            raise ManifestError(f"{where}: variant must have exactly {', '.join(VARIANT_FIELDS)}")
        if not (isinstance(entry["time_us"], int | float) and entry["time_us"] > 0):
            raise ManifestError(f"{where}: time_us must be a positive number")
        entry_kernel(entry, where)
        entry_variant(entry, where)


def pick_key(entry: Mapping[str, Any]) -> tuple[str, tuple[tuple[str, int], ...]]:
    """What an entry picks: its kernel's name and runtime variant. Two entries with the same key
    run the same code the same way (a re-search that keeps it has changed nothing)."""
    return entry["kernel_name"], tuple(sorted(entry["variant"].items()))


def changed_picks(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[tuple[int, int, int]]:
    """The (M, N, K) whose pick ``after`` does not share with ``before`` (new configs included), in
    order: the merged picks a grid of ``after`` confirms (benchmarks/tuner/grid_vs_previous.py)."""
    old = {(e["m"], e["n"], e["k"]): pick_key(e) for e in before["configs"]}
    return sorted(
        (e["m"], e["n"], e["k"]) for e in after["configs"] if old.get((e["m"], e["n"], e["k"])) != pick_key(e)
    )


def entry_kernel(entry: Mapping[str, Any], where: str = "manifest entry") -> Any:
    """The kernel config object of an entry (any family), or ManifestError."""
    kernel = entry.get("kernel")
    if not isinstance(kernel, dict):
        raise ManifestError(f"{where}: 'kernel' must be a parameter object with a family")
    try:
        return kernel_from_dict(kernel)
    except (ConfigError, TypeError) as exc:
        raise ManifestError(f"{where}: {exc}") from exc


def entry_variant(entry: Mapping[str, Any], where: str = "manifest entry") -> Variant:
    raw = entry.get("variant", {})
    if not isinstance(raw, dict) or set(raw) - set(VARIANT_FIELDS):
        raise ManifestError(f"{where}: 'variant' must hold only {', '.join(VARIANT_FIELDS)}")
    try:
        variant = Variant(**raw)
    except TypeError as exc:
        raise ManifestError(f"{where}: {exc}") from exc
    ok = (
        variant.raster in (0, 1, 2)
        and variant.swizzle in (1, 2, 4, 8)
        and variant.decomposition in (0, 1, 2, 3)
        and isinstance(variant.splits, int)
        and variant.splits >= 1
    )
    if not ok:
        raise ManifestError(f"{where}: variant out of range: {raw}")
    return variant


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a manifest file (ManifestError / IOFailure with one-line messages)."""
    path = Path(path)
    try:  # a regular file, read with a cap (a FIFO or device in its place, swapped in, gets a deadline)
        if path.exists() and not path.is_file():
            raise IOFailure(f"{path} is not a regular file")
        raw = read_local(path, FetchOptions(max_bytes=MAX_BYTES, timeout_s=5.0))
    except IOFailure as exc:
        raise IOFailure(f"cannot read manifest: {exc}") from exc
    except BadInputError as exc:
        raise ManifestError(f"manifest {path} is larger than {MAX_BYTES >> 20} MiB") from exc
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ManifestError(f"manifest {path} is not JSON: {exc}") from exc
    validate(data, str(path))
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
    from cuda_l2_explorer.db import reads

    rows = reads.kernel_figures_of_run(store, set_id, run_id)
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
