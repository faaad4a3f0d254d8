"""A plain stderr progress bar for long work (downloads now, benchmarks later)."""

from __future__ import annotations

import sys
import time


class ProgressBar:
    """Redraws one stderr line at most ~10 times a second; silent when stderr is not a TTY."""

    def __init__(self, label: str, enabled: bool | None = None, min_total: int = 0) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.min_total = min_total
        self._last = 0.0
        self._drawn = False
        self._start = time.monotonic()

    def bytes(self, done: int, total: int | None) -> None:
        if not self.enabled or (total is not None and total < self.min_total):
            return
        now = time.monotonic()
        if now - self._last < 0.1 and (total is None or done < total):
            return
        self._last = now
        rate = done / max(now - self._start, 1e-6)
        if total:
            frac = done / total
            bar = "#" * int(frac * 30)
            text = f"{self.label} [{bar:<30}] {done / 1e6:.1f}/{total / 1e6:.1f} MB {rate / 1e6:.1f} MB/s"
        else:
            text = f"{self.label} {done / 1e6:.1f} MB {rate / 1e6:.1f} MB/s"
        sys.stderr.write("\r" + text[:120].ljust(80))
        sys.stderr.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self._drawn = False
