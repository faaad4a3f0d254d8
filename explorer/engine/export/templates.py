"""The exported files' templates: ``string.Template`` files shipped with the tuner, by resource name.

The text lives in tuner/export_templates/ (``$name`` fields, ``$$`` is a dollar); ``formats.py``
fills it through :func:`render`, the tuner's one templating mechanism, and says what each field
holds. Keep generated text free of timestamps and machine paths: an export must be a pure
function of its plan (golden files).
"""

from __future__ import annotations

from cuda_l2_explorer.tuner.templates import render

__all__ = ["render"]

_ROOT = "tuner/export_templates"

# torch package (src/ layout: its tests run against the installed, built package)
PYPROJECT = f"{_ROOT}/torch/pyproject.toml.tmpl"
SETUP_PY = f"{_ROOT}/torch/setup.py.tmpl"
BINDING_CU = f"{_ROOT}/torch/binding.cu.tmpl"
PACKAGE_INIT = f"{_ROOT}/torch/__init__.py.tmpl"
PACKAGE_TEST = f"{_ROOT}/torch/test_package.py.tmpl"

# CUDA C++ + CMake
HGEMM_H = f"{_ROOT}/cmake/hgemm.h.tmpl"
HGEMM_CU = f"{_ROOT}/cmake/hgemm.cu.tmpl"
CMAKELISTS = f"{_ROOT}/cmake/CMakeLists.txt.tmpl"
TEST_HGEMM_CU = f"{_ROOT}/cmake/test_hgemm.cu.tmpl"

# every format
README = f"{_ROOT}/README.md.tmpl"
