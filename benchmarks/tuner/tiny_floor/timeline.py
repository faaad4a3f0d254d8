"""One CTA's timeline inside our tiny and wgmma kernels, on the GPU machine:
where the time after a CTA's copies land goes, read from the kernels' own step stamps instead of
sampled stalls (session 34: a four-box tensor kernel ended ~1.1 us after a probe's copies of the
same bytes landed, and eight K groups in place of four did not shorten it).

    python -m cuda_l2_explorer.tuner.build --catalog tiny --only NAME,... --timeline --out /tmp/tl
    python benchmarks/tuner/tiny_floor/timeline.py /tmp/tl/lib/libl2x_tuner-*.so CONFIGS NAME,... > tl.csv

CONFIGS: lines "M N K". Each kernel that can run a config is launched alone (after warm-up), RUNS
times, each after a write of twice the L2 (cold inputs); after each launch thread 0 of every CTA has
stamped its SM clock (clock64) at the kernel's steps (tuner/csrc/timeline.cuh, L2X_TIMELINE):
start, copies issued, first and last copy landed (as K group 0 waits), group 0's MMAs done, the K
groups met (split-K-over-warps kernels only), C stored; and the global timer at its start. A row a
(config, kernel): the median over runs of the median CTA's cycles from its start to each step,
the 90th percentile and the slowest CTA's cycles to its store, the spread of the CTAs' starts (ns,
global timer), and the tiles whose CTA stored last most often (row.column x runs);
``us`` columns convert cycles at the clock given (--mhz, default the GPU's maximum SM clock: a
single launch's clock may be lower). Isolated launches: not a device-time figure, and never
compared with one.
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import math
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

from cuda_l2_explorer.tuner.native import TunerLibrary

STEPS = ("start", "issued", "first_landed", "last_landed", "mma_done", "met", "stored", "global_start")
SINCE_START = STEPS[1:7]  # clock64 steps after the start


def max_sm_mhz() -> float:
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=clocks.max.sm", "--format=csv,noheader,nounits", "-i", "0"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return float(out.stdout.split()[0])


def read_stamps(reader, ctas: int) -> list[list[int]]:
    buf = (ctypes.c_longlong * (len(STEPS) * ctas))()
    status = reader(buf, ctas)
    if status:
        raise RuntimeError(f"l2x_timeline: CUDA status {status}")
    return [list(buf[i * len(STEPS) : (i + 1) * len(STEPS)]) for i in range(ctas)]


def cta_steps(stamps: list[int]) -> dict[str, float]:
    """Cycles from the CTA's start to each step it reached (a step it did not reach is absent)."""
    start = stamps[0]
    return {s: stamps[i + 1] - start for i, s in enumerate(SINCE_START) if stamps[i + 1]}


def launch_summary(rows: list[list[int]]) -> dict[str, float]:
    """One launch's CTAs' stamps (read_stamps) summed up: the median CTA's cycles to each step every
    CTA reached; to C stored also the 90th percentile, the slowest and which CTA that was (its index,
    x + y * tiles along N); the spread of the CTAs' starts (ns)."""
    per_cta = [cta_steps(r) for r in rows]
    out: dict[str, float] = {}
    for step in SINCE_START:
        values = [p[step] for p in per_cta if step in p]
        if len(values) == len(rows):  # every CTA reached it
            out[step] = statistics.median(values)
    if all("stored" in p for p in per_cta):
        stored = [p["stored"] for p in per_cta]
        out["slowest_stored"] = max(stored)
        out["stored_p90"] = (
            statistics.quantiles(stored, n=10, method="inclusive")[-1] if len(rows) > 1 else stored[0]
        )
        out["slowest_cta"] = stored.index(out["slowest_stored"])
    starts = [r[STEPS.index("global_start")] for r in rows]
    out["start_spread_ns"] = max(starts) - min(starts)
    return out


def one_launch(kernel, reader, problem, ctas: int, flush) -> dict[str, float]:
    import torch

    a, b, c, (m, n, k) = problem
    flush.zero_()  # the inputs cold in L2, as the harness times them
    torch.cuda.synchronize()
    kernel(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k)
    torch.cuda.synchronize()
    return launch_summary(read_stamps(reader, ctas))


def measure(lib_path: str, configs: list[tuple[int, int, int]], names: list[str], runs: int, mhz: float):
    import torch  # the GPU side only: launch_summary is read without it

    lib = TunerLibrary(lib_path)
    if "timeline" not in lib.build_info:
        raise SystemExit(f"{lib_path} is not a timeline build (tuner.build --timeline)")
    reader = ctypes.CDLL(str(lib.path)).l2x_timeline  # the same handle: dlopen of a loaded library
    reader.restype = ctypes.c_int
    reader.argtypes = [ctypes.c_void_p, ctypes.c_int]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    read_stamps(reader, 0)  # zero whatever an earlier launch left
    for m, n, k in configs:
        gen = torch.Generator(device="cuda").manual_seed(m + n + k)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16, generator=gen)
        b_kn = torch.randn(k, n, device="cuda", dtype=torch.float16, generator=gen)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        for name in names:
            kern = lib[name]
            if not kern.can_implement(m, n, k):
                print(f"{m} {n} {k}: {name} cannot run it; skipped", file=sys.stderr)
                continue
            b = b_kn.t().contiguous() if kern.params["b_major"] == "k" else b_kn
            problem = (a, b, c, (m, n, k))
            ctas = math.ceil(m / kern.params["tile_m"]) * math.ceil(n / kern.params["tile_n"])
            for _ in range(5):  # warm-up: the tensor maps encoded and cached, the module loaded
                one_launch(kern, reader, problem, ctas, flush)
            ref = a.float() @ b_kn.float()
            err = float((c.float() - ref).norm() / ref.norm())
            launches = [one_launch(kern, reader, problem, ctas, flush) for _ in range(runs)]
            row = {
                "m": m,
                "n": n,
                "k": k,
                "kernel": name,
                "ctas": ctas,
                "runs": runs,
                "rel_error": f"{err:.1e}",
            }
            # which tiles end last, as "row.column" of the grid of tiles: the same few every run
            # (a position, an SM) or any (noise)
            tiles_n = math.ceil(n / kern.params["tile_n"])
            slowest = Counter(launch["slowest_cta"] for launch in launches if "slowest_cta" in launch)
            row["slowest_tiles"] = " ".join(
                f"{i // tiles_n}.{i % tiles_n}x{c}" for i, c in slowest.most_common(3)
            )
            for key in (*SINCE_START, "stored_p90", "slowest_stored", "start_spread_ns"):
                values = [launch[key] for launch in launches if key in launch]
                if len(values) != runs:
                    continue
                mid = statistics.median(values)
                row[key] = round(mid)
                if key != "start_spread_ns":
                    row[f"{key}_us"] = round(mid / mhz, 3)
            yield row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("library")
    ap.add_argument("configs", type=Path, help='lines "M N K"')
    ap.add_argument("names", help="kernel names, comma-separated")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument(
        "--mhz", type=float, default=None, help="SM clock for the us columns (default: the maximum)"
    )
    args = ap.parse_args()
    configs = [
        tuple(int(x) for x in line.split()) for line in args.configs.read_text().splitlines() if line.strip()
    ]
    mhz = args.mhz or max_sm_mhz()
    keys = ["m", "n", "k", "kernel", "ctas", "runs", "rel_error"]
    keys += [f for s in (*SINCE_START, "stored_p90", "slowest_stored") for f in (s, f"{s}_us")]
    keys += ["start_spread_ns", "slowest_tiles"]
    print(f"# cycles from each CTA's start (median CTA, median of runs); us at {mhz:.0f} MHz")
    out = csv.DictWriter(sys.stdout, fieldnames=keys)
    out.writeheader()
    for row in measure(args.library, configs, args.names.split(","), args.runs, mhz):
        out.writerow(row)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
