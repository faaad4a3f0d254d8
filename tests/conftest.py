from __future__ import annotations

import csv
import gc
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path

import background_builds
import pytest
import run_shared
from sm90a_compiles import (
    BACKGROUND,
    sm90a_compiles,  # noqa: F401 (a session fixture: test_tuner, test_export)
    start_if_needed,
)

DATA = Path(__file__).parent / "data"
FIXTURES = DATA / "fixtures"
UPSTREAM = DATA / "upstream"
OFFLINE = FIXTURES / "cuda_l2_h100_F32F16F16F32_speedup_offline.csv"
SERVER = FIXTURES / "cuda_l2_h100_F32F16F16F32_speedup_server.csv"
# Golden copies of exported packages hold their own tests (importing packages that are not built).
collect_ignore_glob = ["data/*"]


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


def isolate(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """No test touches the user's real store; the bundled dataset is off unless a test asks."""
    monkeypatch.setenv("CUDA_L2_EXPLORER_DB", str(folder / "default-store.duckdb"))
    monkeypatch.setenv("CUDA_L2_EXPLORER_NO_BUNDLED", "1")
    monkeypatch.delenv("CUDA_L2_EXPLORER_DEBUG", raising=False)
    monkeypatch.setenv("CUDA_L2_EXPLORER_LOCK_WAIT_S", "0.3")  # lock tests fail fast
    monkeypatch.setenv("CUDA_L2_EXPLORER_SET_CACHE", str(folder / "set-cache"))  # unpacked archives
    monkeypatch.delenv("CUDA_L2_EXPLORER_GITHUB_API", raising=False)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    isolate(monkeypatch, tmp_path)


@pytest.fixture
def cli(capsys):
    """Run the CLI in-process: ``cli('stats', '--json')`` -> CliResult."""
    from cuda_l2_explorer.cli import main

    def run(*args: str) -> CliResult:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "store.duckdb"


@contextmanager
def store_template(tmp_path_factory: pytest.TempPathFactory, name: str):
    """A store file that a session (or module) fixture makes once, in a test's isolated environment;
    each test that asks for it gets its own copy (:func:`copy_store`)."""
    folder = tmp_path_factory.mktemp(name)
    path = folder / "store.duckdb"
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, folder)
        yield path
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("store.")) == [path.name]


def copy_store(template: Path, target: Path) -> Path:
    """A closed DuckDB store is one file: a copy of it is the same store."""
    shutil.copyfile(template, target)
    return target


@pytest.fixture(scope="session")
def _loaded_template(tmp_path_factory) -> Path:
    from cuda_l2_explorer.cli import main

    with store_template(tmp_path_factory, "loaded-template") as path:
        assert main([str(a) for a in ("--db", path, "import-results", OFFLINE, SERVER, "-q")]) == 0
    return path


@pytest.fixture
def loaded_db(db_path, _loaded_template) -> Path:
    """A store with the hand-made h100 fixture imported in both modes (imported once a session,
    copied for each test)."""
    return copy_store(_loaded_template, db_path)


def read_fixture(path: Path) -> dict[tuple[int, int, int], dict[str, float]]:
    """An independent reader of §5 CSVs (csv module only) to check the importer against."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    out = {}
    for row in rows:
        m, n, k = (int(x) for x in row.pop("mnk").split("_"))
        out[(m, n, k)] = {key: float(v) for key, v in row.items()}
    return out


def copy_as(src: Path, directory: Path, name: str) -> Path:
    target = directory / name
    shutil.copyfile(src, target)
    return target


@contextmanager
def store_locked_by_another_process(path: Path):
    """Hold a writable DuckDB connection to ``path`` in a child process while the block runs."""
    code = (
        f"import duckdb, sys; c = duckdb.connect({str(path)!r}); "
        "print('locked', flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


@pytest.fixture(scope="session")
def _app_template(tmp_path_factory) -> Path:
    from cuda_l2_explorer.cli import main
    from cuda_l2_explorer.db.store import Store
    from test_store import _insert_bench_run

    with store_template(tmp_path_factory, "app-template") as path:
        assert main([str(a) for a in ("--db", path, "-q", "import-results", OFFLINE, SERVER)]) == 0
        with Store.open(path) as store, store.transaction():
            _insert_bench_run(store, "r1", 256, 512, 1024)
            _insert_bench_run(store, "r2", 1024, 1024, 1024)
    return path


@pytest.fixture
def freeze_what_outlives_it():
    """For a test that runs the app: its garbage collected once it ends, and what outlives it
    (Textual's module caches of strips, styles and regions: ~100k objects after a few apps) frozen
    with the session's heap (``pytest_collection_finish``), out of the full passes that otherwise
    walk it again after every app (~0.1 s a pass on the CI's cores, 1-2 passes an app)."""
    yield
    gc.collect()
    gc.freeze()


@pytest.fixture
def app_db(db_path, _app_template):
    """The hand-made published fixture plus two measured configs of a set measured on an H100
    (made once a session, copied for each test)."""
    return copy_store(_app_template, db_path)


class QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # clients that hang up early (timeouts, limits, trickles) are part of the tests


@contextmanager
def loopback_server(handler):
    """A real threaded HTTP server on 127.0.0.1 (a free port) serving ``handler``; yields its URL."""
    httpd = QuietHTTPServer(("127.0.0.1", 0), handler)
    # serve_forever checks for shutdown() once per poll interval (0.5 s by default): each test's
    # teardown waited that long.
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _spawn(*args: str, log: Path, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", *args],
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )


def _scheduler_address(scheduler_file: Path, deadline: float) -> str:
    """The address a starting scheduler writes to its file: the file may exist, empty or half
    written, before the JSON is complete (a clean-clone CI run read it empty once)."""
    while True:
        try:
            return json.loads(scheduler_file.read_text())["address"]
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.fixture
def dask_cluster(tmp_path):
    """A factory: ``dask_cluster(workers, *worker_args, env=..., worker_env=[...])`` starts a real
    Dask scheduler and that many one-thread worker processes on 127.0.0.1 (no nanny: a killed
    worker stays dead) and returns (address, [worker processes]); all are stopped after the test.
    ``worker_env``: per worker (w0, w1, ...), variables over ``env`` (a cluster of two GPU types)."""
    pytest.importorskip("distributed")
    from cuda_l2_explorer.importer.cluster import connect

    procs: list[subprocess.Popen] = []

    def spawn_worker(address: str, name: str, args: Sequence[str], env: dict | None) -> subprocess.Popen:
        proc = _spawn(
            "distributed.cli.dask_worker", address,
            "--nthreads", "1", "--no-nanny", "--no-dashboard", "--name", name, *args,
            log=tmp_path / f"worker-{name}.log", env=env,
        )  # fmt: skip
        procs.append(proc)
        return proc

    def start(workers: int, *worker_args: str, env: dict | None = None, worker_env: Sequence[dict] = ()):
        scheduler_file = tmp_path / "scheduler.json"
        procs.append(
            _spawn(
                "distributed.cli.dask_scheduler",
                "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                "--scheduler-file", str(scheduler_file),
                log=tmp_path / "scheduler.log",
            )
        )  # fmt: skip
        address = _scheduler_address(scheduler_file, deadline=time.monotonic() + 60)
        started = [
            spawn_worker(
                address,
                f"w{i}",
                worker_args,
                {**(env or {}), **(worker_env[i] if i < len(worker_env) else {})},
            )
            for i in range(workers)
        ]
        client = connect(address, timeout_s=60)
        client.wait_for_workers(workers, timeout=60)
        client.close()
        return address, started

    def add_worker(address: str, name: str, *worker_args: str, env: dict | None = None) -> subprocess.Popen:
        """One more worker, named ``name``, on a running cluster; registered when this returns."""
        proc = spawn_worker(address, name, worker_args, env)
        client = connect(address, timeout_s=60)
        deadline = time.monotonic() + 60
        while name not in {w["name"] for w in client.scheduler_info()["workers"].values()}:
            assert time.monotonic() < deadline, f"worker {name} did not join {address}"
            time.sleep(0.1)
        client.close()
        return proc

    start.add_worker = add_worker  # type: ignore[attr-defined]
    try:
        yield start
    finally:
        # Workers first, each gone before the next: a worker stopped with its scheduler hangs in
        # its goodbye to it (until the SIGKILL 20 s on).
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


@pytest.fixture
def fake_config(tmp_path_factory):
    """A kernel build config for an H100 against fake torch headers (tests/build_fixtures.py)."""
    from build_fixtures import fake_build_config

    return fake_build_config(tmp_path_factory.mktemp("fake-torch"))


def pytest_collection_finish(session):
    """What the collection loaded (Textual, Polars, DuckDB, the test modules) lives as long as the
    session: it is frozen out of the collector's full passes, as the app freezes what it holds
    (app.py), and an app test freezes what outlives it (``freeze_what_outlives_it``). An app under
    a freeze it did not make leaves it be (test_app's test of the freeze runs the app both ways);
    each app test used to freeze the whole heap and unfreeze it on closing, and the full passes
    after it walked all of it again.

    The two CUTLASS SM90 compiles start in the background now, at the lowest priority
    (tests/sm90a_compiles.py), when a collected test needs them; then the builds that a few tests
    read (tests/background_builds.py). Once a run: the first process of the run to get here claims
    them all, the others (``pytest -n 2``'s other worker) wait for their results
    (tests/run_shared.py). Not for --collect-only: the session would wait for them."""
    gc.collect()
    gc.freeze()
    if session.config.option.collectonly:
        return
    with run_shared.claiming():  # one process of the run claims them all (tests/run_shared.py)
        start_if_needed(session.items)
        background_builds.start_if_needed(session.items, after=BACKGROUND.futures)


def pytest_configure(config):
    run_shared.configure()


def pytest_sessionfinish(session, exitstatus):
    background_builds.BACKGROUND.close()
    BACKGROUND.close()


def pytest_unconfigure(config):
    run_shared.unconfigure()


@pytest.fixture(scope="session")
def project_wheel() -> Path:
    """The repository's wheel, built once a run in the background (tests/background_builds.py)."""
    return background_builds.BACKGROUND.result("wheel")


def modules_loaded_after(statements: str, names: tuple[str, ...]) -> list[str]:
    """Run ``statements`` in a fresh interpreter and list the loaded modules among ``names`` (a
    name or anything under it): what an import or a call costs at start-up."""
    code = (
        f"import sys\n{statements}\nnames = {names!r}\n"
        "print('\\n'.join(sorted(m for m in sys.modules"
        " if any(m == n or m.startswith(n + '.') for n in names))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return out.split()
