"""Measure the tiny-shape family (tuner/tiny.py) against cuBLASLt and torch.matmul (on a GPU machine).

The protocol is tuner.first_look's (correctness on fresh N(0,1) inputs with C poisoned, then
device time from CUDA-graph replays at cold L2 over rotated input sets, stage 1 for every
candidate, stage 2 interleaved for the finalists, and eager Python-issued figures beside), run
on the library's tiny-family kernels only, each with every split count, at a dozen launch-bound
grid configs. Writes ``tiny_bench.json`` and ``tiny_bench.md`` under ``--out``.

    python3 -m cuda_l2_explorer.tuner.tiny_bench --out $OUT [--lib path.so]
        [--shapes 64x64x64,...] [--budget-s 200]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cuda_l2_explorer.tuner.first_look import parse_shapes, run_shape
from cuda_l2_explorer.tuner.native import TINY_FAMILY, TunerLibrary

DEFAULT_SHAPES = (
    (64, 64, 64),
    (128, 128, 128),
    (256, 256, 256),
    (512, 512, 512),
    (64, 64, 16384),
    (64, 64, 4096),
    (128, 128, 8192),
    (256, 256, 2048),
    (64, 512, 512),
    (512, 64, 1024),
    (1024, 1024, 1024),
    (64, 1024, 1024),
)


class FamilyView:
    """The part of a TunerLibrary that run_shape uses (``kernels``), restricted to one family."""

    def __init__(self, lib: TunerLibrary, family: str) -> None:
        self.kernels = {n: k for n, k in lib.kernels.items() if k.params.get("family") == family}


def best_per_split(result: dict[str, Any]) -> dict[int, tuple[float, str]]:
    """Stage-1 median (us) of the fastest correct tiny kernel at each split count."""
    out: dict[int, tuple[float, str]] = {}
    for label, us in result["stage1_median_us"].items():
        meta = result["meta"][label]
        if meta["family"] != "ours":
            continue
        splits = int(meta["variant"][3])
        if splits not in out or us < out[splits][0]:
            out[splits] = (us, meta["kernel"])
    return out


def markdown(results: dict[str, Any]) -> str:
    """Two tables: stage-2 best vs cuBLASLt (graph and eager), and stage-1 best per split count."""
    nan = math.nan
    lines = [
        f"Device: {results['device'].get('gpu_name')}; "
        "device time = CUDA-graph replay, cold L2, us (median).",
        "",
        "| shape | floor | tiny best | kernel, variant | cuBLASLt best | cuBLASLt heur. | torch "
        "| x best | x heur. | eager tiny | eager heur. |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["shapes"]:
        s = r["summary"]
        ours, ltb = s["best_ours"], s["best_lt"]
        cols = [
            s["floor_us"],
            ours[1] if ours else nan,
            ltb[1] if ltb else nan,
            s["lt_heuristic"][1],
            s["torch_us"] or nan,
            s["speedup_vs_best_lt"] or nan,
            s["speedup_vs_lt_heuristic"] or nan,
            s["eager_best_ours_us"] or nan,
            s["eager_lt_heuristic_us"] or nan,
        ]
        f = [f"{c:.2f}" for c in cols]
        lines.append(
            f"| {s['shape']} | {f[0]} | {f[1]} | {ours[0] if ours else '-'} | {f[2]} | {f[3]} | {f[4]} "
            f"| {f[5]} | {f[6]} | {f[7]} | {f[8]} |"
        )
    splits = sorted({sp for r in results["shapes"] for sp in best_per_split(r)})
    lines += [
        "",
        "Stage 1 (3 samples), fastest tiny kernel per split count (us):",
        "",
        "| shape | " + " | ".join(f"s={sp}" for sp in splits) + " |",
        "|---|" + "---|" * len(splits),
    ]
    for r in results["shapes"]:
        per = best_per_split(r)
        cells = [f"{per[sp][0]:.2f}" if sp in per else "-" for sp in splits]
        lines.append(f"| {r['summary']['shape']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m cuda_l2_explorer.tuner.tiny_bench")
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    ap.add_argument("--lib", default=None)
    ap.add_argument("--shapes", type=parse_shapes, default=list(DEFAULT_SHAPES))
    ap.add_argument("--samples", type=int, default=9)
    ap.add_argument("--finalists", type=int, default=8)
    ap.add_argument("--budget-s", type=float, default=200.0, help="start no new shape after this")
    args = ap.parse_args(argv)

    import torch
    from cuda_l2_explorer.importer.harness.baselines import CublasBaselines
    from cuda_l2_explorer.importer.harness.device import device_info, nvidia_smi

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    t_start = time.monotonic()
    info = device_info()
    lib = TunerLibrary(args.lib)
    view = FamilyView(lib, TINY_FAMILY)
    if not view.kernels:
        log(f"{lib.path} holds no {TINY_FAMILY} kernel")
        return 1
    log(
        f"device {info['gpu_name']} sms={info['sm_count']} l2={info['l2_bytes']} "
        f"tiny kernels={len(view.kernels)}"
    )
    cublas = CublasBaselines()
    results: dict[str, Any] = {
        "device": info,
        "library": {"path": str(lib.path), "build": lib.build_info, "kernels": sorted(view.kernels)},
        "protocol": "tuner.first_look.run_shape: offline, CUDA-graph replay device time, cold L2 "
        f"(rotation), stage 1 3 samples, stage 2 {args.samples} samples, eager beside; "
        "correctness vs fp32 (TF32 off)",
        "command": " ".join(sys.argv),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "shapes": [],
        "not_run": [],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    for shape in args.shapes:
        if time.monotonic() - t_start > args.budget_s:
            results["not_run"].append("x".join(map(str, shape)))
            continue
        results["shapes"].append(
            run_shape(torch, view, cublas, shape, info, args.samples, args.finalists, log)  # type: ignore[arg-type]
        )
        torch.cuda.empty_cache()
        (args.out / "tiny_bench.json").write_text(json.dumps(results, indent=1, default=str))
    results["device"]["clocks_end"] = nvidia_smi()
    results["seconds"] = time.monotonic() - t_start
    (args.out / "tiny_bench.json").write_text(json.dumps(results, indent=1, default=str))
    table = markdown(results)
    (args.out / "tiny_bench.md").write_text(table)
    print(table)
    if results["not_run"]:
        log(f"budget spent; not run: {results['not_run']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
