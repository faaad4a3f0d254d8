"""``stats``: aggregate speedups per set, mode and baseline (or regime), geomean first."""

from __future__ import annotations

import argparse

from cuda_l2_explorer.cli.common import add_filters, add_format, open_store

NAME = "stats"
HELP = "aggregate speedups per set, mode and baseline (geomean first)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_filters(parser)
    parser.add_argument("--baseline", action="append", metavar="NAME", help="only this baseline (repeatable)")
    parser.add_argument(
        "--by-regime",
        action="store_true",
        help="per regime (tiny, skinny, small-K, large) against one baseline (default best-baseline)",
    )
    add_format(parser)


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit
    from cuda_l2_explorer.engine.browse import resolve_filters
    from cuda_l2_explorer.engine.stats import stats, stats_by_regime

    with open_store(args) as store:
        filters = resolve_filters(store, args.gpu, args.set_, args.mode)
        if args.by_regime:
            frame = stats_by_regime(store, filters, tuple(args.baseline or ()))
        else:
            frame = stats(store, filters, tuple(args.baseline) if args.baseline else None)
    emit(frame, args.fmt)
    return 0
