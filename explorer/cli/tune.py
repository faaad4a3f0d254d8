"""``tune``: search our kernel library for the fastest kernel of (M, N, K) on this GPU."""

from __future__ import annotations

import argparse
import json

from cuda_l2_explorer.cli.common import add_shape_choice, command_line, feedback, store_path

NAME = "tune"
HELP = "search our kernel library for the fastest kernel of (M, N, K) on this GPU"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    p = parser
    p.add_argument("dims", nargs="*", metavar="M N K", help="one shape (or use --mnk / --grid)")
    add_shape_choice(p, "several shapes, e.g. 1_4096_4096,4096_14336_4096")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--library", metavar="PATH", help="kernel library (default: the latest tuner build)")
    p.add_argument("--manifest", metavar="PATH", help="manifest to merge the results into")
    p.add_argument(
        "--limit",
        type=int,
        default=16,
        metavar="N",
        help="candidates measured per shape (more where the cost model ties them, as on memory-bound shapes)",
    )
    p.add_argument("--finalists", type=int, default=4, metavar="N", help="candidates re-measured per shape")
    p.add_argument("--no-measure", action="store_true", help="skip the baseline comparison after the search")
    p.add_argument(
        "--keep-faster",
        action="store_true",
        help="replace a config already in the manifest only when the new kernel measured faster",
    )
    p.add_argument("--gpus", default="0", metavar="all|0,1")
    p.add_argument("--resume", nargs="?", const="latest", default=None, metavar="RUN_ID")
    p.add_argument("--timeout", type=float, default=300.0, metavar="S", help="per-shape limit (default 300)")
    p.add_argument("--progress", choices=("auto", "jsonl", "none"), default="auto")
    p.add_argument("--format", dest="fmt", choices=("table", "json", "csv"), default="table")
    p.add_argument("--json", dest="fmt", action="store_const", const="json")


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit
    from cuda_l2_explorer.engine.bench import ShapeChoice
    from cuda_l2_explorer.engine.tune import TuneRequest, run_tune

    request = TuneRequest(
        store_path=store_path(args),
        dims=tuple(args.dims),
        choice=ShapeChoice(mnk=args.mnk, grid=args.grid, sample=args.sample, seed=args.seed),
        library=args.library,
        manifest=args.manifest,
        limit=args.limit,
        finalists=args.finalists,
        measure=not args.no_measure,
        keep_faster=args.keep_faster,
        gpus=args.gpus,
        resume=args.resume,
        timeout_s=args.timeout,
        command_line=command_line(args),
    )
    result = run_tune(request, feedback(args))
    emit(
        [
            {
                "m": e["m"], "n": e["n"], "k": e["k"], "kernel": e["kernel_name"],
                "variant": json.dumps(e["variant"], sort_keys=True), "time_us": e["time_us"],
                "reference": e["best_reference"], "reference_us": e["best_reference_us"],
            }
            for e in sorted(result.entries, key=lambda e: (e["m"], e["n"], e["k"]))
        ],
        args.fmt,
    )  # fmt: skip
    return 0
