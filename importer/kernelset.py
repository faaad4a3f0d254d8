"""Kernel sets in the reference layout (SPEC section 4): find, check and describe the files.

A kernel set is a folder ``<device>_<ACC>`` (for example ``h100_F32F16F16F32``) holding one
``<M>_<N>_<K>.cu`` file per shape. :func:`scan_set` accepts that folder itself or a parent of
one or more such folders, reads every file once (size-limited, never following a link out of the
set), and returns a :class:`KernelSetScan`: the usable :class:`KernelFile` entries sorted by
shape, and a list of ``(relative path, reason)`` for everything it skipped.

Padding rule (SPEC section 4): a file that declares its tile sizes as ``BM = Int<..>``,
``BN = Int<..>``, ``BK = Int<..>`` (``using BM = Int<128>;``, ``auto BM = Int<128>{};``,
``constexpr auto BM = cute::Int<128>{};`` ...) is run on inputs zero-padded up to multiples of
them. Declarations inside comments and string literals do not count. When a file declares only
some of the three, the missing ones count as 1 (that dimension is not padded); when it declares
none, :attr:`KernelFile.pad` is None. When one name is declared several times with different
values (several kernels in one file), the least common multiple is used, so that the padded
shape is a multiple of every declared tile. Values below 1 are ignored.

Only the standard library is used here (no torch): scanning works on any machine.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from cuda_l2_explorer.db.errors import BadInputError, IOFailure, UsageError
from cuda_l2_explorer.db.shapes import Shape, parse_mnk

DEFAULT_MAX_BYTES = 2 << 20  # 2 MiB: the reference set's largest files are well under 100 KiB

ACCUMULATORS: dict[str, str] = {"F32F16F16F32": "fp32", "F16F16F16F16": "fp16"}
_ACC_ALIASES: dict[str, str] = {
    "f32f16f16f32": "F32F16F16F32",
    "fp32": "F32F16F16F32",
    "f32": "F32F16F16F32",
    "f16f16f16f16": "F16F16F16F16",
    "fp16": "F16F16F16F16",
    "f16": "F16F16F16F16",
}

# The device label becomes part of a C identifier (cuda_l2_<device>_fp32), so letters and digits.
_SET_DIR_RE = re.compile(r"^([A-Za-z0-9]+)_(F32F16F16F32|F16F16F16F16)$")
_DEVICE_RE = re.compile(r"^[A-Za-z0-9]+$")

_TILE_RE = re.compile(
    r"(?<![A-Za-z0-9_])B([MNK])\s*=\s*(?:::\s*)?(?:cute\s*::\s*)?Int\s*<\s*([0-9]+)\s*>",
)


@dataclass(frozen=True)
class KernelFile:
    """One usable ``M_N_K.cu`` file of a kernel set."""

    shape: Shape
    path: Path  # absolute; for a link inside the set, the link itself (its target is in the set)
    rel: str  # path relative to the set folder, '/'-separated
    sha256: str  # of the file's bytes as read by the scan
    function: str  # the SPEC section 4 entry point, e.g. cuda_l2_h100_fp32
    pad: tuple[int, int, int] | None  # (BM, BN, BK) tile sizes for the padding rule, or None


@dataclass
class KernelSetScan:
    """What :func:`scan_set` found in one ``<device>_<ACC>`` folder."""

    root: Path
    device: str
    accumulator: str
    files: list[KernelFile] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)

    @property
    def function(self) -> str:
        return entry_point(self.device, self.accumulator)

    def by_shape(self) -> dict[Shape, KernelFile]:
        return {f.shape: f for f in self.files}

    def content_hash(self) -> str:
        """A hash of the set's usable content: (shape, file hash) pairs, independent of the path."""
        h = hashlib.sha256()
        h.update(f"{self.device}_{self.accumulator}\n".encode())
        for f in self.files:
            h.update(f"{f.shape} {f.sha256}\n".encode())
        return h.hexdigest()


# ----------------------------------------------------------------------------------------------
# Names
# ----------------------------------------------------------------------------------------------


def normalize_accumulator(text: str) -> str:
    """'F32F16F16F32' / 'F16F16F16F16' from those names (any case) or 'fp32' / 'fp16'."""
    acc = _ACC_ALIASES.get(text.strip().lower())
    if acc is None:
        raise UsageError(f"accumulator must be F32F16F16F32 (fp32) or F16F16F16F16 (fp16), got {text!r}")
    return acc


def normalize_device(text: str) -> str:
    label = text.strip().lower()
    if not _DEVICE_RE.match(label):
        raise UsageError(f"device label must be letters and digits (e.g. h100), got {text!r}")
    return label


def entry_point(device: str, accumulator: str) -> str:
    """The function a SPEC section 4 file defines: ``cuda_l2_<device>_<fp32|fp16>``."""
    return f"cuda_l2_{normalize_device(device)}_{ACCUMULATORS[normalize_accumulator(accumulator)]}"


def parse_set_dir_name(name: str) -> tuple[str, str] | None:
    """('h100', 'F32F16F16F32') from 'h100_F32F16F16F32'; None for other names."""
    m = _SET_DIR_RE.match(name)
    if not m:
        return None
    return m.group(1).lower(), m.group(2)


# ----------------------------------------------------------------------------------------------
# Source text
# ----------------------------------------------------------------------------------------------


def strip_comments(text: str) -> str:
    """C/C++ source with comments replaced by spaces and string/char literals emptied.

    Line structure is kept (newlines stay) so that positions stay meaningful; a literal keeps its
    quotes but loses its content, so nothing inside a string or a comment matches a pattern.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if ch == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" ")
            i = j
        elif ch == "/" and nxt == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(" " + "\n" * text.count("\n", i, j))
            i = j
        elif ch == "R" and nxt == '"' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            # raw string literal R"delim( ... )delim"
            open_paren = text.find("(", i + 2)
            if open_paren < 0:
                out.append(ch)
                i += 1
                continue
            delim = text[i + 2 : open_paren]
            close = text.find(")" + delim + '"', open_paren + 1)
            j = n if close < 0 else close + len(delim) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif ch == "'" and i > 0 and text[i - 1].isdigit() and not text.endswith("u8", 0, i):
            out.append(ch)  # C++14 digit separator (1'024), not a character literal
            i += 1
        elif ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(ch + ch)
            i = j
        else:
            # copy a run of ordinary characters at once
            j = i + 1
            while j < n and text[j] not in "/\"'R":
                j += 1
            out.append(text[i:j])
            i = j
    return "".join(out)


def parse_tiles(source: str) -> tuple[int, int, int] | None:
    """The padding rule's (BM, BN, BK) from a kernel's source text, or None (see module doc)."""
    found: dict[str, int] = {}
    for m in _TILE_RE.finditer(strip_comments(source)):
        value = int(m.group(2))
        if value < 1:
            continue
        dim = m.group(1)
        found[dim] = math.lcm(found[dim], value) if dim in found else value
    if not found:
        return None
    return (found.get("M", 1), found.get("N", 1), found.get("K", 1))


def mentions_identifier(source: str, name: str) -> bool:
    """True when ``name`` occurs as a whole identifier outside comments and string literals."""
    return (
        re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", strip_comments(source)) is not None
    )


def padded_shape(shape: Shape, pad: tuple[int, int, int] | None) -> Shape:
    """``shape`` with each dimension rounded up to a multiple of its tile size (unchanged for None)."""
    if pad is None:
        return shape
    dims = []
    for value, tile in zip(shape.astuple(), pad, strict=True):
        if tile < 1:
            raise ValueError(f"tile sizes must be positive, got {pad}")
        dims.append(-(-value // tile) * tile)
    return Shape(*dims)


# ----------------------------------------------------------------------------------------------
# Scanning
# ----------------------------------------------------------------------------------------------


def _choose_root(path: Path, device: str | None, accumulator: str | None) -> tuple[Path, str, str]:
    """The ``<device>_<ACC>`` folder to scan and its labels."""
    if not path.exists():
        raise IOFailure(f"kernel set not found: {path}")
    if not path.is_dir():
        raise UsageError(f"a kernel set is a folder (<device>_<ACC>/M_N_K.cu), got a file: {path}")
    want_dev = normalize_device(device) if device else None
    want_acc = normalize_accumulator(accumulator) if accumulator else None
    resolved = path.resolve()

    own = parse_set_dir_name(resolved.name)
    if own is not None:
        dev, acc = own
        if (want_dev and want_dev != dev) or (want_acc and want_acc != acc):
            raise UsageError(
                f"{resolved.name} is a {dev} {acc} set, but {want_dev or dev} {want_acc or acc} was asked for"
            )
        return resolved, dev, acc

    try:
        children = sorted(resolved.iterdir())
    except OSError as exc:
        raise IOFailure(f"cannot list {path}: {exc.strerror or exc}") from exc

    # A folder of .cu files under another name is a set only when both labels are given.
    if want_dev and want_acc and any(c.suffix == ".cu" and c.is_file() for c in children):
        return resolved, want_dev, want_acc

    sets = []
    for child in children:
        labels = parse_set_dir_name(child.name)
        if labels is None or child.is_symlink() or not child.is_dir():
            continue
        if (want_dev and labels[0] != want_dev) or (want_acc and labels[1] != want_acc):
            continue
        sets.append((child, *labels))
    if not sets:
        wanted = " ".join(x for x in (want_dev, want_acc) if x)
        raise BadInputError(
            f"no <device>_<ACC> kernel-set folder{' for ' + wanted if wanted else ''} in {path} "
            "(expected e.g. h100_F32F16F16F32/ holding M_N_K.cu files)"
        )
    if len(sets) > 1:
        names = ", ".join(s[0].name for s in sets)
        raise UsageError(
            f"{path} holds several kernel sets ({names}); name one, e.g. {path / sets[0][0].name}"
        )
    return sets[0]


def _size(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n}-byte"


def _read_limited(path: Path, max_bytes: int) -> bytes:
    with open(path, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise _TooLarge
    return data


class _TooLarge(Exception):
    pass


def scan_set(
    path: str | os.PathLike[str],
    device: str | None = None,
    accumulator: str | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> KernelSetScan:
    """Scan a kernel set (the ``<device>_<ACC>`` folder or its parent); see the module doc.

    Raises IOFailure (missing or unlistable), UsageError (a file, or several sets and none
    chosen, or labels that contradict the folder's name) and BadInputError (no set folder, or no
    usable kernel file), each with a one-line message.
    """
    root, dev, acc = _choose_root(Path(path), device, accumulator)
    function = entry_point(dev, acc)
    scan = KernelSetScan(root=root, device=dev, accumulator=acc)
    chosen: dict[Shape, KernelFile] = {}
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        raise IOFailure(f"cannot list {root}: {exc.strerror or exc}") from exc

    for entry in entries:
        rel = entry.name
        entry_path = Path(entry.path)
        problem = None
        try:
            if entry.is_symlink():
                target = Path(os.path.realpath(entry_path))
                if not target.is_relative_to(root):
                    problem = "symbolic link pointing outside the set (not followed)"
                elif not target.exists():
                    problem = "broken symbolic link"
            if problem is None:
                st = entry_path.stat()
                if stat.S_ISDIR(st.st_mode):
                    problem = "folder inside the set (not scanned)"
                elif not stat.S_ISREG(st.st_mode):
                    problem = "not a regular file"
                elif entry_path.suffix != ".cu":
                    problem = "not a .cu file"
                elif st.st_size > max_bytes:
                    problem = f"larger than the {_size(max_bytes)} limit ({st.st_size} bytes)"
        except OSError as exc:
            problem = f"cannot read: {exc.strerror or exc}"
        if problem is not None:
            scan.problems.append((rel, problem))
            continue

        try:
            shape = parse_mnk(entry_path.stem)
        except UsageError:
            scan.problems.append((rel, "name is not M_N_K.cu with positive integers"))
            continue
        canonical = entry_path.stem == str(shape)
        if shape in chosen and (chosen[shape].path.stem == str(shape) or not canonical):
            scan.problems.append((rel, f"same shape as {chosen[shape].rel} (skipped)"))
            continue

        try:
            data = _read_limited(entry_path, max_bytes)
        except _TooLarge:
            scan.problems.append((rel, f"larger than the {_size(max_bytes)} limit"))
            continue
        except OSError as exc:
            scan.problems.append((rel, f"cannot read: {exc.strerror or exc}"))
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            scan.problems.append((rel, "not UTF-8 text"))
            continue
        if not mentions_identifier(text, function):
            scan.problems.append((rel, f"does not define {function} (SPEC section 4 entry point)"))
            continue

        if shape in chosen:  # a canonical name replaces e.g. 064_64_64.cu
            scan.problems.append((chosen[shape].rel, f"same shape as {rel} (skipped)"))
        chosen[shape] = KernelFile(
            shape=shape,
            path=entry_path,
            rel=rel,
            sha256=hashlib.sha256(data).hexdigest(),
            function=function,
            pad=parse_tiles(text),
        )

    scan.files = sorted(chosen.values(), key=lambda f: f.shape)
    scan.problems.sort()
    if not scan.files:
        detail = (
            f"; skipped {len(scan.problems)}: {scan.problems[0][0]} ({scan.problems[0][1]})"
            if scan.problems
            else ""
        )
        raise BadInputError(f"no usable M_N_K.cu kernel files in {root}{detail}")
    return scan
