"""The kernel library's build fanned out over a real Dask cluster on 127.0.0.1: a scheduler and
two worker processes (no nanny: a killed worker stays dead). One worker is killed with SIGKILL
while the build runs; the build still compiles every TU, each object is written once, and a
second build finds them all in the cache."""

from __future__ import annotations

import os
import signal

import pytest

pytest.importorskip("distributed")

from cuda_l2_explorer.importer.cluster import ClusterError, connect
from cuda_l2_explorer.importer.harness.toolchain import find_nvcc
from cuda_l2_explorer.tuner import build as tb
from cuda_l2_explorer.tuner.tiny import tiny_catalog

needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc not found")


@pytest.fixture
def cluster(dask_cluster):
    """(address, [worker processes]) of a scheduler and two one-thread workers on 127.0.0.1."""
    return dask_cluster(2)


@needs_nvcc
def test_a_cluster_builds_the_library_and_survives_a_killed_worker(cluster, tmp_path):
    address, workers = cluster
    configs = tiny_catalog()[:6]  # six TUs of our own family: no CUTLASS headers needed
    out = tmp_path / "build"
    messages: list[str] = []

    def log(message: str) -> None:
        messages.append(message)
        if "[ok 1/" in message and workers[0].poll() is None:
            os.killpg(workers[0].pid, signal.SIGKILL)  # while the other TUs are in flight

    result = tb.build(configs, out, per_tu=1, cluster=address, log=log)
    assert workers[0].wait(timeout=30) == -signal.SIGKILL
    assert result.library is not None and result.library.exists()
    assert sorted(result.compiled) == sorted(c.name for c in configs) and not result.failed
    # Each TU once in the result and once in the cache: the driver is the only writer.
    keys = [u.key for u in result.units]
    assert len(keys) == len(set(keys)) == len(configs)
    assert sorted(p.stem for p in (out / "obj").glob("*.o")) == sorted(keys)
    assert sum("[ok " in m for m in messages) == len(configs)

    again = tb.build(configs, out, per_tu=1, cluster=address, log=messages.append)
    assert again.library == result.library
    assert all(u.cached for u in again.units)


def test_no_scheduler_at_the_address_is_a_clear_error():
    with pytest.raises(ClusterError, match=r"no Dask scheduler answered at tcp://127\.0\.0\.1:9"):
        connect("tcp://127.0.0.1:9", timeout_s=2)
