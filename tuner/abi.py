"""The C ABI every kernel family of the library exports, in one place (stdlib only).

Each kernel ``<name>`` exports ``l2x_gemm_<name>`` (run), ``l2x_gemm_<name>_workspace`` and
``l2x_gemm_<name>_can_implement`` with the arguments documented in tuner/emit.py; each family's
source defines ``l2x_<name>::E`` with static ``run``, ``workspace`` and ``can_implement``, then
appends :func:`entry_points` (tuner/csrc/entry_points.cuh). The status codes below are the one
table both sides read: the C enum and the C name switches are rendered from it, tuner/native.py
reports with it.
"""

from __future__ import annotations

import textwrap

from cuda_l2_explorer.tuner.templates import render

ABI_VERSION = 1

# code: (C enumerator, name). The exported files' own codes (hgemm.h) add one past the last.
STATUSES: dict[int, tuple[str, str]] = {
    0: ("kOk", "ok"),
    1: ("kCannotImplement", "cannot implement"),
    2: ("kWorkspaceTooSmall", "workspace too small"),
    3: ("kCudaError", "CUDA error"),
    4: ("kCutlassError", "CUTLASS error"),
    5: ("kInvalidArgument", "invalid argument"),
}
STATUS_NAMES: dict[int, str] = {code: name for code, (_, name) in STATUSES.items()}
L2X_OK = 0
L2X_CANNOT_IMPLEMENT = 1
L2X_WORKSPACE_TOO_SMALL = 2
L2X_CUDA_ERROR = 3
L2X_CUTLASS_ERROR = 4
L2X_INVALID_ARGUMENT = 5

API_MACRO = '#define L2X_API extern "C" __attribute__((visibility("default")))'


def status_enum() -> str:
    """The C enum of the status codes (no trailing newline), as every family's source declares it."""
    body = ", ".join(f"{enumerator} = {code}" for code, (enumerator, _) in sorted(STATUSES.items()))
    return "enum : int {\n" + textwrap.fill(body, 100, initial_indent="  ", subsequent_indent="  ") + "\n};"


def status_cases(indent: str, per_line: int) -> str:
    """``case <code>: return "<name>";`` for every status, ``per_line`` to a line, lines after the
    first indented by ``indent`` (the template places the first)."""
    cases = [f'case {code}: return "{name}";' for code, name in sorted(STATUS_NAMES.items())]
    rows = [" ".join(cases[i : i + per_line]) for i in range(0, len(cases), per_line)]
    return ("\n" + indent).join(rows)


def family_fields() -> dict[str, str]:
    """The ABI fields every family's preamble template takes."""
    return {"api_macro": API_MACRO, "status_enum": status_enum()}


def entry_points(name: str) -> str:
    """The three exported functions of kernel ``name`` (after its ``namespace l2x_<name>``)."""
    return render("tuner/csrc/entry_points.cuh", name=name)
