"""The orchestrator on a CPU machine: isolation, per-config commits and resume, with a stand-in
worker speaking the real JSON-lines protocol (tests/fake_worker.py)."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from cuda_l2_explorer.db import writes
from cuda_l2_explorer.db.errors import NoGPUError, UsageError
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.importer.harness import device, runner
from cuda_l2_explorer.importer.harness.messages import Result
from cuda_l2_explorer.importer.harness.plan import BenchPlan, KernelEntry, job_for
from cuda_l2_explorer.importer.harness.protocol import ProtocolSettings

FAKE = Path(__file__).parent / "fake_worker.py"
BASELINES = ("cuBLAS-nn", "cuBLAS-tn", "torch.matmul")


@pytest.fixture(autouse=True)
def fake_worker(monkeypatch):
    monkeypatch.setenv("CUDA_L2_EXPLORER_WORKER", str(FAKE))
    monkeypatch.setenv("FAKE_WORKER_DELAY", "0")


def _plan(shapes, kernels=True, timeout=20.0, gpus=(0,)):
    entries = {s: KernelEntry(module="/fake/module.so") for s in shapes} if kernels else {}
    return BenchPlan(
        shapes=list(shapes),
        settings=ProtocolSettings(mode="offline", samples=3),
        baselines=BASELINES,
        set_id="planted/h100_F32F16F16F32",
        kernels=entries,
        gpus=list(gpus),
        timeout_s=timeout,
    )


def _opener(db_path):
    return runner.store_opener(db_path)


def _set_row(store):
    with store.transaction():
        store.con.execute(
            "INSERT INTO kernel_sets (set_id, name, gpu, accumulator, origin) "
            "VALUES ('planted/h100_F32F16F16F32', 'planted', 'h100', 'F32F16F16F32', 'imported')"
        )


def test_the_kernel_view_names_the_clock_each_figure_was_taken_at(db_path):
    """The worker's SM clock at the end of a config's timing is stored with the config and shown
    beside the kernel's figure: which power state (boost, or the power limit) it was taken in."""
    from cuda_l2_explorer.db import reads

    shapes = [Shape(64, 64, 64), Shape(4096, 4096, 4096)]
    with Store.open(db_path) as store:
        _set_row(store)
        runner.run_plan(_opener(store.path), _plan(shapes), "test")
        clocks = {
            s.m: reads.kernel_detail(store, "planted/h100_F32F16F16F32", *s.astuple())["measurements"]
            .select("gpu", "sm_clock_mhz")
            .rows()
            for s in shapes
        }
    assert clocks == {64: [("h100", 1980)], 4096: [("h100", 1410)]}


def test_crash_hang_and_error_cost_only_their_config(db_path):
    shapes = [Shape(64, 64, 64), Shape(13, 64, 64), Shape(17, 64, 64), Shape(19, 64, 64), Shape(128, 64, 64)]
    with Store.open(db_path) as store:
        _set_row(store)
        seen = []
        _run_id, summary = runner.run_plan(
            _opener(store.path), _plan(shapes, timeout=3.0), "test", progress=seen.append
        )
        configs = store.query("SELECT m, status, message FROM run_configs ORDER BY m").to_dicts()
        kernel_rows = store.query(
            "SELECT m, status, message FROM measurements WHERE implementation = 'kernel' ORDER BY m"
        ).to_dicts()
        baseline_counts = store.query(
            "SELECT m, count(*) AS n FROM measurements WHERE implementation <> 'kernel' GROUP BY m ORDER BY m"
        ).to_dicts()
        run = store.query("SELECT status, gpu, gpu_name, clock_start_mhz, params FROM runs").to_dicts()[0]
    assert [(c["m"], c["status"]) for c in configs] == [
        (13, "crashed"),
        (17, "timeout"),
        (19, "crashed"),
        (64, "done"),
        (128, "done"),
    ]
    assert "illegal memory access" in configs[0]["message"]
    assert {r["m"]: r["status"] for r in kernel_rows} == {
        13: "crashed",
        17: "timeout",
        19: "crashed",
        64: "ok",
        128: "ok",
    }
    # every config kept its baselines, including the failed ones (retried without the kernel)
    assert all(row["n"] == len(BASELINES) for row in baseline_counts) and len(baseline_counts) == 5
    assert run["status"] == "complete" and run["gpu"] == "h100" and run["clock_start_mhz"] == 1980
    assert summary["done"] == 2 and summary["crashed"] == 2 and summary["timeout"] == 1
    assert seen[-1].done == seen[-1].total == 5


def test_measured_rows_feed_speedups(db_path):
    with Store.open(db_path) as store:
        _set_row(store)
        runner.run_plan(_opener(store.path), _plan([Shape(64, 64, 64)]), "test")
        rows = store.query("SELECT baseline, speedup FROM speedups ORDER BY baseline").to_dicts()
    by = {r["baseline"]: r["speedup"] for r in rows}
    assert by["cuBLAS-nn"] == pytest.approx(1.1) and by["cuBLAS-tn"] == pytest.approx(1.2)
    assert by["best-baseline"] == pytest.approx(1.1) and by["cuBLAS-max"] == pytest.approx(1.1)


def test_warm_l2_results_are_labelled_warm(db_path):
    """SPEC §7: warm-L2 figures only when asked, and labelled as such in the store."""
    plan = _plan([Shape(64, 64, 64)])
    plan.l2 = "warm"
    with Store.open(db_path) as store:
        _set_row(store)
        run_id, _ = runner.run_plan(_opener(store.path), plan, "test")
        labels = store.query("SELECT DISTINCT l2 FROM measurements WHERE run_id = ?", [run_id])["l2"]
        params_l2 = store.scalar("SELECT json_extract_string(params, '$.l2') FROM runs")
    assert labels.to_list() == ["warm"] and params_l2 == "warm"


def test_resume_redoes_only_what_is_missing(db_path):
    shapes = [Shape(64 * i, 64, 64) for i in range(1, 5)]
    with Store.open(db_path) as store:
        _set_row(store)
        run_id, _ = runner.run_plan(_opener(store.path), _plan(shapes[:2]), "test")
        # Pretend the run was planned for all four and interrupted after two.
        store.con.execute(
            "UPDATE runs SET status = 'interrupted', params = json_merge_patch(params, ?) WHERE run_id = ?",
            ['{"shapes": ["64_64_64", "128_64_64", "192_64_64", "256_64_64"]}', run_id],
        )
        found = runner.find_resumable(store, None, "planted/h100_F32F16F16F32", "offline")
        assert found[0] == run_id
        runner.run_plan(_opener(store.path), _plan(shapes), "test", resume=found)
        counts = store.query("SELECT m, count(*) AS n FROM run_configs GROUP BY m ORDER BY m").to_dicts()
        status = store.scalar("SELECT status FROM runs WHERE run_id = ?", [run_id])
        dupes = store.scalar(
            "SELECT count(*) FROM (SELECT run_id, m, n, k, implementation, metric, padded, count(*) c "
            "FROM measurements GROUP BY ALL HAVING c > 1)"
        )
    assert counts == [{"m": 64 * i, "n": 1} for i in range(1, 5)]
    assert status == "complete" and dupes == 0


def test_a_resumed_run_builds_only_the_configs_it_still_measures(db_path):
    from cuda_l2_explorer.engine.bench import pending_shapes

    shapes = [Shape(64 * i, 64, 64) for i in range(1, 5)]
    with Store.open(db_path) as store:
        _set_row(store)
        run_id, _ = runner.run_plan(_opener(store.path), _plan(shapes[1:3]), "test")
    # an imported set's kernels take ~30 s each to compile: the two measured ones are not rebuilt
    assert pending_shapes(db_path, run_id, shapes) == [shapes[0], shapes[3]]
    assert pending_shapes(db_path, "no-such-run", shapes) == shapes


def test_retry_measures_again_the_configs_that_failed_to_build_and_only_those(db_path):
    """A machine without CUTLASS's headers stored every CuTe kernel as a compile error; once the
    headers are there, --resume --retry compile_error measures just those configs again."""
    from cuda_l2_explorer.db.errors import UsageError
    from cuda_l2_explorer.engine.bench import find_resume, pending_shapes

    shapes = [Shape(64 * i, 64, 64) for i in range(1, 5)]
    plan = _plan(shapes)
    for s in shapes[1:3]:
        plan.kernels[s] = KernelEntry(module=None, build_error="fatal error: cute/tensor.hpp: No such file")
    with Store.open(db_path) as store:
        _set_row(store)
        run_id, first = runner.run_plan(_opener(store.path), plan, "test")
    assert first["compile_error"] == 2 and first["done"] == 2
    said: list[str] = []
    feedback = type("Said", (), {"say": lambda self, line: said.append(line)})()
    found = find_resume(
        db_path, run_id, "planted/h100_F32F16F16F32", "offline", retry=("compile_error",), feedback=feedback
    )
    assert found[0] == run_id and said == [
        f"run {run_id}: 2 config(s) that ended compile_error will run again"
    ]
    assert pending_shapes(db_path, run_id, shapes) == shapes[1:3]
    _, again = runner.run_plan(_opener(db_path), _plan(shapes), "test", resume=found)
    assert again["measured_now"] == 2 and again["done_earlier"] == 2 and again["status"] == "complete"
    with Store.open(db_path) as store:
        statuses = store.query("SELECT status, count(*) AS n FROM run_configs GROUP BY 1").to_dicts()
        dupes = store.scalar(
            "SELECT count(*) FROM (SELECT run_id, m, n, k, implementation, metric, padded, count(*) c "
            "FROM measurements GROUP BY ALL HAVING c > 1)"
        )
    assert statuses == [{"status": "done", "n": 4}] and dupes == 0
    with pytest.raises(UsageError, match="--retry needs --resume"):
        find_resume(db_path, None, None, "offline", retry=("compile_error",))
    with pytest.raises(UsageError, match="not done"):
        find_resume(db_path, run_id, None, "offline", retry=("done",))


def _measure_in_batches(db_path, plan, pending, built, resume=None, build_s=0.0):
    """engine.bench.measure_in_batches with the real runner; ``built`` records each batch built."""
    from cuda_l2_explorer.engine.bench import BenchRun, measure_in_batches

    def build(batch):
        built.append(list(batch))
        time.sleep(build_s)  # a batch of nvcc builds takes time too
        return {s: KernelEntry(module="/fake/module.so") for s in batch}

    def measure(batch_plan, batch_resume, continued):
        command = None if continued else "test"  # as engine.bench.run_bench passes it
        return BenchRun(*runner.run_plan(_opener(db_path), batch_plan, command, batch_resume))

    return measure_in_batches(plan, pending, build, 2, resume, measure)


def test_an_imported_set_is_built_and_measured_a_batch_at_a_time_in_one_run(db_path):
    shapes = [Shape(64 * i, 64, 64) for i in range(1, 6)]
    with Store.open(db_path) as store:
        _set_row(store)
    built: list = []
    run = _measure_in_batches(db_path, _plan(shapes, kernels=False), shapes, built)
    assert built == [shapes[0:2], shapes[2:4], shapes[4:5]]
    assert run.summary["status"] == "complete" and run.summary["done_earlier"] == 4
    with Store.open(db_path) as store:
        assert store.scalar("SELECT count(*) FROM runs") == 1
        assert store.scalar("SELECT count(*) FROM run_configs WHERE run_id = ?", [run.run_id]) == 5
        # Each batch reopens the run; one command measured it, and it is named once.
        assert store.scalar("SELECT command_line FROM runs") == "test"
        assert store.scalar("SELECT status FROM runs") == "complete"


def test_a_new_run_needs_its_command_line(db_path):
    """None continues the call's own runs (a later batch); a run it would create is refused
    before any worker starts or any row is written."""
    with Store.open(db_path) as store:
        _set_row(store)
    with pytest.raises(ValueError, match="command line"):
        runner.run_plan(_opener(db_path), _plan([Shape(64, 64, 64)]), None)
    with Store.open(db_path) as store:
        assert store.scalar("SELECT count(*) FROM runs") == 0


def test_a_time_budget_spent_building_keeps_the_measured_batches_and_resumes_the_rest(db_path):
    from cuda_l2_explorer.engine.bench import pending_shapes

    shapes = [Shape(64 * i, 64, 64) for i in range(1, 7)]
    with Store.open(db_path) as store:
        _set_row(store)
    plan = _plan(shapes, kernels=False)
    plan.time_budget_s = 0.3  # counts builds: spent by the first batch's 0.4 s build
    built: list = []
    run = _measure_in_batches(db_path, plan, shapes, built, build_s=0.4)
    assert built == [shapes[0:2]]  # no second batch is built once the budget is spent ...
    assert run.summary["measured_now"] == 2  # ... and the batch it paid for is measured whole
    assert run.summary["status"] == "interrupted" and run.summary["left"] == 4
    left = pending_shapes(db_path, run.run_id, shapes)
    assert left == shapes[2:]
    plan.time_budget_s = None
    built.clear()
    again = _measure_in_batches(db_path, plan, left, built, resume=(run.run_id, {}))
    assert [s for batch in built for s in batch] == left  # only what was not measured is built
    assert again.run_id == run.run_id and again.summary["status"] == "complete"
    with Store.open(db_path) as store:
        # Two calls measured it (the resume in two batches, the same command as the first): each named once.
        assert store.scalar("SELECT command_line FROM runs") == "test ; resumed by: test"


def test_time_budget_stops_starting_configs_and_the_run_resumes(db_path, monkeypatch):
    """--time-budget: configs in flight finish, no new one starts, the run is left resumable."""
    monkeypatch.setenv("FAKE_WORKER_DELAY", "0.4")
    shapes = [Shape(64 * i, 64, 64) for i in range(1, 7)]
    plan = _plan(shapes)
    plan.time_budget_s = 0.5
    with Store.open(db_path) as store:
        _set_row(store)
    run_id, summary = runner.run_plan(_opener(db_path), plan, "bench --time-budget 0.5")
    assert summary["status"] == "interrupted" and 1 <= summary["measured_now"] < len(shapes)
    first = summary["measured_now"]
    assert summary["done_earlier"] == 0 and summary["left"] == len(shapes) - first
    monkeypatch.setenv("FAKE_WORKER_DELAY", "0")
    with Store.open(db_path) as store:
        found = runner.find_resumable(store, None, "planted/h100_F32F16F16F32", "offline")
    assert found[0] == run_id
    plan.time_budget_s = None
    _, summary = runner.run_plan(_opener(db_path), plan, "bench --resume", resume=found)
    assert summary["status"] == "complete"
    assert summary["done_earlier"] == first and summary["left"] == 0
    assert summary["measured_now"] == len(shapes) - first
    with Store.open(db_path) as store:
        assert store.scalar("SELECT count(*) FROM run_configs WHERE run_id = ?", [run_id]) == len(shapes)
        # The provenance names both parts: the options the later configs were measured under too.
        command = store.scalar("SELECT command_line FROM runs WHERE run_id = ?", [run_id])
    assert command == "bench --time-budget 0.5 ; resumed by: bench --resume"


def test_a_resumed_run_measures_with_the_protocol_it_started_with(db_path, monkeypatch):
    """Options given on --resume (here more samples and another rotation cap) never mix a second
    protocol into a run: the remaining configs are measured as the first ones were.

    The first run stops on its time budget, set well inside the first config (0.25 s of 0.8 s): the
    first config is in flight before the budget can run out, and the run stops with configs left
    unless the orchestrator's loop, which checks the budget at least every 0.5 s, is starved for
    2 s (a budget of 0.5 s against 0.4 s a config left it 0.7 s, and a loaded machine overran it)."""
    monkeypatch.setenv("FAKE_WORKER_DELAY", "0.8")
    shapes = [Shape(64 * i, 64, 64) for i in range(1, 5)]
    plan = _plan(shapes)
    plan.settings = ProtocolSettings(mode="offline", samples=3, rotation_cap=512)
    plan.time_budget_s = 0.25
    with Store.open(db_path) as store:
        _set_row(store)
    run_id, summary = runner.run_plan(_opener(db_path), plan, "bench --time-budget 0.5")
    assert summary["status"] == "interrupted" and 1 <= summary["measured_now"] < len(shapes)
    monkeypatch.setenv("FAKE_WORKER_DELAY", "0")
    with Store.open(db_path) as store:
        found = runner.find_resumable(store, run_id, None, "offline")
    later = _plan(shapes)
    later.settings = ProtocolSettings(mode="offline", samples=9, rotation_cap=64)
    runner.run_plan(_opener(db_path), later, "test", resume=found)
    with Store.open(db_path) as store:
        details = store.query("SELECT details FROM run_configs")["details"]
    seen = [json.loads(d)["protocol_seen"] for d in details]
    assert len(seen) == 4 and all(s == {"samples": 3, "rotation_cap": 512} for s in seen)


def test_server_mode_keeps_the_offline_auto_tuning_choice(db_path):
    """SPEC §6 auto-tuning is done once, offline; a server run on the same GPU reuses its choice
    (the job carries it) and its rows are isolated-call latencies, compared as such."""
    shapes = [Shape(64, 64, 64), Shape(128, 64, 64)]
    offline = _plan(shapes[:1])
    offline.baselines = ("cuBLASLt-auto-tuning-nn", "cuBLAS-nn")
    server = _plan(shapes)
    server.baselines = offline.baselines
    server.settings = ProtocolSettings(mode="server", samples=3)
    with Store.open(db_path) as store:
        _set_row(store)
    runner.run_plan(_opener(db_path), offline, "test")
    run_id, summary = runner.run_plan(_opener(db_path), server, "test")
    with Store.open(db_path) as store:
        details = {
            r["m"]: json.loads(r["details"])
            for r in store.query("SELECT m, details FROM run_configs WHERE run_id = ?", [run_id]).to_dicts()
        }
        metrics = store.query("SELECT DISTINCT metric FROM speedups WHERE mode = 'server'")["metric"]
    assert details[64]["lt_choices"] == {"nn": 3 + 64 % 5} and details[128]["lt_choices"] is None
    assert summary["autotune_reused"] == 1 and metrics.to_list() == ["isolated_call"]


def _audit_reuse(db_path, run_id: str) -> dict[tuple[int, int, int], dict | None]:
    """Per config of a run, the offline audit it kept (None: it audited the launcher itself)."""
    with Store.open(db_path) as store:
        rows = store.query("SELECT m, n, k, details FROM run_configs WHERE run_id = ?", [run_id]).to_dicts()
    return {(r["m"], r["n"], r["k"]): json.loads(r["details"])["audit_reuse"] for r in rows}


def test_server_mode_keeps_the_offline_audit_of_the_same_kernel(db_path):
    """The launcher audit observes the launcher, not the mode: a server run takes the audit of an
    offline run that measured the very same kernel (findings included) and audits the others."""
    shapes = [Shape(128, 64, 64), Shape(64, 64, 64), Shape(256, 64, 64)]
    offline = _plan(shapes[:2])
    server = _plan(shapes)
    server.settings = ProtocolSettings(mode="server", samples=3)
    server.kernels[Shape(64, 64, 64)] = KernelEntry(module="/fake/rebuilt.so")  # another build
    with Store.open(db_path) as store:
        _set_row(store)
    offline_id, _ = runner.run_plan(_opener(db_path), offline, "test")
    run_id, summary = runner.run_plan(_opener(db_path), server, "test")
    reuse = _audit_reuse(db_path, run_id)
    with Store.open(db_path) as store:
        found = store.query(
            "SELECT m, finding FROM audit_findings WHERE run_id = ? AND implementation = 'kernel'", [run_id]
        ).rows()
    assert reuse[128, 64, 64] == {"run_id": offline_id, "findings": [["sync_per_call", "planted"]]}
    assert reuse[64, 64, 64] is None and reuse[256, 64, 64] is None
    assert summary["audit_reused"] == 1 and found == [(128, "sync_per_call")]


def test_a_library_unpacked_in_another_folder_keeps_its_offline_audit(db_path):
    """A library's file is named by its content (tuner/build.py), not by the folder it was built
    or unpacked in: the same file elsewhere is the same kernel and keeps the offline run's audit;
    another library's kernel of the same name is audited again."""

    def in_library(path: str) -> KernelEntry:
        return KernelEntry(
            library={"path": path, "kernel": "sm90_128x128x64_c1x1_pp_ps_sauto_bn", "variant": {}}
        )

    shapes = [Shape(128, 64, 64), Shape(128, 128, 64)]
    offline = _plan(shapes)
    offline.kernels = {s: in_library("/tmp/tb/lib/libl2x_tuner-aaaa.so") for s in shapes}
    server = _plan(shapes)
    server.settings = ProtocolSettings(mode="server", samples=3)
    server.kernels = {
        shapes[0]: in_library("/home/someone/build/lib/libl2x_tuner-aaaa.so"),
        shapes[1]: in_library("/tmp/tb/lib/libl2x_tuner-bbbb.so"),
    }
    with Store.open(db_path) as store:
        _set_row(store)
    offline_id, _ = runner.run_plan(_opener(db_path), offline, "test")
    run_id, summary = runner.run_plan(_opener(db_path), server, "test")
    reuse = _audit_reuse(db_path, run_id)
    assert reuse[128, 64, 64] == {"run_id": offline_id, "findings": [["sync_per_call", "planted"]]}
    assert reuse[128, 128, 64] is None and summary["audit_reused"] == 1


def test_a_worker_that_kept_device_memory_is_replaced(db_path):
    """A worker whose memory stayed allocated after a job says so and exits; the next config
    runs in a fresh process, and nothing is lost or marked failed."""
    shapes = [Shape(23, 64, 64), Shape(64, 64, 64)]
    with Store.open(db_path) as store:
        _set_row(store)
    _run_id, summary = runner.run_plan(_opener(db_path), _plan(shapes), "test")
    with Store.open(db_path) as store:
        rows = store.query("SELECT m, status, details FROM run_configs ORDER BY m").to_dicts()
    pids = {r["m"]: json.loads(r["details"])["pid"] for r in rows}
    assert [r["status"] for r in rows] == ["done", "done"] and summary["done"] == 2
    assert pids[23] != pids[64]


def test_kill_9_then_resume_loses_nothing(db_path, tmp_path):
    """SIGKILL the parent mid-run; --resume finishes it with no loss and no duplicates."""
    script = tmp_path / "run.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parents[1])!r})
        from tests.test_bench_cpu import _plan, _set_row
        from cuda_l2_explorer.db.shapes import Shape
        from cuda_l2_explorer.db.store import Store
        from cuda_l2_explorer.importer.harness import runner
        shapes = [Shape(64 * i, 64, 64) for i in range(1, 13)]
        resume = None
        with Store.open({str(db_path)!r}) as store:
            if len(sys.argv) > 1:
                resume = runner.find_resumable(store, None, "planted/h100_F32F16F16F32", "offline")
            else:
                _set_row(store)
        # as the CLI does: no connection held while the run commits in short sessions
        runner.run_plan(runner.store_opener(store.path), _plan(shapes), "test", resume=resume)
    """)
    )
    log = tmp_path / "answered.txt"
    env = {**os.environ, "FAKE_WORKER_DELAY": "0.15", "FAKE_WORKER_LOG": str(log)}
    parent = subprocess.Popen([sys.executable, str(script)], env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not log.exists() or len(log.read_text().split()) < 5):
        time.sleep(0.05)
    os.killpg(parent.pid, signal.SIGKILL)  # parent and worker, mid-run
    parent.wait()
    with Store.open(db_path, read_only=True) as store:
        committed = store.scalar("SELECT count(*) FROM run_configs")
        assert store.scalar("SELECT status FROM runs") == "running"
    assert 3 <= committed < 12
    done = subprocess.run([sys.executable, str(script), "resume"], env=env, timeout=120)
    assert done.returncode == 0
    with Store.open(db_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM run_configs") == 12
        assert store.scalar("SELECT count(DISTINCT (m, n, k)) FROM measurements") == 12
        assert (
            store.scalar(
                "SELECT count(*) FROM (SELECT m, implementation, metric, count(*) c FROM measurements "
                "GROUP BY ALL HAVING c > 1)"
            )
            == 0
        )
        assert store.scalar("SELECT status FROM runs") == "complete"


def test_two_gpus_share_one_run_as_a_local_cluster(db_path, monkeypatch):
    """--gpus with several GPUs: a local Dask cluster, one worker process per GPU (the path a
    remote cluster takes), each config on one of them, recorded under its GPU's index."""
    pytest.importorskip("distributed")
    # Configs that take a while, as real ones do: with instant ones one worker could finish all
    # six before the other's first task reaches it on a loaded machine (1 run in 18 did).
    monkeypatch.setenv("FAKE_WORKER_DELAY", "0.3")
    shapes = [Shape(64 * i, 64, 64) for i in range(1, 7)]
    with Store.open(db_path) as store:
        _set_row(store)
        run_id, summary = runner.run_plan(_opener(store.path), _plan(shapes, gpus=(0, 1)), "test")
        lanes = store.query("SELECT DISTINCT gpu_index FROM run_configs ORDER BY 1")["gpu_index"].to_list()
        assert store.scalar("SELECT count(*) FROM run_configs WHERE run_id = ?", [run_id]) == 6
    assert summary["done"] == 6 and summary["cluster_workers"] == 2
    assert lanes == [0, 1]


def test_one_gpu_refuses_to_continue_two_runs_at_once(db_path):
    """Several runs resume together only on a cluster (a lane per GPU type); one local GPU's worker
    would be shared by two lanes, so the call is refused before any run is reopened."""
    plan = _plan([Shape(64, 64, 64)])
    with Store.open(db_path) as store:
        _set_row(store)
        info = {"gpu_name": "Fake H100 80GB", "sm_count": 132, "l2_bytes": 50 << 20, "memory_bytes": 80 << 30}
        ids = [runner.create_run(store, plan, info, "test") for _ in range(2)]
        for run_id in ids:
            with store.transaction():
                writes.finish_run(store, run_id, "interrupted", None)
    with pytest.raises(UsageError, match="one GPU continues one run"):
        runner.run_plan(_opener(db_path), plan, "test", resume=[(run_id, {}) for run_id in ids])
    with Store.open(db_path, read_only=True) as store:
        assert store.query("SELECT DISTINCT status FROM runs")["status"].to_list() == ["interrupted"]


def test_gpu_labels_and_gpu_selection():
    assert device.gpu_label("NVIDIA H100 80GB HBM3") == "h100"
    assert device.gpu_label("NVIDIA H200") == "h200"
    assert device.gpu_label("Some New GPU") == "some-new-gpu"
    assert device.parse_gpus("all", 4) == [0, 1, 2, 3]
    assert device.parse_gpus("1,0,1", 2) == [0, 1]
    from cuda_l2_explorer.db.errors import UsageError

    for bad in ("2", "x", ""):
        with pytest.raises(UsageError):
            device.parse_gpus(bad, 2)


def test_bench_without_a_gpu_says_so(cli, db_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # as on a laptop without torch
    result = cli("--db", db_path, "bench", "--mnk", "64_64_64", "--baselines", "cuBLAS-nn")
    assert result.code == 7 and "torch" in result.err
    assert len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "command",
    [
        ["tune", "64", "64", "64"],
        ["tune", "--mnk", "64_64_64,128_128_128", "--library", "/nonexistent/lib.so"],
        ["bench", "--set", "kernels/h100_F32F16F16F32", "--mnk", "64_64_64"],
    ],
)
def test_tune_and_our_set_without_a_gpu_exit_7_before_build_advice(cli, db_path, monkeypatch, command):
    """Issue 16: on a CPU machine these said "no kernel library: build one ..." (exit 4); no GPU is
    what stops them, so that is what they say (exit 7), however the library stands."""
    monkeypatch.setitem(sys.modules, "torch", None)  # as on a CPU machine without torch
    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # kernels/ of the checkout
    monkeypatch.setenv("CUDA_L2_EXPLORER_TUNER_LIB", "/nonexistent/lib.so")
    result = cli("--db", db_path, *command)
    assert result.code == 7, result.err
    assert "torch with CUDA" in result.err and "kernel library" not in result.err
    assert len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "module", ["cuda_l2_explorer.importer.harness.worker", "cuda_l2_explorer.tuner.search_worker"]
)
def test_worker_entry_points_speak_the_protocol(module, monkeypatch):
    """Both worker modules start and say why they cannot measure (no torch here), in one line."""
    try:
        import torch  # noqa: F401

        pytest.skip("torch is installed: the worker would start for real")
    except ImportError:
        pass
    monkeypatch.delenv("CUDA_L2_EXPLORER_WORKER")
    with pytest.raises(NoGPUError, match="torch"):
        runner.start_worker(0, module, timeout=60)


def test_the_harness_imports_nothing_of_the_tuner():
    from conftest import modules_loaded_after

    code = (
        "import cuda_l2_explorer.importer.harness.runner, cuda_l2_explorer.importer.harness.worker\n"
        "import cuda_l2_explorer.importer.harness.build, cuda_l2_explorer.importer.bundle"
    )
    assert modules_loaded_after(code, ("cuda_l2_explorer.tuner",)) == []


def test_every_job_kind_answers_with_one_result_message():
    result = Result(64, 128, 256, [{"implementation": "kernel"}], [("sync_per_call", "x")], {"seconds": 1.0})
    message = json.loads(json.dumps(result.to_message()))
    assert message["op"] == "result" and Result.from_message(message).rows == result.rows
    plan = BenchPlan(
        shapes=[Shape(64, 128, 256)], settings=ProtocolSettings(), job="search", job_fields={"limit": 3}
    )
    assert job_for(plan, Shape(64, 128, 256), with_kernel=True) == {
        "op": "search",
        "m": 64,
        "n": 128,
        "k": 256,
        "limit": 3,
    }


def test_configs_given_with_mnk_are_measured_in_the_order_given():
    """A run stopped part-way has measured what the user listed first (a stratified prefix)."""
    from cuda_l2_explorer.db.errors import UsageError
    from cuda_l2_explorer.engine.bench import ShapeChoice

    given = ShapeChoice(mnk="256_256_256,64_64_64,256_256_256, 128_64_64").shapes([])
    assert given == [Shape(256, 256, 256), Shape(64, 64, 64), Shape(128, 64, 64)]
    sample = ShapeChoice(grid=True, sample=5, seed=3).shapes([])
    assert sample == sorted(sample) and len(sample) == 5
    with pytest.raises(UsageError):
        ShapeChoice(mnk=" , ").shapes([])
