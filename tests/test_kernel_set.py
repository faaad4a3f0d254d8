"""The repository's own kernel sets (kernels/h100_F32F16F16F32, kernels/h200_F32F16F16F32): each
manifest covers the grid with harness figures from a bundled run of that set on its GPU, names
only kernels the catalog builds, is what that run measured, and materialises deterministically."""

import json
from pathlib import Path

import pytest
from cuda_l2_explorer.db.shapes import grid_shapes
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.tuner import manifest as mf
from cuda_l2_explorer.tuner.families import full_catalog, kernel_from_dict
from cuda_l2_explorer.tuner.materialize import render_config_source

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
DEVICES = ["h100", "h200"]


def manifest_path(device: str) -> Path:
    return KERNELS / f"{device}_F32F16F16F32" / "manifest.json"


@pytest.mark.parametrize("device", DEVICES)
def test_manifest_covers_the_grid_with_harness_figures(device) -> None:
    data = mf.load(manifest_path(device))
    assert data["device"] == device
    shapes = {(e["m"], e["n"], e["k"]) for e in data["configs"]}
    assert shapes == {s.astuple() for s in grid_shapes()}
    for e in data["configs"]:
        assert e["bench_run_id"] and e["best_baseline"] and e["best_baseline_us"] > 0
        assert e["p10_us"] <= e["time_us"] <= e["p90_us"]
        assert e["gpu"] in DEVICES and e["harness_version"]  # the GPU its search ran on
    if device == "h200":  # the H100 set with the picks a search or an A/B on the H200 changed
        h100_entries = mf.load(manifest_path("h100"))["configs"]
        by_shape = {(e["m"], e["n"], e["k"]): e for e in h100_entries}
        h100 = {shape: mf.pick_key(e) for shape, e in by_shape.items()}
        changed = {
            (e["m"], e["n"], e["k"])
            for e in data["configs"]
            if mf.pick_key(e) != h100[e["m"], e["n"], e["k"]]
        }
        searched_here = {(e["m"], e["n"], e["k"]) for e in data["configs"] if e["gpu"] == "h200"}
        derived = {(e["m"], e["n"], e["k"]): e for e in data["configs"] if "derived_from" in e}
        # A pick may also differ, or match, where an H100 search has since made the H100 set's pick:
        # a pick this set took from the H100 set and the H100 set then replaced (session 39's
        # merges), or an H200 search's pick an H100 search found again (session 40's, four configs).
        newer_h100 = {
            (e["m"], e["n"], e["k"])
            for e in data["configs"]
            if "derived_from" not in e
            and by_shape[e["m"], e["n"], e["k"]]["gpu"] == "h100"
            and by_shape[e["m"], e["n"], e["k"]]["date"] > e["date"]
        }
        assert changed and changed <= searched_here | set(derived) | newer_h100
        # An H200 search's pick the H100 set shares was taken over by an A/B on an H100 (session
        # 37), and keeps the GPU its search ran on there too.
        # (Session 39 took over derived picks too, the convert twins: they count as derived.)
        taken_over = {(e["m"], e["n"], e["k"]) for e in h100_entries if e["gpu"] == "h200"}
        assert searched_here - changed - set(derived) - newer_h100 == taken_over - set(derived)
        for shape, e in derived.items():
            # the twin of a pick taken over from the H100 set (or taken back by it, session 39),
            # unless that set has moved on since
            if e["gpu"] == "h100" and by_shape[shape]["date"] <= e["date"]:
                assert h100[shape] in {(e["derived_from"], mf.pick_key(e)[1]), mf.pick_key(e)}


@pytest.mark.parametrize("device", DEVICES)
def test_manifest_names_only_kernels_the_catalog_builds(device) -> None:
    catalog = {c.name: c for c in full_catalog()}
    for e in mf.load(manifest_path(device))["configs"]:
        config = kernel_from_dict(e["kernel"])
        assert config.name == e["kernel_name"]
        assert catalog[config.name] == config


@pytest.mark.parametrize("device", DEVICES)
def test_the_bundled_run_measured_what_the_manifest_names(device) -> None:
    """Merging picks without measuring the set again would leave the bundle's figures about other
    kernels: each entry's bench run is a bundled run of this set, and it ran the entry's kernel
    and variant."""
    data = mf.load(manifest_path(device))
    set_id = f"ours/{device}_F32F16F16F32"
    with Store.open(None, read_only=True, with_bundled=True) as store:
        runs = dict(
            store.con.execute("SELECT run_id, gpu FROM all_runs WHERE set_id = ?", [set_id]).fetchall()
        )
        kernels = {
            (m, n, k): json.loads(params)
            for m, n, k, params in store.con.execute(
                "SELECT m, n, k, params FROM all_kernels WHERE set_id = ?", [set_id]
            ).fetchall()
        }
    for e in data["configs"]:
        assert runs.get(e["bench_run_id"]) == device, (e["m"], e["n"], e["k"])
        measured = kernels[e["m"], e["n"], e["k"]]
        assert mf.pick_key(measured) == mf.pick_key(e)


@pytest.mark.parametrize("device", DEVICES)
def test_materialised_sources_are_deterministic(device) -> None:
    entries = mf.load(manifest_path(device))["configs"]
    for entry in (entries[0], entries[-1]):
        first = render_config_source(entry, device)
        assert first == render_config_source(dict(entry), device)
        assert f"void cuda_l2_{device}_fp32(torch::Tensor a" in first
        assert entry["kernel_name"] in first


@pytest.mark.parametrize("device", DEVICES)
def test_the_kernel_view_renders_the_source_for_its_sets_device(device) -> None:
    """The app's kernel view renders a pick of our set as the SPEC §4 file export writes: with the
    entry point of the set's own device."""
    from cuda_l2_explorer.db.shapes import Shape
    from cuda_l2_explorer.engine import browse

    with Store.open(None, read_only=True, with_bundled=True) as store:
        detail = browse.kernel_detail(store, f"ours/{device}_F32F16F16F32", Shape(12288, 12288, 256))
    source = detail["kernel"]["source"]
    assert f"void cuda_l2_{device}_fp32(" in source and f"{device}_F32F16F16F32 12288_12288_256" in source


@pytest.mark.parametrize("device", DEVICES)
def test_a_derived_pick_differs_from_the_searchs_only_in_its_epilogue(device) -> None:
    """An entry with ``derived_from`` (an A/B's convert twin of the search's pick) names a catalog
    kernel that is the pick's own but for the epilogue, and the bundle's kernel says so too."""
    import dataclasses

    from cuda_l2_explorer.tuner.catalog import first_catalog

    by_name = {c.name: c for c in first_catalog()}
    derived = [e for e in mf.load(manifest_path(device))["configs"] if "derived_from" in e]
    with Store.open(None, read_only=True, with_bundled=True) as store:
        params = {
            (m, n, k): json.loads(p)
            for m, n, k, p in store.con.execute(
                "SELECT m, n, k, params FROM all_kernels WHERE set_id = ?", [f"ours/{device}_F32F16F16F32"]
            ).fetchall()
        }
    for e in derived:
        pick = kernel_from_dict(e["kernel"])
        assert dataclasses.replace(pick, epilogue="alpha") == by_name[e["derived_from"]]
        assert pick.epilogue != "alpha"
        assert params[e["m"], e["n"], e["k"]]["derived_from"] == e["derived_from"]


async def test_the_kernel_view_names_the_pick_a_derived_kernel_comes_from() -> None:
    from cuda_l2_explorer.app.screens import KernelScreen
    from cuda_l2_explorer.db.shapes import Shape
    from cuda_l2_explorer.engine import browse
    from textual.app import App
    from textual.widgets import Static

    entry = next(e for e in mf.load(manifest_path("h200"))["configs"] if "derived_from" in e)
    shape, set_id = Shape(entry["m"], entry["n"], entry["k"]), "ours/h200_F32F16F16F32"
    with Store.open(None, read_only=True, with_bundled=True) as store:
        detail = browse.kernel_detail(store, set_id, shape)

    class Host(App):
        def on_mount(self) -> None:
            self.push_screen(KernelScreen(set_id, shape, detail))

    async with Host().run_test() as pilot:
        await pilot.pause()
        text = "\n".join(str(s.render()) for s in pilot.app.screen.query(Static))
    assert f"our library: {entry['kernel_name']}" in text
    assert f"derived from the search's pick {entry['derived_from']}" in text


def test_changed_picks_are_the_configs_a_merge_moved() -> None:
    """The H200 manifest is session 36 call 2's merge (its copy) plus session 35's eight K = 2048
    picks (combine_merges.py): changed_picks names exactly those eight, and a manifest against
    itself none."""
    shipped = mf.load(manifest_path("h200"))
    call2 = mf.load(
        Path(__file__).resolve().parents[1]
        / "benchmarks/tuner/h200-2026-11-29-s36/call2/merged_manifest.json"
    )
    assert mf.changed_picks(call2, shipped) == [
        (64, 512, 2048), (128, 256, 2048), (128, 512, 2048), (256, 128, 2048),
        (256, 256, 2048), (512, 64, 2048), (512, 128, 2048), (1024, 64, 2048),
    ]  # fmt: skip
    assert mf.changed_picks(shipped, shipped) == []
    assert mf.changed_picks({"configs": []}, shipped) == sorted(
        (e["m"], e["n"], e["k"]) for e in shipped["configs"]
    )
