"""``lookup M N K``: the answer for a shape (a kernel, or keep the baseline) and the ranked
candidates with their evidence (SPEC §8)."""

from __future__ import annotations

import argparse

from cuda_l2_explorer.cli.common import add_filters, add_format, say, store_path, with_bundled
from cuda_l2_explorer.db.errors import UsageError

NAME = "lookup"
HELP = "the best kernel for an (M, N, K), or the baseline to keep, with the evidence"


def add_lookup_scope(parser: argparse.ArgumentParser) -> None:
    """--accumulator and --any-gpu: what one answer may mix (``lookup`` and ``export``)."""
    parser.add_argument(
        "--accumulator",
        metavar="fp32|fp16",
        help="accumulation of the sets to consider (default fp32; fp16 sets are never offered for fp32)",
    )
    parser.add_argument(
        "--any-gpu",
        action="store_true",
        help="rank rows of every GPU together (default: this machine's GPU, else the GPU with the most "
        "measured rows for the shape)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("m", metavar="M")
    parser.add_argument("n", metavar="N")
    parser.add_argument("k", metavar="K")
    add_filters(parser, mode_help="offline (default) or server")
    add_lookup_scope(parser)
    parser.add_argument("--limit", type=int, default=10, help="candidates to show (default 10)")
    add_format(parser)


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit
    from cuda_l2_explorer.db.shapes import parse_shape
    from cuda_l2_explorer.engine.lookup import BASELINE, lookup, open_lookup_store

    query = parse_shape(args.m, args.n, args.k)
    if args.limit <= 0:
        raise UsageError("--limit must be a positive integer")
    with open_lookup_store(store_path(args), with_bundled(args)) as store:
        result = lookup(
            store,
            query,
            gpu=args.gpu,
            set_=args.set_,
            mode=args.mode,
            limit=args.limit,
            accumulator=args.accumulator,
            any_gpu=args.any_gpu,
        )
    if args.fmt == "json":
        emit(result.to_json(), "json")
        return 0
    say(args, result.scope())
    say(args, result.message)
    for note in result.notes:
        say(args, f"note: {note}")
    if args.fmt == "text":
        print(f"answer: {result.answer}")
    rows = []
    for r in result.candidates:
        rec = r.record()
        ev = rec.pop("evidence")
        rows.append(
            {
                "rank": rec["rank"],
                "tier": rec["tier"],
                "set_id": f"keep {rec['baseline'] or 'baseline'}" if r.tier == BASELINE else rec["set_id"],
                "gpu": rec["gpu"],
                "mode": rec["mode"],
                "config": ev["config"],
                "runs_at": rec["runs_at"],
                "volume_x": rec["padded_volume_ratio"],
                "predicted": rec["predicted_speedup"],
                "low": rec["predicted_low"],
                "high": rec["predicted_high"],
                "metric": rec["metric"],  # of the predicted figure and kernel_us: never mixed
                "kernel_us": rec["kernel_us"],
                "source": ev["source"],
                "basis": rec["predicted_basis"],
            }
        )
    if rows:
        emit(rows, args.fmt)
    return 0
