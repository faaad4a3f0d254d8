"""SPEC §7 cold L2 said truthfully: rows whose rotating input sets span less than 2x the L2 (a
run with a low --rotation-cap, a shape too large for many sets, or the harness before
2026-11-24, which capped the sets at 64) carry the ``l2-span-<2x`` flag wherever flags are shown,
for runs that recorded the span and for older runs that did not (derived from that harness's rule)."""

import json
from pathlib import Path

import pytest
from cuda_l2_explorer.db import reads
from cuda_l2_explorer.db.shapes import L2_SPAN_FLAG, LEGACY_ROTATION_CAP, Shape, grid_shapes, l2_span
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.importer.harness import runner
from cuda_l2_explorer.importer.harness.plan import BenchPlan, KernelEntry
from cuda_l2_explorer.importer.harness.protocol import ProtocolSettings, rotation_sets

FAKE = Path(__file__).parent / "fake_worker.py"
SET_ID = "planted/h100_F32F16F16F32"
L2 = 50 * 2**20  # the fake worker's GPU
SMALL, LARGE = Shape(64, 64, 64), Shape(4096, 4096, 4096)


@pytest.fixture(autouse=True)
def fake_worker(monkeypatch):
    monkeypatch.setenv("CUDA_L2_EXPLORER_WORKER", str(FAKE))
    monkeypatch.setenv("FAKE_WORKER_DELAY", "0")


def _bench(store: Store, l2: str = "cold") -> str:
    """A run through the real orchestrator; the fake worker rotates over 2 sets, as a real one
    left with little memory would: 64^3 spans far less than 2x the L2, 4096^3 (2 x 128 MiB) more."""
    with store.transaction():
        store.con.execute(
            "INSERT OR IGNORE INTO kernel_sets (set_id, name, gpu, accumulator, origin) "
            f"VALUES ('{SET_ID}', 'planted', 'h100', 'F32F16F16F32', 'imported')"
        )
    plan = BenchPlan(
        shapes=[SMALL, LARGE],
        settings=ProtocolSettings(mode="offline", samples=3),
        baselines=("cuBLAS-nn", "torch.matmul"),
        set_id=SET_ID,
        kernels={s: KernelEntry(module="/fake/module.so") for s in (SMALL, LARGE)},
        gpus=[0],
        timeout_s=20.0,
    )
    plan.l2 = l2
    run_id, _ = runner.run_plan(runner.store_opener(store.path), plan, "test")
    return run_id


def test_configs_spanning_under_2x_l2_are_flagged_where_flags_show(db_path):
    with Store.open(db_path) as store:
        _bench(store)
        spans = store.query("SELECT m, rotation_sets, l2_span, derived FROM l2_span ORDER BY m").rows()
        table = reads.config_table(store, SET_ID, "h100", "offline")
        detail = reads.kernel_detail(store, SET_ID, *SMALL.astuple())
        large_detail = reads.kernel_detail(store, SET_ID, *LARGE.astuple())
        stats = reads.stats(store, reads.resolve_filters(store), ("best-baseline",))
        by_regime = reads.stats_by_regime(store, reads.resolve_filters(store))
        counts = reads.audit_finding_counts(store)
    assert spans == [
        (64, 2, pytest.approx(l2_span(2, SMALL.input_set_bytes, L2)), False),
        (4096, 2, pytest.approx(l2_span(2, LARGE.input_set_bytes, L2)), False),
    ]
    audit = dict(zip(table["m"].to_list(), table["audit"].to_list(), strict=True))
    assert audit == {64: L2_SPAN_FLAG, 4096: ""}
    (row,) = detail["audit"].rows()
    assert row[2] == L2_SPAN_FLAG and row[3].startswith("the 2 rotating input sets span 0.00x the L2")
    assert "of 50 MiB; a call's pass over them reads and writes 0.0 MiB); cold L2 wants 2x" in row[3]
    assert large_detail["audit"].height == 0
    assert stats.filter(stats["source"] == "measured")["l2_span_lt2x"].to_list() == [1]
    assert dict(by_regime.select("regime", "l2_span_lt2x").rows()) == {"tiny": 1, "large": 0}
    assert dict(counts.select("finding", "configs").rows()) == {L2_SPAN_FLAG: 1}


def test_warm_l2_runs_are_not_flagged(db_path):
    """A warm-L2 run says so in every row; the cold-L2 rule does not apply to it."""
    with Store.open(db_path) as store:
        _bench(store, l2="warm")
        assert store.scalar("SELECT count(*) FROM l2_span") == 0
        assert store.scalar("SELECT count(*) FROM findings") == 0


def _old_run(store: Store, shapes: list[Shape], details: list[dict | None]) -> None:
    """A run as an earlier harness left it: run_configs whose details may lack the span."""
    with store.transaction():
        store.con.execute(
            "INSERT INTO runs (run_id, kind, set_id, gpu, mode, status, tool_version, l2_bytes, params) "
            "VALUES ('old', 'bench', ?, 'h100', 'offline', 'complete', '0.1', ?, ?)",
            [SET_ID, L2, json.dumps({"harness_version": "1", "l2": "cold"})],
        )
        store.con.executemany(
            "INSERT INTO run_configs (run_id, m, n, k, status, details) VALUES ('old', ?, ?, ?, 'done', ?)",
            [(*s.astuple(), d and json.dumps(d)) for s, d in zip(shapes, details, strict=True)],
        )


def test_old_runs_without_the_set_count_follow_the_harness_rule(db_path):
    """Every grid config: the view's derived set count is protocol.rotation_sets' with the cap of
    the harness that wrote such rows (free memory not binding), and the span follows from it."""
    shapes = grid_shapes()
    with Store.open(db_path) as store:
        _old_run(store, shapes, [None] * len(shapes))
        got = {
            Shape(m, n, k): (sets, span, derived)
            for m, n, k, sets, span, derived in store.query(
                "SELECT m, n, k, rotation_sets, l2_span, derived FROM l2_span"
            ).rows()
        }
    free = 1 << 50  # memory never binds: the store does not know it
    for shape in shapes:
        sets = rotation_sets(shape.input_set_bytes, L2, free, max_sets=LEGACY_ROTATION_CAP)
        assert got[shape] == (sets, pytest.approx(l2_span(sets, shape.input_set_bytes, L2)), True), shape
    short = [s for s in shapes if got[s][1] < 2]
    assert short and all(got[s][0] == LEGACY_ROTATION_CAP for s in short)  # only the cap leaves them short


def test_recorded_span_and_set_count_are_preferred(db_path):
    with Store.open(db_path) as store:
        _old_run(
            store,
            [SMALL, Shape(128, 64, 64), LARGE],
            [
                {"rotation_sets": 64, "bytes_per_set": 32768, "l2_span": 1.5},  # as harness 3 records it
                {"rotation_sets": 3},  # a padded set's bytes unknown: the unpadded set's
                {"rotation_sets": 1, "bytes_per_set": 4 << 20},
            ],
        )
        spans = dict(store.query("SELECT m, l2_span FROM l2_span").rows())
    assert spans == {
        64: 1.5,
        128: pytest.approx(3 * Shape(128, 64, 64).input_set_bytes / L2),
        4096: pytest.approx((4 << 20) / L2),
    }
