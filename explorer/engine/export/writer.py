"""Write an export's files into a folder: atomically, never outside it, never over a user's files.

The files are written into a fresh temporary folder beside the target (same file system), then
renamed into place in one step; any failure removes the temporary folder, so a failed export
leaves nothing half-written. A target that exists and is not empty is refused unless ``force``:
then it is moved aside, the new folder renamed in, and the old one deleted (put back if the
rename fails). Relative paths are checked (no absolute paths, no ``..``, no empty or odd
components), files are created exclusively without following links, and every written path is
checked to resolve inside the temporary folder.

A target that is itself a symbolic link is refused (even with ``force``): following it would write
somewhere the user did not name, and replacing it would turn their link into a folder. Give the
link's target instead.
"""

from __future__ import annotations

import keyword
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from cuda_l2_explorer.db.errors import IOFailure, UsageError

MAX_IDENTIFIER = 64
_SAFE_COMPONENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")


class ExportExists(UsageError):
    """The target folder exists and is not empty, and ``force`` was not given."""


def safe_identifier(text: str, fallback: str = "hgemm") -> str:
    """A lowercase Python identifier (also a valid C identifier and file name) made from ``text``.

    Runs of anything but letters and digits become one ``_``; a leading digit gets a ``k_``
    prefix; keywords get a trailing ``_``; at most 64 characters. Idempotent.
    """
    ident = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    if not ident:
        ident = fallback
    if ident[0].isdigit():
        ident = f"k_{ident}"
    ident = ident[:MAX_IDENTIFIER].rstrip("_")
    if keyword.iskeyword(ident) or keyword.issoftkeyword(ident):
        ident = f"{ident}_"
    return ident


def check_relative(path: str) -> PurePosixPath:
    """``path`` as a safe relative path (each component a plain name), or UsageError."""
    rel = PurePosixPath(path)
    if not path or rel.is_absolute() or "\\" in path or "\x00" in path:
        raise UsageError(f"refusing to write {path!r}: not a plain relative path")
    for part in path.split("/"):  # the raw components: PurePosixPath would drop "." and "a//b"
        if part in (".", "..") or not _SAFE_COMPONENT.match(part):
            raise UsageError(f"refusing to write {path!r}: component {part!r} is not a plain name")
    return rel


def _check_target(out_dir: Path, force: bool) -> bool:
    """Whether the target exists (as a folder); refuse links, non-folders and, without force, content."""
    if out_dir.is_symlink():
        raise UsageError(f"{out_dir} is a symbolic link; give the folder it points to instead")
    if not out_dir.exists():
        return False
    if not out_dir.is_dir():
        raise UsageError(f"{out_dir} exists and is not a folder")
    if not force and any(out_dir.iterdir()):
        raise ExportExists(f"{out_dir} exists and is not empty; pass --force to replace it")
    return True


def _write_file(root: Path, rel: PurePosixPath, text: str) -> Path:
    target = root.joinpath(*rel.parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.parent.resolve().is_relative_to(root.resolve()):
        raise UsageError(f"refusing to write {rel}: it resolves outside the export folder")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    return target


def write_tree(files: Mapping[str, str], out_dir: str | os.PathLike[str], force: bool = False) -> list[Path]:
    """Write ``files`` ({relative path: text}) as the folder ``out_dir``; return the paths written."""
    rels = [check_relative(p) for p in files]
    if len({r.as_posix().lower() for r in rels}) != len(rels):
        raise UsageError("two exported files would have the same name")
    out_dir = Path(os.path.abspath(os.fspath(out_dir)))
    if out_dir.parent == out_dir:
        raise UsageError("refusing to export into the root folder")
    parent = out_dir.parent
    if not parent.is_dir():
        raise IOFailure(f"cannot export into {out_dir}: the folder {parent} does not exist")
    existed = _check_target(out_dir, force)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.export-", dir=parent))
    except OSError as exc:
        raise IOFailure(f"cannot write in {parent}: {exc.strerror or exc}") from exc
    aside: Path | None = None
    try:
        for rel, text in zip(rels, files.values(), strict=True):
            _write_file(staging, rel, text)
        for folder, _, _ in os.walk(staging):
            os.chmod(folder, 0o755)
        if existed:
            # Checked again right before the swap: the folder may have changed meanwhile.
            existed = _check_target(out_dir, force)
        if existed:
            aside = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=parent))
            os.rename(out_dir, aside / "old")
        try:
            os.rename(staging, out_dir)
        except OSError:
            if aside is not None:
                os.rename(aside / "old", out_dir)
            raise
    except OSError as exc:
        raise IOFailure(f"export to {out_dir} failed, nothing was written: {exc.strerror or exc}") from exc
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
        # The old folder is deleted once the new one is in place (or it was put back); if neither
        # rename worked it stays in the hidden folder beside the target rather than being lost.
        if aside is not None and (out_dir.exists() or not (aside / "old").exists()):
            shutil.rmtree(aside, ignore_errors=True)
    return [out_dir.joinpath(*r.parts) for r in rels]
