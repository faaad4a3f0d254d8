"""Work done once a test run and shared by all of the run's processes: the one pytest process, or
the workers of ``pytest -n 2`` (pytest-xdist), which would otherwise each compile the same CUTLASS
kernels on the CI's two cores (tests/sm90a_compiles.py, tests/background_builds.py).

The run's folder is made by the process that starts the run (the only one, or xdist's controller,
whose workers inherit its path through the environment) and removed when that process ends. In
it, a job is claimed by the first process that wants it: a file of its own, created exclusively
and under a lock held while a process claims its jobs, so that one process claims all of the jobs
of a collection (the others find them claimed and claim nothing). The claimer runs the job in a
thread of its own at the lowest CPU priority (the processes it starts inherit it) and leaves the
result beside the claim (pickled, renamed into place when complete); the other processes wait for
that file. A job its claimer gave up before it started (the claimer's session ended first) is
claimed again by the next process that asks for it; a claimer that died leaves an error, not a
wait without end.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path

ENV = "CUDA_L2_EXPLORER_TESTS_RUN_DIR"
_made_here: Path | None = None
_lock_depth = 0
_lock_fd: int | None = None
_local = threading.RLock()


def configure() -> None:
    """At the start of a pytest process: a worker of xdist uses its controller's folder (inherited),
    any other process makes the run's folder (pytest_configure, before xdist starts its workers)."""
    global _made_here
    if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get(ENV):
        return
    _made_here = Path(tempfile.mkdtemp(prefix="cuda-l2-tests-run-"))
    os.environ[ENV] = str(_made_here)


def unconfigure() -> None:
    """At the end of the process that made the folder (its workers, if any, have ended)."""
    global _made_here
    if _made_here is not None:
        shutil.rmtree(_made_here, ignore_errors=True)
        os.environ.pop(ENV, None)
        _made_here = None


def run_dir() -> Path:
    if not os.environ.get(ENV):  # imported and used outside a configured session (a script)
        configure()
    return Path(os.environ[ENV])


@contextlib.contextmanager
def claiming() -> Iterator[None]:
    """The run's claim lock, held by one process at a time (re-entrant within a process)."""
    global _lock_depth, _lock_fd
    with _local:
        if _lock_depth == 0:
            _lock_fd = os.open(run_dir() / "claims.lock", os.O_CREAT | os.O_RDWR, 0o644)
            fcntl.flock(_lock_fd, fcntl.LOCK_EX)
        _lock_depth += 1
        try:
            yield
        finally:
            _lock_depth -= 1
            if _lock_depth == 0 and _lock_fd is not None:
                fcntl.flock(_lock_fd, fcntl.LOCK_UN)
                os.close(_lock_fd)
                _lock_fd = None


def _alive(pid: int) -> bool:
    """Whether the process runs (one that ended and is not yet reaped by its parent has not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError, IndexError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    return True


def _lowest_priority() -> None:
    with contextlib.suppress(OSError, AttributeError):  # not Linux: run at the usual priority
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


class SharedJobs:
    """Named jobs, each run once a test run by the process that claims it first. A job is a
    callable that makes its result in an empty folder of its own, ``folder / key``."""

    def __init__(self, name: str, threads: int) -> None:
        self.name, self.threads = name, threads
        self.pool: ThreadPoolExecutor | None = None
        self.futures: dict[str, Future] = {}  # the jobs claimed by this process
        self.closing = threading.Event()

    @property
    def folder(self) -> Path:
        path = run_dir() / self.name
        path.mkdir(exist_ok=True)
        return path

    def _claim(self, key: str) -> bool:
        try:
            fd = os.open(self.folder / f"{key}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return True

    def _publish(self, key: str, outcome: tuple[str, object]) -> None:
        try:
            data = pickle.dumps(outcome)
        except Exception:  # an exception that does not pickle: its text does
            status, value = outcome
            data = pickle.dumps((status, RuntimeError(f"{type(value).__name__}: {value}")))
        partial = self.folder / f"{key}.result.{os.getpid()}"
        partial.write_bytes(data)
        partial.replace(self.folder / f"{key}.result")

    def _run(self, key: str, make: Callable[[Path], object], after: Iterable[Future]):
        _lowest_priority()
        wait(list(after))  # what this job waits for (the SM90 compiles: wanted earlier)
        if self.closing.is_set():  # the session ended before the job started: another may claim it
            with claiming():
                (self.folder / f"{key}.claim").unlink()
            raise RuntimeError(f"{self.name}/{key}: given up, not started")
        out = self.folder / key
        out.mkdir()
        try:
            value = make(out)
        except BaseException as exc:
            self._publish(key, ("error", exc))
            raise
        self._publish(key, ("ok", value))
        return value

    def start(
        self, jobs: dict[str, Callable[[Path], object]], after: dict[str, Iterable[Future]] | None = None
    ) -> None:
        """Claim each job that no process of the run has claimed and start it in this process's
        threads, in the order given (``after``: futures a job waits for first)."""
        with claiming():
            for key, make in jobs.items():
                if key not in self.futures and self._claim(key):
                    if self.pool is None:
                        self.pool = ThreadPoolExecutor(self.threads, thread_name_prefix=self.name)
                    self.futures[key] = self.pool.submit(self._run, key, make, (after or {}).get(key, ()))

    def result(self, key: str, make: Callable[[Path], object], poll_s: float = 0.1):
        """The job's result (its exception, raised here): this process's own, or the one its
        claimer left; claimed and started here if no process of the run has it."""
        result_file = self.folder / f"{key}.result"
        claim = self.folder / f"{key}.claim"
        while key not in self.futures:
            if result_file.exists():
                status, value = pickle.loads(result_file.read_bytes())
                if status == "error":
                    raise value
                return value
            with claiming():
                if not claim.exists() and not result_file.exists():
                    self.start({key: make})
                    break
            with contextlib.suppress(FileNotFoundError, ValueError):
                pid = int(claim.read_text() or 0)
                if pid and not _alive(pid) and not result_file.exists():
                    raise RuntimeError(f"{self.name}/{key}: the process that claimed it ({pid}) died")
            time.sleep(poll_s)
        return self.futures[key].result()

    def close(self) -> None:
        """The running jobs finish (their results are wanted); those not started are given up."""
        self.closing.set()
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        with claiming():
            for key, future in self.futures.items():
                if future.cancelled():
                    (self.folder / f"{key}.claim").unlink(missing_ok=True)
