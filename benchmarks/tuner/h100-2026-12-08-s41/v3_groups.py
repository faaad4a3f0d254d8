"""The picks library v3 touches, per GPU set, grouped by which of its parts each pick uses
(session 41, issue 15): v2's groups (h100-2026-12-07-s40/v2_groups.json: the relaxed last
cluster barrier, the first-round no-wait, both) and v3's own part, the wgmma family's reductions
through memory with their loads in flight together: a sliced-reduction pick (`_rs`) with 2 or more
splits, a global-reduction pick (`_rg`) with 3 or more (with 2 the last split reads one partial,
as before). A pick in a v2 group and v3's is in "GROUP+memory".

    python benchmarks/tuner/h100-2026-12-08-s41/v3_groups.py

Writes v3_groups.json and v3_configs_GPU.txt (M_N_K,...) beside this script.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
V2 = ROOT / "benchmarks/tuner/h100-2026-12-07-s40/v2_groups.json"


def memory_reduced(entry: dict) -> bool:
    """Whether a pick runs one of the wgmma family's reductions through memory that v3 changed."""
    name, splits = entry["kernel_name"], int((entry.get("variant") or {}).get("splits", 1))
    sliced, global_ = name.endswith("_rs") and splits >= 2, name.endswith("_rg") and splits >= 3
    return name.startswith("wgsk") and (sliced or global_)


def main() -> None:
    v2 = json.loads(V2.read_text())
    out: dict[str, dict[str, list[str]]] = {}
    for gpu, groups in v2.items():
        manifest = json.loads((ROOT / f"kernels/{gpu}_F32F16F16F32/manifest.json").read_text())
        memory = {f"{e['m']}_{e['n']}_{e['k']}" for e in manifest["configs"] if memory_reduced(e)}
        regrouped: dict[str, list[str]] = {}
        for group, configs in groups.items():
            for config in configs:
                regrouped.setdefault(f"{group}+memory" if config in memory else group, []).append(config)
        in_v2 = {c for configs in groups.values() for c in configs}
        regrouped["memory"] = sorted(memory - in_v2, key=lambda c: tuple(map(int, c.split("_"))))
        out[gpu] = regrouped
        every = sorted(
            {c for cs in regrouped.values() for c in cs}, key=lambda c: tuple(map(int, c.split("_")))
        )
        (HERE / f"v3_configs_{gpu}.txt").write_text(",".join(every) + "\n")
        print(gpu, len(every), {g: len(c) for g, c in regrouped.items()})
    (HERE / "v3_groups.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
