"""Where build caches live: ``$<ENV>`` if set, else ``$XDG_CACHE_HOME/cuda-l2-explorer/<kind>``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(kind: str, env_var: str) -> Path:
    env = os.environ.get(env_var)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cuda-l2-explorer" / kind
