"""Export a kernel into a user's project (SPEC section 9): the engine behind ``export`` and the TUI.

``plan_export`` chooses the kernel through SPEC section 8 lookup (store rows with a kernel
source, and our library's manifests) and gathers its evidence; ``render_files`` turns a plan into
the files of one format (pure: same plan, same bytes); ``write_tree`` writes them into a folder
atomically and never outside it. ``export_kernel`` does all three. Neither Textual nor torch is
imported here.
"""

from __future__ import annotations

from cuda_l2_explorer.engine.export.formats import FORMATS, FormatUnavailable, render_files
from cuda_l2_explorer.engine.export.plan import ExportPlan, plan_export
from cuda_l2_explorer.engine.export.run import ExportResult, export_kernel, export_plan
from cuda_l2_explorer.engine.export.writer import safe_identifier, write_tree

__all__ = [
    "FORMATS",
    "ExportPlan",
    "ExportResult",
    "FormatUnavailable",
    "export_kernel",
    "export_plan",
    "plan_export",
    "render_files",
    "safe_identifier",
    "write_tree",
]
