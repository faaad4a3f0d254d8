"""``bench``: measure a kernel set against the baselines on this machine's GPUs (SPEC §6-§7)."""

from __future__ import annotations

import argparse
import os

from cuda_l2_explorer.cli.common import add_format, add_shape_choice, command_line, feedback, store_path

NAME = "bench"
HELP = "measure a kernel set against the baselines on this machine's GPUs (SPEC §6-§7)"
UNTRUSTED = """\
A kernel set is code: its .cu files are compiled (with whatever they #include) and run with your
user's privileges, your files and your network. Each config runs in a separate worker process,
which contains a crash or a hang but is no sandbox. Bench only sets you trust; run any other in a
container or a VM (e.g. docker run --gpus all --network none, the set mounted read-only) or as a
user that can read nothing of yours. The same holds for --library."""


def _all_baselines() -> tuple[str, ...]:
    # From db.views (no imports of its own): every command builds this parser, and the engine's
    # bench module would load DuckDB first.
    from cuda_l2_explorer.db.views import BASELINES

    return BASELINES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from cuda_l2_explorer.db.shapes import ROTATION_CAP

    p = parser
    p.description = f"{HELP}\n\n{UNTRUSTED}"
    p.add_argument(
        "--set",
        dest="set_",
        metavar="DIR_OR_NAME",
        help="kernel set folder (SPEC §4 layout) or name; its code runs as your user: see above",
    )
    p.add_argument(
        "--set-name", default=None, help="name to store the set under (default: the folder's parent)"
    )
    add_shape_choice(p, "configs to measure, e.g. 64_64_64,4096_4096_4096")
    p.add_argument("--mode", choices=("offline", "server"), default="offline")
    p.add_argument("--target-qps", type=float, default=100.0, metavar="Q", help="server mode arrival rate")
    p.add_argument(
        "--warmup-s",
        type=float,
        default=0.02,
        metavar="S",
        help="clock warm-up per config (each implementation also runs two warm-up units)",
    )
    p.add_argument("--samples", type=int, default=None, metavar="S", help="samples (offline 15, server 20)")
    p.add_argument(
        "--baselines", default=",".join(_all_baselines()), metavar="B,...", help="baselines to run"
    )
    p.add_argument("--gpus", default="0", metavar="all|0,1", help="GPUs to shard configs over (default 0)")
    p.add_argument(
        "--cluster",
        metavar="tcp://HOST:8786",
        help="measure on an existing Dask cluster's GPU workers (one per GPU, started with "
        "--nthreads 1 --resources GPU=1; the kernels must be at the same path on each), and "
        "compile an imported set's kernels on its workers: pip install 'cuda-l2-explorer[cluster]'",
    )
    p.add_argument(
        "--resume",
        nargs="?",
        const="latest",
        default=None,
        metavar="RUN_ID",
        help="continue an interrupted run (the latest of this set and mode by default)",
    )
    p.add_argument(
        "--retry",
        type=_statuses,
        default=(),
        metavar="STATUS[,STATUS]",
        help="with --resume: measure again the run's configs that ended with these statuses "
        "(compile_error, timeout, crashed, error), e.g. after installing missing headers",
    )
    p.add_argument("--timeout", type=float, default=300.0, metavar="S", help="per-config limit (default 300)")
    p.add_argument(
        "--time-budget",
        type=float,
        default=None,
        metavar="S",
        help="start no new config after S seconds (an imported set: build no new batch of kernels "
        "after S seconds, builds counted); the run stays resumable (--resume)",
    )
    p.add_argument("--warm-l2", action="store_true", help="no input rotation: warm-L2 figures, labelled")
    p.add_argument(
        "--rotation-cap",
        type=int,
        default=ROTATION_CAP,
        metavar="N",
        help=f"cold L2: rotate among at most N input sets (default {ROTATION_CAP}; a tiny shape's sets "
        "span 2x the L2 only in the thousands, and rows spanning less are flagged)",
    )
    p.add_argument(
        "--timing",
        choices=("graph", "eager"),
        default="graph",
        help="offline: CUDA-graph replay (device time, the default), or R calls issued from Python "
        "(harness 2's method; stored as issue_bound_time, never as device time)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 2,
        help="parallel kernel builds here (with --cluster, the cluster's worker threads instead)",
    )
    p.add_argument(
        "--per-unit",
        type=int,
        default=None,
        metavar="N",
        help="an imported set's kernel files compiled N to a translation unit, where they can share "
        "one: torch's headers are then parsed once for them (default 4; 1: each file alone)",
    )
    p.add_argument(
        "--library", metavar="PATH", help="our kernel library, for a set with a manifest.json (loaded: code)"
    )
    p.add_argument(
        "--progress",
        choices=("auto", "jsonl", "none"),
        default="auto",
        help="progress on stderr: a bar on a terminal, JSON lines, or nothing",
    )
    add_format(p)


def _statuses(value: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.strip() for s in value.split(",") if s.strip()))


def _per_unit(value: int | None) -> int:
    from cuda_l2_explorer.db.errors import UsageError
    from cuda_l2_explorer.importer.harness.build_units import DEFAULT_PER_UNIT

    if value is None:
        return DEFAULT_PER_UNIT
    if value < 1:
        raise UsageError("--per-unit must be at least 1")
    return value


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit
    from cuda_l2_explorer.engine.bench import BenchRequest, ShapeChoice, run_bench

    request = BenchRequest(
        store_path=store_path(args),
        set_=args.set_,
        set_name=args.set_name,
        choice=ShapeChoice(mnk=args.mnk, grid=args.grid, sample=args.sample, seed=args.seed),
        mode=args.mode,
        target_qps=args.target_qps,
        warmup_s=args.warmup_s,
        samples=args.samples,
        baselines=tuple(b.strip() for b in args.baselines.split(",") if b.strip()),
        gpus=args.gpus,
        cluster=args.cluster,
        resume=args.resume,
        retry=args.retry,
        timeout_s=args.timeout,
        time_budget_s=args.time_budget,
        warm_l2=args.warm_l2,
        rotation_cap=args.rotation_cap,
        timing=args.timing,
        seed=args.seed,
        jobs=args.jobs,
        per_unit=_per_unit(args.per_unit),
        library=args.library,
        command_line=command_line(args),
    )
    done = run_bench(request, feedback(args))
    # A row per run: a cluster of several GPU types makes one run per type.
    emit([{"run_id": run.run_id, **run.summary} for run in done.runs()], args.fmt)
    return 0
