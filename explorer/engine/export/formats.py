"""Render an :class:`ExportPlan` as the files of one format (pure: same plan, same bytes).

- ``cuda-l2``: the SPEC section 4 file under ``<device>_<ACC>/`` (a kernel set of one that
  ``bench --set`` can measure): an imported file as it was, ours as ``tuner.materialize`` renders it.
- ``torch``: a pip-installable package ``<name>`` with ``matmul(a, b) -> c``, built from the same
  SPEC section 4 file by ``torch.utils.cpp_extension``; its own test under ``tests/``.
- ``cmake``: ``hgemm.h`` / ``hgemm.cu`` (C API, no torch), ``CMakeLists.txt`` and ``test_hgemm.cu``.
  Only for our library's kernels: an imported SPEC section 4 file is written against libtorch.
"""

from __future__ import annotations

import re
from importlib.metadata import PackageNotFoundError, version

from cuda_l2_explorer.db.errors import BadInputError, UsageError
from cuda_l2_explorer.engine.export import templates as t
from cuda_l2_explorer.engine.export.plan import ExportPlan, LibraryKernel, format_us
from cuda_l2_explorer.engine.export.writer import safe_identifier
from cuda_l2_explorer.importer.harness.build import SPEC_FLAGS, arch_for
from cuda_l2_explorer.importer.kernelset import mentions_identifier, strip_comments
from cuda_l2_explorer.tuner.families import cutlass_series, family_of, pinned_cutlass, render_tu
from cuda_l2_explorer.tuner.materialize import status_string_cpp

FORMATS: tuple[str, ...] = ("cuda-l2", "torch", "cmake")
NDEBUG = "-DNDEBUG"  # SPEC section 4: our own builds add it (without it CUTLASS may serialise wgmma)


class FormatUnavailable(BadInputError):
    """The chosen kernel cannot be exported in the asked format (exit code 3)."""


# ---------------------------------------------------------------------------- shared facts


def nvcc_flags(plan: ExportPlan) -> list[str]:
    """SPEC section 4 flags (plus -DNDEBUG for our kernels) and the arch's -gencode."""
    arch = arch_for(plan.device)
    gencode = f"-gencode=arch=compute_{arch[3:]},code={arch}"
    return [*SPEC_FLAGS, *([NDEBUG] if plan.library else []), gencode]


def available_formats(plan: ExportPlan) -> tuple[str, ...]:
    return FORMATS if plan.library else ("cuda-l2", "torch")


def default_name(plan: ExportPlan) -> str:
    return safe_identifier(f"{plan.set_name}_hgemm_{plan.query.m}_{plan.query.n}_{plan.query.k}")


def reads_b_col_major(source: str) -> bool:
    """True when the entry point's ``b_col_major`` is used beyond its declaration.

    The parameter itself is one occurrence (outside comments); a kernel that reads it names it
    again. Our rendered files leave it unnamed when it is not read.
    """
    if not mentions_identifier(source, "b_col_major"):
        return False
    return strip_comments(source).count("b_col_major") > 1


_CUTLASS_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](?:cutlass|cute)/', re.M)
_CUBLAS_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]cublas', re.M)


def _uses_cutlass(source: str) -> bool:
    """Whether the file includes a CUTLASS / CuTe header (read on the raw text: strip_comments
    empties string literals, and with them the include's file name)."""
    return _CUTLASS_INCLUDE.search(source) is not None


def _cutlass_note(plan: ExportPlan) -> str:
    if isinstance(plan.kernel, LibraryKernel):
        version = plan.kernel.cutlass_version or cutlass_series()
        return f"{version} headers (`include/` and `tools/util/include/`)"
    if _uses_cutlass(plan.spec4_source()):
        return "4.2.x headers (SPEC section 4), `include/` and `tools/util/include/`"
    return "not needed (the file includes no CUTLASS header)"


# ---------------------------------------------------------------------------- README


def _evidence_text(plan: ExportPlan) -> str:
    ev = plan.evidence
    source = {
        "manifest": "our kernel search's own measurement (manifest)",
        "measured": "measured by `cuda-l2-explorer bench` (device time, cold L2)",
        "published": "the reference system's published CSV (not re-measured)",
    }[ev.source]
    lines = [
        f"- source: {source}",
        f"- GPU: {ev.gpu}" + (f" ({ev.gpu_name})" if ev.gpu_name else ""),
        f"- mode: {ev.mode}; date: {ev.date or 'n/a'}; run: {ev.run_id or 'n/a'}",
        f"- measured at config {ev.config}"
        + ("" if ev.config == plan.query else f" (not your shape {plan.query})"),
        f"- kernel: {format_us(ev.kernel_us)}; fastest baseline: {ev.baseline or 'n/a'} "
        f"{format_us(ev.baseline_us)}",
        f"- speedup over the fastest baseline: {'n/a' if ev.speedup is None else f'{ev.speedup:.3f}x'}",
    ]
    if ev.per_baseline:
        lines += ["", "| baseline | speedup |", "|---|---|"]
        lines += [f"| {name} | {value:.3f} |" for name, value in ev.per_baseline]
    if isinstance(plan.kernel, LibraryKernel) and plan.kernel.manifest:
        lines.append(f"- manifest: harness {plan.kernel.harness_version or 'n/a'}")
    return "\n".join(lines)


def _kernel_params(plan: ExportPlan) -> str:
    if isinstance(plan.kernel, LibraryKernel):
        params = plan.kernel.config.to_dict()
        rows = [f"| {key} | {params[key]} |" for key in sorted(params)]
        variant = plan.kernel.variant
        rows += [
            f"| runtime: {key} | {getattr(variant, key)} |"
            for key in ("raster", "swizzle", "decomposition", "splits")
        ]
        return "Parameters:\n\n| parameter | value |\n|---|---|\n" + "\n".join(rows) + "\n"
    pad = plan.kernel.pad
    tiles = "none declared" if pad is None else f"BM={pad[0]}, BN={pad[1]}, BK={pad[2]}"
    return f"Padding tiles (SPEC section 4 rule): {tiles}.\n"


def _alignment(plan: ExportPlan) -> int:
    """What N and K must be multiples of: our kernels' TMA alignment; none claimed for imported files."""
    return family_of(plan.kernel.config).alignment if isinstance(plan.kernel, LibraryKernel) else 1


def _shape_kind(plan: ExportPlan) -> str:
    if plan.runtime_shapes:
        if _alignment(plan) == 1:
            return "runtime shapes (the set says its kernels take any shape)"
        return f"runtime shapes: any M; N and K multiples of {_alignment(plan)}"
    target = plan.pad_target
    return f"fixed shape: serves shapes up to {target}, zero-padded to it"


def _build_text(plan: ExportPlan, fmt: str, name: str) -> str:
    flags = " ".join(nvcc_flags(plan))
    if fmt == "cuda-l2":
        return (
            f"`{plan.spec4_path}` defines `void {plan.function}(torch::Tensor a, torch::Tensor b, "
            "torch::Tensor b_col_major, torch::Tensor c)`: a MxK, b KxN, c MxN, all row-major fp16 "
            "CUDA tensors; `b_col_major` is b stored column-major (`b.t().contiguous().t()`)"
            + ("" if reads_b_col_major(plan.spec4_source()) else ", which this kernel does not read")
            + ".\n\nMeasure it as a kernel set of one:\n\n```bash\n"
            "cuda-l2-explorer bench --set ./" + plan.spec4_path.split("/")[0] + f" --mnk {plan.kernel_shape}"
            " --mode offline\n```\n\nor load it into your own extension with "
            "`torch.utils.cpp_extension.load(sources=[...], extra_cuda_cflags=[...])` using the flags "
            "below and the CUTLASS include dirs."
        )
    if fmt == "torch":
        return (
            "Needs torch with CUDA already installed, nvcc, and the CUTLASS headers (`CUTLASS_DIR`, or "
            f"`pip install nvidia-cutlass=={pinned_cutlass()} --no-deps`). The build compiles against your "
            "torch, so it runs without build isolation:\n\n```bash\n"
            "pip install --no-build-isolation .\n"
            f"python -m pytest tests   # from this folder: checks {name}.matmul against torch.matmul\n```\n\n"
            f"```python\nimport torch, {name}\n"
            f"a = torch.randn({plan.query.m}, {plan.query.k}, device='cuda', dtype=torch.float16)\n"
            f"b = torch.randn({plan.query.k}, {plan.query.n}, device='cuda', dtype=torch.float16)\n"
            f"c = {name}.matmul(a, b)   # ({plan.query.m}, {plan.query.n}) float16\n```\n\n"
            "`matmul` checks its inputs (2-D, float16, CUDA, same device, contiguous row-major, inner "
            "dimensions"
            + (f", N and K multiples of {_alignment(plan)}" if _alignment(plan) > 1 else "")
            + ("" if plan.runtime_shapes else ", within the kernel's shape")
            + ") and raises TypeError / ValueError with what to fix. It runs on the current CUDA stream."
        )
    return (
        "Needs CMake >= 3.24, nvcc (CUDA 12.x or 13.x) and the CUTLASS headers:\n\n```bash\n"
        "cmake -S . -B build -DCUTLASS_DIR=/path/to/cutlass   # or export CUTLASS_DIR\n"
        "cmake --build build -j\nctest --test-dir build --output-on-failure\n```\n\n"
        "Without CMake: `nvcc -c hgemm.cu " + flags + " -I$CUTLASS_DIR/include "
        "-I$CUTLASS_DIR/tools/util/include`.\n\n"
        '```c\n#include "hgemm.h"\nint status = hgemm(A, B, C, M, N, K, stream);  '
        "// device pointers; 0 = ok, see hgemm.h for the codes\n```\n\n"
        "B is KxN "
        + ("**column-major** (K contiguous; `HGEMM_B_COL_MAJOR` is 1)" if _b_col_major(plan) else "row-major")
        + ". `hgemm` keeps one workspace per (device, stream) and grows it only when a call needs more "
        "(a call during CUDA graph capture must not be the first one for its shape). Two exports linked "
        "into one program clash on the name `hgemm`: rename it in hgemm.h / hgemm.cu."
    )


def _b_col_major(plan: ExportPlan) -> bool:
    return isinstance(plan.kernel, LibraryKernel) and getattr(plan.kernel.config, "b_major", "n") == "k"


def _tool_version() -> str:
    try:
        return version("cuda-l2-explorer")
    except PackageNotFoundError:
        return "unknown"


def render_readme(plan: ExportPlan, fmt: str, name: str) -> str:
    what = {
        "cuda-l2": "The chosen HGEMM kernel as a SPEC section 4 file (the reference system's format).",
        "torch": f"A PyTorch extension package: `{name}.matmul(a, b) -> c` for float16 CUDA tensors.",
        "cmake": "Plain CUDA C++ with a C API (`hgemm`, no torch) and a CMake build with a test program.",
    }[fmt]
    skipped = (
        f" ({plan.skipped} better-ranked row(s) carry published results only, no kernel source)"
        if plan.skipped
        else ""
    )
    warning = (
        "\n\n> **Warning: exported with `--anyway`.** For this shape lookup ranks the baseline above "
        f"this kernel ({plan.anyway}). Measure the kernel against it before you ship it."
        if plan.anyway
        else ""
    )
    skipped_list = (
        "Ranked above it but skipped (no kernel to write out):\n\n"
        + "".join(f"- {row}\n" for row in plan.skipped_rows)
        + "\n"
        if plan.skipped_rows
        else ""
    )
    return t.render(
        t.README,
        title=f"HGEMM {plan.query} — {name}",
        what=what,
        warning=warning,
        m=plan.query.m,
        n=plan.query.n,
        k=plan.query.k,
        format=fmt,
        tool_version=_tool_version(),
        query=plan.query,
        kernel_summary=plan.kernel_summary(),
        config=plan.config,
        set_id=plan.set_id,
        shape_kind=_shape_kind(plan),
        runs_at=plan.runs_at,
        rank=plan.rank,
        tier=plan.tier,
        skipped_note=skipped,
        predicted=plan.predicted_text,
        predicted_basis=plan.predicted_basis,
        skipped_list=skipped_list,
        kernel_params=_kernel_params(plan),
        build=_build_text(plan, fmt, name),
        evidence=_evidence_text(plan),
        cutlass=_cutlass_note(plan),
        nvcc_flags=" ".join(nvcc_flags(plan)),
        arch=arch_for(plan.device),
    )


# ---------------------------------------------------------------------------- formats


def _render_cuda_l2(plan: ExportPlan, name: str) -> dict[str, str]:
    return {plan.spec4_path: plan.spec4_source(), "README.md": render_readme(plan, "cuda-l2", name)}


def _render_torch(plan: ExportPlan, name: str) -> dict[str, str]:
    source = plan.spec4_source()
    target = plan.pad_target
    test_shapes = [plan.query.astuple()]
    if plan.runtime_shapes and plan.query.m > 1:
        test_shapes.append((plan.query.m - 1, plan.query.n, plan.query.k))  # an M no tile divides
    elif target is not None and target != plan.query:
        test_shapes.append(target.astuple())  # the kernel's own shape, no padding
    flags = [f for f in nvcc_flags(plan) if not f.startswith("-std=")]
    shape_doc = (
        f"Runtime shapes: any M, N and K multiples of {_alignment(plan)}, run at their own shape."
        if plan.runtime_shapes
        else f"Fixed shape {plan.config}: inputs up to {target} are zero-padded to it and C is sliced back."
    )
    init = t.render(
        t.PACKAGE_INIT,
        package=name,
        kernel_summary=plan.kernel_summary(),
        shape_doc=shape_doc,
        shape=repr(plan.query.astuple()),
        runtime_shapes=plan.runtime_shapes,
        alignment=_alignment(plan),
        pad_target=None if target is None else repr(target.astuple()),
        reads_b_col_major=reads_b_col_major(source),
    )
    return {
        "pyproject.toml": t.render(
            t.PYPROJECT,
            package=name,
            description=f"HGEMM {plan.query} exported by cuda-l2-explorer ({plan.set_id})",
        ),
        "setup.py": t.render(
            t.SETUP_PY,
            package=name,
            nvcc_flags=_py_list(flags),
            needs_cutlass=_uses_cutlass(source),
            # SPEC section 4 links cuBLAS; only files that include it need it (ours do not).
            libraries=["cublas"] if _CUBLAS_INCLUDE.search(source) else [],
            cutlass_version=_cutlass_version(plan),
            cutlass_pin=pinned_cutlass(),
        ),
        "README.md": render_readme(plan, "torch", name),
        f"src/{name}/__init__.py": init,
        f"src/{name}/csrc/kernel.cu": source,
        f"src/{name}/csrc/binding.cu": t.render(t.BINDING_CU, function=plan.function, package=name),
        f"tests/test_{name}.py": t.render(t.PACKAGE_TEST, package=name, test_shapes=repr(test_shapes)),
    }


def _render_cmake(plan: ExportPlan, name: str) -> dict[str, str]:
    if not isinstance(plan.kernel, LibraryKernel):
        raise FormatUnavailable(
            f"the cmake format needs a kernel without libtorch; {plan.set_id} {plan.config} is a SPEC "
            "section 4 file written against torch: export it as --format cuda-l2 or --format torch"
        )
    config, variant = plan.kernel.config, plan.kernel.variant
    flags = nvcc_flags(plan)
    cmake_flags = [f for f in flags if not f.startswith(("-std=", "-gencode"))]  # CMake sets both
    summary = plan.kernel_summary()
    return {
        "hgemm.h": t.render(
            t.HGEMM_H,
            kernel_summary=summary,
            b_col_major=int(_b_col_major(plan)),
            b_layout_doc="column-major (K contiguous)" if _b_col_major(plan) else "row-major",
            alignment=_alignment(plan),
        ),
        "hgemm.cu": t.render(
            t.HGEMM_CU,
            kernel_summary=summary,
            nvcc_flags=" ".join(flags),
            kernel_tu=render_tu([config]),
            status_string=status_string_cpp(),
            name=config.name,
            variant_args=", ".join(str(v) for v in variant.args()),
        ),
        "CMakeLists.txt": t.render(
            t.CMAKELISTS,
            project=name,
            cutlass_version=_cutlass_version(plan),
            cutlass_pin=pinned_cutlass(),
            cmake_flags=" ".join(_cmake_quote(f) for f in cmake_flags),
            cuda_architectures=arch_for(plan.device).removeprefix("sm_"),
        ),
        "test_hgemm.cu": t.render(t.TEST_HGEMM_CU, m=plan.query.m, n=plan.query.n, k=plan.query.k),
        "README.md": render_readme(plan, "cmake", name),
    }


def _cutlass_version(plan: ExportPlan) -> str:
    return (
        plan.kernel.cutlass_version if isinstance(plan.kernel, LibraryKernel) else None
    ) or cutlass_series()


def _py_list(items: list[str]) -> str:
    return "[\n" + "".join(f"    {item!r},\n" for item in items) + "]"


def _cmake_quote(flag: str) -> str:
    return f'"{flag}"'


_RENDERERS = {"cuda-l2": _render_cuda_l2, "torch": _render_torch, "cmake": _render_cmake}


def render_files(plan: ExportPlan, fmt: str, name: str | None = None) -> dict[str, str]:
    """``{relative path: text}`` of ``fmt`` for ``plan``; ``name`` is sanitised (default from the plan)."""
    if fmt not in _RENDERERS:
        raise UsageError(f"unknown export format {fmt!r}; formats: {', '.join(FORMATS)}")
    return _RENDERERS[fmt](plan, safe_identifier(name) if name else default_name(plan))
