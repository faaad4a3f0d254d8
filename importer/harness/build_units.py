"""Several SPEC section 4 files in one translation unit: which files may share one, how many go
together, and the wrapper that compiles them.

Every file of the reference layout includes ``<torch/extension.h>`` (and most CuTe or CUTLASS),
and parsing those headers is nearly all of a file's build: on a 2-core machine an empty file
that only includes torch's header took as long as a whole kernel file (~130-160 s), and four
kernel files in one unit took 185 s against ~130 s each alone. So files are compiled a few to a
unit: the headers every file includes come first, once, then each file inside a namespace of its
own (the module's name), where its own ``#include`` lines find the headers already included and
add nothing; the macros it defines are undefined after it, so none reaches the next file; and
each file gets its own Python module (a ``PYBIND11_MODULE`` per file, all in one shared object).
The kernels' code is the files' own, compiled with the same flags: only the names around it change.

A file shares a unit only when that cannot change what it means (:func:`shareable`): every
header it includes is a system or library header (``<...>``, or ``"cutlass/..."`` / ``"cute/..."``
found on the include path, never a header of its own folder), it defines no macro before its
last ``#include`` (a macro that configures a header must come before it), and it neither
reopens a library's namespace, nor declares ``extern "C"`` names, nor binds its own Python
module, nor undefines a macro it did not define. Any other file is built alone, as is every
file of a unit that fails to compile (the build then says so in each file's log).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cuda_l2_explorer.importer.kernelset import strip_comments

# Files per unit for an imported set's builds: enough to share the headers' cost, few enough that
# a failing unit (each of its files then built alone) or a slow one costs little.
DEFAULT_PER_UNIT = 4

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.MULTILINE)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)
_LIBRARY_QUOTED = ("cutlass/", "cute/")
_UNDEF = re.compile(r"^[ \t]*#[ \t]*undef[ \t]+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)
_ALONE = re.compile(
    r"\bPYBIND11_MODULE\b|\bTORCH_LIBRARY\w*\b"
    r"|\bnamespace\s+(?:std|cute|cutlass|at|c10|torch|pybind11|cooperative_groups)\s*\{",
    re.MULTILINE,
)
_EXTERN_C = re.compile(r'\bextern\s*"C"')


@dataclass(frozen=True)
class Traits:
    """What a shareable file brings into a unit."""

    includes: tuple[str, ...]  # its #include lines' targets as written: '<cute/tensor.hpp>'
    macros: tuple[str, ...]  # the macros it defines, to undefine after it


def shareable(source: str) -> Traits | None:
    """The file's includes and macros when it may share a unit (see the module doc), else None."""
    if _EXTERN_C.search(source):  # in the raw text: literals are emptied by strip_comments
        return None
    code = strip_comments(source)
    if _ALONE.search(code):
        return None
    # Include targets from the raw text (strip_comments empties "quoted" names), only on lines
    # that are still directives once comments are gone.
    directive_lines = {i for i, line in enumerate(code.splitlines()) if line.lstrip().startswith("#")}
    includes: list[str] = []
    last_include = -1
    for m in _INCLUDE.finditer(source):
        line = source.count("\n", 0, m.start())
        if line not in directive_lines:
            continue
        quote, name = m.group(1), m.group(2).strip()
        if quote == '"' and not name.startswith(_LIBRARY_QUOTED):
            return None  # a header beside the file: only the file's own folder finds it
        includes.append(f"<{name}>" if quote == "<" else f'"{name}"')
        last_include = max(last_include, line)
    macros: list[str] = []
    for m in _DEFINE.finditer(code):
        if code.count("\n", 0, m.start()) < last_include:
            return None  # it may configure a header included after it
        macros.append(m.group(1))
    if any(name not in macros for name in _UNDEF.findall(code)):
        return None  # it undefines a macro of a header's, for every file after it
    return Traits(tuple(dict.fromkeys(includes)), tuple(dict.fromkeys(macros)))


def group(traits: Sequence[Traits | None], per_unit: int, slots: int) -> list[list[int]]:
    """Indices of the files, in units: a file that cannot share alone; the others in order, in
    units of at most ``per_unit`` and no more per unit than keeps ``slots`` compilers busy."""
    alone = [[i] for i, t in enumerate(traits) if t is None]
    shared = [i for i, t in enumerate(traits) if t is not None]
    if not shared:
        return alone
    size = max(1, min(per_unit, math.ceil(len(shared) / max(1, slots))))
    return [shared[i : i + size] for i in range(0, len(shared), size)] + alone


@dataclass(frozen=True)
class UnitFile:
    """One file of a unit: its path as the wrapper includes it, its entry point, its traits and its
    module's name (also the name of the namespace it is compiled in)."""

    source: str
    function: str
    traits: Traits
    module: str


def render_unit(files: Sequence[UnitFile], binding: str) -> str:
    """The translation unit that compiles ``files`` together. ``binding`` is the single-file
    wrapper's ``PYBIND11_MODULE`` block with its @MODULE@ and @FUNCTION@ placeholders: each file
    gets one, its entry point named inside its namespace."""
    for f in files:
        if any(ch in f.source for ch in '"\n\r'):
            raise ValueError(f"cannot #include a path containing quotes or line breaks: {f.source!r}")
    headers = dict.fromkeys(["<torch/extension.h>", *(h for f in files for h in f.traits.includes)])
    lines = [
        "// Generated by cuda-l2-explorer (importer/harness/build_units.py): SPEC section 4 kernel",
        "// files compiled together, each in a namespace of its own (see the module's doc).",
        *(f"#include {h}" for h in headers),
        "",
    ]
    for f in files:
        lines += [f"namespace {f.module} {{", f'#include "{f.source}"', f"}}  // namespace {f.module}"]
        lines += [f"#undef {name}" for name in f.traits.macros]
        lines.append("")
    for f in files:
        lines.append(binding.replace("@MODULE@", f.module).replace("@FUNCTION@", f"{f.module}::{f.function}"))
    return "\n".join(lines) + "\n"
