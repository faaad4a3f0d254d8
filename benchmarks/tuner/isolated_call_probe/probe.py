"""Why our wgmma split-K picks lose 7% more in server mode's isolated call than back to back
(0.919 against 0.990 over the best baseline, run c8cc872b) while the baselines do not.

Per config, our pick (the manifest's kernel and variant, from the carried library) and
torch.matmul, each timed as an isolated call behind a spin hold (as the harness's fallback does)
under four conditions, interleaved in shuffled order, the inputs rotated over >= 2x the L2:
  plain     hold, start event, call, end event (the server metric)
  smem      hold, a kernel that takes 227 KB of shared memory on every SM, start, call, end:
            the SMs are left at the largest shared-memory carveout before the call
  nosmem    hold, the same kernel with 512 B of shared memory, start, call, end
  twice     hold, start, call, call, end: the second call's cost is twice - plain
If the carveout hypothesis holds (a kernel needing ~200 KB of shared memory waits for the SMs to
be reconfigured after a kernel that left them at a small carveout), `smem` takes ~1-2 us off ours
and little off torch.matmul, and `nosmem` none.

    python benchmarks/tuner/isolated_call_probe/probe.py LIBRARY MANIFEST OUT.json [M_N_K ...]
"""

from __future__ import annotations

import json
import random
import statistics
import sys

import cupy
import torch
from cuda_l2_explorer.tuner.native import TunerLibrary, Variant

ROUNDS = 40
HOLD_CYCLES = 3_000_000
DUMMY = r"""
extern "C" __global__ void touch_smem(int* sink) {
  extern __shared__ int smem[];
  smem[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (smem[0] == 12345) *sink = 1;
}
"""
DEFAULT_SHAPES = [
    "12288_64_512", "8192_64_512", "12288_64_256", "4096_64_2048", "64_16384_128",
    "64_128_16384", "1024_64_8192", "128_8192_512", "64_64_64", "4096_4096_4096",
]  # fmt: skip


def main(library: str, manifest_path: str, out: str, shapes: list[str]) -> None:
    lib = TunerLibrary(library)
    picks = {(c["m"], c["n"], c["k"]): c for c in json.load(open(manifest_path))["configs"]}
    props = torch.cuda.get_device_properties(0)
    sms, l2 = props.multi_processor_count, props.L2_cache_size
    stream = torch.cuda.Stream()
    cp_stream = cupy.cuda.ExternalStream(stream.cuda_stream)  # noqa: the image's CuPy
    dummy = cupy.RawKernel(DUMMY, "touch_smem")
    dummy.max_dynamic_shared_size_bytes = 227 * 1024
    sink = cupy.zeros(1, dtype=cupy.int32)
    results = []
    for shape in shapes:
        m, n, k = map(int, shape.split("_"))
        pick = picks[(m, n, k)]
        kern = lib[pick["kernel_name"]]
        variant = Variant(**{f: pick["variant"][f] for f in ("raster", "swizzle", "decomposition", "splits")})
        b_k_major = pick["kernel"].get("b_major") == "k"
        per_set = 2 * (m * k + k * n + m * n)
        sets = max(2, min(64, -(-2 * l2 // per_set)))
        with torch.cuda.stream(stream):
            inputs = [
                (
                    torch.randn(m, k, device="cuda", dtype=torch.half),
                    torch.randn(n, k, device="cuda", dtype=torch.half).t()
                    if b_k_major
                    else torch.randn(k, n, device="cuda", dtype=torch.half),
                    torch.empty(m, n, device="cuda", dtype=torch.half),
                )
                for _ in range(sets)
            ]
            ws_bytes = kern.workspace_bytes(m, n, k, variant)
            ws = torch.empty(max(ws_bytes, 1), device="cuda", dtype=torch.uint8)

        def ours(s, _ws=ws, _b=ws_bytes, _k=kern, _v=variant, _mnk=(m, n, k)):
            a, b, c = s
            _k(a.data_ptr(), b.data_ptr(), c.data_ptr(), *_mnk, _v, _ws.data_ptr(), _b, stream.cuda_stream)

        def matmul(s):
            a, b, c = s
            torch.matmul(a, b, out=c)

        impls = {"ours": ours, "torch.matmul": matmul}
        conditions = ("plain", "smem", "nosmem", "twice")
        times: dict[tuple[str, str], list[float]] = {(i, c): [] for i in impls for c in conditions}
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(stream):
            for s in inputs[:2]:  # warm-up: first-call costs, cuBLAS's handle
                ours(s), matmul(s)
            torch.cuda.synchronize()
            turn = 0
            for _ in range(ROUNDS):
                order = [(i, c) for i in impls for c in conditions]
                random.shuffle(order)
                for impl, cond in order:
                    s = inputs[turn % sets]
                    turn += 1
                    torch.cuda.synchronize()
                    torch.cuda._sleep(HOLD_CYCLES)
                    if cond in ("smem", "nosmem"):
                        smem = 227 * 1024 if cond == "smem" else 512  # 512 B: the 128 threads' ints
                        dummy((sms,), (128,), (sink,), shared_mem=smem, stream=cp_stream)
                    start.record(stream)
                    impls[impl](s)
                    if cond == "twice":
                        impls[impl](inputs[turn % sets])
                    end.record(stream)
                    end.synchronize()
                    times[(impl, cond)].append(start.elapsed_time(end) * 1e3)
        row = {"shape": shape, "kernel": pick["kernel_name"], "splits": variant.splits}
        for (impl, cond), values in times.items():
            row[f"{impl}/{cond}"] = statistics.median(values)
        results.append(row)
        print(
            f"{shape:>16} {pick['kernel_name']:>28} "
            + " ".join(f"{key}={row[key]:.2f}" for key in row if "/" in key),
            flush=True,
        )
        del inputs
        torch.cuda.empty_cache()
    json.dump({"device": props.name, "rounds": ROUNDS, "results": results}, open(out, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:] or DEFAULT_SHAPES)
