"""``stats``: aggregate speedups per set, mode and baseline (or regime), geomean first; or the
reference system's published speedups beside our measurement of its kernels."""

from __future__ import annotations

import argparse

from cuda_l2_explorer.cli.common import add_filters, add_format, open_store, say

NAME = "stats"
HELP = "aggregate speedups per set, mode and baseline (geomean first)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_filters(parser)
    parser.add_argument("--baseline", action="append", metavar="NAME", help="only this baseline (repeatable)")
    view = parser.add_mutually_exclusive_group()
    view.add_argument(
        "--by-regime",
        action="store_true",
        help="per regime (tiny, skinny, small-K, large) against one baseline (default best-baseline)",
    )
    view.add_argument(
        "--published-vs-measured",
        action="store_true",
        help="per config, a set's published speedup beside our measurement of the same kernel on the "
        "same GPU and mode, with its status and audit findings (default baseline best-baseline); "
        "a summary on stderr (with --json: an object of rows and summary)",
    )
    add_format(parser)


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit
    from cuda_l2_explorer.engine.browse import resolve_filters
    from cuda_l2_explorer.engine.stats import published_vs_measured, stats, stats_by_regime

    baselines = tuple(args.baseline or ())
    summary: list[str] = []
    with open_store(args) as store:
        filters = resolve_filters(store, args.gpu, args.set_, args.mode)
        if args.published_vs_measured:
            comparison = published_vs_measured(store, filters, baselines)
            frame = comparison.rows if args.fmt != "text" else comparison.rows.drop("run_id")
            summary = comparison.lines()
            if args.fmt == "json":  # one object: the rows and the summary's figures beside them
                frame = comparison.to_json()
        elif args.by_regime:
            frame = stats_by_regime(store, filters, baselines)
        else:
            frame = stats(store, filters, baselines or None)
    emit(frame, args.fmt)
    for line in summary:  # after the table: what a reader of the terminal sees last
        say(args, line)
    return 0
