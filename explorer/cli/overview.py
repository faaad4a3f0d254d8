"""``overview``: a short text overview of what the store holds (what the app shows first)."""

from __future__ import annotations

import argparse

from cuda_l2_explorer.cli.common import open_store, say

NAME = "overview"
HELP = "print a short overview of the store (what the app shows first)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit, message
    from cuda_l2_explorer.engine.browse import kernel_sets
    from cuda_l2_explorer.engine.stats import headline

    with open_store(args) as store:
        sets = kernel_sets(store)
        if sets.height == 0:
            message(
                "the store is empty: import published results with "
                "`cuda-l2-explorer import-results --upstream` or a CSV path"
            )
            return 0
        frame = headline(store)
    say(args, f"{sets.height} kernel set(s); speedup of each set over the headline baselines:")
    emit(frame.drop("accumulator"), "text")
    say(args, "more: cuda-l2-explorer --help, `stats`, `lookup M N K`")
    return 0
