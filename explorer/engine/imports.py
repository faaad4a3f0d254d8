"""Published results (SPEC §5) into the store: the files the reference repository publishes, each
loaded (fetched, validated) first, then all imported in one transaction. The work is the
importer's; this is the one door the front ends use."""

from __future__ import annotations

from pathlib import Path

from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.importer.fetch import FetchOptions
from cuda_l2_explorer.importer.published import (
    UPSTREAM_BASE,
    UPSTREAM_FILES,
    ImportResult,
    PublishedFile,
    import_published,
    load_published,
    source_name,
)

__all__ = [
    "FetchOptions",
    "ImportResult",
    "PublishedFile",
    "import_published",
    "load_published",
    "open_store_for_import",
    "source_name",
    "upstream_sources",
]


def upstream_sources(base: str | None = None) -> list[str]:
    """The URL of every file the reference repository publishes (``base``: a mirror of its folder)."""
    root = (base or UPSTREAM_BASE).rstrip("/")
    return [f"{root}/{name}" for name in UPSTREAM_FILES]


def open_store_for_import(db: Path | None) -> Store:
    """The store, writable, without the views over the bundled dataset: an import reads and writes
    only the store's own tables, and building the views is a third of a small import's time."""
    return Store.open(db, views=False)
