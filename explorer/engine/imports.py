"""Published results (SPEC §5) into the store: the files the reference repository publishes, each
loaded (fetched, validated) first, then all imported in one transaction. The work is the
importer's; this is the one door the front ends use."""

from __future__ import annotations

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
    "source_name",
    "upstream_sources",
]


def upstream_sources(base: str | None = None) -> list[str]:
    """The URL of every file the reference repository publishes (``base``: a mirror of its folder)."""
    root = (base or UPSTREAM_BASE).rstrip("/")
    return [f"{root}/{name}" for name in UPSTREAM_FILES]
