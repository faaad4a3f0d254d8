"""Static SASS counts behind v3's reduction change (session 41, CPU only): for the wgmma kernels of
a library whose splits reduce through memory, registers, local memory (spills) and the 16-byte
global loads per kernel, and the longest run of those loads with no FADD between them (how many
a thread has in flight before it adds: the reduction's L2 round trips); then the whole library's
fences and local-memory accesses (what v2_sass.sh counted in two kernels).

    python benchmarks/tuner/h100-2026-12-08-s41/v3_sass.py LIBRARY.so [LIBRARY.so ...]

Needs cuobjdump on PATH (`pip install nvidia-cuda-cuobjdump`).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter

# WgShape<BM, BN, BK, stages, B K-major, multicast, reduce>: reduce 1 global, 2 sliced.
SHAPE = re.compile(r"WgShapeILi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)ELb([01])ELi(\d)ELi([12])EE")
KERNELS = {"64x64x128_s6_bn", "64x128x64_s8_bn", "128x64x64_s8_bn", "64x64x64_s8_bn"}


def functions(sass: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    name = None
    for line in sass.splitlines():
        if "Function : " in line:
            name = line.split("Function : ", 1)[1].strip()
            out[name] = []
        elif name is not None:
            out[name].append(line)
    return out


def longest_load_run(lines: list[str]) -> int:
    """The most 16-byte global loads in a row before an FADD (branches and other work between loads
    do not end a run)."""
    best = run = 0
    for line in lines:
        if "LDG.E.128" in line:
            run += 1
            best = max(best, run)
        elif "FADD" in line:
            run = 0
    return best


def main(paths: list[str]) -> None:
    for path in paths:
        sass, usage = (
            subprocess.run(["cuobjdump", flag, path], capture_output=True, text=True, check=True).stdout
            for flag in ("-sass", "-res-usage")
        )
        regs = dict(re.findall(r"Function (\S+):\s*\n\s*REG:(\d+)", usage))
        print(path.rsplit("/", 1)[-1])
        rows = []
        for name, lines in functions(sass).items():
            m = SHAPE.search(name)
            if not m:
                continue
            bm, bn, bk, st, kmaj, mc, red = m.groups()
            kernel = f"{bm}x{bn}x{bk}_s{st}_b{'k' if kmaj == '1' else 'n'}"
            if kernel not in KERNELS or mc != "1":
                continue
            text = "\n".join(lines)
            rows.append(
                (
                    f"wgsk_{kernel}_{'rg' if red == '1' else 'rs'}",
                    regs.get(name, "?"),
                    len(re.findall(r"\bLDL\b|\bSTL\b", text)),
                    text.count("LDG.E.128"),
                    longest_load_run(lines),
                )
            )
        print(f"  {'kernel':28} {'REG':>4} {'LDL/STL':>8} {'LDG.128':>8} {'loads before an add':>20}")
        for row in sorted(rows):
            print(f"  {row[0]:28} {row[1]:>4} {row[2]:>8} {row[3]:>8} {row[4]:>20}")
        counts = Counter(re.findall(r"MEMBAR[.A-Z]*|\bLDL\b|\bSTL\b", sass))
        print("  library:", ", ".join(f"{name} {n}" for name, n in sorted(counts.items())))


if __name__ == "__main__":
    main(sys.argv[1:])
