"""``info``: the store, its schema version and the bundled dataset."""

from __future__ import annotations

import argparse
from pathlib import Path

from cuda_l2_explorer.cli.common import add_format, with_bundled

NAME = "info"
HELP = "show the store, its schema version and the bundled dataset"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_format(parser)


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit
    from cuda_l2_explorer.engine.browse import store_info

    info = store_info(Path(args.db) if args.db else None, with_bundled(args))
    if args.fmt == "json":
        emit(info, "json")
    else:
        rows = [
            {"key": k, "value": "" if v is None else str(v)}
            for k, v in info.items()
            if k != "bundled_manifest"
        ]
        emit(rows, args.fmt)
    return 0
