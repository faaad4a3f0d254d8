"""Kernel sets from elsewhere: a GitHub repository, an archive URL or an archive file, fetched,
unpacked safely into a cache and searched for SPEC §4 ``<device>_<ACC>`` folders.

What a source may be (:func:`parse_source`):

- ``https://github.com/OWNER/REPO`` (the default branch) or ``.../tree/REF[/PATH]`` (a branch, tag
  or commit, and a folder in it, as a browser shows them; a REF with a slash cannot be told from
  its PATH: use the commit or ``OWNER/REPO#PATH`` then). Fetched as GitHub's tarball of that ref.
  A GitHub download link (``.../archive/...``, ``.../releases/download/...``) is an archive URL.
- any other ``http(s)://`` URL of a tar (gzip, bzip2, xz or none) or zip archive; ``#PATH`` after
  it picks a folder inside.
- a local archive file, with the same ``#PATH``.

An archive is unpacked once per content (its SHA-256 names the cache folder), into a temporary
folder renamed into place when complete, so a crash or a second process never leaves or sees half
of one. Unpacking takes regular files and folders only: links, devices and names that would land
outside the folder (absolute, ``..``) are skipped and reported, and the members' total size, their
count and the download are capped, so a hostile archive can neither write elsewhere nor fill the disk.

Only the standard library is used here (httpx through :mod:`.fetch`, for URLs).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import stat
import tarfile
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO
from urllib.parse import unquote, urlparse

from cuda_l2_explorer.db.errors import BadInputError, IOFailure, UsageError
from cuda_l2_explorer.importer.fetch import FetchOptions, ProgressCallback, fetch_url, is_url, read_local
from cuda_l2_explorer.importer.harness.toolchain import cache_dir
from cuda_l2_explorer.importer.kernelset import parse_set_dir_name
from cuda_l2_explorer.importer.set_limits import DEFAULT_DOWNLOAD_TIMEOUT_S, DEFAULT_MAX_DOWNLOAD

ENV_CACHE = "CUDA_L2_EXPLORER_SET_CACHE"  # where unpacked sets live (default ~/.cache/cuda-l2-explorer/sets)
ENV_GITHUB_API = "CUDA_L2_EXPLORER_GITHUB_API"  # GitHub's API root (GitHub Enterprise: https://HOST/api/v3)
GITHUB_API = "https://api.github.com"
# Where GitHub's downloads redirect to: the API's and the "Download ZIP" archives (codeload), and
# release assets. The only hosts a redirect may lead to besides the URL's own.
GITHUB_DOWNLOAD_HOSTS = frozenset(
    {"codeload.github.com", "objects.githubusercontent.com", "release-assets.githubusercontent.com"}
)

DEFAULT_MAX_UNPACKED = 2 << 30
DEFAULT_MAX_MEMBERS = 100_000
MAX_SET_DEPTH = 6  # how deep under the archive's folder a <device>_<ACC> folder is looked for

_GITHUB_HOSTS = {"github.com", "www.github.com"}
_NAME_PART = re.compile(r"^[A-Za-z0-9._-]+$")
_ARCHIVE_SUFFIXES = (".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".tbz2", ".txz", ".tar", ".zip")
_COMPLETE = "source.json"
# What a truncated or corrupt archive raises while its members are read.
_BROKEN = (
    tarfile.TarError,
    zipfile.BadZipFile,
    EOFError,
    zlib.error,
    NotImplementedError,
)  # written last into a cache entry: its presence means the entry is whole


@dataclass(frozen=True)
class UnpackLimits:
    max_bytes: int = DEFAULT_MAX_UNPACKED  # the members' total size
    max_members: int = DEFAULT_MAX_MEMBERS


@dataclass(frozen=True)
class SetSource:
    """Where a kernel set comes from, as :func:`parse_source` reads the user's text."""

    text: str  # as given
    archive: str  # the archive's URL, or its local path
    subpath: str  # a folder inside the archive ('' for the whole), '/'-separated
    name: str  # the set name to store it under unless told otherwise
    redirect_hosts: frozenset[str] = frozenset()
    repository: bool = False  # a GitHub repository or download link: ``name`` is its sets' name

    @property
    def remote(self) -> bool:
        return is_url(self.archive)

    def with_subpath(self, subpath: str) -> str:
        """The source text that picks ``subpath`` inside the same archive."""
        base = self.text.split("#", 1)[0]
        return f"{base}#{subpath}"


@dataclass(frozen=True)
class UnpackedArchive:
    """An archive unpacked into the cache."""

    folder: Path  # the archive's content: its one top folder when it has one (GitHub's do)
    sha256: str
    files: int
    bytes: int
    skipped: tuple[tuple[str, str], ...] = ()  # (member name, why) for what was not unpacked
    reused: bool = False  # found whole in the cache, not unpacked again
    topped: bool = False  # ``folder`` is the archive's one top folder, not the root of its content


@dataclass(frozen=True)
class FetchedSets:
    """The SPEC §4 set folders a source holds."""

    source: SetSource
    archive: UnpackedArchive
    base: Path  # the folder the source names inside the archive
    folders: list[Path] = field(default_factory=list)

    def relative(self, folder: Path) -> str:
        """``folder``'s path inside the archive ('/'-separated), as ``#PATH`` takes it."""
        return folder.relative_to(self.archive.folder).as_posix()

    def description(self) -> str:
        """One line of provenance for the store: where the set came from, which bytes."""
        return (
            f"from {self.source.text} (archive sha256 {self.archive.sha256[:16]}, {self.archive.folder.name})"
        )


def looks_like_archive(text: str) -> bool:
    """True for a URL, or for a path to an existing regular file (a folder is a set itself)."""
    if is_url(text):
        return True
    path = Path(text.split("#", 1)[0]).expanduser()
    return path.is_file()


# ----------------------------------------------------------------------------------------------
# Sources
# ----------------------------------------------------------------------------------------------


def parse_source(text: str) -> SetSource:
    """The archive to fetch, the folder inside it and the default set name; UsageError when
    ``text`` is neither a URL of one of the forms in the module doc nor an archive file."""
    raw = text.strip()
    if not raw:
        raise UsageError("empty kernel-set source")
    base, _, fragment = raw.partition("#")
    subpath = _clean_subpath(unquote(fragment), raw)
    if not is_url(base):
        path = Path(base).expanduser()
        if not path.is_file():
            raise IOFailure(f"no such archive file: {path}")
        return SetSource(raw, str(path), subpath, _archive_stem(path.name))
    url = urlparse(base)
    if not url.hostname:
        raise UsageError(f"not a URL: {text!r}")
    if url.hostname.lower() in _GITHUB_HOSTS:
        return _github_source(raw, base, url.path, subpath)
    return SetSource(raw, base, subpath, _archive_stem(unquote(url.path.rsplit("/", 1)[-1])) or url.hostname)


def _github_source(raw: str, base: str, path: str, subpath: str) -> SetSource:
    parts = [unquote(p) for p in path.split("/") if p]
    if len(parts) < 2:
        raise UsageError(f"a GitHub source is https://github.com/OWNER/REPO[/tree/REF[/PATH]], got {raw!r}")
    owner, repo = parts[0], parts[1].removesuffix(".git")
    if not (_NAME_PART.match(owner) and _NAME_PART.match(repo)):
        raise UsageError(f"not a GitHub owner/repository: {owner}/{repo}")
    ref = ""
    rest = parts[2:]
    if rest and rest[0] in ("archive", "releases"):  # a download link: the archive itself
        return SetSource(raw, base, subpath, repo.lower(), GITHUB_DOWNLOAD_HOSTS, repository=True)
    if rest:
        if rest[0] not in ("tree", "blob") or len(rest) < 2:
            raise UsageError(
                f"a GitHub source is https://github.com/OWNER/REPO[/tree/REF[/PATH]], got {raw!r}"
            )
        ref = rest[1]
        in_tree = "/".join(rest[2:])
        if in_tree and subpath:
            raise UsageError(f"give the folder once: in the /tree/REF/PATH or after '#', not both: {raw!r}")
        subpath = subpath or _clean_subpath(in_tree, raw)
    api = os.environ.get(ENV_GITHUB_API, GITHUB_API).rstrip("/")
    archive = f"{api}/repos/{owner}/{repo}/tarball" + (f"/{ref}" if ref else "")
    return SetSource(raw, archive, subpath, repo.lower(), GITHUB_DOWNLOAD_HOSTS, repository=True)


def _clean_subpath(text: str, raw: str) -> str:
    parts = [p for p in text.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UsageError(f"a folder inside the archive may not contain '..': {raw!r}")
    return "/".join(parts)


def _archive_stem(name: str) -> str:
    lower = name.lower()
    for suffix in _ARCHIVE_SUFFIXES:
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


# ----------------------------------------------------------------------------------------------
# Unpacking
# ----------------------------------------------------------------------------------------------


def _safe_parts(name: str) -> list[str] | None:
    """The member's path as folder names, or None for one that could land outside the folder."""
    if not name or "\x00" in name or "\\" in name or name.startswith("/"):
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts or re.match(r"^[A-Za-z]:", parts[0]):
        return None
    return parts


@dataclass
class _Member:
    name: str
    kind: str  # 'file', 'dir' or why it is skipped
    size: int  # as its header declares (only a file's counts)
    open: Callable[[], IO[bytes]]  # a binary stream of a file's bytes


def _tar_members(data: bytes) -> Iterator[_Member]:
    try:
        archive = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise BadInputError(f"not a tar or zip archive ({exc})") from exc
    with archive:
        try:
            for info in archive:
                if info.isreg():
                    kind = "file"
                elif info.isdir():
                    kind = "dir"
                elif info.issym() or info.islnk():
                    kind = "link (not followed)"
                else:
                    kind = "not a regular file"
                yield _Member(info.name, kind, info.size, lambda info=info: archive.extractfile(info))
        except _BROKEN as exc:
            raise BadInputError(f"broken tar archive ({exc})") from exc


def _zip_members(data: bytes) -> Iterator[_Member]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError) as exc:
        raise BadInputError(f"broken zip archive ({exc})") from exc
    with archive:
        for info in archive.infolist():
            kind_bits = stat.S_IFMT(info.external_attr >> 16)  # 0 when the zip does not say
            if info.is_dir():
                kind = "dir"
            elif kind_bits == stat.S_IFLNK:
                kind = "link (not followed)"
            elif kind_bits and kind_bits != stat.S_IFREG:
                kind = "not a regular file"
            elif info.flag_bits & 0x1:
                kind = "encrypted (skipped)"
            else:
                kind = "file"
            yield _Member(info.filename, kind, info.file_size, lambda info=info: archive.open(info))


def _members(data: bytes) -> Iterator[_Member]:
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        return _zip_members(data)
    return _tar_members(data)


def unpack(data: bytes, dest: Path, limits: UnpackLimits = UnpackLimits()) -> tuple[int, int, list]:
    """Unpack an archive's regular files and folders under ``dest`` (which must exist); return
    (files, bytes, skipped). BadInputError for what is no archive, is broken or goes over ``limits``."""
    try:
        return _unpack(data, dest, limits)
    except _BROKEN as exc:
        raise BadInputError(f"broken archive ({type(exc).__name__}: {exc})") from exc


def _unpack(data: bytes, dest: Path, limits: UnpackLimits) -> tuple[int, int, list]:
    files = total = count = 0
    skipped: list[tuple[str, str]] = []
    for member in _members(data):
        count += 1
        if count > limits.max_members:
            raise BadInputError(f"archive has more than {limits.max_members} members (the limit)")
        parts = _safe_parts(member.name)
        if parts is None:
            skipped.append((member.name, "name outside the folder (absolute or '..')"))
            continue
        if member.kind not in ("file", "dir"):
            skipped.append((member.name, member.kind))
            continue
        target = dest.joinpath(*parts)
        try:
            if member.kind == "dir":
                target.mkdir(parents=True, exist_ok=True)
                continue
            if total + member.size > limits.max_bytes:  # the header's size: refused before reading
                raise BadInputError(f"archive unpacks to more than {limits.max_bytes} bytes (the limit)")
            target.parent.mkdir(parents=True, exist_ok=True)
            total += _copy_member(member, target, limits.max_bytes - total)
            files += 1
        except (NotADirectoryError, FileExistsError, IsADirectoryError) as exc:
            skipped.append((member.name, f"clashes with another member ({exc.strerror})"))
        except OSError as exc:
            if exc.errno in (28, 122):  # ENOSPC, EDQUOT: nothing later fits either
                raise IOFailure(f"cannot unpack the archive: {exc.strerror}") from exc
            skipped.append((member.name, f"cannot write: {exc.strerror or exc}"))
    return files, total, skipped


def _copy_member(member: _Member, target: Path, budget: int) -> int:
    """Copy a file member's bytes (never more than ``budget``: a member may inflate past the size
    its header declares); a clash with a folder is left to the caller."""
    if target.is_symlink() or target.is_dir():
        raise IsADirectoryError(21, "a folder or link of that name", str(target))
    written = 0
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as out, member.open() as stream:
        while chunk := stream.read(1 << 20):
            written += len(chunk)
            if written > budget:
                raise BadInputError("archive unpacks to more bytes than its members declare (the limit)")
            out.write(chunk)
    return written


# ----------------------------------------------------------------------------------------------
# The cache
# ----------------------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    return cache_dir("sets", ENV_CACHE)


def unpack_cached(
    data: bytes, source: SetSource, cache: Path | None = None, limits: UnpackLimits = UnpackLimits()
) -> UnpackedArchive:
    """The archive unpacked under ``cache``/<sha256>: reused when whole, else unpacked into a
    temporary folder and renamed into place (a second process that got there first wins)."""
    sha = hashlib.sha256(data).hexdigest()
    root = (cache or default_cache_dir()) / sha[:32]
    found = _read_entry(root, sha)
    if found is not None:
        return found
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".unpack-", dir=root.parent))
    except OSError as exc:
        raise IOFailure(f"cannot write the kernel-set cache {root.parent}: {exc.strerror or exc}") from exc
    try:
        (work / "tree").mkdir()
        files, size, skipped = unpack(data, work / "tree", limits)
        if files == 0:
            raise BadInputError(f"the archive from {source.text} holds no files")
        record = {
            "source": source.text,
            "archive": source.archive,
            "sha256": sha,
            "files": files,
            "bytes": size,
            "skipped": skipped,
            "unpacked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        (work / _COMPLETE).write_text(json.dumps(record, indent=1) + "\n")
        try:
            os.rename(work, root)
        except OSError:  # another process unpacked the same bytes meanwhile, or a broken leftover
            found = _read_entry(root, sha)
            if found is not None:
                return found
            shutil.rmtree(root, ignore_errors=True)
            os.rename(work, root)
    except OSError as exc:
        raise IOFailure(f"cannot unpack into {root.parent}: {exc.strerror or exc}") from exc
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    entry = _read_entry(root, sha)
    assert entry is not None
    return replace(entry, reused=False)


def _read_entry(root: Path, sha: str) -> UnpackedArchive | None:
    try:
        record = json.loads((root / _COMPLETE).read_text())
    except (OSError, ValueError):
        return None
    if record.get("sha256") != sha:
        return None
    tree = root / "tree"
    top = [p for p in tree.iterdir()] if tree.is_dir() else []
    topped = len(top) == 1 and top[0].is_dir() and not top[0].is_symlink()
    skipped = tuple((str(n), str(w)) for n, w in record.get("skipped", []))
    folder = top[0] if topped else tree
    return UnpackedArchive(folder, sha, int(record["files"]), int(record["bytes"]), skipped, True, topped)


# ----------------------------------------------------------------------------------------------
# Fetching a source and finding its sets
# ----------------------------------------------------------------------------------------------


def fetch_sets(
    text: str,
    options: FetchOptions | None = None,
    progress: ProgressCallback | None = None,
    *,
    cache: Path | None = None,
    limits: UnpackLimits = UnpackLimits(),
) -> FetchedSets:
    """Download (or read) the source's archive, unpack it into the cache and find its set folders.

    IOFailure: the download or the file failed; BadInputError: not an archive, over a limit, or
    no ``<device>_<ACC>`` folder where the source points; UsageError: a malformed source or a
    ``#PATH`` that is not in the archive.
    """
    source = parse_source(text)
    options = options or FetchOptions(timeout_s=DEFAULT_DOWNLOAD_TIMEOUT_S, max_bytes=DEFAULT_MAX_DOWNLOAD)
    options = replace(
        options, redirect_hosts=options.redirect_hosts | source.redirect_hosts, expect="an archive"
    )
    if source.remote:
        data = fetch_url(source.archive, options, progress)
    else:
        data = read_local(Path(source.archive), options)
    archive = unpack_cached(data, source, cache, limits)
    base = _folder_in(archive, source.subpath)
    if base is None:
        raise UsageError(f"no folder {source.subpath!r} in the archive from {source.text}")
    folders = find_set_folders(base)
    if not folders:
        where = f" under {source.subpath}" if source.subpath else ""
        raise BadInputError(
            f"no <device>_<ACC> kernel-set folder (e.g. h100_F32F16F16F32/){where} in the archive from "
            f"{source.text}"
        )
    return FetchedSets(source, archive, base, folders)


def _folder_in(archive: UnpackedArchive, subpath: str) -> Path | None:
    """``subpath`` inside the archive: under its one top folder (a repository's root in GitHub's
    tarballs), else from the archive's root (``kernels/...`` of a tarball whose one top folder
    is ``kernels``); None when neither is a folder."""
    if not subpath:
        return archive.folder
    parts = subpath.split("/")
    for root in dict.fromkeys((archive.folder, archive.folder.parent if archive.topped else archive.folder)):
        candidate = root.joinpath(*parts)
        if candidate.is_dir() and not candidate.is_symlink():
            return candidate
    return None


def find_set_folders(base: Path, max_depth: int = MAX_SET_DEPTH) -> list[Path]:
    """``<device>_<ACC>`` folders at or under ``base`` (no links followed, none looked into)."""
    if parse_set_dir_name(base.name) is not None:
        return [base]
    found: list[Path] = []
    level = [base]
    for _ in range(max_depth):
        deeper = []
        for folder in level:
            try:
                children = sorted(folder.iterdir())
            except OSError:
                continue
            for child in children:
                if child.is_symlink() or not child.is_dir():
                    continue
                (found if parse_set_dir_name(child.name) is not None else deeper).append(child)
        level = deeper
    return sorted(found)


def set_name_for(fetched: FetchedSets, folder: Path) -> str:
    """The default set name of one of ``fetched``'s folders: a GitHub repository's name; else the
    folder's parent inside the archive, as for a local folder; else the archive's own name."""
    if fetched.source.repository:
        return fetched.source.name
    parent = folder.parent
    if parent != fetched.archive.folder and parent.is_relative_to(fetched.archive.folder):
        return parent.name
    return fetched.source.name or "set"


def one_set(fetched: FetchedSets) -> Path:
    """The one set folder a source names; UsageError listing them when it holds several."""
    if len(fetched.folders) == 1:
        return fetched.folders[0]
    choices = ", ".join(fetched.relative(f) for f in fetched.folders)
    fp32 = [f for f in fetched.folders if f.name.endswith("_F32F16F16F32")]  # the default accumulator
    example = fetched.source.with_subpath(fetched.relative((fp32 or fetched.folders)[0]))
    raise UsageError(
        f"{fetched.source.text} holds {len(fetched.folders)} kernel sets ({choices}): pick one with "
        f"'#PATH' (e.g. {example}), or store them all with `cuda-l2-explorer import-kernels`"
    )
