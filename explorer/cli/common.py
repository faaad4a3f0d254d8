"""What every command shares: the program's name, exit codes, store options, output formats and
how messages and progress reach stderr."""

from __future__ import annotations

import argparse
from pathlib import Path

from cuda_l2_explorer.db.errors import UsageError
from cuda_l2_explorer.engine.feedback import Feedback

PROG = "cuda-l2-explorer"
EXIT_CODES_HELP = """exit codes:
  0 ok, 1 internal error, 2 usage error, 3 bad input data, 4 not found,
  5 I/O or network failure, 6 store unusable, 7 no GPU, 130 interrupted"""


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line (raised, so main() picks the exit code)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see --help)")


def add_store_options(parser: argparse.ArgumentParser, top: bool) -> None:
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


def add_format(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", dest="fmt", action="store_const", const="json", help="print JSON")
    group.add_argument("--csv", dest="fmt", action="store_const", const="csv", help="print CSV")
    parser.set_defaults(fmt="text")


def add_filters(parser: argparse.ArgumentParser, mode_help: str = "offline or server") -> None:
    parser.add_argument("--gpu", help="GPU label, e.g. h100, a100")
    parser.add_argument("--set", dest="set_", metavar="SET", help="kernel set name or id")
    parser.add_argument("--mode", help=mode_help)


def add_shape_choice(parser: argparse.ArgumentParser, mnk_help: str) -> None:
    parser.add_argument("--mnk", metavar="M_N_K,...", help=mnk_help)
    parser.add_argument("--grid", action="store_true", help="the 1000-config reference grid")
    parser.add_argument(
        "--sample", type=int, metavar="N", help="with --grid: a fixed random sample of N configs"
    )


def add_download_options(parser: argparse.ArgumentParser, timeout_s: float, max_bytes: int) -> None:
    """--timeout, --retries and --max-bytes of a command that reads files or URLs."""
    parser.add_argument(
        "--timeout",
        type=float,
        default=timeout_s,
        metavar="S",
        help="time limit of one download attempt, headers and body (or of reading a pipe) "
        f"(default {timeout_s:g})",
    )
    parser.add_argument(
        "--retries", type=int, default=3, metavar="N", help="retries on transient network faults (default 3)"
    )
    parser.add_argument(
        "--max-bytes",
        type=int,
        default=max_bytes,
        metavar="N",
        help=f"size limit per input (default {max_bytes >> 20} MiB)",
    )


def download_options(args: argparse.Namespace):
    """The FetchOptions the download options ask for (UsageError for values out of range)."""
    from cuda_l2_explorer.engine.imports import FetchOptions

    if args.timeout <= 0 or args.retries < 0 or args.max_bytes <= 0:
        raise UsageError("--timeout and --max-bytes must be positive and --retries not negative")
    return FetchOptions(timeout_s=args.timeout, retries=args.retries, max_bytes=args.max_bytes)


def store_path(args: argparse.Namespace) -> Path | None:
    return Path(args.db).expanduser() if args.db else None


def with_bundled(args: argparse.Namespace) -> bool | None:
    """--no-bundled: False; otherwise None, the store's default ($CUDA_L2_EXPLORER_NO_BUNDLED)."""
    return False if args.no_bundled else None


def open_store(args: argparse.Namespace, write: bool = False):
    from cuda_l2_explorer.engine.browse import open_store

    return open_store(Path(args.db) if args.db else None, write=write, with_bundled=with_bundled(args))


def say(args: argparse.Namespace, text: str) -> None:
    if not args.quiet:
        from cuda_l2_explorer.cli.output import message

        message(text)


def progress_bar(args: argparse.Namespace, label: str):
    """A bar on a terminal, JSON lines (``--progress jsonl``, for the app's live run) or nothing."""
    from cuda_l2_explorer.cli.progress import ProgressBar

    mode = getattr(args, "progress", "auto")
    if mode == "jsonl":
        return ProgressBar(label, jsonl=True)
    return ProgressBar(label, enabled=False if args.quiet or mode == "none" else None)


def feedback(args: argparse.Namespace) -> Feedback:
    """The engine's messages and progress, on stderr as the options ask."""
    return Feedback(say=lambda text: say(args, text), bar=lambda label: progress_bar(args, label))


def command_line(args: argparse.Namespace) -> str:
    """The command as the user typed it (recorded with a run's provenance)."""
    import shlex

    return shlex.join([PROG, *args.argv])
