"""Settings read from the environment, checked once where they are read."""

from __future__ import annotations

import os

from cuda_l2_explorer.db.errors import UsageError


def positive_seconds(name: str, default: float, error: type[Exception] = UsageError) -> float:
    """``name``'s value as a positive number of seconds, ``default`` when it is unset; a value
    that is not one raises ``error`` naming the variable (not a bare float() traceback)."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:  # also NaN
        raise error(f"{name} must be a positive number of seconds, got {raw!r}")
    return seconds
