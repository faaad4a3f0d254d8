"""What the Dask path costs per config, apart from the GPU: one plan measured by the local lane
and by a Dask cluster of 1 and of 2 GPU workers (distributed.LocalCluster, worker processes,
``GPU=1`` each), all through the stand-in GPU worker (tests/fake_worker.py), which answers each
config after ``--delay`` seconds.

    python benchmarks/cluster/overhead.py [--configs 40] [--delay 0.2] [--json OUT]

Prints seconds a config for each path and the overhead over the local lane. On the GPU machine
the same comparison with the real worker is `bench --cluster` against `bench` (docs/SCALING.md).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(shapes, cluster: str | None, db: Path) -> float:
    from cuda_l2_explorer.db.store import Store
    from cuda_l2_explorer.importer.harness import runner
    from cuda_l2_explorer.importer.harness.plan import BenchPlan, KernelEntry
    from cuda_l2_explorer.importer.harness.protocol import ProtocolSettings

    set_id = "planted/h100_F32F16F16F32"
    with Store.open(db) as store, store.transaction():
        store.con.execute(
            "INSERT OR IGNORE INTO kernel_sets (set_id, name, gpu, accumulator, origin) "
            f"VALUES ('{set_id}', 'planted', 'h100', 'F32F16F16F32', 'imported')"
        )
    plan = BenchPlan(
        shapes=shapes,
        settings=ProtocolSettings(mode="offline", samples=3),
        baselines=("cuBLAS-nn", "torch.matmul"),
        set_id=set_id,
        kernels={s: KernelEntry(module="/fake/module.so") for s in shapes},
        cluster=cluster,
    )
    _, summary = runner.run_plan(runner.store_opener(db), plan, "overhead.py")
    assert summary["status"] == "complete", summary
    return summary["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=40)
    parser.add_argument("--delay", type=float, default=0.2, help="the stand-in worker's seconds a config")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    os.environ["CUDA_L2_EXPLORER_WORKER"] = str(ROOT / "tests" / "fake_worker.py")
    os.environ["FAKE_WORKER_DELAY"] = str(args.delay)
    from cuda_l2_explorer.db.shapes import Shape
    from distributed import LocalCluster

    shapes = [Shape(64 * i, 64, 64) for i in range(1, args.configs + 1)]
    tmp = Path(tempfile.mkdtemp())
    per_config = {"local lane": _run(shapes, None, tmp / "local.duckdb") / len(shapes)}
    for workers in (1, 2):
        with LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            resources={"GPU": 1},
            dashboard_address=None,
        ) as cluster:
            started = time.monotonic()
            seconds = _run(shapes, cluster.scheduler_address, tmp / f"cluster{workers}.duckdb")
            per_config[f"cluster, {workers} GPU worker(s)"] = seconds / len(shapes)
            per_config[f"cluster, {workers} GPU worker(s), the run's set-up in"] = (
                time.monotonic() - started
            ) / len(shapes)
    for name, value in per_config.items():
        extra = value - per_config["local lane"]
        print(f"{name:50s} {value:.4f} s a config ({extra:+.4f} over the local lane)")
    if args.json:
        args.json.write_text(
            json.dumps({"configs": len(shapes), "delay_s": args.delay, "per_config_s": per_config}, indent=1)
        )


if __name__ == "__main__":
    main()
