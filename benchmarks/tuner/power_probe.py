"""Sustained calls of a few kernels and torch.matmul per shape, with the GPU's SM clock and power
draw sampled while each runs: does a kernel's memory traffic cost it clock speed?

    python benchmarks/tuner/power_probe.py LIBRARY.so MANIFEST.json SHAPE... > probe.jsonl
    # PROBE_SECONDS (1.5), PROBE_ROUNDS (2), PROBE_SHORT=1 (five candidates, not CANDIDATES)

SHAPE is M_N_K. Per shape: torch.matmul, the manifest's pick and the kernels of CANDIDATES (each
with its runtime variant), in ROUNDS interleaved rounds. Each run is SECONDS of back-to-back calls
over input sets rotated to span at least twice the L2 (cold L2, as the harness), timed by two
events; a thread samples `nvidia-smi` (SM clock, power draw) every ~50 ms, and a run's figures
are the samples from its start + WARM seconds to its end. One JSON line per run: time a call,
median SM MHz, median watts, samples.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time

import torch
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.importer.harness.protocol import rotation_sets
from cuda_l2_explorer.tuner.native import RASTER, TunerLibrary, Variant
from cuda_l2_explorer.tuner.search_worker import library_kernel_fn

SECONDS = float(os.environ.get("PROBE_SECONDS", 1.5))
WARM = 0.4
ROUNDS = int(os.environ.get("PROBE_ROUNDS", 2))
# Big-tile and clustered kernels (less L2/DRAM traffic a FLOP) and the 128x128 ping-pong with
# L2-friendlier rasters, against whatever the set picks.
CANDIDATES = [
    ("sm90_128x128x64_c1x1_pp_ps_sauto_bn", Variant()),
    ("sm90_128x128x64_c1x1_pp_ps_sauto_bn", Variant(RASTER["along_m"], 8)),
    ("sm90_128x128x64_c1x1_pp_ps_sauto_bn", Variant(RASTER["along_n"], 8)),
    ("sm90_128x128x64_c2x1_pp_ps_sauto_bn", Variant()),
    ("sm90_128x256x64_c2x1_coop_ps_sauto_bn", Variant()),
    ("sm90_128x256x64_c2x1_coop_ps_sauto_bn", Variant(RASTER["along_n"], 8)),
    ("sm90_256x128x64_c1x2_coop_ps_sauto_bn", Variant()),
    ("sm90_256x128x64_c1x2_coop_ps_sauto_bn", Variant(RASTER["along_m"], 8)),
    ("sm90_128x160x64_c2x1_pp_ps_s5_bn_swap", Variant()),
]
# PROBE_SHORT=1: the five that led at call 7's four shapes (a wider sample of shapes in one call).
SHORT = [CANDIDATES[i] for i in (2, 3, 5, 7, 8)]


class Sampler(threading.Thread):
    """(time, SM MHz, watts) every ~50 ms from nvidia-smi, until stopped."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[tuple[float, float, float]] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        query = ["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits", "-i", "0"]
        while not self.stopped.is_set():
            out = subprocess.run(query, capture_output=True, text=True).stdout.split(",")
            if len(out) == 2:
                self.samples.append((time.monotonic(), float(out[0]), float(out[1])))
            time.sleep(0.05)

    def between(self, start: float, end: float) -> list[tuple[float, float, float]]:
        return [s for s in self.samples if start <= s[0] <= end]


def rotation(m: int, n: int, k: int) -> list[tuple]:
    """As many input sets as the harness rotates among (protocol.rotation_sets: >= 2x the L2, at
    most half the free memory), each sized as the harness's (B in both layouts)."""
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    free, _ = torch.cuda.mem_get_info()
    count = rotation_sets(Shape(m, n, k).input_set_bytes, l2, free)
    sets = []
    for _ in range(count):
        a = torch.randn(m, k, device="cuda", dtype=torch.half)
        b = torch.randn(k, n, device="cuda", dtype=torch.half)
        sets.append((a, b, b.t().contiguous().t(), torch.empty(m, n, device="cuda", dtype=torch.half)))
    return sets


def sustained(call, sets: list[tuple], sampler: Sampler) -> dict:
    for s in sets:
        call(*s)  # first-call set-up and warm clocks
    torch.cuda.synchronize()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for i in range(8):
        call(*sets[i % len(sets)])
    end.record()
    end.synchronize()
    calls = max(8, int(SECONDS * 1e3 / (begin.elapsed_time(end) / 8)))
    start = time.monotonic()
    begin.record()
    for i in range(calls):
        call(*sets[i % len(sets)])
    end.record()
    end.synchronize()
    stop = time.monotonic()
    window = sampler.between(start + WARM, stop)
    return {
        "us": round(begin.elapsed_time(end) * 1e3 / calls, 2),
        "calls": calls,
        "sm_mhz": statistics.median(s[1] for s in window) if window else None,
        "watts": statistics.median(s[2] for s in window) if window else None,
        "samples": len(window),
    }


def main(library: str, manifest: str, *shapes: str) -> None:
    lib = TunerLibrary(library)
    picks = {(e["m"], e["n"], e["k"]): e for e in json.load(open(manifest))["configs"]}
    sampler = Sampler()
    sampler.start()
    for shape in shapes:
        m, n, k = (int(x) for x in shape.split("_"))
        sets = rotation(m, n, k)
        impls = {"torch.matmul": lambda a, b, bc, c: torch.matmul(a, b, out=c)}
        pick = picks.get((m, n, k))
        wanted = [(pick["kernel_name"], Variant(**pick["variant"]))] if pick else []
        for name, variant in wanted + (SHORT if os.environ.get("PROBE_SHORT") else CANDIDATES):
            label = f"{name}|{variant.label}"
            if name in lib.kernels and label not in impls and lib[name].can_implement(m, n, k, variant):
                fn = library_kernel_fn(torch, lib, name, variant, m, n, k)
                impls[label] = lambda a, b, bc, c, fn=fn: fn(a, b, bc, c)
        for r in range(ROUNDS):
            for label, call in impls.items():
                row = {
                    "m": m,
                    "n": n,
                    "k": k,
                    "round": r,
                    "impl": label,
                    "pick": bool(pick)
                    and label == (f"{pick['kernel_name']}|{Variant(**pick['variant']).label}"),
                }
                print(json.dumps(row | sustained(call, sets, sampler)), flush=True)
        del sets
        torch.cuda.empty_cache()
    sampler.stopped.set()


if __name__ == "__main__":
    main(*sys.argv[1:])
