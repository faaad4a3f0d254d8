"""``import-results``: published speedup CSVs (SPEC §5) from files or URLs into the store."""

from __future__ import annotations

import argparse

from cuda_l2_explorer.cli.common import add_format, command_line, say, store_path
from cuda_l2_explorer.db.errors import UsageError

NAME = "import-results"
HELP = "import published speedup CSVs (SPEC §5) from files or URLs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    p = parser
    p.add_argument("sources", nargs="*", metavar="PATH_OR_URL")
    p.add_argument(
        "--upstream", action="store_true", help="import every file the reference repository publishes"
    )
    p.add_argument("--upstream-base", metavar="URL", default=None, help="base URL of the published files")
    p.add_argument("--gpu", help="GPU label (default: from the file name)")
    p.add_argument(
        "--accumulator", choices=("F32F16F16F32", "F16F16F16F16"), help="default: from the file name"
    )
    p.add_argument("--mode", choices=("offline", "server"), help="default: from the file name")
    p.add_argument("--set-name", default=None, help="kernel set name (default: cuda-l2)")
    p.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="time limit of one download attempt, headers and body (or of reading a pipe) (default 30)",
    )
    p.add_argument(
        "--retries", type=int, default=3, metavar="N", help="retries on transient network faults (default 3)"
    )
    p.add_argument(
        "--max-bytes",
        type=int,
        default=64 * 1024 * 1024,
        metavar="N",
        help="size limit per input (default 64 MiB)",
    )
    add_format(p)


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit
    from cuda_l2_explorer.cli.progress import ProgressBar
    from cuda_l2_explorer.engine.imports import (
        FetchOptions,
        import_published,
        load_published,
        open_store_for_import,
        source_name,
        upstream_sources,
    )

    sources = list(args.sources)
    if args.upstream:
        sources += upstream_sources(args.upstream_base)
    elif args.upstream_base:
        raise UsageError("--upstream-base needs --upstream")
    if not sources:
        raise UsageError("import-results: give PATH_OR_URL arguments or --upstream")
    if args.timeout <= 0 or args.retries < 0 or args.max_bytes <= 0:
        raise UsageError("--timeout and --max-bytes must be positive and --retries not negative")
    options = FetchOptions(timeout_s=args.timeout, retries=args.retries, max_bytes=args.max_bytes)
    loaded = []
    for origin in sources:
        bar = ProgressBar(
            f"downloading {source_name(origin)}", enabled=None if not args.quiet else False, min_total=1 << 20
        )
        try:
            loaded.append(
                load_published(
                    origin,
                    options,
                    gpu=args.gpu,
                    accumulator=args.accumulator,
                    mode=args.mode,
                    set_name=args.set_name,
                    progress=bar.bytes,
                )
            )
        finally:
            bar.close()
        for warning in loaded[-1].warnings:
            say(args, f"warning: {warning}")
    with open_store_for_import(store_path(args)) as store:
        results = import_published(store, loaded, command_line(args))
    for r in results:
        say(args, f"{r.action}: {r.set_id} {r.mode}, {r.configs} configs from {r.origin}")
    emit(
        [
            {
                "origin": r.origin,
                "set_id": r.set_id,
                "gpu": r.gpu,
                "accumulator": r.accumulator,
                "mode": r.mode,
                "configs": r.configs,
                "action": r.action,
                "run_id": r.run_id,
            }
            for r in results
        ],
        args.fmt,
    )
    return 0
