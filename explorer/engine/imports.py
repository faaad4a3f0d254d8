"""Published results (SPEC §5) into the store: the files the reference repository publishes, each
loaded (fetched, validated) first, then all imported in one transaction. The work is the
importer's; this is the one door the front ends use."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cuda_l2_explorer.db import writes
from cuda_l2_explorer.db.errors import BadInputError, IOFailure
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.engine.feedback import SILENT, Feedback
from cuda_l2_explorer.importer.fetch import FetchOptions
from cuda_l2_explorer.importer.kernelset import scan_set
from cuda_l2_explorer.importer.published import (
    UPSTREAM_BASE,
    UPSTREAM_FILES,
    ImportResult,
    PublishedFile,
    import_published,
    load_published,
    source_name,
)
from cuda_l2_explorer.importer.remote_set import (
    FetchedSets,
    fetch_sets,
    find_set_folders,
    looks_like_archive,
    one_set,
    set_name_for,
)

__all__ = [
    "FetchOptions",
    "ImportResult",
    "ImportedSet",
    "PublishedFile",
    "SetFolder",
    "check_store_for_import",
    "fetch_kernel_sets",
    "import_kernel_sets",
    "import_published",
    "kernel_set_folder",
    "load_published",
    "open_store_for_import",
    "source_name",
    "upstream_sources",
]


def upstream_sources(base: str | None = None) -> list[str]:
    """The URL of every file the reference repository publishes (``base``: a mirror of its folder)."""
    root = (base or UPSTREAM_BASE).rstrip("/")
    return [f"{root}/{name}" for name in UPSTREAM_FILES]


def check_store_for_import(db: Path | None) -> None:
    """Refuse a store an import could not write before its sources are downloaded and read."""
    Store.check_writable(db)


def open_store_for_import(db: Path | None) -> Store:
    """The store, writable, without the views over the bundled dataset: an import reads and writes
    only the store's own tables, and building the views is a third of a small import's time."""
    return Store.open(db, views=False)


# ----------------------------------------------------------------------------------------------
# Kernel sets (SPEC §4) from a folder, an archive, an archive URL or a GitHub repository
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SetFolder:
    """A kernel set's folder on this machine and what the store should say of it."""

    path: Path
    name: str | None  # the set name its source suggests (None: the folder's parent, as always)
    description: str | None  # where its files came from, for a downloaded or unpacked archive


@dataclass(frozen=True)
class ImportedSet:
    """A kernel set ``import-kernels`` stored (its folder; nothing built or measured yet)."""

    set_id: str
    gpu: str
    accumulator: str
    kernels: int  # usable M_N_K.cu files
    padded: int  # of them, files that declare tiles (the padding rule applies)
    skipped: int  # entries of the folder that are no usable kernel file
    folder: str
    source: str


def fetch_kernel_sets(
    source: str, options: FetchOptions | None = None, feedback: Feedback = SILENT
) -> FetchedSets:
    """An archive's or a repository's kernel sets, downloaded (with a progress bar) and unpacked
    into the cache."""
    bar = feedback.bar(f"downloading {source.split('#', 1)[0]}")
    try:
        fetched = fetch_sets(source, options, bar.bytes)
    finally:
        bar.close()
    a = fetched.archive
    how = "reused from the cache" if a.reused else "unpacked"
    feedback.say(f"{how}: {a.files} files, {a.bytes / 1e6:.1f} MB in {a.folder}")
    for name, why in a.skipped[:20]:
        feedback.say(f"not unpacked: {name}: {why}")
    if len(a.skipped) > 20:
        feedback.say(f"not unpacked: {len(a.skipped) - 20} more")
    return fetched


def kernel_set_folder(
    source: str, options: FetchOptions | None = None, feedback: Feedback = SILENT
) -> SetFolder:
    """The one set folder an archive (file or URL) or a GitHub repository holds, fetched and
    unpacked first (UsageError when it holds several sets)."""
    fetched = fetch_kernel_sets(source, options, feedback)
    folder = one_set(fetched)
    return SetFolder(folder, set_name_for(fetched, folder), fetched.description())


def import_kernel_sets(
    store_path: Path | None,
    source: str,
    set_name: str | None = None,
    options: FetchOptions | None = None,
    feedback: Feedback = SILENT,
) -> list[ImportedSet]:
    """Every kernel set ``source`` holds (a folder, an archive, an archive URL or a GitHub
    repository), scanned and stored with its folder in one transaction, ready for
    ``bench --set SET_ID``. Nothing is built or measured."""
    Store.check_writable(store_path)  # before a download, not after it
    if looks_like_archive(source):
        fetched = fetch_kernel_sets(source, options, feedback)
        found = [(f, set_name or set_name_for(fetched, f)) for f in fetched.folders]
        description = fetched.description()
    else:
        base = Path(source).expanduser()
        if not base.is_dir():
            raise IOFailure(f"kernel set not found: {base}")
        folders = find_set_folders(base.resolve())
        if not folders:
            raise BadInputError(f"no <device>_<ACC> kernel-set folder (e.g. h100_F32F16F16F32/) in {base}")
        found = [(f, set_name or f.parent.name or "set") for f in folders]
        description = None
    imported = []
    for folder, name in found:
        try:
            scan = scan_set(folder)
        except BadInputError as exc:  # a folder with no usable file: said, not stored
            feedback.say(f"skipped {folder}: {exc}")
            continue
        imported.append(
            ImportedSet(
                set_id=f"{name}/{scan.device}_{scan.accumulator}",
                gpu=scan.device,
                accumulator=scan.accumulator,
                kernels=len(scan.files),
                padded=sum(1 for f in scan.files if f.pad is not None),
                skipped=len(scan.problems),
                folder=str(scan.root),
                source=source,
            )
        )
    if not imported:
        raise BadInputError(f"no usable M_N_K.cu kernel files in any kernel-set folder of {source}")
    with Store.open(store_path, with_bundled=False, views=False) as store, store.transaction():
        for s in imported:
            writes.upsert_kernel_set(store, s.set_id, s.gpu, s.accumulator, "imported", s.folder, description)
    return imported
