"""Provenance of every run (SPEC §7): the query, the `runs` command and the app's overview."""

import json

import pytest
from cuda_l2_explorer.app.app import ExplorerApp
from cuda_l2_explorer.db.errors import UsageError
from cuda_l2_explorer.db.reads import Filters, resolve_filters, runs
from cuda_l2_explorer.db.store import Store
from test_app import SIZE, _ready
from textual.widgets import Static


def _provenance(db_path, run_id: str, **columns) -> None:
    sets = ", ".join(f"{k} = ?" for k in columns)
    with Store.open(db_path, with_bundled=False) as store, store.transaction():
        store.con.execute(f"UPDATE runs SET {sets} WHERE run_id = ?", [*columns.values(), run_id])


def test_runs_carry_their_provenance_and_config_counts(app_db):
    params = {"harness_version": "2", "protocol": {"mode": "offline", "samples": 15, "target_qps": 100.0}}
    h100 = "NVIDIA H100 80GB HBM3"
    _provenance(app_db, "r1", gpu_name=h100, driver="580.1", cutlass="4.2.0", params=json.dumps(params))
    with Store.open(app_db, with_bundled=False) as store, store.transaction():
        store.con.execute(
            "INSERT INTO run_configs (run_id, m, n, k, status) VALUES ('r1', 256, 512, 1024, 'done')"
        )
    with Store.open(app_db, read_only=True, with_bundled=False) as store:
        frame = runs(store, resolve_filters(store))
        bench = runs(store, resolve_filters(store, set_="ours"), "bench")
        published = runs(store, Filters(mode="server"), "published")
        with pytest.raises(UsageError, match="kind must be"):
            runs(store, Filters(), "nonsense")
    assert frame.height == 4  # two published imports, two benchmark runs
    r1 = bench.filter(bench["run_id"] == "r1").row(0, named=True)
    assert (r1["harness"], r1["samples"], r1["cutlass"], r1["configs"]) == ("2", 15, "4.2.0", 1)
    assert r1["target_qps"] is None  # an offline run has no arrival rate
    assert published.height == 1 and published["configs"].to_list() == [8]
    assert published["source"][0].endswith("_speedup_server.csv")


def test_runs_command_text_and_json(cli, app_db):
    text = cli("--db", app_db, "--no-bundled", "runs")
    assert text.code == 0, text.err
    header = text.out.splitlines()[0].split()
    assert header[:3] == ["run_id", "kind", "set_id"] and "harness" in header and "command" not in header
    full = cli("--db", app_db, "--no-bundled", "runs", "--kind", "bench", "--json")
    assert {r["run_id"] for r in full.json()} == {"r1", "r2"}
    assert "command" in full.json()[0] and "clock_end_mhz" in full.json()[0]
    assert cli("--db", app_db, "--no-bundled", "runs", "--set", "nope").code == 4


async def test_overview_says_where_the_numbers_came_from(app_db):
    _provenance(app_db, "r1", gpu_name="NVIDIA H100 80GB HBM3", command_line="cuda-l2-explorer bench --grid")
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        text = str(app.query_one("#overview-runs", Static).render())
        assert "Runs behind ours/h100_F32F16F16F32" in text
        assert "NVIDIA H100 80GB HBM3" in text and "cuda-l2-explorer bench --grid" in text
        assert "CUTLASS not recorded" in text  # said, not left blank
        published = next(i for i, s in enumerate(app.selections) if s.source == "published")
        app.query_one("#selection").value = published
        await _ready(pilot)
        text = str(app.query_one("#overview-runs", Static).render())
        assert "published" in text and "_speedup_" in text  # the file it was imported from


def test_cutlass_is_recorded_only_for_sets_that_use_it(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from cuda_l2_explorer.engine.bench import cutlass_of

    (tmp_path / "include" / "cutlass").mkdir(parents=True)
    (tmp_path / "include" / "cutlass" / "cutlass.h").write_text("")
    (tmp_path / "include" / "cutlass" / "version.h").write_text(
        "#define CUTLASS_MAJOR 4\n#define CUTLASS_MINOR 2\n#define CUTLASS_PATCH 0\n"
    )
    monkeypatch.setenv("CUTLASS_DIR", str(tmp_path))
    raw = tmp_path / "64_64_64.cu"
    raw.write_text("#include <cuda_fp16.h>\n// uses cutlass? no: cutlass/ in a comment\n")
    with_cute = tmp_path / "128_128_128.cu"
    with_cute.write_text('#include <cuda_fp16.h>\n  #include "cute/tensor.hpp"\n')
    assert cutlass_of(SimpleNamespace(files=[SimpleNamespace(path=raw)])) is None
    assert (
        cutlass_of(SimpleNamespace(files=[SimpleNamespace(path=raw), SimpleNamespace(path=with_cute)]))
        == "4.2.0"
    )


def test_a_set_that_needs_cutlass_is_refused_where_none_is_found(tmp_path, monkeypatch):
    """Without CUTLASS every CuTe file would fail to build and be stored as the kernel's own
    compile error (an H100 call lost 115 reference configs so): refuse before building."""
    from types import SimpleNamespace

    from cuda_l2_explorer.engine.bench import cutlass_of
    from cuda_l2_explorer.importer.harness import build

    monkeypatch.setattr(build, "find_cutlass", lambda: None)  # this machine's wheel stands aside
    raw = tmp_path / "64_64_64.cu"
    raw.write_text("#include <cuda_fp16.h>\n")
    with_cute = tmp_path / "128_128_128.cu"
    with_cute.write_text("#include <cute/tensor.hpp>\n")
    scan = SimpleNamespace(files=[SimpleNamespace(path=raw), SimpleNamespace(path=with_cute)])
    with pytest.raises(
        UsageError, match=r"1 of the set's 2 files include CUTLASS .*128_128_128\.cu.*CUTLASS_DIR"
    ):
        cutlass_of(scan, required=True)
    assert cutlass_of(scan) is None  # a cluster's workers bring their own headers
    assert cutlass_of(SimpleNamespace(files=[SimpleNamespace(path=raw)]), required=True) is None
