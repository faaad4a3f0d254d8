"""Errors the engine raises; each carries the CLI exit code it maps to.

The CLI prints ``str(error)`` as one line on stderr and exits with ``exit_code``; the TUI shows
the same text in a notification. Keep messages to one line that says what to do.
"""

from __future__ import annotations


class ExplorerError(Exception):
    """Base class: an expected failure with a one-line message for the user."""

    exit_code = 1


class UsageError(ExplorerError):
    """Bad command-line arguments (including M, N, K that are not positive integers)."""

    exit_code = 2


class BadInputError(ExplorerError):
    """An input file or download whose content is malformed."""

    exit_code = 3


class NotFoundError(ExplorerError):
    """A GPU, kernel set, mode or shape that the store does not hold."""

    exit_code = 4


class IOFailure(ExplorerError):
    """A file that cannot be read or written, or a download that failed."""

    exit_code = 5


class StoreError(ExplorerError):
    """The store cannot be used: corrupt, locked, read-only, or from a newer version."""

    exit_code = 6


class NoGPUError(ExplorerError):
    """The command needs a CUDA GPU (and torch) and none is available."""

    exit_code = 7


EXIT_INTERRUPTED = 130
