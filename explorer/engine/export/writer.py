"""Write an export's files into a folder: atomically, never outside it, never over a user's files.

The files are written into a fresh temporary folder beside the target (same file system), then
renamed into place in one step; any failure removes the temporary folder, so a failed export
leaves nothing half-written. Relative paths are checked (no absolute paths, no ``..``, no empty or
odd components), files are created exclusively without following links, and every written path is
checked to resolve inside the temporary folder.

Each export also writes a manifest of its own files (``.cuda-l2-explorer-export.json``: relative
path -> sha256). A target that exists and is not empty is refused unless ``force``, and ``force``
replaces only a folder that the manifest accounts for: every file in it one the export wrote and
unchanged since, every folder one of theirs. Anything else (a file of the user's, an edit, a
link, a build folder) and the target is refused, whole. The old folder is moved aside, the new one
renamed in, the old one checked once more and deleted; had it changed meanwhile, the two are
swapped back and the export refused.

Some targets are refused even with ``force``: the root, the home folder, and the working folder
or any folder above it (``--out .``, ``--out ''``, ``--out ~``): an export creates its folder, it
never becomes the folder a user works in. A target that is itself a symbolic link is refused too:
following it would write somewhere the user did not name, and replacing it would turn their link
into a folder. Give the link's target instead.
"""

from __future__ import annotations

import hashlib
import json
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
# The export's own record of what it wrote; hidden, so it stays out of a listing and a package.
MANIFEST_NAME = ".cuda-l2-explorer-export.json"
_MANIFEST_TOOL = "cuda-l2-explorer export"
_MANIFEST_MAX_BYTES = 1 << 20


class ExportExists(UsageError):
    """The target folder exists and is not empty, and ``force`` was not given."""


class NotOurExport(UsageError):
    """``force`` was given, but the target holds something that no export wrote."""


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


def _refuse_protected(out_dir: Path) -> None:
    """The root, the home folder and the working folder or any above it are never a target."""
    if out_dir.parent == out_dir:
        raise UsageError("refusing to export into the root folder")
    real = Path(os.path.realpath(out_dir))
    try:
        cwd = Path(os.path.realpath(os.getcwd()))
    except OSError:  # the working folder was deleted: it cannot be the target
        cwd = None
    if cwd is not None and cwd.is_relative_to(real):
        raise UsageError(
            f"refusing to export into {out_dir}: it is the current folder or one above it; "
            "name a new folder for the export, e.g. ./my_hgemm"
        )
    home = os.path.expanduser("~")
    if home != "~" and real == Path(os.path.realpath(home)):
        raise UsageError(f"refusing to export into the home folder {out_dir}; name a new folder in it")


def _check_target(out_dir: Path, force: bool) -> bool:
    """Whether the target exists (as a folder); refuse links, non-folders and, without force, content;
    with force, content that no export wrote."""
    if out_dir.is_symlink():
        raise UsageError(f"{out_dir} is a symbolic link; give the folder it points to instead")
    if not out_dir.exists():
        return False
    if not out_dir.is_dir():
        raise UsageError(f"{out_dir} exists and is not a folder")
    if any(out_dir.iterdir()):
        if not force:
            raise ExportExists(f"{out_dir} exists and is not empty; pass --force to replace it")
        _check_only_ours(out_dir, out_dir)
    return True


def _check_only_ours(folder: Path, shown: Path) -> None:
    """Raise NotOurExport unless every entry of ``folder`` is a file its export manifest lists,
    unchanged, or a folder on the way to one (``shown``: the name the user gave, for messages)."""
    written = _read_manifest(folder, shown)
    needed_dirs = {p for rel in written for p in PurePosixPath(rel).parents if p != PurePosixPath(".")}
    for root, dirs, names in os.walk(folder):
        here = PurePosixPath(Path(root).relative_to(folder).as_posix())
        for name in sorted(dirs):
            if (Path(root) / name).is_symlink() or here / name not in needed_dirs:
                raise _not_ours(shown, f"it holds {here / name}/, which no export wrote")
        for name in sorted(names):
            rel, path = (here / name).as_posix(), Path(root) / name
            if rel == MANIFEST_NAME:
                continue
            if rel not in written or path.is_symlink() or not path.is_file():
                raise _not_ours(shown, f"it holds {rel}, which no export wrote")
            if _sha256_file(path) != written[rel]:
                raise _not_ours(shown, f"{rel} was changed since the export wrote it")


def _not_ours(shown: Path, why: str) -> NotOurExport:
    return NotOurExport(
        f"refusing to replace {shown}: {why}; --force replaces only what an export wrote, so move "
        "your files out of the folder or delete it yourself"
    )


def _read_manifest(folder: Path, shown: Path) -> dict[str, str]:
    """{relative path: sha256} of the export that wrote ``folder``, or NotOurExport."""
    path = folder / MANIFEST_NAME
    if path.is_symlink() or not path.is_file():
        raise _not_ours(shown, f"no export wrote it (it has no {MANIFEST_NAME})")
    try:
        with open(path, "rb") as fh:
            data = json.loads(fh.read(_MANIFEST_MAX_BYTES + 1))
        files = data.get("files") if isinstance(data, dict) and data.get("tool") == _MANIFEST_TOOL else None
        if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
            raise ValueError("it lists no files")
        for rel in files:
            check_relative(rel)
    except (OSError, ValueError, UsageError) as exc:
        raise _not_ours(shown, f"its {MANIFEST_NAME} cannot be read ({exc})") from exc
    return files


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _manifest_text(files: Mapping[str, str]) -> str:
    hashes = {rel: hashlib.sha256(text.encode("utf-8")).hexdigest() for rel, text in sorted(files.items())}
    return json.dumps({"tool": _MANIFEST_TOOL, "files": hashes}, indent=2) + "\n"


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
    """Write ``files`` ({relative path: text}) and the export's manifest as the folder ``out_dir``;
    return the paths written, the manifest last. (A rendered file cannot be named like the
    manifest: check_relative refuses a leading dot.)"""
    rels = [check_relative(p) for p in files]
    if len({r.as_posix().lower() for r in rels}) != len(rels):
        raise UsageError("two exported files would have the same name")
    out_dir = Path(os.path.abspath(os.fspath(out_dir)))
    _refuse_protected(out_dir)
    parent = out_dir.parent
    if not parent.is_dir():
        why = "is a file, not a folder" if parent.exists() else "does not exist"
        raise IOFailure(f"cannot export into {out_dir}: {parent} {why}")
    existed = _check_target(out_dir, force)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.export-", dir=parent))
    except OSError as exc:
        raise IOFailure(f"cannot write in {parent}: {exc.strerror or exc}") from exc
    aside: Path | None = None
    swapped = False
    try:
        for rel, text in zip(rels, files.values(), strict=True):
            _write_file(staging, rel, text)
        _write_file(staging, PurePosixPath(MANIFEST_NAME), _manifest_text(files))
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
        swapped = True
        if aside is not None and any((aside / "old").iterdir()):
            try:  # the last look before anything is deleted: a file written since is the user's
                _check_only_ours(aside / "old", out_dir)
            except NotOurExport:
                swapped = False  # from here on the old folder is kept whatever fails
                os.rename(out_dir, staging)
                os.rename(aside / "old", out_dir)
                raise
    except OSError as exc:
        raise IOFailure(f"export to {out_dir} failed, nothing was written: {exc.strerror or exc}") from exc
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
        # The old folder is deleted once the new one is in place and it held only the export's own
        # files (or once it was put back); if neither rename worked it stays in the hidden folder
        # beside the target rather than being lost.
        if aside is not None and (swapped or not (aside / "old").exists()):
            shutil.rmtree(aside, ignore_errors=True)
    return [out_dir.joinpath(*r.parts) for r in rels] + [out_dir / MANIFEST_NAME]
