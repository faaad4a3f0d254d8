"""One call for the CLI and the TUI: plan, render and write an export."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuda_l2_explorer.db.errors import IOFailure, UsageError
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
        """What was written where and how it runs at the user's shape; then, each on its line,
        the rows lookup ranked above it that have no kernel to write out, and the warning when it
        was exported although lookup keeps the baseline."""
        p = self.plan
        lines = [
            f"exported {p.set_id} {p.config} ({p.tier}, lookup rank {p.rank}, predicted {p.predicted_text}) "
            f"as {self.fmt} into {self.out_dir}: runs at {p.runs_at}"
        ]
        lines += [f"skipped {row}" for row in p.skipped_rows[:3]]
        if len(p.skipped_rows) > 3:
            lines.append(f"skipped {len(p.skipped_rows) - 3} more such row(s) (the README lists them)")
        if p.anyway:
            lines.append(f"warning: exported with --anyway; lookup ranks the baseline above it ({p.anyway})")
        return "\n".join(lines)

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
    """Render ``plan`` as ``fmt`` and write it as the folder ``out_dir`` (see writer.write_tree),
    creating the folders above it that are missing (removed again if the export fails)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}; formats: {', '.join(FORMATS)}")
    chosen = safe_identifier(name) if name else default_name(plan)
    files = render_files(plan, fmt, chosen)
    created = _make_parents(Path(os.path.abspath(out_dir)))
    try:
        written = write_tree(files, out_dir, force=force)
    except BaseException:
        for folder in created:  # deepest first; only the ones this export made, and only if empty
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    return ExportResult(plan, fmt, chosen, Path(os.path.abspath(out_dir)), tuple(written))


def _make_parents(out_dir: Path) -> list[Path]:
    """Create the missing folders above ``out_dir``; returns them, deepest first."""
    missing = []
    parent = out_dir.parent
    while not parent.exists() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except OSError as exc:
            raise IOFailure(f"cannot create {folder}: {exc.strerror or exc}") from exc
    return missing


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
    accumulator: str | None = None,
    any_gpu: bool = False,
    anyway: bool = False,
) -> ExportResult:
    """Choose the kernel for ``query`` as lookup answers (SPEC section 8) and export it; what
    ``export`` runs. Refuses when lookup keeps the baseline, unless ``anyway``."""
    plan = plan_export(
        store,
        query,
        gpu=gpu,
        set_=set_,
        mode=mode,
        manifests=manifests,
        accumulator=accumulator,
        any_gpu=any_gpu,
        anyway=anyway,
    )
    return export_plan(plan, fmt, out_dir, name=name, force=force)
