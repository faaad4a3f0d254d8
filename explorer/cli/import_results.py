"""``import-results``: published speedup CSVs (SPEC §5) from files or URLs into the store."""

from __future__ import annotations

import argparse

from cuda_l2_explorer.cli.common import (
    add_download_options,
    add_format,
    command_line,
    download_options,
    say,
    store_path,
)
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
    add_download_options(p, timeout_s=30.0, max_bytes=64 << 20)
    add_format(p)


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit
    from cuda_l2_explorer.cli.progress import ProgressBar
    from cuda_l2_explorer.engine.imports import (
        check_store_for_import,
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
    options = download_options(args)
    check_store_for_import(store_path(args))
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
