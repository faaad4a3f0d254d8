"""Device memory a worker keeps between configs: runs the harness's config job in-process for a
few configs and prints torch's allocated bytes after each (before and after a full gc), and, when
memory is kept, the largest live CUDA tensors and what holds them. Run on the GPU machine:
    python3 benchmarks/harness/v3/leak_probe.py 1024_1024_1024 2048_2048_2048 ...
"""

import gc
import json
import sys

import torch
from cuda_l2_explorer.db.views import BASELINES
from cuda_l2_explorer.importer.harness.device import device_info
from cuda_l2_explorer.importer.harness.protocol import ProtocolSettings
from cuda_l2_explorer.importer.harness.worker import leak_report, run_config

torch.backends.cuda.matmul.allow_tf32 = False
state = {"info": device_info()}
base = torch.cuda.memory_allocated()
for text in sys.argv[1:]:
    m, n, k = map(int, text.split("_"))
    job = {
        "op": "config",
        **{"m": m, "n": n, "k": k},
        "accumulator": "F32F16F16F32",
        "baselines": list(BASELINES),
        "protocol": ProtocolSettings(samples=5).__dict__,
        "l2": "cold",
    }
    run_config(torch, job, state, lambda _phase: None)
    kept = torch.cuda.memory_allocated() - base  # run_config releases its own tensors
    gc.collect()
    after_gc = torch.cuda.memory_allocated() - base
    leak = leak_report(torch) if after_gc > 1 << 20 else []
    print(json.dumps({"config": text, "kept_mib": kept >> 20, "after_gc_mib": after_gc >> 20, "leak": leak}))
