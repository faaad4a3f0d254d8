"""One line per profiled call of an ncu-family run (ncu_driver.py's groups between spin-kernel
markers) or of the movement kernels: time, grid, registers, L2 -> SM bytes, L2 reads and their hit
rate, DRAM bytes, SM active share, and the two largest warp-stall reasons.

    python ncu_tiny_table.py CALL/ncu
"""

from __future__ import annotations

import csv
import json
import lzma
import sys
import tarfile
from pathlib import Path

COLUMNS = {
    "us": ("gpu__time_duration.sum", 1e-3),
    "L2->SM KB": ("l1tex__m_xbar2l1tex_read_bytes.sum", 1e-3),
    "L2 rd KB": ("lts__t_sectors_op_read.sum", 32e-3),
    "hit %": None,
    "DRAM rd KB": ("dram__bytes_read.sum", 1e-3),
    "SM act %": None,
}
STALL = "smsp__average_warps_issue_stalled_"  # ..._<reason>_per_issue_active.ratio


def number(row: dict[str, str], name: str) -> float:
    try:
        return float(row.get(name, "nan").replace(",", ""))
    except ValueError:
        return float("nan")


def line(label: str, r: dict[str, str]) -> str:
    f = {k: number(r, v[0]) * v[1] for k, v in COLUMNS.items() if v}
    tex = number(r, "lts__t_sectors_srcunit_tex_op_read.sum")
    hits = number(r, "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum")
    f["hit %"] = 100 * hits / tex if tex else float("nan")
    f["SM act %"] = 100 * number(r, "sm__cycles_active.avg") / number(r, "sm__cycles_elapsed.max")
    stalls = sorted(
        (
            (number(r, k), k[len(STALL) :].split("_per_issue")[0])
            for k in r
            if k.startswith(STALL) and k.endswith(".ratio")
        ),
        reverse=True,
    )[:2]
    grid, regs = r["Grid Size"], r.get("launch__registers_per_thread", "?")
    body = " ".join(f"{v:9.2f}" for v in f.values())
    return f"{label[:46]:46} {grid:>14} {regs:>4} {body}  " + ", ".join(f"{n} {v:.1f}" for v, n in stalls)


def rows_of(path: Path) -> list[dict[str, str]]:
    text = lzma.open(path, "rt") if path.suffix == ".xz" else path.open()
    rows = list(csv.reader(line for line in text if line.startswith('"')))
    return [dict(zip(rows[0], r, strict=False)) for r in rows[2:]]


def main(folder: str) -> None:
    d = Path(folder)
    heads = " ".join(f"{k:>9}" for k in COLUMNS)
    print(f"{'call':46} {'grid':>14} {'regs':>4} {heads}  top stalls (warps stalled an issue)")
    order = json.load(tarfile.open(next(d.glob("logs.tar*"))).extractfile("ncu_family_order.json"))
    rows = rows_of(d / "ncu_raw.csv.xz")
    groups, inside, current = [], False, None
    for r in rows:
        if "spin_kernel" in r["Kernel Name"]:
            if inside:
                groups.append(current)
            inside, current = not inside, None
        elif inside:
            current = r  # the call's last kernel (a call of ours or of cuBLAS launches one)
    for g, r in zip(order, groups, strict=False):
        if r is not None:
            print(line(f"{g['m']}x{g['n']}x{g['k']} {g['implementation'].replace('kernel:', '')}", r))
    for path in sorted(d.glob("floor_raw_*.csv")):
        for r in rows_of(path):
            print(line(f"{path.stem[10:]} {r['Kernel Name'].split('(')[0]}", r))


if __name__ == "__main__":
    main(sys.argv[1])
