"""``export M N K``: write the kernel lookup chooses for a shape into a folder (SPEC §9)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cuda_l2_explorer.cli.common import add_filters, open_store, say
from cuda_l2_explorer.cli.lookup import add_lookup_scope

NAME = "export"
HELP = "write the kernel lookup chooses for an (M, N, K) into a folder (SPEC §9)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    p = parser
    p.add_argument("m", metavar="M")
    p.add_argument("n", metavar="N")
    p.add_argument("k", metavar="K")
    p.add_argument(
        "--format",
        dest="export_format",
        required=True,
        choices=("cuda-l2", "torch", "cmake"),
        help="cuda-l2: the SPEC §4 .cu file; torch: a pip-installable extension package; "
        "cmake: CUDA C++ with a C API, a CMakeLists.txt and a test program",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="folder to create (must be absent or empty; missing folders above it are created)",
    )
    add_filters(p, mode_help="offline (default) or server")
    add_lookup_scope(p)
    p.add_argument(
        "--anyway",
        action="store_true",
        help="export the best kernel even when lookup's answer is to keep the baseline (its README says so)",
    )
    p.add_argument(
        "--manifest",
        action="append",
        type=Path,
        metavar="PATH",
        help="a kernel-library manifest to choose from (repeatable; default: "
        "$CUDA_L2_EXPLORER_KERNELS_DIR/*/manifest.json)",
    )
    p.add_argument("--name", help="package / project name (sanitised; default from the set and shape)")
    p.add_argument("--force", action="store_true", help="replace DIR if it exists and is not empty")
    p.add_argument(
        "--json", dest="fmt", action="store_const", const="json", default="text", help="print JSON"
    )


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit
    from cuda_l2_explorer.db.shapes import parse_shape
    from cuda_l2_explorer.engine.export import export_kernel

    query = parse_shape(args.m, args.n, args.k)
    with open_store(args) as store:
        result = export_kernel(
            store,
            query,
            args.export_format,
            Path(args.out).expanduser(),
            gpu=args.gpu,
            set_=args.set_,
            mode=args.mode,
            manifests=args.manifest,
            name=args.name,
            force=args.force,
            accumulator=args.accumulator,
            any_gpu=args.any_gpu,
            anyway=args.anyway,
        )
    say(args, result.summary())
    if args.fmt == "json":
        emit(result.to_json(), "json")
    else:
        for path in result.files:
            print(path)
    return 0
