"""Import the reference system's published speedup CSVs (SPEC §5) into the store.

Every input is read and validated before the store is touched; then all of them are written in
one transaction. Re-importing identical content is a no-op; new content for the same
(set, mode) replaces the old rows in that same transaction.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import urlparse

from cuda_l2_explorer.db import reads, writes
from cuda_l2_explorer.db.errors import BadInputError, UsageError
from cuda_l2_explorer.db.shapes import Shape, parse_mnk
from cuda_l2_explorer.db.store import Store, new_id
from cuda_l2_explorer.db.views import PUBLISHED_COLUMNS
from cuda_l2_explorer.importer.fetch import FetchOptions, ProgressCallback, fetch_url, is_url, read_local

ACCUMULATORS = ("F32F16F16F32", "F16F16F16F16")
MODES = ("offline", "server")
DEFAULT_SET_NAME = "cuda-l2"
UPSTREAM_BASE = "https://raw.githubusercontent.com/deepreinforce-ai/CUDA-L2/main/eval_results"
# The files published in the reference repository's eval_results/ folder.
UPSTREAM_FILES: tuple[str, ...] = tuple(
    f"cuda_l2_{device}_{acc}_speedup_{mode}.csv"
    for device, acc in (
        ("a100", "F16F16F16F16"),
        ("a100", "F32F16F16F32"),
        ("3090", "F32F16F16F32"),
        ("h100", "F32F16F16F32"),
    )
    for mode in MODES
)

_FILENAME_RE = re.compile(
    r"^cuda_l2_(?P<gpu>[A-Za-z0-9]+)_(?P<acc>F32F16F16F32|F16F16F16F16)_speedup_"
    r"(?P<mode>offline|server)\.csv$"
)
_LABEL_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
# '-max' must equal the smaller of the two layouts; allow the CSV's 3-decimal rounding.
_MAX_TOLERANCE = 0.0015
# A speedup outside this range is no measurement (the reference CSVs hold 0.198 to 2.2): 1e308
# would make the arithmetic mean inf and 1e-320 is a denormal that rounds to 0 in a product.
SPEEDUP_RANGE = (1e-3, 1e3)


@dataclass(frozen=True)
class SourceLabels:
    gpu: str
    accumulator: str
    mode: str
    set_name: str = DEFAULT_SET_NAME

    @property
    def set_id(self) -> str:
        return f"{self.set_name}/{self.gpu}_{self.accumulator}"


@dataclass
class PublishedFile:
    origin: str
    labels: SourceLabels
    rows: list[tuple[Shape, tuple[float, ...]]]
    sha256: str
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ImportResult:
    origin: str
    set_id: str
    gpu: str
    accumulator: str
    mode: str
    configs: int
    action: str  # 'imported', 'replaced' or 'unchanged'
    run_id: str


def check_label(value: str, what: str) -> str:
    label = value.strip().lower()
    if not _LABEL_RE.match(label):
        raise UsageError(f"{what} must be letters, digits, '.', '_' or '-' (got {value!r})")
    return label


def labels_for(
    name: str,
    gpu: str | None = None,
    accumulator: str | None = None,
    mode: str | None = None,
    set_name: str | None = None,
) -> SourceLabels:
    """GPU, accumulator and mode from a §5 file name, each overridable by a flag."""
    match = _FILENAME_RE.match(name)
    found = match.groupdict() if match else {}
    gpu = gpu or found.get("gpu")
    accumulator = accumulator or found.get("acc")
    mode = mode or found.get("mode")
    missing = [
        flag for flag, v in (("--gpu", gpu), ("--accumulator", accumulator), ("--mode", mode)) if not v
    ]
    if missing:
        raise UsageError(
            f"cannot tell {', '.join(m[2:] for m in missing)} from the file name {name!r} "
            f"(expected cuda_l2_<gpu>_<ACC>_speedup_<mode>.csv); pass {' '.join(missing)}"
        )
    assert gpu and accumulator and mode
    if accumulator not in ACCUMULATORS:
        raise UsageError(f"accumulator must be one of {', '.join(ACCUMULATORS)} (got {accumulator!r})")
    if mode not in MODES:
        raise UsageError(f"mode must be offline or server (got {mode!r})")
    return SourceLabels(
        gpu=check_label(gpu, "GPU"),
        accumulator=accumulator,
        mode=mode,
        set_name=check_label(set_name or DEFAULT_SET_NAME, "set name"),
    )


def source_name(origin: str) -> str:
    if is_url(origin):
        return PurePosixPath(urlparse(origin).path).name
    return Path(origin).name


def parse_published_csv(data: bytes, origin: str) -> tuple[list[tuple[Shape, tuple[float, ...]]], list[str]]:
    """Validate a §5 CSV strictly; return rows (values in PUBLISHED_COLUMNS order) and warnings."""
    if not data.strip():
        raise BadInputError(f"{origin}: empty file")
    if b"\x00" in data[:65536]:
        raise BadInputError(f"{origin}: not a CSV (binary content)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"{origin}: not a CSV (not UTF-8 text at byte {exc.start})") from exc
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except csv.Error as exc:
        raise BadInputError(f"{origin}: not a CSV ({exc})") from exc
    expected = ["mnk", *PUBLISHED_COLUMNS]
    if header != expected:
        missing = [c for c in expected if c not in header]
        extra = [c for c in header if c not in expected]
        if missing or extra:
            parts = []
            if missing:
                parts.append("missing columns " + ", ".join(missing))
            if extra:
                parts.append("unexpected columns " + ", ".join(repr(c) for c in extra))
            raise BadInputError(f"{origin}: not a SPEC §5 speedup CSV: {'; '.join(parts)}")
        if len(header) != len(set(header)):
            raise BadInputError(f"{origin}: duplicate column names in the header")
    index = [header.index(c) for c in PUBLISHED_COLUMNS]
    mnk_index = header.index("mnk")
    rows: list[tuple[Shape, tuple[float, ...]]] = []
    seen: dict[Shape, int] = {}
    inconsistent = 0
    try:
        for cells in reader:
            line = reader.line_num
            if not cells or all(not c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                raise BadInputError(f"{origin}: line {line} has {len(cells)} fields, expected {len(header)}")
            try:
                shape = parse_mnk(cells[mnk_index])
            except UsageError:
                raise BadInputError(
                    f"{origin}: line {line}: mnk must be M_N_K with positive integers, "
                    f"got {cells[mnk_index]!r}"
                ) from None
            if shape in seen:
                raise BadInputError(f"{origin}: line {line}: shape {shape} repeats line {seen[shape]}")
            seen[shape] = line
            values = tuple(_speedup(cells[i], origin, line, header[i]) for i in index)
            rows.append((shape, values))
            inconsistent += _max_columns_disagree(values)
    except csv.Error as exc:
        raise BadInputError(f"{origin}: not a CSV ({exc})") from exc
    if not rows:
        raise BadInputError(f"{origin}: header only, no data rows")
    warnings = []
    if inconsistent:
        warnings.append(
            f"{origin}: {inconsistent} rows have a '-max' column that is not the smaller of its "
            "tn and nn columns; imported as published"
        )
    return rows, warnings


def _speedup(cell: str, origin: str, line: int, column: str) -> float:
    text = cell.strip()
    try:
        value = float(text)
    except ValueError:
        raise BadInputError(f"{origin}: line {line}: {column} is not a number: {cell!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise BadInputError(f"{origin}: line {line}: {column} must be a positive speedup, got {cell!r}")
    low, high = SPEEDUP_RANGE
    if not low <= value <= high:
        raise BadInputError(
            f"{origin}: line {line}: {column} = {cell.strip()[:40]} is outside the range a speedup can "
            f"have ({low:g} to {high:g})"
        )
    return value


def _max_columns_disagree(values: tuple[float, ...]) -> int:
    by_name = dict(zip(PUBLISHED_COLUMNS, values, strict=True))
    for family in ("cuBLAS", "cuBLASLt-heuristic", "cuBLASLt-auto-tuning"):
        expected = min(by_name[f"{family}-tn"], by_name[f"{family}-nn"])
        if abs(by_name[f"{family}-max"] - expected) > _MAX_TOLERANCE:
            return 1
    return 0


def load_published(
    origin: str,
    options: FetchOptions,
    *,
    gpu: str | None = None,
    accumulator: str | None = None,
    mode: str | None = None,
    set_name: str | None = None,
    progress: ProgressCallback | None = None,
) -> PublishedFile:
    """Read (file or URL) and validate one published CSV; nothing is written."""
    labels = labels_for(source_name(origin), gpu, accumulator, mode, set_name)
    data = fetch_url(origin, options, progress) if is_url(origin) else read_local(Path(origin), options)
    rows, warnings = parse_published_csv(data, origin)
    return PublishedFile(origin, labels, rows, hashlib.sha256(data).hexdigest(), warnings)


def import_published(
    store: Store, files: Iterable[PublishedFile], command_line: str | None = None
) -> list[ImportResult]:
    """Write validated files in one transaction: all of them or none."""
    files = list(files)
    keys = [(f.labels.set_id, f.labels.mode) for f in files]
    duplicates = {k for k in keys if keys.count(k) > 1}
    if duplicates:
        set_id, mode = sorted(duplicates)[0]
        raise UsageError(f"two inputs are both {set_id} {mode}; import them separately")
    results: list[ImportResult] = []
    with store.transaction():
        for published in files:
            results.append(_write_one(store, published, command_line))
    return results


def _write_one(store: Store, published: PublishedFile, command_line: str | None) -> ImportResult:
    labels = published.labels
    previous = reads.published_runs(store, labels.set_id, labels.mode)
    result = dict(
        origin=published.origin,
        set_id=labels.set_id,
        gpu=labels.gpu,
        accumulator=labels.accumulator,
        mode=labels.mode,
        configs=len(published.rows),
    )
    if previous.height and published.sha256 in previous["source_sha256"].to_list():
        run_id = previous.filter(previous["source_sha256"] == published.sha256)["run_id"][0]
        return ImportResult(**result, action="unchanged", run_id=run_id)
    writes.delete_published(store, labels.set_id, labels.mode)
    writes.record_gpu_label(store, labels.gpu)
    writes.record_published_set(
        store,
        labels.set_id,
        labels.set_name,
        labels.gpu,
        labels.accumulator,
        "published speedups of the reference system (CUDA-L2)",
    )
    run_id = new_id()
    writes.record_published_run(
        store,
        run_id,
        set_id=labels.set_id,
        gpu=labels.gpu,
        mode=labels.mode,
        command_line=command_line,
        source=published.origin,
        source_sha256=published.sha256,
    )
    writes.insert_published_speedups(
        store,
        [
            (run_id, labels.set_id, labels.mode, shape.m, shape.n, shape.k, baseline, value)
            for shape, values in published.rows
            for baseline, value in zip(PUBLISHED_COLUMNS, values, strict=True)
        ],
    )
    action = "replaced" if previous.height else "imported"
    return ImportResult(**result, action=action, run_id=run_id)
