"""Work fanned out over an existing Dask cluster (``--cluster tcp://HOST:8786``).

Teams that outgrow one machine already run a scheduler; we use theirs instead of bringing our
own. Nothing here imports Dask until a cluster is asked for, so a run without ``--cluster`` does
not need it installed (``pip install 'cuda-l2-explorer[cluster]'`` adds it).

The driver stays the only writer: a task returns its result as a value (an object file's or a
built kernel module's bytes, a measurement record), never a path on the worker's disk, and the
caller stores it. A worker that dies takes its running tasks with it and the scheduler runs them
again on another worker (Dask's ``allowed-failures``, 3 by default), so a killed worker costs only
what it had not finished.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from cuda_l2_explorer.db.env import positive_seconds
from cuda_l2_explorer.db.errors import IOFailure

# How long a scheduler (and its first worker) may take to answer, in seconds: the environment's
# CUDA_L2_EXPLORER_CLUSTER_WAIT_S, else 10 (a scheduler across a slow link may need more).
ENV_CONNECT_WAIT = "CUDA_L2_EXPLORER_CLUSTER_WAIT_S"
CONNECT_TIMEOUT_S = 10.0
# The worker resource a GPU worker declares (dask worker ... --resources GPU=1); GPU tasks ask for it.
GPU_RESOURCE = "GPU"


class ClusterError(IOFailure):
    """The cluster cannot be used (Dask missing, no scheduler at the address): exit 5."""


def _distributed() -> Any:
    """Dask's distributed package, imported only when a cluster is asked for."""
    try:
        import distributed
    except ImportError as exc:
        raise ClusterError(
            "a Dask cluster (--cluster, or --gpus with several GPUs) needs Dask's distributed "
            "package: pip install 'cuda-l2-explorer[cluster]'"
        ) from exc
    return distributed


def connect_wait() -> float:
    """Seconds to wait for a scheduler: CUDA_L2_EXPLORER_CLUSTER_WAIT_S, else CONNECT_TIMEOUT_S."""
    return positive_seconds(ENV_CONNECT_WAIT, CONNECT_TIMEOUT_S, ClusterError)


def connect(address: str, timeout_s: float | None = None) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address``, with at least one worker."""
    timeout_s = connect_wait() if timeout_s is None else timeout_s
    Client = _distributed().Client
    try:
        client = Client(address, timeout=timeout_s, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"no Dask scheduler answered at {address} within {timeout_s:g} s: {exc}") from exc
    try:
        client.wait_for_workers(1, timeout=timeout_s)
    except (OSError, TimeoutError) as exc:
        client.close()
        raise ClusterError(f"the Dask scheduler at {address} has no worker") from exc
    return client


@contextmanager
def client_for(address: str | None) -> Iterator[Any]:
    """The cluster's client for the length of a ``with`` (None without an address: work stays local)."""
    if not address:
        yield None
        return
    client = connect(address)
    try:
        yield client
    finally:
        client.close()


@contextmanager
def local_gpu_cluster(gpus: Sequence[int], timeout_s: float = 120.0) -> Iterator[Any]:
    """A client of a Dask cluster on this machine with one worker process per GPU of ``gpus``
    (indices into the visible GPUs), as dask-cuda's LocalCUDACluster runs them: CUDA_VISIBLE_DEVICES
    set to its GPU, one thread, the resource ``GPU=1``, named by the GPU's index. ``--gpus`` with
    several GPUs runs on it, so one host and many take the same path."""
    from cuda_l2_explorer.importer.harness.device import visible_device

    dask = _distributed()
    workers = {
        str(g): {
            "cls": dask.Nanny,
            "options": {
                "nthreads": 1,
                "resources": {GPU_RESOURCE: 1},
                "env": {"CUDA_VISIBLE_DEVICES": visible_device(g)},
            },
        }
        for g in gpus
    }
    scheduler = {"cls": dask.Scheduler, "options": {"host": "127.0.0.1", "dashboard_address": None}}
    with dask.SpecCluster(scheduler=scheduler, workers=workers, silence_logs=logging.ERROR) as cluster:
        client = dask.Client(cluster, set_as_default=False)
        try:
            client.wait_for_workers(len(gpus), timeout=timeout_s)
            yield client
        finally:
            client.close()


def worker_threads(address: str) -> int:
    """How many tasks the cluster at ``address`` runs at once: its workers' threads, all of them."""
    with client_for(address) as client:
        return sum(client.nthreads().values())


def worker_name() -> str:
    """The Dask worker running this task: its ``--name``, else its address."""
    from distributed import get_worker

    worker = get_worker()
    return str(worker.name or worker.address)


def map_unordered(
    client: Any,
    fn: Callable[..., Any],
    items: Sequence[tuple],
    *,
    name: str,
    on_error: Callable[[Exception], Any] | None = None,
) -> Iterator[tuple[int, Any]]:
    """Run ``fn(*item)`` for every item on the cluster; yield (index, result) as each finishes.

    Tasks are not pure (a compile's outcome depends on the worker's toolchain), so Dask never
    answers one from another's result; ``name`` prefixes their keys on the dashboard. A task that
    failed on every try (its workers died, or it raised) raises here, unless ``on_error`` turns
    the exception into that task's result, so that the others go on.
    """
    from distributed import as_completed

    batch = uuid.uuid4().hex[:8]  # keys unique to this call: a retry batch must not meet old ones
    futures = [
        client.submit(fn, *item, pure=False, key=f"{name}-{batch}-{i}") for i, item in enumerate(items)
    ]
    position = {future.key: i for i, future in enumerate(futures)}
    try:
        for future in as_completed(futures, loop=client.loop):
            try:
                result = future.result()
            except Exception as exc:
                if on_error is None:
                    raise
                result = on_error(exc)
            yield position[future.key], result
    finally:
        client.cancel([f for f in futures if not f.done()])
