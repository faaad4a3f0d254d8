"""Calls to be timed by Nsight Compute: torch.matmul (cuBLAS) and our library's pick per config.

    ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum --csv \
        --log-file ncu.csv python3 ncu_driver.py CONFIGS MANIFEST LIBRARY > order.json

ncu replays each kernel with its caches flushed (--cache-control all: cold L2, as the harness's
rotating inputs) at the GPU's own clocks (--clock-control none: ncu locks base clocks by
default). Each (config, implementation) group of CALLS calls sits between two marker kernels
(torch.cuda._sleep), so group i is what ncu lists between markers 2i and 2i+1; set-up calls run
outside the pairs. Every kernel a call launches (a split-K reduction, a memset) counts towards
that call. The groups' order goes to stdout as JSON.

A config may name cuBLASLt heuristic candidates to profile beside them, as ``M_N_K@tn6@nn6``
(layout and 0-based candidate index: what a grid's ``cuBLASLt-auto-tuning-*`` rows report as
"algorithm 6 of 8"), each a group ``cuBLASLt-tn-6``: the auto-tuned kernel, not torch's default.
"""

from __future__ import annotations

import json
import os
import sys

import torch
from cuda_l2_explorer.tuner.native import TunerLibrary, Variant
from cuda_l2_explorer.tuner.search_worker import library_kernel_fn

CALLS = int(os.environ.get("NCU_CALLS", "3"))  # fewer for a wide probe: each profiled call costs seconds


def parse_config(word: str) -> tuple[tuple[int, int, int], list[tuple[str, int]]]:
    """'M_N_K@tn6@nn2' -> ((M, N, K), [('tn', 6), ('nn', 2)])."""
    shape, *candidates = word.split("@")
    m, n, k = (int(x) for x in shape.split("_"))
    lt = [(c[:2], int(c[2:])) for c in candidates]
    if any(layout not in ("nn", "tn") for layout, _ in lt):
        raise SystemExit(f"{word}: a cuBLASLt candidate is nnI or tnI")
    return (m, n, k), lt


def main(configs_path: str, manifest_path: str, library_path: str) -> None:
    configs = [
        parse_config(word) for line in open(configs_path) if not line.startswith("#") for word in line.split()
    ]
    # A manifest may name several kernels for one config (a probe of variants): the first is
    # "kernel", each further one "kernel:<name>:<variant label>".
    picks: dict[tuple[int, int, int], list[dict]] = {}
    for e in json.load(open(manifest_path))["configs"]:
        picks.setdefault((e["m"], e["n"], e["k"]), []).append(e)
    lib = TunerLibrary(library_path)
    baselines = None
    if any(lt for _, lt in configs):
        from cuda_l2_explorer.importer.harness.baselines import CublasBaselines
        from cuda_l2_explorer.importer.harness.worker import MAX_LT_CANDIDATES

        baselines = CublasBaselines()
    order = []
    for (m, n, k), lt_candidates in configs:
        a = torch.randn(m, k, device="cuda", dtype=torch.half)
        b = torch.randn(k, n, device="cuda", dtype=torch.half)
        b_col = b.t().contiguous().t()
        c = torch.empty(m, n, device="cuda", dtype=torch.half)
        impls = {"torch.matmul": lambda a=a, b=b, c=c: torch.matmul(a, b, out=c)}
        for i, pick in enumerate(picks.get((m, n, k), [])):
            variant = Variant(**pick["variant"])
            fn = library_kernel_fn(torch, lib, pick["kernel_name"], variant, m, n, k)
            label = "kernel" if i == 0 else f"kernel:{pick['kernel_name']}:{variant.label}"
            impls[label] = lambda fn=fn, a=a, b=b, bc=b_col, c=c: fn(a, b, bc, c)
        for layout, i in lt_candidates:
            # The harness's own request (MAX_LT_CANDIDATES), so index i is the grid's candidate i.
            plan = baselines.lt_prepare(layout, m, n, k, MAX_LT_CANDIDATES)
            if i >= plan.n_algos:
                print(f"{m}_{n}_{k}: {plan.n_algos} cuBLASLt {layout} candidates, no {i}", file=sys.stderr)
                continue
            b_arg = b if layout == "nn" else b_col  # tn: B stored K-contiguous (b_col's storage)

            def lt_call(plan=plan, i=i, a=a, b_arg=b_arg, c=c) -> None:
                stream = torch.cuda.current_stream().cuda_stream
                baselines.lt(plan, i, a.data_ptr(), b_arg.data_ptr(), c.data_ptr(), stream)

            impls[f"cuBLASLt-{layout}-{i}"] = lt_call
        for name, call in impls.items():
            call()  # first-call set-up (heuristics, lazy loading), outside the markers
            torch.cuda._sleep(1)
            for _ in range(CALLS):
                call()
            torch.cuda._sleep(1)
            order.append({"m": m, "n": n, "k": k, "implementation": name, "calls": CALLS})
        torch.cuda.synchronize()
    json.dump(order, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:4])
