"""Shared by the CPU and GPU export tests: a manifest of our kernels and a store with §4 kernels."""

from __future__ import annotations

import json
from pathlib import Path

from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.importer.kernelset import parse_tiles
from cuda_l2_explorer.tuner.catalog import KernelConfig

PLANTED = Path(__file__).parent / "kernelsets" / "planted" / "h100_F32F16F16F32"
SPEC4_SET = "planted/h100_F32F16F16F32"

# The three configs of issue 6, each with a kernel of tuner.catalog.first_catalog().
TINY = Shape(64, 64, 64)
SKINNY = Shape(64, 8192, 4096)
LARGE = Shape(4096, 4096, 4096)
KERNELS = {
    TINY: (
        KernelConfig(64, 64, schedule="pingpong"),
        {"raster": 0, "swizzle": 1, "decomposition": 0, "splits": 1},
    ),
    SKINNY: (
        KernelConfig(128, 16, swap_ab=True),
        {"raster": 0, "swizzle": 1, "decomposition": 0, "splits": 1},
    ),
    LARGE: (
        KernelConfig(128, 128, schedule="pingpong"),
        {"raster": 2, "swizzle": 8, "decomposition": 0, "splits": 1},
    ),
}
TIMES_US = {TINY: (4.1, 4.6), SKINNY: (36.2, 38.9), LARGE: (210.3, 208.2)}


def manifest_dict(kernels: dict | None = None) -> dict:
    entries = []
    for shape, (cfg, variant) in (kernels or KERNELS).items():
        kernel_us, baseline_us = TIMES_US.get(shape, (10.0, 11.0))
        entries.append(
            {
                "m": shape.m,
                "n": shape.n,
                "k": shape.k,
                "kernel": cfg.to_dict(),
                "kernel_name": cfg.name,
                "variant": variant,
                "time_us": kernel_us,
                "p10_us": round(kernel_us * 0.99, 2),
                "p90_us": round(kernel_us * 1.01, 2),
                "best_baseline": "cuBLASLt-auto-tuning-tn",
                "best_baseline_us": baseline_us,
                "gpu": "H100",
                "gpu_name": "NVIDIA H100 80GB HBM3",
                "date": "2026-11-22",
                "mode": "offline",
                "run_id": f"fixture-{shape}",
                "candidates": 17,
            }
        )
    return {
        "format": "cuda-l2-explorer/kernel-manifest",
        "version": 1,
        "device": "h100",
        "accumulator": "F32F16F16F32",
        "gpu": "H100",
        "harness_version": "0.1.0",
        "cutlass_version": "4.2.0",
        "configs": entries,
    }


def write_manifest(path: Path, kernels: dict | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest_dict(kernels), indent=1))
    return path


def insert_spec4_kernel(store: Store, shape: Shape, file_name: str, run_id: str) -> None:
    """A planted §4 kernel with its source and one measured offline run (fixed date, golden-safe)."""
    source = (PLANTED / file_name).read_text()
    pad = parse_tiles(source)
    store.con.execute(
        "INSERT INTO gpus (gpu, name, sm_count, l2_bytes) "
        "VALUES ('h100', 'NVIDIA H100 80GB HBM3', 132, 52428800) ON CONFLICT DO NOTHING"
    )
    store.con.execute(
        "INSERT INTO kernel_sets (set_id, name, gpu, accumulator, origin) "
        f"VALUES ('{SPEC4_SET}', 'planted', 'h100', 'F32F16F16F32', 'imported') ON CONFLICT DO NOTHING"
    )
    store.con.execute(
        "INSERT INTO kernels (kernel_id, set_id, m, n, k, path, source, pad_bm, pad_bn, pad_bk) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            f"{SPEC4_SET}:{shape}",
            SPEC4_SET,
            *shape.astuple(),
            f"h100_F32F16F16F32/{file_name}",
            source,
            *(pad or (None, None, None)),
        ],
    )
    store.con.execute(
        "INSERT INTO runs (run_id, kind, set_id, gpu, mode, status, tool_version, started_at, gpu_name) "
        f"VALUES (?, 'bench', '{SPEC4_SET}', 'h100', 'offline', 'complete', 'test', "
        "TIMESTAMP '2026-11-20 10:00:00', 'NVIDIA H100 80GB HBM3')",
        [run_id],
    )
    rows = [("kernel", 10e-6), ("cuBLAS-nn", 12e-6), ("cuBLAS-tn", 11e-6), ("torch.matmul", 13e-6)]
    store.insert_rows(
        "measurements",
        (
            "run_id",
            "m",
            "n",
            "k",
            "implementation",
            "metric",
            "unit",
            "n_samples",
            "median",
            "p10",
            "p90",
            "status",
        ),
        [
            (run_id, *shape.astuple(), impl, "device_time", "s", 20, t, t * 0.99, t * 1.01, "ok")
            for impl, t in rows
        ],
    )


def spec4_store(path: Path) -> Path:
    """A store with the planted 96_96_96 (tiles: padding wrapper) and 64_64_64 kernels, measured."""
    with Store.open(path) as store, store.transaction():
        insert_spec4_kernel(store, Shape(96, 96, 96), "96_96_96.cu", "run-96")
        insert_spec4_kernel(store, Shape(64, 64, 64), "64_64_64.cu", "run-64")
    return path
