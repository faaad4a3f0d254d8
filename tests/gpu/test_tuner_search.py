"""The per-shape search end to end on a GPU: `tune` measures candidates, logs every one, keeps a
correct one in the manifest, and the manifest set then runs through the harness like any set."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU"),
]

from cuda_l2_explorer.db.store import Store  # noqa: E402
from cuda_l2_explorer.tuner import manifest as mf  # noqa: E402
from cuda_l2_explorer.tuner.native import default_library  # noqa: E402

SHAPES = "64_64_64,1_4096_4096,777_1000_1032"


def test_tune_logs_candidates_keeps_a_correct_kernel_and_benches_it(cli, tmp_path) -> None:
    if default_library() is None:
        pytest.skip("no tuner library built (python -m cuda_l2_explorer.tuner.build)")
    db = tmp_path / "store.duckdb"
    target = tmp_path / "h100_F32F16F16F32" / "manifest.json"
    result = cli("--db", db, "tune", "--mnk", SHAPES, "--limit", "6", "--manifest", target, "--json")
    assert result.code == 0, result.err
    rows = json.loads(result.out)
    assert sorted((r["m"], r["n"], r["k"]) for r in rows) == [
        (1, 4096, 4096),
        (64, 64, 64),
        (777, 1000, 1032),
    ]
    manifest = mf.load(target)
    assert len(manifest["configs"]) == 3
    with Store.open(db, with_bundled=False) as store:  # plain DuckDB: the device has no polars
        con = store.con
        chosen = con.execute("SELECT status FROM search_log WHERE chosen").fetchall()
        assert chosen == [("ok",)] * 3
        stage1 = con.execute("SELECT DISTINCT status FROM search_log WHERE stage = 1").fetchall()
        assert stage1 == [("ok",)]
        baselines = con.execute("SELECT count(*) FROM search_log WHERE family = 'baseline'").fetchone()[0]
        assert baselines >= 3
        # The comparison against the seven baselines ran with the kept kernels (bench run).
        kernel = con.execute(
            "SELECT DISTINCT status FROM measurements "
            "WHERE implementation = 'kernel' AND metric = 'device_time'"
        ).fetchall()
        count = con.execute(
            "SELECT count(*) FROM measurements WHERE implementation = 'kernel' AND metric = 'device_time'"
        ).fetchone()[0]
        assert kernel == [("ok",)] and count == 3
