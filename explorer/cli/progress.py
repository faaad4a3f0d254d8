"""A plain stderr progress bar for long work: downloads, kernel builds, benchmark and search runs."""

from __future__ import annotations

import json
import sys
import time


class ProgressBar:
    """Redraws one stderr line at most ~10 times a second; silent when stderr is not a TTY.

    With ``jsonl=True`` it writes one JSON object per update instead (for the app's live run).
    """

    def __init__(
        self, label: str, enabled: bool | None = None, min_total: int = 0, jsonl: bool = False
    ) -> None:
        self.label = label
        self.jsonl = jsonl
        self.enabled = jsonl or (sys.stderr.isatty() if enabled is None else enabled)
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
        if self.jsonl:  # the app's live run reads steps: bytes as steps, the size in the detail
            size = f"{done / 1e6:.1f}" + (f"/{total / 1e6:.1f}" if total else "") + " MB"
            self._write_record(done, total or done, size, None, 0, unit="bytes")
            return
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

    def steps(
        self, done: int, total: int, detail: str = "", eta_s: float | None = None, failed: int = 0
    ) -> None:
        """'label [####    ] 12/60 20% ETA 1m30s  detail' (configs done / total, ETA, current work)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and done < total:
            return
        self._last = now
        if self.jsonl:
            self._write_record(done, total, detail, eta_s, failed)
            return
        frac = done / total if total else 1.0
        eta = "" if eta_s is None else f" ETA {int(eta_s // 60)}m{int(eta_s % 60):02d}s"
        bad = f" ({failed} failed)" if failed else ""
        text = f"{self.label} [{'#' * int(frac * 20):<20}] {done}/{total} {frac:4.0%}{eta}{bad}  {detail}"
        sys.stderr.write("\r" + text[:150].ljust(100))
        sys.stderr.flush()
        self._drawn = True

    def _write_record(
        self, done: int, total: int, detail: str, eta_s: float | None, failed: int, unit: str = "steps"
    ) -> None:
        record = {
            "label": self.label,
            "done": done,
            "total": total,
            "detail": detail,
            "eta_s": eta_s,
            "failed": failed,
            "unit": unit,  # steps (configs, files) or bytes (a download)
        }
        sys.stderr.write(json.dumps(record) + "\n")
        sys.stderr.flush()
