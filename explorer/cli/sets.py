"""``sets``: the kernel sets with the GPU each is for, the GPUs and modes of its data, and configs."""

from __future__ import annotations

import argparse

from cuda_l2_explorer.cli.common import add_format, open_store, say

NAME = "sets"
HELP = "list kernel sets with the GPU each is for, the GPUs and modes it has data for, and configs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_format(parser)


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit
    from cuda_l2_explorer.engine.browse import kernel_sets

    with open_store(args) as store:
        frame = kernel_sets(store)
    if frame.height == 0:
        say(args, "no kernel sets yet: import some with `cuda-l2-explorer import-results --upstream`")
    emit(frame, args.fmt)
    waiting = frame.filter((frame["configs"] == 0) & (frame["origin"] == "imported"))["set_id"].to_list()
    if waiting:
        say(
            args,
            f"{len(waiting)} imported set(s) with no results yet ({', '.join(waiting)}): "
            "measure one with `cuda-l2-explorer bench --set SET_ID --grid --mode offline`",
        )
    return 0
