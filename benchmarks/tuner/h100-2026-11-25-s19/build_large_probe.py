"""The library of call 7: three ping-pong tiles shaped after cuBLASLt's auto-tuned winners on the
large configs where ours lose most (call 6, `cublaslt_algo_probe/`: nvjet 128x160 in a 2x1
cluster, 176x128 and 144x128 in 1x2), and our current pick there (128x128 ping-pong, no cluster)
for a side-by-side in one process.

    python build_large_probe.py OUT_DIR call7|call8
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cuda_l2_explorer.tuner.build import build
from cuda_l2_explorer.tuner.catalog import KernelConfig

CALL7 = [
    KernelConfig(128, 128, schedule="pingpong"),  # the current pick on 147 large configs
    KernelConfig(128, 160, schedule="pingpong", cluster_m=2, stages=5),
    KernelConfig(128, 176, schedule="pingpong", cluster_m=2),
    KernelConfig(128, 144, schedule="pingpong", cluster_n=2),
]
# Call 8: call 7's tiles put the odd width on the user's N, along which B is N-major: a box of
# 144-176 halfs is no multiple of the 128-byte swizzle atom (64 halfs). cuBLAS is column-major,
# so nvjet's 128x160 is 128 along our N and 160 along our M: swap-AB gives exactly that (the
# kernel's N tile runs along our M, whose A is K-major), and its 2x1 cluster pairs along our N.
CALL8 = [
    KernelConfig(128, 128, schedule="pingpong"),
    KernelConfig(128, 160, schedule="pingpong", cluster_m=2, stages=5, swap_ab=True),
    KernelConfig(128, 160, schedule="pingpong", stages=5, swap_ab=True),
    KernelConfig(128, 128, schedule="pingpong", cluster_m=2, swap_ab=True),
]

if __name__ == "__main__":
    CONFIGS = {"call7": CALL7, "call8": CALL8}[sys.argv[2]]
    res = build(CONFIGS, Path(sys.argv[1]), per_tu=1, jobs=2, log=lambda line: print(line, file=sys.stderr))
    summary = {"library": str(res.library), "failed": sorted(res.failed), "seconds": round(res.seconds, 1)}
    print(json.dumps(summary))
