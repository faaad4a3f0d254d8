"""First measurement of the tuner catalog against cuBLASLt and torch.matmul (run on a GPU machine).

For each shape: every compiled kernel that can implement it, with its runtime variants (raster,
swizzle, stream-K / split-K), is checked for correctness (fresh N(0,1) inputs, C poisoned with
NaN, error against an fp32 reference with TF32 off, compared with cuBLASLt's own error through
importer.harness.protocol.classify_correctness), then timed under importer.harness.protocol.measure (offline
mode, CUDA events, cold L2 by rotating input sets sized with protocol.rotation_sets), against
cuBLASLt's heuristic top-1 and its other candidates (nn and tn) and torch.matmul. Two stages so
the budget fits: a short sweep of everything, then a longer interleaved run of the best few.

    python3 -m cuda_l2_explorer.tuner.first_look --out $OUT/first_look.json [--shapes 4096x4096x4096,...]

Needs torch with CUDA, the tuner library (tuner/build.py) and the baselines library
(importer/harness/baselines.py; $CUDA_L2_EXPLORER_BASELINES_LIB).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cuda_l2_explorer.importer.harness import protocol
from cuda_l2_explorer.importer.harness.baselines import CublasBaselines
from cuda_l2_explorer.tuner.native import (
    Kernel,
    TunerError,
    TunerLibrary,
    Variant,
    needs_zeroed_workspace,
    variants_for,
)

DEFAULT_SHAPES = (
    (4096, 4096, 4096),
    (1024, 1024, 1024),
    (256, 256, 256),
    (64, 8192, 8192),
    (8192, 8192, 64),
    (8192, 8192, 8192),
)
PEAK_FLOPS = 989e12
HBM_BYTES_PER_S = {"H100": 3.35e12, "H200": 4.8e12}
MAX_WORKSPACE = 256 << 20
LT_CANDIDATES = 32


def floor_seconds(m: int, n: int, k: int, gpu_name: str) -> float:
    bw = HBM_BYTES_PER_S["H200"] if "H200" in gpu_name else HBM_BYTES_PER_S["H100"]
    return max(2 * m * n * k / PEAK_FLOPS, 2 * (m * k + k * n + m * n) / bw)


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    out = []
    for part in text.split(","):
        m, n, k = (int(x) for x in part.lower().split("x"))
        out.append((m, n, k))
    return out


class Backend:
    """protocol.Backend over CUDA events; each impl rotates through the input sets.

    ``graph=True`` times replays of a CUDA graph holding ``per_graph`` calls (rotating through
    the sets), so device time excludes Python/ctypes launch gaps (which otherwise dominate any
    kernel under ~10 us); ``single_call`` (host latency) is always an eager call.
    """

    def __init__(
        self,
        torch: Any,
        fns: dict[str, Callable[[int, int], None]],
        n_sets: int,
        graph: bool = False,
        per_graph: int = 1,
    ) -> None:
        self.torch = torch
        self.fns = fns
        self.n_sets = n_sets
        self.graph = graph
        self.per_graph = per_graph if graph else 1
        self.graphs: dict[str, Any] = {}
        self.failed: dict[str, str] = {}
        self.pool = torch.cuda.graph_pool_handle() if graph else None
        self.cursor: dict[str, int] = {}
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def _next(self, impl: str) -> int:
        i = self.cursor.get(impl, 0)
        self.cursor[impl] = (i + 1) % self.n_sets
        return i

    def capture(self, impl: str) -> bool:
        """Capture ``impl``'s graph; False (and the reason in ``failed``) if it cannot be captured."""
        torch = self.torch
        if impl in self.graphs:
            return True
        g = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(g, pool=self.pool):
                st = int(torch.cuda.current_stream().cuda_stream)
                for j in range(self.per_graph):
                    self.fns[impl](j % self.n_sets, st)
        except Exception as exc:
            self.failed[impl] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            torch.cuda.synchronize()
            return False
        self.graphs[impl] = g
        return True

    def offline_sample(self, impl: str, calls: int) -> tuple[float, float]:
        stream = int(self.torch.cuda.current_stream().cuda_stream)
        if self.graph:
            g = self.graphs[impl]
            t0 = time.perf_counter()
            self.start.record()
            for _ in range(calls):
                g.replay()
            self.end.record()
            self.end.synchronize()
            host = time.perf_counter() - t0
            return self.start.elapsed_time(self.end) / 1e3 / self.per_graph, host / self.per_graph
        fn = self.fns[impl]
        idx = [self._next(impl) for _ in range(calls)]
        t0 = time.perf_counter()
        self.start.record()
        for i in idx:
            fn(i, stream)
        self.end.record()
        self.end.synchronize()
        return self.start.elapsed_time(self.end) / 1e3, time.perf_counter() - t0

    def calls_per_unit(self, impl: str) -> int:
        return 1  # offline_sample already divides a replay by the graph's calls

    def isolated_call(self, impl: str) -> float:
        return self.single_call(impl)[0]

    def single_call(self, impl: str) -> tuple[float, float]:
        i = self._next(impl)
        stream = int(self.torch.cuda.current_stream().cuda_stream)
        self.torch.cuda.synchronize()
        self.start.record()
        t0 = time.perf_counter()
        self.fns[impl](i, stream)
        self.end.record()
        self.torch.cuda.synchronize()
        return self.start.elapsed_time(self.end) / 1e3, time.perf_counter() - t0

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def _stats(m: int, n: int, k: int, x: protocol.ImplSamples) -> dict[str, float]:
    sm = protocol.summarize(x.device)
    return {
        "median_us": sm.median * 1e6,
        "p10_us": sm.p10 * 1e6,
        "p90_us": sm.p90 * 1e6,
        "host_median_us": protocol.summarize(x.host).median * 1e6,
        "calls_per_sample": x.calls_per_sample,
        "tflops": 2 * m * n * k / sm.median / 1e12,
    }


def run_shape(
    torch: Any,
    lib: TunerLibrary,
    cublas: CublasBaselines,
    shape: tuple[int, int, int],
    info: dict[str, Any],
    samples: int,
    finalists: int,
    log: Callable[[str], None],
) -> dict[str, Any]:
    m, n, k = shape
    stream = int(torch.cuda.current_stream().cuda_stream)
    half = torch.float16
    free, _total = torch.cuda.mem_get_info()
    per_set = 2 * (m * k + 2 * k * n + m * n)
    n_sets = protocol.rotation_sets(per_set, info["l2_bytes"], free)
    gen = torch.Generator(device="cuda").manual_seed(1234 + m + 7 * n + 13 * k)
    sets = []
    for _ in range(n_sets):
        a = torch.randn(m, k, device="cuda", dtype=half, generator=gen)
        b = torch.randn(k, n, device="cuda", dtype=half, generator=gen)
        bt = b.t().contiguous()  # NxK contiguous = column-major KxN (SPEC's b_col_major)
        c = torch.empty(m, n, device="cuda", dtype=half)
        sets.append((a, b, bt, c))
    ptrs = [(s[0].data_ptr(), s[1].data_ptr(), s[2].data_ptr(), s[3].data_ptr()) for s in sets]

    # candidates -------------------------------------------------------------------------------
    fns: dict[str, Callable[[int, int], None]] = {}
    meta: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    ws_need = 0
    plan_vars: list[tuple[str, Kernel, Variant, int]] = []
    for name, kern in lib.kernels.items():
        for v in variants_for(kern.params):
            label = f"{name}|{v.label}"
            if not kern.can_implement(m, n, k, v):
                skipped[label] = "cannot implement"
                continue
            wsb = kern.workspace_bytes(m, n, k, v)
            if wsb > MAX_WORKSPACE:
                skipped[label] = f"workspace {wsb} bytes"
                continue
            ws_need = max(ws_need, wsb)
            plan_vars.append((label, kern, v, wsb))
    workspace = torch.empty(max(ws_need, 256), device="cuda", dtype=torch.uint8)
    # Tiny split-K tickets must start at zero and are left at zero: a buffer of their own.
    zeroed = torch.zeros(max(ws_need, 256), device="cuda", dtype=torch.uint8)
    for label, kern, v, _wsb in plan_vars:
        b_index = 2 if kern.params.get("b_major") == "k" else 1
        buf = zeroed if needs_zeroed_workspace(kern.params) else workspace

        def call(
            i: int,
            st: int,
            kern: Kernel = kern,
            v: Variant = v,
            bi: int = b_index,
            ws: tuple[int, int] = (buf.data_ptr(), buf.numel()),
        ) -> None:
            p = ptrs[i]
            kern(p[0], p[bi], p[3], m, n, k, v, ws[0], ws[1], st)

        fns[label] = call
        meta[label] = {"family": "ours", "kernel": kern.name, "variant": v.args(), "params": kern.params}
    lt_plans = {}
    for layout, bi in (("nn", 1), ("tn", 2)):
        plan = cublas.lt_prepare(layout, m, n, k, LT_CANDIDATES)
        lt_plans[layout] = plan
        for i in range(plan.n_algos):
            label = f"cuBLASLt-{layout}-{i}"

            def lt_call(j: int, st: int, plan: Any = plan, i: int = i, bi: int = bi) -> None:
                p = ptrs[j]
                cublas.lt(plan, i, p[0], p[bi], p[3], st)

            fns[label] = lt_call
            meta[label] = {
                "family": "cuBLASLt",
                "layout": layout,
                "candidate": i,
                **cublas.lt_algo_info(plan, i),
            }

    def torch_call(j: int, st: int) -> None:
        s = sets[j]
        torch.matmul(s[0], s[1], out=s[3])

    fns["torch.matmul"] = torch_call
    meta["torch.matmul"] = {"family": "torch"}

    # correctness (set 0: fresh N(0,1) inputs; fp32 reference, TF32 off) ------------------------
    torch.backends.cuda.matmul.allow_tf32 = False
    a0, b0, _bt0, c0 = sets[0]
    ref = a0.float() @ b0.float()
    ref_norm = float(torch.linalg.norm(ref))
    raw: dict[str, tuple[float, bool]] = {}
    crashed: dict[str, str] = {}
    for label, fn in list(fns.items()):
        c0.fill_(float("nan"))
        try:
            fn(0, stream)
            torch.cuda.synchronize()
        except TunerError as exc:
            crashed[label] = str(exc)
            fns.pop(label)
            continue
        finite = bool(torch.isfinite(c0).all())
        err = float(torch.linalg.norm(c0.float() - ref)) / ref_norm if finite else math.inf
        raw[label] = (err, finite)
    lt_err = raw.get("cuBLASLt-nn-0", (None, True))[0]
    correctness: dict[str, dict[str, Any]] = {}
    for label, (err, finite) in raw.items():
        verdict = protocol.classify_correctness(err, lt_err, "F32F16F16F32", finite)
        correctness[label] = {
            "status": verdict.status,
            "rel_error": err if math.isfinite(err) else None,
            "error_ratio": verdict.error_ratio,
        }
        if verdict.status != "ok":
            fns.pop(label, None)
    del ref

    # stage 1: everything, short; stage 2: the best of each family, longer, interleaved.
    # Device time from CUDA-graph replays (launch gaps excluded); stage 2 also eager.
    per_graph = n_sets * math.ceil(8 / n_sets)
    gb = Backend(torch, fns, n_sets, graph=True, per_graph=per_graph)
    # torch.cuda.graph() runs gc.collect() on every capture (~0.3 s here with hundreds of
    # candidates); freezing the live objects first makes those collections nearly free.
    gc.freeze()
    names = [x for x in fns if gb.capture(x)]
    gc.unfreeze()
    t0 = time.monotonic()
    s1 = protocol.measure(
        gb,
        names,
        protocol.ProtocolSettings(samples=3, warmup_s=0.005, sample_target_s=1e-3 / per_graph),
    )
    med1 = {name: protocol.summarize(x.device).median for name, x in s1.items()}
    ours = sorted((v, kname) for kname, v in med1.items() if meta[kname]["family"] == "ours")
    lt = sorted((v, kname) for kname, v in med1.items() if meta[kname]["family"] == "cuBLASLt")
    keep = [kname for _v, kname in ours[:finalists]] + [kname for _v, kname in lt[:3]]
    keep += [x for x in ("cuBLASLt-nn-0", "cuBLASLt-tn-0", "torch.matmul") if x in names and x not in keep]
    t1 = time.monotonic()
    settings = protocol.ProtocolSettings(
        samples=samples, warmup_s=0.02, seed=1, sample_target_s=2e-3 / per_graph
    )
    s2 = protocol.measure(gb, keep, settings)
    eager = protocol.measure(
        Backend(torch, fns, n_sets), keep, protocol.ProtocolSettings(samples=samples, warmup_s=0.02, seed=2)
    )
    t2 = time.monotonic()
    final = {name: _stats(m, n, k, x) for name, x in s2.items()}
    final_eager = {name: _stats(m, n, k, x) for name, x in eager.items()}
    capture_failed = dict(gb.failed)
    del gb
    floor = floor_seconds(m, n, k, info["gpu_name"])

    def best(prefix_family: str) -> tuple[str, float] | None:
        cands = [
            (v["median_us"], kname) for kname, v in final.items() if meta[kname]["family"] == prefix_family
        ]
        return (min(cands)[1], min(cands)[0]) if cands else None

    b_ours, b_lt = best("ours"), best("cuBLASLt")
    heur = min(
        ((final[x]["median_us"], x) for x in ("cuBLASLt-nn-0", "cuBLASLt-tn-0") if x in final),
        default=(math.nan, "none"),
    )
    summary = {
        "shape": f"{m}x{n}x{k}",
        "floor_us": floor * 1e6,
        "best_ours": b_ours,
        "best_lt": b_lt,
        "lt_heuristic": [heur[1], heur[0]],
        "torch_us": final.get("torch.matmul", {}).get("median_us"),
        "speedup_vs_best_lt": b_lt[1] / b_ours[1] if b_ours and b_lt else None,
        "speedup_vs_lt_heuristic": heur[0] / b_ours[1] if b_ours else None,
        "fraction_of_floor_ours": floor * 1e6 / b_ours[1] if b_ours else None,
        "eager_best_ours_us": min(
            (v["median_us"] for kk, v in final_eager.items() if meta[kk]["family"] == "ours"), default=None
        ),
        "eager_lt_heuristic_us": final_eager.get(heur[1], {}).get("median_us"),
    }
    log(
        f"{m}x{n}x{k}: sets={n_sets} cands={len(fns)} stage1 {t1 - t0:.1f}s stage2 {t2 - t1:.1f}s | "
        f"ours {b_ours} | lt {b_lt} | heur {heur}"
    )
    out = {
        "shape": [m, n, k],
        "rotation_sets": n_sets,
        "summary": summary,
        "final": final,
        "final_eager": final_eager,
        "graph_calls_per_replay": per_graph,
        "graph_capture_failed": capture_failed,
        "stage1_median_us": {kk: v * 1e6 for kk, v in med1.items()},
        "correctness": correctness,
        "crashed": crashed,
        "skipped": skipped,
        "meta": meta,
        "lt_candidates": {lay: p.n_algos for lay, p in lt_plans.items()},
        "seconds": {"stage1": t1 - t0, "stage2": t2 - t1},
    }
    return out


def table(results: dict[str, Any]) -> str:
    """The short summary table (graph-replay device time, us; eager figures in the JSON)."""
    head = ("shape", "floor", "ours", "lt_best", "lt_heur", "torch", "ours_eg", "lth_eg")
    lines = [f"{head[0]:>16} " + " ".join(f"{h:>8}" for h in head[1:]) + f" {'x_best':>6}  ours kernel"]
    nan = float("nan")
    for r in results["shapes"]:
        s = r["summary"]
        ours, ltb = s["best_ours"], s["best_lt"]
        cols = [
            s["floor_us"],
            ours[1] if ours else nan,
            ltb[1] if ltb else nan,
            s["lt_heuristic"][1],
            s["torch_us"] or nan,
            s["eager_best_ours_us"] or nan,
            s["eager_lt_heuristic_us"] or nan,
        ]
        lines.append(
            f"{s['shape']:>16} "
            + " ".join(f"{c:8.1f}" for c in cols)
            + f" {(s['speedup_vs_best_lt'] or nan):6.3f}  {ours[0] if ours else '-'}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m cuda_l2_explorer.tuner.first_look")
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")) / "first_look.json")
    ap.add_argument("--shapes", type=parse_shapes, default=list(DEFAULT_SHAPES))
    ap.add_argument("--lib", default=None)
    ap.add_argument("--samples", type=int, default=15)
    ap.add_argument("--finalists", type=int, default=6)
    args = ap.parse_args(argv)

    import torch
    from cuda_l2_explorer.importer.harness.device import device_info, nvidia_smi

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    info = device_info()
    lib = TunerLibrary(args.lib)
    log(f"device {info['gpu_name']} sms={info['sm_count']} l2={info['l2_bytes']} kernels={len(lib)}")
    cublas = CublasBaselines()
    results = {
        "device": info,
        "library": {"path": str(lib.path), "build": lib.build_info, "kernels": lib.names()},
        "protocol": "offline, device time (CUDA events), cold L2 (rotation), stage1 3 samples, stage2 "
        f"{args.samples} samples; correctness vs fp32 (TF32 off)",
        "command": " ".join(sys.argv),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "shapes": [],
    }
    for shape in args.shapes:
        results["shapes"].append(
            run_shape(torch, lib, cublas, shape, info, args.samples, args.finalists, log)
        )
        torch.cuda.empty_cache()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1, default=str))
    results["device"]["clocks_end"] = nvidia_smi()
    args.out.write_text(json.dumps(results, indent=1, default=str))
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
