"""The scriptable CLI, ``cuda-l2-explorer``. Every command calls the engine in ``db``/``importer``.

Conventions: data on stdout (text, ``--json`` or ``--csv``), messages on stderr, one line per
error, and these exit codes:

  0 success              4 not found (unknown GPU / set, no data)
  1 internal error       5 I/O or network failure
  2 usage error          6 store unusable (corrupt, locked, read-only, newer schema)
  3 bad input data       7 no GPU          130 interrupted
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from cuda_l2_explorer.db.errors import EXIT_INTERRUPTED, ExplorerError, IOFailure, UsageError

PROG = "cuda-l2-explorer"
EXIT_CODES_HELP = """exit codes:
  0 ok, 1 internal error, 2 usage error, 3 bad input data, 4 not found,
  5 I/O or network failure, 6 store unusable, 7 no GPU, 130 interrupted"""


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line (raised, so main() picks the exit code)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see --help)")


def _all_baselines() -> tuple[str, ...]:
    from cuda_l2_explorer.db.views import BASELINES

    return BASELINES


def _version() -> str:
    from cuda_l2_explorer.db.store import tool_version

    return tool_version()


def _add_store_options(parser: argparse.ArgumentParser, top: bool) -> None:
    default = None if top else argparse.SUPPRESS
    parser.add_argument(
        "--db",
        metavar="PATH",
        default=default,
        help="store file (default: $CUDA_L2_EXPLORER_DB or the user data dir)",
    )
    parser.add_argument(
        "--no-bundled",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="leave the bundled read-only dataset out",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="no messages on stderr except errors",
    )


def _add_format(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", dest="fmt", action="store_const", const="json", help="print JSON")
    group.add_argument("--csv", dest="fmt", action="store_const", const="csv", help="print CSV")
    parser.set_defaults(fmt="text")


def _add_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gpu", help="GPU label, e.g. h100, a100")
    parser.add_argument("--set", dest="set_", metavar="SET", help="kernel set name or id")
    parser.add_argument("--mode", help="offline or server")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Find, measure and export the fastest HGEMM kernel for your (M, N, K).",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    _add_store_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=EXIT_CODES_HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _add_store_options(p, top=False)
        return p

    command("overview", "print a short overview of the store (what the app shows first)")

    p = command("info", "show the store, its schema version and the bundled dataset")
    _add_format(p)

    p = command("sets", "list kernel sets with their GPUs, modes and configs")
    _add_format(p)

    p = command("import-results", "import published speedup CSVs (SPEC §5) from files or URLs")
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
        "--timeout", type=float, default=30.0, metavar="S", help="network timeout per attempt (default 30)"
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
    _add_format(p)

    p = command("bench", "measure a kernel set against the baselines on this machine's GPUs (SPEC §6-§7)")
    p.add_argument(
        "--set", dest="set_", metavar="DIR_OR_NAME", help="kernel set folder (SPEC §4 layout) or name"
    )
    p.add_argument(
        "--set-name", default=None, help="name to store the set under (default: the folder's parent)"
    )
    p.add_argument("--mnk", metavar="M_N_K,...", help="configs to measure, e.g. 64_64_64,4096_4096_4096")
    p.add_argument("--grid", action="store_true", help="the 1000-config reference grid")
    p.add_argument("--sample", type=int, metavar="N", help="with --grid: a fixed random sample of N configs")
    p.add_argument("--mode", choices=("offline", "server"), default="offline")
    p.add_argument("--target-qps", type=float, default=100.0, metavar="Q", help="server mode arrival rate")
    p.add_argument("--warmup-s", type=float, default=0.02, metavar="S", help="warm-up per implementation")
    p.add_argument("--samples", type=int, default=None, metavar="S", help="samples (offline 15, server 20)")
    p.add_argument(
        "--baselines", default=",".join(_all_baselines()), metavar="B,...", help="baselines to run"
    )
    p.add_argument("--gpus", default="0", metavar="all|0,1", help="GPUs to shard configs over (default 0)")
    p.add_argument(
        "--resume",
        nargs="?",
        const="latest",
        default=None,
        metavar="RUN_ID",
        help="continue an interrupted run (the latest of this set and mode by default)",
    )
    p.add_argument("--timeout", type=float, default=300.0, metavar="S", help="per-config limit (default 300)")
    p.add_argument("--warm-l2", action="store_true", help="no input rotation: warm-L2 figures, labelled")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel kernel builds")
    p.add_argument("--library", metavar="PATH", help="our kernel library, for a set with a manifest.json")
    p.add_argument(
        "--progress",
        choices=("auto", "jsonl", "none"),
        default="auto",
        help="progress on stderr: a bar on a terminal, JSON lines, or nothing",
    )
    _add_format(p)

    p = command("runs", "list the runs behind the data with their provenance (GPU, versions, command)")
    _add_filters(p)
    p.add_argument("--kind", choices=("published", "bench", "tune"), help="only runs of this kind")
    _add_format(p)

    p = command("stats", "aggregate speedups per set, mode and baseline (geomean first)")
    _add_filters(p)
    p.add_argument("--baseline", action="append", metavar="NAME", help="only this baseline (repeatable)")
    p.add_argument(
        "--by-regime",
        action="store_true",
        help="per regime (tiny, skinny, small-K, large) against one baseline (default best-baseline)",
    )
    _add_format(p)

    p = command("lookup", "rank the kernels that can serve an (M, N, K), with their evidence")
    p.add_argument("m", metavar="M")
    p.add_argument("n", metavar="N")
    p.add_argument("k", metavar="K")
    _add_filters(p)
    p.add_argument("--limit", type=int, default=10, help="candidates to show (default 10)")
    _add_format(p)

    p = command("export", "write the kernel lookup chooses for an (M, N, K) into a folder (SPEC §9)")
    p.add_argument("m", metavar="M")
    p.add_argument("n", metavar="N")
    p.add_argument("k", metavar="K")
    p.add_argument(
        "--format",
        dest="export_format",
        required=True,
        choices=("cuda-l2", "torch", "cmake"),
        help="cuda-l2: the SPEC §4 .cu file; torch: a pip-installable extension package; "
        "cmake: CUDA C++ with a C API, a CMakeLists.txt and a test program",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="folder to create (must be absent or empty)")
    _add_filters(p)
    p.add_argument(
        "--manifest",
        action="append",
        type=Path,
        metavar="PATH",
        help="a kernel-library manifest to choose from (repeatable; default: kernels/*/manifest.json)",
    )
    p.add_argument("--name", help="package / project name (sanitised; default from the set and shape)")
    p.add_argument("--force", action="store_true", help="replace DIR if it exists and is not empty")
    p.add_argument(
        "--json", dest="fmt", action="store_const", const="json", default="text", help="print JSON"
    )

    p = command("tune", "search our kernel library for the fastest kernel of (M, N, K) on this GPU")
    p.add_argument("dims", nargs="*", metavar="M N K", help="one shape (or use --mnk / --grid)")
    p.add_argument("--mnk", metavar="M_N_K,...", help="several shapes, e.g. 1_4096_4096,4096_14336_4096")
    p.add_argument("--grid", action="store_true", help="the 1000-config reference grid")
    p.add_argument("--sample", type=int, metavar="N", help="with --grid: a fixed random sample of N configs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--library", metavar="PATH", help="kernel library (default: the latest tuner build)")
    p.add_argument("--manifest", metavar="PATH", help="manifest to merge the results into")
    p.add_argument("--limit", type=int, default=16, metavar="N", help="candidates measured per shape")
    p.add_argument("--finalists", type=int, default=4, metavar="N", help="candidates re-measured per shape")
    p.add_argument("--no-measure", action="store_true", help="skip the baseline comparison after the search")
    p.add_argument(
        "--keep-faster",
        action="store_true",
        help="replace a config already in the manifest only when the new kernel measured faster",
    )
    p.add_argument("--gpus", default="0", metavar="all|0,1")
    p.add_argument("--resume", nargs="?", const="latest", default=None, metavar="RUN_ID")
    p.add_argument("--timeout", type=float, default=300.0, metavar="S", help="per-shape limit (default 300)")
    p.add_argument("--progress", choices=("auto", "jsonl", "none"), default="auto")
    p.add_argument("--format", dest="fmt", choices=("table", "json", "csv"), default="table")
    p.add_argument("--json", dest="fmt", action="store_const", const="json")
    return parser


def _open_store(args: argparse.Namespace, write: bool):
    from cuda_l2_explorer.db.store import Store

    return Store.open(
        Path(args.db) if args.db else None,
        read_only=not write,
        with_bundled=not args.no_bundled if args.no_bundled else None,
    )


def _say(args: argparse.Namespace, text: str) -> None:
    if not args.quiet:
        from cuda_l2_explorer.output import message

        message(text)


# --------------------------------------------------------------------------- commands
def cmd_info(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.db import bundled
    from cuda_l2_explorer.db.schema import SCHEMA_VERSION
    from cuda_l2_explorer.db.store import default_store_path
    from cuda_l2_explorer.output import emit

    path = Path(args.db).expanduser() if args.db else default_store_path()
    with _open_store(args, write=False) as store:
        info = {
            "version": _version(),
            "store": str(path),
            "store_exists": path.exists(),
            "schema_version": SCHEMA_VERSION,
            "store_schema_version": store.schema_version() if path.exists() else None,
            "bundled_dataset": str(store.bundled_dir) if store.bundled_dir else None,
            "bundled_manifest": bundled.manifest(store.bundled_dir) if store.bundled_dir else None,
            "kernel_sets": store.scalar("SELECT count(*) FROM all_kernel_sets"),
        }
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


def cmd_sets(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.db.reads import kernel_sets
    from cuda_l2_explorer.output import emit

    with _open_store(args, write=False) as store:
        frame = kernel_sets(store)
    if frame.height == 0:
        _say(args, "no kernel sets yet: import some with `cuda-l2-explorer import-results --upstream`")
    emit(frame, args.fmt)
    return 0


def cmd_import_results(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.importer.fetch import FetchOptions
    from cuda_l2_explorer.importer.published import (
        UPSTREAM_BASE,
        UPSTREAM_FILES,
        import_published,
        load_published,
        source_name,
    )
    from cuda_l2_explorer.output import emit
    from cuda_l2_explorer.progress import ProgressBar

    sources = list(args.sources)
    if args.upstream:
        base = (args.upstream_base or UPSTREAM_BASE).rstrip("/")
        sources += [f"{base}/{name}" for name in UPSTREAM_FILES]
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
            _say(args, f"warning: {warning}")
    command_line = shlex.join([PROG, *args.argv])
    with _open_store(args, write=True) as store:
        results = import_published(store, loaded, command_line)
    for r in results:
        _say(args, f"{r.action}: {r.set_id} {r.mode}, {r.configs} configs from {r.origin}")
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


def cmd_bench(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.bench_command import run_bench_command

    return run_bench_command(args)


def cmd_tune(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.tune_command import run_tune_command

    return run_tune_command(args)


def cmd_stats(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.db.reads import resolve_filters, stats
    from cuda_l2_explorer.output import emit

    with _open_store(args, write=False) as store:
        filters = resolve_filters(store, args.gpu, args.set_, args.mode)
        if args.by_regime:
            from cuda_l2_explorer.db.reads import stats_by_regime

            if args.baseline and len(args.baseline) > 1:
                raise UsageError("--by-regime takes at most one --baseline")
            frame = stats_by_regime(store, filters, *(args.baseline or []))
        else:
            frame = stats(store, filters, tuple(args.baseline) if args.baseline else None)
    emit(frame, args.fmt)
    return 0


# The text table keeps to what fits a terminal; --json / --csv carry every provenance column.
RUN_COLUMNS_TEXT = (
    "run_id", "kind", "set_id", "gpu", "mode", "status", "started", "configs", "harness", "gpu_name",
    "driver", "torch", "cublas", "cutlass",
)  # fmt: skip


def cmd_runs(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.db.reads import resolve_filters, runs
    from cuda_l2_explorer.output import emit

    with _open_store(args, write=False) as store:
        frame = runs(store, resolve_filters(store, args.gpu, args.set_, args.mode), args.kind)
    if args.fmt == "text":
        frame = frame.select(RUN_COLUMNS_TEXT).with_columns(frame["run_id"].str.slice(0, 8))
    emit(frame, args.fmt)
    return 0


def cmd_lookup(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.db.lookup import lookup
    from cuda_l2_explorer.db.reads import resolve_filters
    from cuda_l2_explorer.db.shapes import parse_shape
    from cuda_l2_explorer.output import emit

    query = parse_shape(args.m, args.n, args.k)
    if args.limit <= 0:
        raise UsageError("--limit must be a positive integer")
    with _open_store(args, write=False) as store:
        filters = resolve_filters(store, args.gpu, args.set_, args.mode)
        result = lookup(store, query, filters, args.limit)
    if args.fmt == "json":
        emit(result.to_json(), "json")
        return 0
    _say(args, result.message)
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


def cmd_export(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.db.shapes import parse_shape
    from cuda_l2_explorer.export import export_kernel
    from cuda_l2_explorer.output import emit

    query = parse_shape(args.m, args.n, args.k)
    with _open_store(args, write=False) as store:
        result = export_kernel(
            store,
            query,
            args.export_format,
            Path(args.out).expanduser(),
            gpu=args.gpu,
            set_=args.set_,
            mode=args.mode,
            manifests=args.manifest,
            name=args.name,
            force=args.force,
        )
    _say(args, result.summary())
    if args.fmt == "json":
        emit(result.to_json(), "json")
    else:
        for path in result.files:
            print(path)
    return 0


def cmd_app(args: argparse.Namespace) -> int:
    """No command: open the Textual app."""
    from cuda_l2_explorer.app.app import ExplorerApp

    ExplorerApp(Path(args.db).expanduser() if args.db else None, False if args.no_bundled else None).run()
    return 0


def cmd_overview(args: argparse.Namespace) -> int:
    """A short text overview of what the store holds."""
    from cuda_l2_explorer.db.reads import kernel_sets, resolve_filters, stats
    from cuda_l2_explorer.db.views import HEADLINE_BASELINES
    from cuda_l2_explorer.output import emit, message

    with _open_store(args, write=False) as store:
        sets = kernel_sets(store)
        if sets.height == 0:
            message(
                "the store is empty: import published results with "
                "`cuda-l2-explorer import-results --upstream` or a CSV path"
            )
            return 0
        frame = stats(store, resolve_filters(store), HEADLINE_BASELINES)
    _say(args, f"{sets.height} kernel set(s); speedup of each set over the headline baselines:")
    emit(frame.drop("accumulator"), "text")
    _say(args, "more: cuda-l2-explorer --help, `stats`, `lookup M N K`")
    return 0


COMMANDS = {
    "info": cmd_info,
    "sets": cmd_sets,
    "import-results": cmd_import_results,
    "bench": cmd_bench,
    "stats": cmd_stats,
    "runs": cmd_runs,
    "lookup": cmd_lookup,
    "export": cmd_export,
    "overview": cmd_overview,
    "tune": cmd_tune,
    None: cmd_app,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(argv)
        args.argv = argv
        return COMMANDS[args.command](args)
    except ExplorerError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout closed early (e.g. piped into `head`): not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:  # the last line of defence: one line, not a traceback
        if os.environ.get("CUDA_L2_EXPLORER_DEBUG"):
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        if type(exc).__module__.split(".")[0] in ("duckdb", "_duckdb"):
            # A store write that failed underneath us (disk full, file size limit, I/O error):
            # the transaction did not commit, so the store holds what it held before.
            print(f"{PROG}: error: writing the store failed, nothing was committed: {first}", file=sys.stderr)
            return IOFailure.exit_code
        print(
            f"{PROG}: internal error: {type(exc).__name__}: {first} "
            "(set CUDA_L2_EXPLORER_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1
