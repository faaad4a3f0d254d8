"""One call for the CLI and the TUI: plan, render and write an export."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuda_l2_explorer.db.errors import UsageError
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.engine.export.formats import FORMATS, available_formats, default_name, render_files
from cuda_l2_explorer.engine.export.plan import ExportPlan, plan_export
from cuda_l2_explorer.engine.export.writer import safe_identifier, write_tree


@dataclass(frozen=True)
class ExportResult:
    plan: ExportPlan
    fmt: str
    name: str
    out_dir: Path
    files: tuple[Path, ...]

    def summary(self) -> str:
        """One line for the user: what was written where, and how it runs at their shape."""
        p = self.plan
        return (
            f"exported {p.set_id} {p.config} ({p.tier}, lookup rank {p.rank}) as {self.fmt} into "
            f"{self.out_dir}: runs at {p.runs_at}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "out": str(self.out_dir),
            "format": self.fmt,
            "name": self.name,
            "files": [str(f.relative_to(self.out_dir)) for f in self.files],
            "formats_available": list(available_formats(self.plan)),
            **self.plan.describe(),
        }


def export_plan(
    plan: ExportPlan,
    fmt: str,
    out_dir: str | os.PathLike[str],
    *,
    name: str | None = None,
    force: bool = False,
) -> ExportResult:
    """Render ``plan`` as ``fmt`` and write it as the folder ``out_dir`` (see writer.write_tree)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}; formats: {', '.join(FORMATS)}")
    chosen = safe_identifier(name) if name else default_name(plan)
    files = render_files(plan, fmt, chosen)
    written = write_tree(files, out_dir, force=force)
    return ExportResult(plan, fmt, chosen, Path(os.path.abspath(out_dir)), tuple(written))


def export_kernel(
    store: Store | None,
    query: Shape,
    fmt: str,
    out_dir: str | os.PathLike[str],
    *,
    gpu: str | None = None,
    set_: str | None = None,
    mode: str | None = None,
    manifests: Sequence[Path] | None = None,
    name: str | None = None,
    force: bool = False,
) -> ExportResult:
    """Choose the kernel for ``query`` (SPEC section 8) and export it; what ``export`` runs."""
    plan = plan_export(store, query, gpu=gpu, set_=set_, mode=mode, manifests=manifests)
    return export_plan(plan, fmt, out_dir, name=name, force=force)
