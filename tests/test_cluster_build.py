"""Builds fanned out over a real Dask cluster on 127.0.0.1: a scheduler and two worker processes
(no nanny: a killed worker stays dead), for the kernel library's TUs and for an imported set's
kernels. One worker is killed with SIGKILL while the build runs; the build still compiles
everything, each object is written once, by this process, and a second build finds them all in
this process's cache."""

from __future__ import annotations

import json
import operator
import os
import shutil
import signal
from dataclasses import replace

import pytest

pytest.importorskip("distributed")

from build_fixtures import PLANTED32, needs_nvcc
from cuda_l2_explorer.importer.cluster import ClusterError, client_for, connect, map_unordered, worker_threads
from cuda_l2_explorer.importer.harness import build as kb
from cuda_l2_explorer.importer.harness.toolchain import find_nvcc
from cuda_l2_explorer.importer.kernelset import scan_set
from cuda_l2_explorer.tuner import build as tb
from cuda_l2_explorer.tuner.tiny import tiny_catalog

NOWHERE = "tcp://127.0.0.1:9"  # no scheduler answers here


@pytest.fixture
def cluster(dask_cluster):
    """(address, [worker processes]) of a scheduler and two one-thread workers on 127.0.0.1."""
    return dask_cluster(2)


def built_on(result: kb.BuildResult) -> str | None:
    """The Dask worker that compiled a build, as its cache entry records it."""
    return json.loads((result.module_path.parent / "build.json").read_text())["built_on"]


def in_hand(address: str, name: str) -> list[str]:
    """The tasks the scheduler has given the worker ``name`` and not yet heard back about."""
    with client_for(address) as client:
        workers = client.scheduler_info()["workers"]
        worker = next(a for a, w in workers.items() if w["name"] == name)
        return list(client.processing([worker])[worker])


@needs_nvcc
def test_a_cluster_builds_the_library_and_survives_a_killed_worker(cluster, tmp_path):
    address, workers = cluster
    configs = tiny_catalog()[:4]  # four TUs of our own family: no CUTLASS headers needed
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


@needs_nvcc
def test_a_cluster_builds_an_imported_set_and_survives_a_killed_worker(cluster, fake_config, tmp_path):
    address, workers = cluster
    files = scan_set(PLANTED32).files[:4]  # four kernels, four builds
    driver_nvcc = tmp_path / "driver-nvcc"
    driver_nvcc.symlink_to(find_nvcc())  # the same version at another path: workers use their own
    config = replace(fake_config, nvcc=str(driver_nvcc), extra_flags=("-DL2X_DRIVER_FLAG",))
    cache = tmp_path / "cache"
    reported, lost = [], []

    def on_result(file, result) -> None:
        reported.append(file.path)
        if result.ok and built_on(result) == "w0" and workers[0].poll() is None:
            lost.extend(in_hand(address, "w0"))
            os.killpg(workers[0].pid, signal.SIGKILL)  # with its next kernel in hand

    results = kb.build_all(files, config=config, cache_dir=cache, cluster=address, on_result=on_result)
    assert workers[0].wait(timeout=30) == -signal.SIGKILL
    assert lost and all(key.startswith("l2x-kernel-") for key in lost)
    assert all(r.ok and not r.cached for r in results.values()), [r.reason for r in results.values()]
    # Each file reported once, each build written once by the driver, no temporary folder left.
    assert sorted(reported) == sorted(f.path for f in files)
    keys = {r.key for r in results.values()}
    assert len(keys) == len(files) and sorted(p.name for p in cache.iterdir()) == sorted(keys)
    metas = [json.loads((cache / key / "build.json").read_text()) for key in keys]
    assert {m["built_on"] for m in metas} == {"w0", "w1"}  # both compiled, side by side
    for meta in metas:  # the driver's arch and flags, each worker's own nvcc
        assert meta["command"][0] == find_nvcc() != config.nvcc
        assert {"-gencode=arch=compute_90a,code=sm_90a", "-DL2X_DRIVER_FLAG"} <= set(meta["command"])

    # A second build is answered by the driver's cache: it asks no cluster (none answers there).
    again = kb.build_all(files, config=config, cache_dir=cache, cluster=NOWHERE)
    assert all(r.cached for r in again.values())
    assert {p: r.module_path for p, r in again.items()} == {p: r.module_path for p, r in results.items()}


@needs_nvcc
def test_only_the_builds_the_cache_lacks_go_to_the_cluster(cluster, fake_config, tmp_path):
    address, _ = cluster
    files = scan_set(PLANTED32).files[:3]
    cache = tmp_path / "cache"
    here = kb.build_all(files, config=fake_config, cache_dir=cache)  # built here: the same keys
    shutil.rmtree(cache / here[files[0].path].key)
    again = kb.build_all(files, config=fake_config, cache_dir=cache, cluster=address)
    assert [again[f.path].cached for f in files] == [False, True, True]
    assert built_on(again[files[0].path]) in {"w0", "w1"}
    assert [again[f.path].key for f in files] == [here[f.path].key for f in files]
    assert worker_threads(address) == 2  # bench --cluster builds a batch this wide (at least 8)


def test_a_task_that_raised_can_be_its_own_result(cluster):
    address, _ = cluster
    with client_for(address) as client:
        items = [(6, 3), (1, 0), (8, 2)]
        got = dict(map_unordered(client, operator.truediv, items, name="t", on_error=type))
        with pytest.raises(ZeroDivisionError):
            dict(map_unordered(client, operator.truediv, items, name="t"))
    assert got == {0: 2.0, 1: ZeroDivisionError, 2: 4.0}


def test_no_scheduler_at_the_address_is_a_clear_error(monkeypatch):
    with pytest.raises(ClusterError, match=r"no Dask scheduler answered at tcp://127\.0\.0\.1:9 within 1 s"):
        connect(NOWHERE, timeout_s=1)
    monkeypatch.setenv("CUDA_L2_EXPLORER_CLUSTER_WAIT_S", "0.5")
    with pytest.raises(ClusterError, match=r"answered at tcp://127\.0\.0\.1:9 within 0\.5 s"):
        connect(NOWHERE)
    for bad in ("soon", "0", "-3"):
        monkeypatch.setenv("CUDA_L2_EXPLORER_CLUSTER_WAIT_S", bad)
        with pytest.raises(ClusterError, match="CUDA_L2_EXPLORER_CLUSTER_WAIT_S must be a positive number"):
            connect(NOWHERE)
