"""The parser and the dispatch: one subcommand per module of this package, in the order ``--help``
lists them; no command opens the Textual app. Errors become one stderr line and an exit code."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from cuda_l2_explorer.cli import (
    bench,
    export,
    import_kernels,
    import_results,
    info,
    lookup,
    overview,
    runs,
    sets,
    stats,
    tune,
)
from cuda_l2_explorer.cli.common import EXIT_CODES_HELP, PROG, Parser, add_store_options
from cuda_l2_explorer.db.errors import EXIT_INTERRUPTED, ExplorerError, IOFailure

# The order of `--help`.
MODULES = (overview, info, sets, import_results, import_kernels, bench, runs, stats, lookup, export, tune)


class _VersionAction(argparse.Action):
    """``--version``, read from the installed metadata only when asked (not on every command)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        from cuda_l2_explorer.engine.browse import version

        print(f"{PROG} {version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description="Find, measure and export the fastest HGEMM kernel for your (M, N, K).",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    add_store_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for module in MODULES:
        p = sub.add_parser(
            module.NAME,
            help=module.HELP,
            description=module.HELP,
            epilog=EXIT_CODES_HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        add_store_options(p, top=False)
        module.add_arguments(p)
    return parser


def open_app(args: argparse.Namespace) -> int:
    """No command: open the Textual app."""
    from cuda_l2_explorer.app.app import ExplorerApp

    ExplorerApp(Path(args.db).expanduser() if args.db else None, False if args.no_bundled else None).run()
    return 0


COMMANDS: dict[str | None, Callable[[argparse.Namespace], int]] = {
    **{module.NAME: module.run for module in MODULES},
    None: open_app,
}


# The commands that write the store; every other one opens it read-only.
STORE_WRITERS = frozenset({import_results.NAME, bench.NAME, tune.NAME})


def _store_failure(args: argparse.Namespace | None, exc: Exception, first: str) -> int:
    """A DuckDB error that reached the top: the store's own fault (truncated, corrupt) when DuckDB
    says so, else a failed write (disk full, file size limit: the transaction did not commit, so
    the store holds what it held before) or a failed read."""
    from cuda_l2_explorer.db.store import default_store_path, explain_error

    db = getattr(args, "db", None)
    error = explain_error(Path(db).expanduser() if db else default_store_path(), exc)
    if error is not None:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return error.exit_code
    if getattr(args, "command", None) in STORE_WRITERS:
        print(f"{PROG}: error: writing the store failed, nothing was committed: {first}", file=sys.stderr)
    else:
        print(f"{PROG}: error: reading the store failed: {first}", file=sys.stderr)
    return IOFailure.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args: argparse.Namespace | None = None
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
            return _store_failure(args, exc, first)
        print(
            f"{PROG}: internal error: {type(exc).__name__}: {first} "
            "(set CUDA_L2_EXPLORER_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1
