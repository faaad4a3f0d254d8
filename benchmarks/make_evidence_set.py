"""Materialise a harness evidence kernel set: one SPEC §4 file per config, all the same text.

    python benchmarks/make_evidence_set.py OUT_DIR [configs.txt] [--aa]

Without --aa: the set "simple-tiled" (below). With --aa: the set "aa-torch", whose kernel is
torch's matmul (benchmarks/harness/kernels/aa_torch_matmul.cu), the harness's A/A control.

The kernel is the planted clean control (tests/kernelsets/planted/h100_F32F16F16F32/128_256_512.cu):
a plain shared-memory-tiled HGEMM with fp32 accumulation that takes runtime shapes. It is there to
exercise the harness end to end, not to be fast; identical files share one cached build.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "tests/kernelsets/planted/h100_F32F16F16F32/128_256_512.cu"


def configs(path: Path) -> list[str]:
    return [x for line in path.read_text().splitlines() if not line.startswith("#") for x in line.split()]


AA_KERNEL = Path(__file__).resolve().parent / "harness" / "kernels" / "aa_torch_matmul.cu"


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--aa"]
    aa = "--aa" in sys.argv
    out = Path(args[0]) / ("aa-torch" if aa else "simple-tiled") / "h100_F32F16F16F32"
    listing = Path(args[1]) if len(args) > 1 else Path(__file__).parent / "harness" / "configs.txt"
    out.mkdir(parents=True, exist_ok=True)
    text = (AA_KERNEL if aa else KERNEL).read_text()
    names = configs(listing)
    for name in names:
        (out / f"{name}.cu").write_text(text)
    print(f"{len(names)} files in {out}")


if __name__ == "__main__":
    main()
