"""Our kernel library as SPEC section 4 files: one ``<M>_<N>_<K>.cu`` per manifest entry.

A manifest (``kernels/<device>_<ACC>/manifest.json``, written by the search) names, per config,
the kernel that won (a config dict any family's ``kernel_from_dict`` accepts), the runtime
variant it won with, and the evidence. :func:`render_config_source` turns one entry into a file
that any SPEC section 4 consumer (the harness, the reference system's own scripts, a
``torch.utils.cpp_extension.load``) builds as-is: ``#include <torch/extension.h>``, the kernel as
``tuner/emit.py`` renders it (C ABI ``l2x_gemm_<name>``), and the entry point
``cuda_l2_<device>_fp32(a, b, b_col_major, c)`` (tuner/csrc/spec4_kernel.cu). The entry point
takes M, N and K from the tensors (runtime shapes: any M; N and K multiples of the family's
alignment, tuner/families.py), runs on torch's current stream with the
entry's variant, and keeps one workspace per (device, stream) that is reallocated only when a
call needs more, so a steady-state call allocates nothing and never synchronises. It reads
``b_col_major`` only for kernels that take B column-major; otherwise the parameter is unnamed,
so a reader of the source (and ``importer.kernelset.mentions_identifier``) sees it is unused.

Compile with the SPEC section 4 flags plus ``-DNDEBUG`` and the CUTLASS include dirs.
Output is a pure function of the entry (same manifest, same bytes).

    python -m cuda_l2_explorer.tuner.materialize MANIFEST OUT_DIR
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cuda_l2_explorer.db.errors import BadInputError, ExplorerError
from cuda_l2_explorer.importer.kernelset import entry_point, normalize_accumulator
from cuda_l2_explorer.tuner import manifest as mf
from cuda_l2_explorer.tuner.abi import status_cases
from cuda_l2_explorer.tuner.families import family_of, render_tu
from cuda_l2_explorer.tuner.manifest import entry_kernel, entry_variant
from cuda_l2_explorer.tuner.templates import render

SPEC4_TEMPLATE = "tuner/csrc/spec4_kernel.cu"


def status_string_cpp() -> str:
    """C++ ``l2x_status_name(int)`` for files that wrap the C ABI (tuner/abi.py's status table)."""
    return render("tuner/csrc/status_name.cuh", status_cases=status_cases("    ", 1))


# ---------------------------------------------------------------------------- rendering


def render_config_source(
    entry: dict[str, Any], device: str = "h100", accumulator: str = "F32F16F16F32"
) -> str:
    """The SPEC section 4 ``.cu`` text for one manifest entry (see the module doc)."""
    acc = normalize_accumulator(accumulator)
    if acc != "F32F16F16F32":
        raise BadInputError("our kernels accumulate in fp32: they belong to an F32F16F16F32 set")
    kernel = entry_kernel(entry)
    variant = entry_variant(entry)
    function = entry_point(device, acc)
    reads_col_major = getattr(kernel, "b_major", "n") == "k"
    return render(
        SPEC4_TEMPLATE,
        set_dir=f"{device}_{acc}",
        shape=f"{entry['m']}_{entry['n']}_{entry['k']}",
        name=kernel.name,
        family=kernel.family,
        alignment=family_of(kernel).alignment,
        raster=variant.raster,
        swizzle=variant.swizzle,
        decomposition=variant.decomposition,
        splits=variant.splits,
        kernel_tu=render_tu([kernel]),
        status_string=status_string_cpp(),
        function=function,
        b_col_major_param="b_col_major" if reads_col_major else "/* b_col_major: not read */",
        b_arg="b_col_major" if reads_col_major else "b",
        b_contiguous="b_col_major.t().is_contiguous()" if reads_col_major else "b.is_contiguous()",
        b_layout="column-major (b_col_major)" if reads_col_major else "row-major (b)",
    )


def set_dir_name(manifest: dict[str, Any]) -> str:
    return f"{manifest.get('device', 'h100')}_{manifest.get('accumulator', 'F32F16F16F32')}"


def write_set(manifest: dict[str, Any], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Materialise every entry to ``<out_dir>/<M>_<N>_<K>.cu`` (each file replaced atomically)."""
    mf.validate(manifest)
    device = str(manifest.get("device", "h100"))
    accumulator = str(manifest.get("accumulator", "F32F16F16F32"))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for entry in sorted(manifest["configs"], key=lambda e: (e["m"], e["n"], e["k"])):
        target = out / f"{entry['m']}_{entry['n']}_{entry['k']}.cu"
        text = render_config_source(entry, device, accumulator)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=out)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        written.append(target)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m cuda_l2_explorer.tuner.materialize", description=__doc__.splitlines()[0]
    )
    ap.add_argument("manifest", type=Path)
    ap.add_argument("out_dir", type=Path)
    args = ap.parse_args(argv)
    try:
        files = write_set(mf.load(args.manifest), args.out_dir)
    except ExplorerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    print(json.dumps([str(f) for f in files], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
