"""The one templating mechanism for every generated text: ``string.Template`` files shipped as data.

A resource is named by its path inside the installed ``cuda_l2_explorer`` package, which is also
its path in the repository: ``"cutlass/sm90_gemm.cuh"`` (CUTLASS-based kernel sources),
``"tuner/csrc/tiny_gemm.cuh"`` (our own CUDA sources, the C ABI, the SPEC section 4 wrapper),
``"tuner/export_templates/torch/setup.py.tmpl"`` (the files ``export`` writes). Fields are
``$name`` or ``${name}``; ``$$`` is a literal dollar. :func:`render` refuses a missing field and
an unused one, so a template and its caller cannot drift apart silently.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from string import Template


def resource(name: str) -> Traversable:
    """The shipped file ``name`` (``"<folder>/<path>"``, the folder a ``cuda_l2_explorer`` subpackage)."""
    folder, _, rest = name.partition("/")
    if not rest:
        raise ValueError(f"a resource is named <folder>/<path>, got {name!r}")
    return files(f"cuda_l2_explorer.{folder}").joinpath(*rest.split("/"))


@cache
def template(name: str) -> Template:
    return Template(resource(name).read_text(encoding="utf-8"))


def render(name: str, /, **fields: object) -> str:
    """The text of template ``name`` with its fields filled (each value through ``str``)."""
    tmpl = template(name)
    wanted = set(tmpl.get_identifiers())
    if wanted != set(fields):
        missing, unused = sorted(wanted - set(fields)), sorted(set(fields) - wanted)
        raise KeyError(f"{name}: fields missing {missing}, unused {unused}")
    return tmpl.substitute(fields)


def read_text(name: str) -> str:
    """A shipped text file as it is (no fields), e.g. ``cutlass/VERSION``."""
    return resource(name).read_text(encoding="utf-8")
