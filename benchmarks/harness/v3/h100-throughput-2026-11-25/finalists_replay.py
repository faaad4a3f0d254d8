"""Replay the auto-tuning finalist rule (protocol.tuning_finalists) on an earlier grid's tunings.

    python finalists_replay.py autotune_19c57c82.json.gz

The input is each config's ``autotune`` record of run 19c57c82 (H100, 2026-11-24; screen medians
of every candidate, final medians of the three screen-fastest): for each tuning, the rule's
finalists are chosen from the screen medians and, where it keeps more than one, the fastest of
them by the final medians is taken; the result is set against the run's own choice (by the final
medians, so the run's choice is the best any rule could keep).
"""

import gzip
import json
import math
import sys

from cuda_l2_explorer.importer.harness.protocol import FINALISTS, tuning_finalists


def main(path: str) -> None:
    records = json.load(gzip.open(path, "rt"))
    slower, finalists, lone = [], 0, 0
    for tunings in records.values():
        for tuning in (tunings or {}).values():
            if not tuning or "screen_us" not in tuning:
                continue
            final = tuning["times_us"]
            kept = tuning_finalists(tuning["screen_us"])
            finalists += len(kept) if len(kept) > 1 else 0
            lone += len(kept) == 1
            pick = min(kept, key=lambda i: final[i]) if len(kept) > 1 else kept[0]
            slower.append(final[pick] / final[str(tuning["chosen"])])
    geomean = math.exp(sum(map(math.log, slower)) / len(slower))
    print(
        f"{len(slower)} tunings: finalists timed {finalists} (the run timed {FINALISTS * len(slower)}), "
        f"{lone} with no final; kept choice slower than the run's by >1% at "
        f"{sum(s > 1.01 for s in slower)}, at most {max(slower):.4f}, geomean {geomean:.5f}"
    )


if __name__ == "__main__":
    main(sys.argv[1])
