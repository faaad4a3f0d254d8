"""``lookup M N K``: rank the kernels that can serve a shape, with their evidence (SPEC §8)."""

from __future__ import annotations

import argparse

from cuda_l2_explorer.cli.common import add_filters, add_format, open_store, say
from cuda_l2_explorer.db.errors import UsageError

NAME = "lookup"
HELP = "rank the kernels that can serve an (M, N, K), with their evidence"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("m", metavar="M")
    parser.add_argument("n", metavar="N")
    parser.add_argument("k", metavar="K")
    add_filters(parser)
    parser.add_argument("--limit", type=int, default=10, help="candidates to show (default 10)")
    add_format(parser)


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit
    from cuda_l2_explorer.db.shapes import parse_shape
    from cuda_l2_explorer.engine.lookup import lookup

    query = parse_shape(args.m, args.n, args.k)
    if args.limit <= 0:
        raise UsageError("--limit must be a positive integer")
    with open_store(args) as store:
        result = lookup(store, query, gpu=args.gpu, set_=args.set_, mode=args.mode, limit=args.limit)
    if args.fmt == "json":
        emit(result.to_json(), "json")
        return 0
    say(args, result.message)
    rows = []
    for r in result.candidates:
        rec = r.record()
        ev = rec.pop("evidence")
        rows.append(
            {
                "rank": rec["rank"],
                "tier": rec["tier"],
                "set_id": rec["set_id"],
                "gpu": rec["gpu"],
                "mode": rec["mode"],
                "config": ev["config"],
                "runs_at": rec["runs_at"],
                "volume_x": rec["padded_volume_ratio"],
                "predicted": rec["predicted_speedup"],
                "kernel_us": rec["kernel_us"],
                "source": ev["source"],
                "basis": rec["predicted_basis"],
            }
        )
    if rows:
        emit(rows, args.fmt)
    return 0
