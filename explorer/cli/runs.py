"""``runs``: the runs behind the data, with their provenance."""

from __future__ import annotations

import argparse

from cuda_l2_explorer.cli.common import add_filters, add_format, open_store

NAME = "runs"
HELP = "list the runs behind the data with their provenance (GPU, versions, command)"

# The text table keeps to what fits a terminal; --json / --csv carry every provenance column.
RUN_COLUMNS_TEXT = (
    "run_id", "kind", "set_id", "gpu", "mode", "status", "started", "configs", "harness", "gpu_name",
    "driver", "torch", "cublas", "cutlass",
)  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_filters(parser)
    parser.add_argument("--kind", choices=("published", "bench", "tune"), help="only runs of this kind")
    add_format(parser)


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit
    from cuda_l2_explorer.engine.browse import resolve_filters, runs

    with open_store(args) as store:
        frame = runs(store, resolve_filters(store, args.gpu, args.set_, args.mode), args.kind)
    if args.fmt == "text":
        frame = frame.select(RUN_COLUMNS_TEXT).with_columns(frame["run_id"].str.slice(0, 8))
    emit(frame, args.fmt)
    return 0
