"""The scriptable CLI, ``cuda-l2-explorer``: one module per command (it parses, calls the engine
and presents), ``dispatch`` for the parser and ``main``, ``output`` and ``progress`` for stdout
and stderr.

Conventions: data on stdout (text, ``--json`` or ``--csv``), messages on stderr, one line per
error, and these exit codes:

  0 success              4 not found (unknown GPU / set, no data)
  1 internal error       5 I/O or network failure
  2 usage error          6 store unusable (corrupt, locked, read-only, newer schema)
  3 bad input data       7 no GPU          130 interrupted
"""

from __future__ import annotations

from cuda_l2_explorer.cli.dispatch import COMMANDS, build_parser, main

__all__ = ["COMMANDS", "build_parser", "main"]
