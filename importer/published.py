"""Import the reference system's published speedup CSVs (SPEC §5) into the store.

Every input is read and validated before the store is touched; then all of them are written in
one transaction. Re-importing identical content is a no-op; new content for the same
(set, mode) replaces the old rows in that same transaction.
"""

from __future__ import annotations

import csv
import hashlib
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from cuda_l2_explorer.db import reads, writes
from cuda_l2_explorer.db.errors import BadInputError, UsageError
from cuda_l2_explorer.db.shapes import Shape, parse_dim, parse_mnk
from cuda_l2_explorer.db.store import Store, new_id
from cuda_l2_explorer.db.views import PUBLISHED_COLUMNS
from cuda_l2_explorer.importer.fetch import FetchOptions, ProgressCallback, fetch_url, is_url, read_local

if TYPE_CHECKING:
    import polars as pl

    # A file's rows, one column each: lists from the row reader, a Polars frame from the columnar one.
    Speedups = dict[str, list] | pl.DataFrame

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
    speedups: Speedups  # one row per config: columns m, n, k and PUBLISHED_COLUMNS
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


# Below this size (17k configs) the row reader is done before Polars (0.17 s to import) is loaded.
COLUMNAR_MIN_BYTES = 1 << 20


def parse_published_csv(data: bytes, origin: str) -> tuple[Speedups, list[str]]:
    """Validate a §5 CSV strictly; return one row per config (columns m, n, k, then
    PUBLISHED_COLUMNS) and warnings.

    The row reader (csv module) alone defines what is accepted and words every error with its
    line. A file of a megabyte or more goes to the columnar reader first (Polars: about 1 s for a
    million configs, where the row reader takes 15 s and 0.8 GB), which takes a file only
    when it is plainly well-formed and then returns what the row reader would; for anything else
    it declines and the row reader decides.
    """
    header = _header(_text(data, origin), origin)
    positions = _column_positions([h.strip() for h in header], origin)
    read = _read_columnar(data, header, positions) if len(data) >= COLUMNAR_MIN_BYTES else None
    speedups, inconsistent = read or _read_rows(_text(data, origin), origin, positions, len(header))
    warnings = []
    if inconsistent:
        warnings.append(
            f"{origin}: {inconsistent} rows have a '-max' column that is not the smaller of its "
            "tn and nn columns; imported as published"
        )
    return speedups, warnings


def _text(data: bytes, origin: str) -> str:
    if not data.strip():
        raise BadInputError(f"{origin}: empty file")
    if b"\x00" in data[:65536]:
        raise BadInputError(f"{origin}: not a CSV (binary content)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"{origin}: not a CSV (not UTF-8 text at byte {exc.start})") from exc


def _lines(text: str) -> Iterator[str]:
    """The text's lines with their ends, as ``io.StringIO(text, newline="")`` yields them, one at a
    time: a StringIO holds 4 bytes a character, 250 MB for a 60 MB file."""
    return (match.group() for match in _LINE.finditer(text))


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def _header(text: str, origin: str) -> list[str]:
    """The first record as the csv module reads it (cells not stripped)."""
    try:
        return next(csv.reader(_lines(text)))
    except csv.Error as exc:
        raise BadInputError(f"{origin}: not a CSV ({exc})") from exc


def _column_positions(header: list[str], origin: str) -> list[int]:
    """Where mnk and each of PUBLISHED_COLUMNS are in the (stripped) header; any other is refused."""
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
    return [header.index(c) for c in expected]


def _read_rows(text: str, origin: str, positions: list[int], width: int) -> tuple[Speedups, int]:
    """The reference reader: one row at a time, every error with its line number.

    Returns the columns (lists) and how many rows have an inconsistent '-max' column."""
    mnk_index, value_index = positions[0], positions[1:]
    columns: dict[str, list] = {name: [] for name in ("m", "n", "k", *PUBLISHED_COLUMNS)}
    seen: dict[Shape, int] = {}
    inconsistent = 0
    reader = csv.reader(_lines(text))
    try:
        header = [h.strip() for h in next(reader)]
        for cells in reader:
            line = reader.line_num
            if not cells or all(not c.strip() for c in cells):
                continue
            if len(cells) != width:
                raise BadInputError(f"{origin}: line {line} has {len(cells)} fields, expected {width}")
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
            values = tuple(_speedup(cells[i], origin, line, header[i]) for i in value_index)
            inconsistent += _max_columns_disagree(values)
            for column, value in zip(columns.values(), (*shape.astuple(), *values), strict=True):
                column.append(value)
    except csv.Error as exc:
        raise BadInputError(f"{origin}: not a CSV ({exc})") from exc
    if not seen:
        raise BadInputError(f"{origin}: header only, no data rows")
    return columns, inconsistent


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


_MAX_FAMILIES = ("cuBLAS", "cuBLASLt-heuristic", "cuBLASLt-auto-tuning")


def _max_columns_disagree(values: tuple[float, ...]) -> int:
    by_name = dict(zip(PUBLISHED_COLUMNS, values, strict=True))
    for family in _MAX_FAMILIES:
        expected = min(by_name[f"{family}-tn"], by_name[f"{family}-nn"])
        if abs(by_name[f"{family}-max"] - expected) > _MAX_TOLERANCE:
            return 1
    return 0


# The columnar reader's dialect: cells that both readers parse alike. No quotes, no blanks around
# a cell, no field near the csv module's 128 KiB limit: anything else is the row reader's.
_PLAIN_MNK = r"^[0-9]{1,18}_[0-9]{1,18}_[0-9]{1,18}$"
_PLAIN_NUMBER = r"^\+?(?:[0-9]{1,40}\.?[0-9]{0,40}|\.[0-9]{1,40})(?:[eE][+-]?[0-9]{1,4})?$"
# Lines are read a few megabytes at a time, so the text is never all held as strings at once.
_CHUNK_BYTES = 4 << 20


def _read_columnar(data: bytes, header: list[str], positions: list[int]) -> tuple[Speedups, int] | None:
    """The file through Polars' CSV reader when it is plainly well-formed, else None.

    It returns a frame only where the row reader would return the same one: plain cells (above),
    every dimension and speedup inside what ``parse_dim`` and ``_speedup`` accept (their bounds are
    intervals, so checking the smallest and largest value checks all), no repeated shape.
    """
    import polars as pl

    if b'"' in data or data.count(b"\r") != data.count(b"\r\n"):
        return None  # quoting and bare-CR line ends: the csv module's rules decide
    # Without quotes a record is a line: the header (already checked) is the first one.
    start = data.find(b"\n") + 1
    chunks = []
    while 0 < start < len(data):
        end = data.find(b"\n", start + _CHUNK_BYTES) + 1 or len(data)
        chunk = _columnar_chunk(data[start:end], len(header), positions)
        if chunk is None:
            return None
        chunks.append(chunk)
        start = end
    if not chunks:
        return None
    speedups = pl.concat(chunks, rechunk=False)
    del chunks
    # Repeated shapes by a hash of (m, n, k), a quarter of the memory of comparing the columns: a
    # collision (about 1e-7 for a million configs) only sends the file to the row reader.
    distinct = speedups.select(pl.struct("m", "n", "k").hash().n_unique()).item()
    if speedups.height == 0 or distinct != speedups.height or any(speedups.null_count().row(0)):
        return None  # (a null: a plain cell Polars would not convert)
    bounds = speedups.select(
        *(pl.col(d).min().alias(f"{d}_min") for d in "mnk"),
        *(pl.col(d).max().alias(f"{d}_max") for d in "mnk"),
        pl.min_horizontal(pl.col(PUBLISHED_COLUMNS).min()).alias("lo"),
        pl.max_horizontal(pl.col(PUBLISHED_COLUMNS).max()).alias("hi"),
    ).row(0, named=True)
    try:
        for d in "mnk":
            parse_dim(str(bounds[f"{d}_min"]), d.upper())
            parse_dim(str(bounds[f"{d}_max"]), d.upper())
        _speedup(repr(bounds["lo"]), "", 0, "")
        _speedup(repr(bounds["hi"]), "", 0, "")
    except (UsageError, BadInputError):
        return None
    disagree = pl.any_horizontal(
        (pl.col(f"{f}-max") - pl.min_horizontal(f"{f}-tn", f"{f}-nn")).abs() > _MAX_TOLERANCE
        for f in _MAX_FAMILIES
    )
    return speedups, int(speedups.select(disagree.sum()).item())


def _columnar_chunk(lines: bytes, width: int, positions: list[int]) -> pl.DataFrame | None:
    """Whole lines of the file as m, n, k and the speedup columns; None if any cell is not plain."""
    import polars as pl

    try:
        raw = pl.read_csv(
            lines, has_header=False, schema={f"c{i}": pl.String for i in range(width)}, quote_char=None
        )
    except pl.exceptions.PolarsError:
        return None  # a line with too many fields, or not UTF-8
    raw = raw.filter(~pl.all_horizontal(pl.all().is_null()))  # empty lines, which csv skips too
    mnk, *values = (pl.col(f"c{i}") for i in positions)
    plain = pl.all_horizontal(mnk.str.contains(_PLAIN_MNK), *(v.str.contains(_PLAIN_NUMBER) for v in values))
    if not raw.select(plain.fill_null(False).all()).item():
        return None
    return raw.select(
        *(
            mnk.str.extract(_PLAIN_DIM[d], 1).cast(pl.Int64, strict=False).alias(name)
            for d, name in enumerate("mnk")
        ),
        *(
            v.cast(pl.Float64, strict=False).alias(name)
            for v, name in zip(values, PUBLISHED_COLUMNS, strict=True)
        ),
    )


_PLAIN_DIM = (r"^([0-9]+)_", r"_([0-9]+)_", r"_([0-9]+)$")


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
    speedups, warnings = parse_published_csv(data, origin)
    return PublishedFile(origin, labels, speedups, hashlib.sha256(data).hexdigest(), warnings)


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
        configs=len(published.speedups["m"]),
    )
    same = [run_id for run_id, sha256 in previous if sha256 == published.sha256]
    if same:
        return ImportResult(**result, action="unchanged", run_id=same[0])
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
        store, run_id, labels.set_id, labels.mode, published.speedups, PUBLISHED_COLUMNS
    )
    action = "replaced" if previous else "imported"
    return ImportResult(**result, action=action, run_id=run_id)
