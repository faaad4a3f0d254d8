"""Where a run's time went: its configs, seconds, isolated-call holds and the per-phase totals of
``run_configs.details.phase_s``.

    python phases.py STORE [offline|server] [RUN_ID|latest]

Without a run, every run of the mode in the store counts; ``latest``: the last one started.
"""

import collections
import json
import sys

import duckdb


def main(store: str, mode: str, run: str | None = None) -> None:
    con = duckdb.connect(store, read_only=True)
    if run == "latest":
        run = con.execute(
            "SELECT run_id FROM runs WHERE mode = ? ORDER BY started_at DESC LIMIT 1", [mode]
        ).fetchone()[0]
    rows = con.execute(
        "SELECT c.seconds, c.details FROM run_configs c JOIN runs r USING (run_id) WHERE r.mode = ? "
        "AND (? IS NULL OR r.run_id = ?)",
        [mode, run, run],
    ).fetchall()
    phases: collections.Counter[str] = collections.Counter()
    seconds = hold = 0.0
    retries = 0
    for spent, text in rows:
        details = json.loads(text) if text else {}
        for phase, value in details.get("phase_s", {}).items():
            phases[" ".join(phase.split(" ")[:2])] += (
                value  # "measuring (offline) 3/15" -> "measuring (offline)"
            )
        seconds += spent or 0.0
        hold += details.get("isolated_hold_s", 0.0)
        retries += details.get("isolated_retries", 0)
    n = max(len(rows), 1)
    print(
        f"{len(rows)} configs {seconds:.1f} s ({seconds / n:.4f} a config), holds {hold / n:.4f} s a config "
        f"{retries} retries"
    )
    for phase, value in phases.most_common():
        print(f"{phase:28s} {value / n:.4f} {value:.1f}")


if __name__ == "__main__":
    main(
        sys.argv[1],
        sys.argv[2] if len(sys.argv) > 2 else "offline",
        sys.argv[3] if len(sys.argv) > 3 else None,
    )
