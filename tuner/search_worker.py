"""The tuner's GPU worker: the harness worker plus search jobs and kernels of our library.

Run as ``python -m cuda_l2_explorer.tuner.search_worker`` (the runner starts it for plans that
name it: search runs, and bench runs of our own kernel sets). It serves the harness's ``config``
jobs, loading library kernels (a manifest entry: library path, kernel, variant), and ``search``
jobs: one job = one (M, N, K).

Execution time is the reward. For the shape: the library's kernels x runtime variants are
pruned by tuner.search_space's cost model; every candidate that can implement the shape is
checked for correctness (fresh N(0,1) inputs, C poisoned with NaN, fp64 reference, SPEC §7)
and measured briefly under the SPEC §7 offline protocol (cold L2, interleaved shuffled rounds,
device time by CUDA-graph replay, as the harness times a bench run: a search timed by eager
Python calls could not see a 2-4 us kernel and picked stream-K and split-K variants that pay a
second kernel); the best few are measured again with more samples beside cuBLASLt's heuristic
choice, so the log says where the winner stands. Every candidate's figures go back to the
orchestrator, which writes them to the store as the search log.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from typing import Any

from cuda_l2_explorer.db.shapes import Shape, floor_seconds
from cuda_l2_explorer.importer.harness import worker
from cuda_l2_explorer.importer.harness.device import gpu_label
from cuda_l2_explorer.importer.harness.messages import Result
from cuda_l2_explorer.importer.harness.protocol import ProtocolSettings, measure, rotation_sets, summarize
from cuda_l2_explorer.importer.harness.worker import (
    Implementations,
    Inputs,
    bytes_per_set,
    check_correctness,
    offline_backend,
)
from cuda_l2_explorer.tuner.native import TunerLibrary, Variant
from cuda_l2_explorer.tuner.search_space import Candidate, candidates

REFERENCES = ("cuBLASLt-heuristic-nn", "cuBLASLt-heuristic-tn", "torch.matmul")
MAX_WORKSPACE = 256 << 20


def library_kernel_fn(torch, lib: TunerLibrary, name: str, variant: Variant, m: int, n: int, k: int):
    """A callable(a, b, b_col_major, c) for one library kernel, with its workspace allocated once
    and zeroed (tuner/emit.py: a kernel may keep counters there that it leaves at zero)."""
    kernel = lib[name]
    ws_bytes = kernel.workspace_bytes(m, n, k, variant)
    workspace = torch.zeros(max(ws_bytes, 1), dtype=torch.uint8, device="cuda")
    ws_ptr = workspace.data_ptr() if ws_bytes else 0
    b_col = kernel.params.get("b_major") == "k"
    run, args = kernel.entry, variant.args()
    ws_arg = ws_ptr or None
    current_stream = torch.cuda.current_stream

    def call(a, b, b_col_major, c, _keep=workspace) -> None:
        # The stream is read at each call, as a torch extension's getCurrentCUDAStream() does:
        # inside a CUDA-graph capture it is the capturing stream, not the legacy default stream.
        stream_arg = current_stream().cuda_stream or None
        status = run(
            a.data_ptr(),
            (b_col_major if b_col else b).data_ptr(),
            c.data_ptr(),
            m,
            n,
            k,
            *args,
            ws_arg,
            ws_bytes,
            stream_arg,
        )
        if status:
            raise RuntimeError(f"l2x_gemm_{name} returned status {status}")

    return call


def load_library(state: dict, path: str) -> TunerLibrary:
    key = ("tuner-library", path)
    if key not in state:
        state[key] = TunerLibrary(path)
    return state[key]


def library_kernel(torch, job: dict, state: dict):
    """The library kernel a config job names (``kernel_library``), as a SPEC §4 callable."""
    spec = job["kernel_library"]
    lib = load_library(state, spec["path"])
    variant = Variant(**spec["variant"])
    return library_kernel_fn(torch, lib, spec["kernel"], variant, job["m"], job["n"], job["k"])


def run_search_job(torch, job: dict, state: dict, progress: Callable[[str], None]) -> Result:
    m, n, k = job["m"], job["n"], job["k"]
    started = time.perf_counter()
    info = state["info"]
    lib = load_library(state, job["library"])
    baselines = worker.baselines_for(state, compute16=False)
    kernels = {name: kern.params for name, kern in lib.kernels.items()}
    bandwidth = 4.8e12 if "H200" in info.get("gpu_name", "") else 3.35e12  # SPEC §10
    wanted = candidates(
        m, n, k, kernels, sms=info["sm_count"], bandwidth=bandwidth, limit=job.get("limit", 16)
    )
    usable: list[Candidate] = []
    skipped: list[dict[str, Any]] = []
    for cand in wanted:
        kern = lib[cand.kernel]
        described = {**cand.to_dict(), "candidate": cand.key, "params": kern.params, "status": "skipped"}
        if not kern.can_implement(m, n, k, cand.variant):
            skipped.append({**described, "message": "cannot implement"})
        elif kern.workspace_bytes(m, n, k, cand.variant) > MAX_WORKSPACE:
            skipped.append({**described, "message": "workspace too large"})
        else:
            usable.append(cand)
    free, _ = torch.cuda.mem_get_info()
    per_set = bytes_per_set(m, n, k, None)
    count = rotation_sets(per_set, info["l2_bytes"] or 50 << 20, free)
    progress("allocating inputs")
    inputs = Inputs(torch, m, n, k, count, None, job.get("seed", 0))
    impls = Implementations(
        torch,
        {"m": m, "n": n, "k": k, "baselines": list(REFERENCES), "accumulator": "F32F16F16F32"},
        baselines,
        inputs,
        None,
    )
    by_key = {c.key: c for c in usable}
    for cand in usable:
        fn = library_kernel_fn(torch, lib, cand.kernel, cand.variant, m, n, k)
        impls.fns[cand.key] = lambda s, fn=fn: fn(s[0], s[1], s[2], s[3])
    progress(f"checking {len(usable)} candidates")
    refs = [r for r in REFERENCES if r in impls.fns]
    correct = check_correctness(torch, impls, [*refs, *by_key], "F32F16F16F32")
    ok = [c for c in by_key if correct[c]["status"] == "ok"]
    # Device time only: the isolated-call and host latencies a bench run also takes are not
    # what the search ranks on.
    stage1 = ProtocolSettings(
        mode="offline", samples=job.get("stage1_samples", 3), min_samples=1, warmup_s=0.005,
        sample_target_s=0.25e-3, latency_samples=0, seed=1, timing=job.get("timing", "graph"),
    )  # fmt: skip
    stage2 = ProtocolSettings(
        mode="offline", samples=job.get("stage2_samples", 10), warmup_s=0.01, latency_samples=0, seed=2,
        timing=stage1.timing,
    )  # fmt: skip
    floor_s = floor_seconds(Shape(m, n, k), gpu_label(info["gpu_name"])) or 0.0
    backend = offline_backend(torch, impls, stage1, [*ok, *refs], progress, floor_s)
    progress(f"stage 1: {len(ok)} candidates")
    first = measure(backend, ok, stage1) if ok else {}
    ranked = sorted(ok, key=lambda c: summarize(first[c].device).median)
    finalists = ranked[: job.get("finalists", 4)]
    progress(f"stage 2: {len(finalists)} finalists")
    second = measure(backend, [*finalists, *refs], stage2) if finalists else {}
    rows: list[dict[str, Any]] = []
    for cand_key, cand in by_key.items():
        verdict = correct[cand_key]
        row = {
            **cand.to_dict(),
            "candidate": cand_key,
            "params": kernels[cand.kernel],
            "status": verdict["status"],
            "rel_error": verdict.get("rel_error"),
            "error_ratio": verdict.get("error_ratio"),
            "message": verdict.get("message"),
        }
        for stage, timed in ((1, first), (2, second)):
            if cand_key in timed:
                s = summarize(timed[cand_key].device)
                rows.append(
                    {
                        **row,
                        "stage": stage,
                        "median": s.median,
                        "p10": s.p10,
                        "p90": s.p90,
                        "n_samples": s.n,
                        "calls_per_sample": timed[cand_key].calls_per_sample,
                    }
                )
        if cand_key not in first:
            rows.append({**row, "stage": 1})
    rows += [{**s, "stage": 0} for s in skipped]
    references = {}
    for ref in refs:
        if ref in second:
            s = summarize(second[ref].device)
            references[ref] = {
                "median": s.median,
                "p10": s.p10,
                "p90": s.p90,
                "status": correct[ref]["status"],
            }
    best = min(finalists, key=lambda c: summarize(second[c].device).median) if finalists else None
    torch.cuda.synchronize()
    not_capturable = dict(getattr(backend, "not_capturable", {}))
    impls.release()  # the candidates' closures, inputs and graphs: this worker's memory back now
    del backend
    info = {
        "kind": "search",
        "timing": stage1.timing,
        "not_capturable": not_capturable,
        "best": best,
        "references": references,
        "rotation_sets": count,
        "candidates": len(wanted),
        "measured": len(ok),
        "library": lib.path.name,
    }
    return Result(m, n, k, rows, [], {**info, "seconds": time.perf_counter() - started})


def main() -> int:
    config = functools.partial(worker.run_config, load_library_kernel=library_kernel)
    return worker.serve({"config": config, "search": run_search_job})


if __name__ == "__main__":
    sys.exit(main())
