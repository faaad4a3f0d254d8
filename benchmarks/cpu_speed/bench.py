"""CPU speed of the CLI, the imports and the app: this checkout against an earlier commit, in one run.

    python benchmarks/cpu_speed/bench.py [--base efb97a7] [--runs 5] [--big-runs 3] [--app-runs 3]

Run it with the project's environment active (its dependencies are the ones both versions use).
Each version is installed, without dependencies, into a venv of its own in a temporary folder,
which reaches this environment's packages through a .pth file, so the two differ only in the
project's code: the base from a temporary git worktree at --base, the checkout from a copy of its
working tree (uncommitted changes included). Every figure is a whole process timed from outside,
start-up included, with its peak RSS (the kernel's own accounting of the reaped child); runs
alternate between the versions so that a drift of the machine's speed touches both.

Measured, with the bundled dataset (a store path that does not exist) unless said otherwise:
- lookup CLI and stats CLI end to end;
- import-results of a 1000-config CSV into a new store;
- import-results of a 1M-config CSV (60 MB, under the 64 MiB limit) into a new store, and how long
  the store was locked meanwhile (a probe opening it read-only every 20 ms);
- the app, headless through Textual's pilot (app_driver.py): first paint (process start to the
  first frame with the Configs table filled), filter and sort latency on the 1000-config set
  (from the input event to the end of the frame that shows the rows, not through the pilot's
  idle waits: see app_driver.py), RSS.

Writes results.json (every run's raw figures) and results.md (min / median / max) beside itself.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VERSIONS = ("base", "head")
LOOKUP = ("lookup", "1000", "1000", "1000", "--gpu", "h100", "--mode", "offline", "--limit", "3")
STATS = (
    "stats",
    "--gpu",
    "h100",
    "--mode",
    "offline",
    "--baseline",
    "best-baseline",
    "--baseline",
    "cuBLAS-max",
)
HEADER = (
    "mnk,torch.matmul,cuBLAS-tn,cuBLAS-nn,cuBLAS-max,cuBLASLt-heuristic-tn,cuBLASLt-heuristic-nn,"
    "cuBLASLt-heuristic-max,cuBLASLt-auto-tuning-tn,cuBLASLt-auto-tuning-nn,cuBLASLt-auto-tuning-max"
)
GRID = (64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384)


# ------------------------------------------------------------------------------------------ setup
def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True).stdout


def copy_working_tree(target: Path) -> None:
    """Tracked and untracked (not ignored) files as they are now: the checkout being measured."""
    names = git("ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for name in filter(None, names):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def install(source: Path, venv: Path) -> Path:
    """The project from ``source`` into a new venv that borrows this environment's dependencies."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", str(source)], check=True)

    def ask(code: str) -> str:
        return subprocess.run([python, "-c", code], check=True, capture_output=True, text=True).stdout.strip()

    import site

    # Appended after the venv's own site-packages: its copy of the project wins over this one's.
    own = ask("import site; print(site.getsitepackages()[0])")
    Path(own, "zz_bench_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    where = ask("import cuda_l2_explorer, duckdb, polars, textual; print(cuda_l2_explorer.__file__)")
    if not where.startswith(str(venv)):
        raise SystemExit(f"{venv}: the project was imported from {where}, not from the venv")
    return venv / "bin"


def write_csv(path: Path, shapes: list[tuple[int, int, int]], decimals: int, seed: int) -> Path:
    """A SPEC §5 file with random but consistent speedups ('-max' is the smaller layout's)."""
    rnd = random.Random(seed)
    with path.open("w") as f:
        f.write(HEADER + "\n")
        for m, n, k in shapes:
            v = [round(rnd.uniform(0.5, 2.0), decimals) for _ in range(7)]
            row = (
                v[0],
                v[1],
                v[2],
                min(v[1], v[2]),
                v[3],
                v[4],
                min(v[3], v[4]),
                v[5],
                v[6],
                min(v[5], v[6]),
            )
            f.write(f"{m}_{n}_{k}," + ",".join(f"{x:.{decimals}f}" for x in row) + "\n")
    return path


# ---------------------------------------------------------------------------------------- running
class LockProbe(threading.Thread):
    """Opens the store read-only every 20 ms; sums the time it could not (another process held it)."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path, self.stop, self.locked_s = path, threading.Event(), 0.0

    def run(self) -> None:
        import duckdb

        since = None
        while not self.stop.is_set():
            now = time.perf_counter()
            try:
                if self.path.exists():
                    duckdb.connect(str(self.path), read_only=True).close()
                if since is not None:
                    self.locked_s += now - since
                    since = None
            except duckdb.Error:
                since = now if since is None else since
            time.sleep(0.02)
        if since is not None:
            self.locked_s += time.perf_counter() - since


def run_process(argv: list[str], env: dict, timeout: float, probe: Path | None = None) -> dict:
    """Wall seconds, peak RSS and exit status of one process; killed at ``timeout``."""
    lock = LockProbe(probe) if probe else None
    if lock:
        lock.start()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started_at = time.time()
        started = time.perf_counter()
        child = subprocess.Popen(argv, env=env, stdout=out, stderr=err)
        killer = threading.Timer(timeout, child.kill)
        killer.start()
        _, status, usage = os.wait4(child.pid, 0)  # reaped here, with its own resource usage
        seconds = time.perf_counter() - started
        killer.cancel()
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        record = {
            "seconds": seconds,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mb": usage.ru_maxrss / 1024,
            "exit": child.returncode,
            "started_at": started_at,
            "killed": seconds >= timeout and child.returncode < 0,
            "stdout": out.read().decode(errors="replace")[-4000:],
            "stderr": err.read().decode(errors="replace")[-2000:],
        }
    if lock:
        lock.stop.set()
        lock.join()
        record["store_locked_s"] = lock.locked_s
    return record


def measure(args: argparse.Namespace, bins: dict[str, Path], data: dict[str, Path], work: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_L2_EXPLORER_")}
    env |= {"XDG_CONFIG_HOME": str(work / "config"), "XDG_DATA_HOME": str(work / "data")}
    absent = str(work / "absent.duckdb")  # read commands: the bundled dataset alone
    fresh = iter(range(10**6))

    def cli(version: str, *words: str) -> list[str]:
        return [str(bins[version] / "cuda-l2-explorer"), *words]

    def new_store() -> str:
        return str(work / f"store-{next(fresh)}.duckdb")

    cases = {
        "lookup": lambda v: run_process(cli(v, "--db", absent, *LOOKUP), env, 60),
        "stats": lambda v: run_process(cli(v, "--db", absent, *STATS), env, 60),
        "import_1000": lambda v: run_process(
            cli(v, "--db", new_store(), "import-results", str(data["1000"])), env, 120
        ),
    }
    results: dict = {case: {v: [] for v in VERSIONS} for case in [*cases, "import_1m", "app"]}
    for case, one in cases.items():
        for version in VERSIONS:
            one(version)  # warm-up: page cache, .pyc
        for i in range(args.runs):
            for version in VERSIONS[:: 1 if i % 2 == 0 else -1]:
                results[case][version].append(one(version))
        report_progress(case, results[case])
    for i in range(args.big_runs):
        for version in VERSIONS[:: 1 if i % 2 == 0 else -1]:
            runs = results["import_1m"][version]
            if runs and runs[-1]["killed"]:
                continue  # one run past the limit says it; the rest would too
            store = new_store()
            argv = cli(version, "--db", store, "-q", "import-results", str(data["1m"]))
            runs.append(run_process(argv, env, args.big_timeout, probe=Path(store)))
    report_progress("import_1m", results["import_1m"])
    driver = str(HERE / "app_driver.py")
    for i in range(args.app_runs):
        for version in VERSIONS[:: 1 if i % 2 == 0 else -1]:
            argv = [str(bins[version] / "python"), driver, absent, str(args.app_repeats), "160", "48"]
            record = run_process(argv, env, 120)
            if record["exit"] == 0:
                app = json.loads(record["stdout"].strip().splitlines()[-1])
                record |= app
                record["mounted_s"] = app["mounted_at"] - record["started_at"]
                record["first_paint_s"] = app["painted_at"] - record["started_at"]
            results["app"][version].append(record)
    report_progress("app", results["app"])
    return results


def report_progress(case: str, by_version: dict) -> None:
    parts = []
    for version, runs in by_version.items():
        ok = [r["seconds"] for r in runs if r["exit"] == 0]
        parts.append(
            f"{version} median {statistics.median(ok):.3f} s" if ok else f"{version}: no run finished"
        )
    print(f"{case}: " + ", ".join(parts), file=sys.stderr)


# ----------------------------------------------------------------------------------------- report
# (label, case, figure, pooled): pooled figures are lists per run (the app's repeats), flattened.
ROWS = (
    ("lookup CLI, wall s", "lookup", "seconds", False),
    ("lookup CLI, CPU s (user + system)", "lookup", "cpu_s", False),
    ("lookup CLI, peak RSS MB", "lookup", "peak_rss_mb", False),
    ("stats CLI, wall s", "stats", "seconds", False),
    ("stats CLI, CPU s", "stats", "cpu_s", False),
    ("stats CLI, peak RSS MB", "stats", "peak_rss_mb", False),
    ("import 1000 configs (new store), wall s", "import_1000", "seconds", False),
    ("import 1000 configs, CPU s", "import_1000", "cpu_s", False),
    ("import 1000 configs, peak RSS MB", "import_1000", "peak_rss_mb", False),
    ("import 1M configs (new store), wall s", "import_1m", "seconds", False),
    ("import 1M configs, CPU s (two threads)", "import_1m", "cpu_s", False),
    ("import 1M configs, peak RSS MB", "import_1m", "peak_rss_mb", False),
    ("import 1M configs, store locked s", "import_1m", "store_locked_s", False),
    (
        "app first paint (start to the first frame with the Configs table filled), s",
        "app",
        "first_paint_s",
        False,
    ),
    ("app mounted (start to mounted), s", "app", "mounted_s", False),
    ("app filter (Enter to the frame with the rows), ms", "app", "filter_ms", True),
    ("app clear filter (Enter to the frame with the rows), ms", "app", "clear_ms", True),
    ("app sort (header click to the frame with the rows), ms", "app", "sort_ms", True),
    ("app reverse sort (S key to the frame with the rows), ms", "app", "sort_key_ms", True),
    ("app frame floor (an ignored key and a table repaint to the frame), ms", "app", "idle_frame_ms", True),
    ("app RSS after first paint, MB", "app", "rss_after_paint_mb", False),
    ("app peak RSS, MB", "app", "peak_rss_mb", False),
)


def figures(runs: list[dict], figure: str, pooled: bool) -> list[float]:
    done = [r for r in runs if r["exit"] == 0 and figure in r]
    if pooled:
        return [x for r in done for x in r[figure]]
    return [r[figure] for r in done]


def cell(values: list[float], runs: list[dict]) -> str:
    if not values:
        killed = [r for r in runs if r.get("killed")]
        if killed:
            return f"killed at {killed[0]['seconds']:.0f} s ({killed[0]['peak_rss_mb']:.0f} MB by then)"
        return "-"
    digits = 3 if max(values) < 10 else 1
    return " / ".join(f"{x:.{digits}f}" for x in (min(values), statistics.median(values), max(values)))


def markdown(results: dict, meta: dict) -> str:
    lines = [
        "# CPU speed: this checkout against an earlier commit",
        "",
        f"Made by `{meta['command']}` on {meta['date']}: {meta['machine']}.",
        f"base: `{meta['base']}`; head: `{meta['head']}`. Dependencies (both): {meta['dependencies']}.",
        f"Load average at start / end: {meta['load_start']} / {meta['load_end']}.",
        "",
        "Each cell: min / median / max over the runs (the app's filter and sort: over every repeat of",
        "every run). CLI figures: whole processes timed from outside, start-up included. App figures:",
        "in the app, from the input event to the end of the frame that shows the result (app_driver.py).",
        "Raw figures in results.json.",
        "Wall times stretch with the machine's load (above); CPU seconds much less so.",
        "",
        "| measure | base | head | head / base (medians) |",
        "|---|---|---|---|",
    ]
    for label, case, figure, pooled in ROWS:
        by_version = {v: figures(results[case][v], figure, pooled) for v in VERSIONS}
        base, head = by_version["base"], by_version["head"]
        ratio = f"{statistics.median(head) / statistics.median(base):.3f}" if base and head else "-"
        cells = [cell(by_version[v], results[case][v]) for v in VERSIONS]
        lines.append(f"| {label} | {cells[0]} | {cells[1]} | {ratio} |")
    failed = [
        f"- {case} {v}: exit {r['exit']}: {(r['stderr'].strip().splitlines() or [''])[-1]}"
        for case, by_version in results.items()
        for v, runs in by_version.items()
        for r in runs
        if r["exit"] != 0 and not r.get("killed")
    ]
    if failed:
        lines += ["", "Runs that failed (left out above):", *failed]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="efb97a7", help="the commit to compare against (default efb97a7)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each CLI measure (default 5)")
    parser.add_argument("--big-runs", type=int, default=3, help="runs of the 1M-config import (default 3)")
    parser.add_argument("--big-timeout", type=float, default=120.0, help="kill a 1M-config import after S s")
    parser.add_argument("--app-runs", type=int, default=3, help="app processes per version (default 3)")
    parser.add_argument(
        "--app-repeats", type=int, default=5, help="filters and sorts per app run (default 5)"
    )
    parser.add_argument("--out", type=Path, default=HERE, help="folder for results.json and results.md")
    args = parser.parse_args()
    base_rev = git("rev-parse", args.base).strip()
    # Uncommitted changes other than this script's own results are part of what is measured.
    out = args.out.resolve()
    own = [f":!{out.relative_to(REPO)}/results.*"] if out.is_relative_to(REPO) else []
    changes = git("status", "--porcelain", "--", ".", *own)
    dirty = " (with uncommitted changes)" if changes.strip() else ""
    head_rev = git("rev-parse", "HEAD").strip() + dirty
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="cpu-speed-") as tmp:
        work = Path(tmp)
        git("worktree", "add", "--detach", "-q", str(work / "src-base"), base_rev)
        try:
            (work / "src-head").mkdir()
            copy_working_tree(work / "src-head")
            bins = {v: install(work / f"src-{v}", work / f"venv-{v}") for v in VERSIONS}
            grid = [(m, n, k) for m in GRID for n in GRID for k in GRID]
            steps = range(8, 801, 8)
            million = [(m, n, k) for m in steps for n in steps for k in steps]
            data = {
                "1000": write_csv(work / "cuda_l2_h100_F32F16F16F32_speedup_offline.csv", grid, 3, 1),
                "1m": write_csv(work / "cuda_l2_h200_F32F16F16F32_speedup_offline.csv", million, 2, 2),
            }
            sizes = {name: path.stat().st_size for name, path in data.items()}
            if sizes["1m"] > 64 << 20:
                raise SystemExit("the 1M-config file is over the 64 MiB import limit")
            results = measure(args, bins, data, work)
        finally:
            git("worktree", "remove", "--force", str(work / "src-base"))
    import duckdb
    import polars
    import textual

    meta = {
        "command": shlex.join(["python", "benchmarks/cpu_speed/bench.py", *sys.argv[1:]]),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{os.cpu_count()} CPUs, {platform.platform()}, Python {platform.python_version()}",
        "base": f"{args.base} = {base_rev}",
        "head": head_rev,
        "dependencies": ", ".join(f"{m.__name__} {m.__version__}" for m in (duckdb, polars, textual)),
        "load_start": " ".join(f"{x:.2f}" for x in load_start),
        "load_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "input_bytes": sizes,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    (args.out / "results.md").write_text(markdown(results, meta))
    print((args.out / "results.md").read_text())


if __name__ == "__main__":
    main()
