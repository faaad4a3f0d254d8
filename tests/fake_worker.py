"""A stand-in for the harness worker (and the tuner's) on machines without a GPU: same JSON-lines protocol.

Planted behaviours by M: 13 crashes the process when the kernel runs, 17 hangs when the kernel
runs, 19 reports a CUDA-context error, 128's launcher audit finds a per-call sync; every other
config returns synthetic timings after FAKE_WORKER_DELAY seconds. FAKE_GPU_NAME and FAKE_GPU_SMS
change the GPU its hello reports. Used only by the orchestrator's CPU tests.
"""

import json
import os
import sys
import time

out = os.fdopen(os.dup(1), "w", buffering=1)


def send(msg):
    out.write(json.dumps(msg) + "\n")
    out.flush()


send(
    {
        "op": "hello",
        "pid": os.getpid(),
        "info": {
            # Another GPU type for the mixed-cluster tests (device.gpu_label reads the name).
            "gpu_name": os.environ.get("FAKE_GPU_NAME", "Fake H100 80GB"),
            "sm_count": int(os.environ.get("FAKE_GPU_SMS", "132")),
            "l2_bytes": 50 * 2**20,
            "memory_bytes": 80 * 2**30,
            "torch": "fake",
            "cuda": "13.0",
            "clock_sm_mhz": 1980,
            "driver": "fake",
        },
    }
)
for line in sys.stdin:
    job = json.loads(line)
    if job.get("op") == "exit":
        break
    m, n, k = job["m"], job["n"], job["k"]
    if job.get("op") == "search":
        # Three synthetic candidates (the second the fastest) and one reference; M == 13 crashes.
        if m == 13:
            os._exit(3)
        base = 1e-6 * (m * n * k) ** (1 / 3) / 16
        params = {"family": "cutlass_sm90", "tile_m": 128, "tile_n": 128}
        rows = []
        for i, factor in enumerate((1.2, 0.9, 1.5)):
            variant = {"raster": 0, "swizzle": 1, "decomposition": 0, "splits": 1}
            cand = {
                "kernel": f"fake_{i}",
                "variant": variant,
                "candidate": f"fake_{i}|default",
                "params": params,
                "status": "ok",
                "predicted_us": 1.0,
                "rel_error": 2e-4,
            }
            t = base * factor
            rows.append({**cand, "stage": 1, "median": t, "p10": t, "p90": t, "n_samples": 3})
            if i < 2:
                rows.append({**cand, "stage": 2, "median": t, "p10": t, "p90": t, "n_samples": 10})
        ref = {"median": base, "p10": base, "p90": base, "status": "ok"}
        send(
            {
                "op": "result",
                "m": m,
                "n": n,
                "k": k,
                "rows": rows,
                "audit": [],
                "info": {
                    "kind": "search",
                    "best": "fake_1|default",
                    "references": {"cuBLASLt-heuristic-nn": ref},
                    "seconds": 0.01,
                },
            }
        )
        continue
    with_kernel = job.get("kernel_module") is not None or job.get("kernel_library") is not None
    send({"op": "progress", "m": m, "n": n, "k": k, "phase": "measuring"})
    if with_kernel and m == 13:
        print("illegal memory access (planted)", file=sys.stderr, flush=True)
        os._exit(3)
    if with_kernel and m == 17:
        time.sleep(3600)
    if with_kernel and m == 19:
        send({"op": "error", "m": m, "n": n, "k": k, "status": "crashed", "message": "CUDA error (planted)"})
        sys.exit(3)
    time.sleep(float(os.environ.get("FAKE_WORKER_DELAY", "0")))
    rows = []
    names = (["kernel"] if with_kernel else []) + job["baselines"]
    for i, name in enumerate(names):
        t = (1.0 + 0.1 * i) * 1e-5 * (m * n * k) ** (1 / 3) / 64
        rows.append(
            {
                "implementation": name,
                "metric": "isolated_call" if job["protocol"]["mode"] == "server" else "device_time",
                "padded": False,
                "unit": "s",
                "n_samples": 3,
                "calls_per_sample": 4,
                "median": t,
                "p10": t * 0.99,
                "p90": t * 1.01,
                "mean": t,
                "p99": t,
                "min": t,
                "max": t,
                "status": "ok",
                "rel_error": 1e-4,
                "error_ratio": 1.0,
                "message": None,
                "samples": [t * 0.99, t, t * 1.01],
            }
        )
    # As the real worker: an earlier offline audit of this kernel is kept, not redone.
    audit = job["audit_reuse"]["findings"] if job.get("audit_reuse") else []
    if with_kernel and m == 128 and not job.get("audit_reuse"):
        audit = [["sync_per_call", "planted"]]
    send(
        {
            "op": "result",
            "m": m,
            "n": n,
            "k": k,
            "rows": rows,
            "audit": audit,
            "info": {
                "seconds": 0.01,
                "rotation_sets": 2,
                # As the real worker: the SM clock as the timing ends (large shapes run power-limited).
                "sm_clock_after_timing_mhz": 1980 if m * n * k < 4096**3 else 1410,
                "audit_reuse": job.get("audit_reuse"),
                # As the real worker: the auto-tuning choice offline, the reused one in server mode.
                "autotune": {"nn": {"chosen": 3 + m % 5}} if job["protocol"]["mode"] == "offline" else {},
                "lt_choices": job.get("lt_choices"),
                "pid": os.getpid(),
                "protocol_seen": {key: job["protocol"].get(key) for key in ("samples", "rotation_cap")},
                # M == 23 plays a worker that kept device memory: it retires after answering.
                **({"retire": {"kept_bytes": 5 << 30}} if m == 23 else {}),
            },
        }
    )
    if os.environ.get("FAKE_WORKER_LOG"):
        with open(os.environ["FAKE_WORKER_LOG"], "a") as log:
            log.write(f"{m}_{n}_{k}\n")
    if m == 23:
        break
