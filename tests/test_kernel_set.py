"""The repository's own kernel set (kernels/h100_F32F16F16F32): its manifest covers the grid with
harness figures, names only kernels the catalog builds, and materialises deterministically."""

from pathlib import Path

from cuda_l2_explorer.db.shapes import grid_shapes
from cuda_l2_explorer.tuner import manifest as mf
from cuda_l2_explorer.tuner.families import full_catalog, kernel_from_dict
from cuda_l2_explorer.tuner.materialize import render_config_source

MANIFEST = Path(__file__).resolve().parents[1] / "kernels" / "h100_F32F16F16F32" / "manifest.json"


def test_manifest_covers_the_grid_with_harness_figures() -> None:
    data = mf.load(MANIFEST)
    shapes = {(e["m"], e["n"], e["k"]) for e in data["configs"]}
    assert shapes == {s.astuple() for s in grid_shapes()}
    for e in data["configs"]:
        assert e["bench_run_id"] and e["best_baseline"] and e["best_baseline_us"] > 0
        assert e["p10_us"] <= e["time_us"] <= e["p90_us"]
        assert e["gpu"] == "h100" and e["harness_version"]


def test_manifest_names_only_kernels_the_catalog_builds() -> None:
    catalog = {c.name: c for c in full_catalog()}
    for e in mf.load(MANIFEST)["configs"]:
        config = kernel_from_dict(e["kernel"])
        assert config.name == e["kernel_name"]
        assert catalog[config.name] == config


def test_materialised_sources_are_deterministic() -> None:
    entries = mf.load(MANIFEST)["configs"]
    for entry in (entries[0], entries[-1]):
        first = render_config_source(entry)
        assert first == render_config_source(dict(entry))
        assert "void cuda_l2_h100_fp32(torch::Tensor a" in first
        assert entry["kernel_name"] in first
