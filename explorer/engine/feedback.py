"""How a long engine call reports while it runs: one-line messages and progress bars.

The engine never prints: the CLI passes callbacks that write to stderr; by default nothing is said.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

T = TypeVar("T")


class Bar(Protocol):
    """A progress bar over steps (configs done of a total) or bytes (a download), closed when the
    work ends."""

    def steps(
        self, done: int, total: int, detail: str = "", eta_s: float | None = None, failed: int = 0
    ) -> None: ...

    def bytes(self, done: int, total: int | None) -> None: ...

    def close(self) -> None: ...


class _NoBar:
    def steps(
        self, done: int, total: int, detail: str = "", eta_s: float | None = None, failed: int = 0
    ) -> None:
        pass

    def bytes(self, done: int, total: int | None) -> None:
        pass

    def close(self) -> None:
        pass


def _silent(text: str) -> None:
    pass


@dataclass(frozen=True)
class Feedback:
    say: Callable[[str], None] = _silent
    bar: Callable[[str], Bar] = field(default=lambda label: _NoBar())

    def with_run_bar(self, label: str, run: Callable[[Callable], T]) -> T:
        """``run(progress)`` with a bar fed by the harness runner's per-config progress reports."""
        bar = self.bar(label)
        try:
            return run(lambda p: bar.steps(p.done, p.total, p.current, p.eta_s, p.failed))
        finally:
            bar.close()


SILENT = Feedback()
