"""The kernel-family registry and the one templating mechanism: every family is described once,
its sources ship as package data, and every rendered text goes through tuner.templates."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest
from cuda_l2_explorer.tuner import abi, families, native, search_space, templates, tiny
from cuda_l2_explorer.tuner.catalog import KernelConfig
from cuda_l2_explorer.tuner.config import ConfigError
from cuda_l2_explorer.tuner.families import FAMILIES, family_of, kernel_from_dict
from cuda_l2_explorer.tuner.tiny import TinyConfig

REPO = Path(__file__).resolve().parents[1]


def test_every_family_round_trips_its_catalog() -> None:
    assert list(FAMILIES) == ["cutlass_sm90", "sm90_mma_tiny", "sm90_wgmma_splitk"]
    for name, family in FAMILIES.items():
        configs = family.catalog()
        assert configs and all(c.family == name and isinstance(c, family.config_type) for c in configs)
        assert all(kernel_from_dict(c.to_dict()) == c for c in configs)
        assert family_of(configs[0]) is family_of(name) is family_of(configs[0].to_dict()) is family


def test_family_of_rejects_unknown_families() -> None:
    with pytest.raises(ConfigError, match="unknown kernel family 'triton'"):
        family_of("triton")
    with pytest.raises(ConfigError, match="no family"):
        kernel_from_dict({"tile_m": 64, "tile_n": 64})
    assert family_of({"tile_m": 128}) is FAMILIES[families.DEFAULT_FAMILY]


def test_shape_support_follows_the_alignment_the_c_code_checks() -> None:
    for family in FAMILIES.values():
        source = family.render_tu(family.catalog()[:1])
        a = family.alignment
        assert f"if (N % {a} || K % {a}) return kCannotImplement;" in source, family.name
        assert family.supports(1, a, a) and family.supports(4097, 4096, 64)
        assert not family.supports(64, a + 1, 64) and not family.supports(64, 64, a - 1)
        assert not family.supports(0, 64, 64)
    assert families.RUNTIME_SHAPE_ALIGNMENT == 8


def test_size_limits_are_data_the_c_code_checks_too() -> None:
    """Each family declares its limits (alignment, largest dimension, grid bound on the M tiles);
    why_not says which one a shape breaks, as the entry points' checks would refuse it."""
    tiny_family = FAMILIES["sm90_mma_tiny"]
    source = tiny_family.render_tu(tiny_family.catalog()[:1])
    assert f"> {tiny_family.max_m_tiles}) return kCannotImplement;" in source
    assert tiny_family.max_m_tiles == tiny.MAX_M_TILES
    edge = tiny.MAX_M_TILES * 16
    assert tiny_family.why_not(edge, 64, 64, {"tile_m": 16}) is None
    assert tiny_family.why_not(edge + 1, 64, 64, {"tile_m": 16}) == (
        f"M must be at most {edge} ({tiny.MAX_M_TILES} tiles of 16 rows)"
    )
    assert tiny_family.supports(edge + 1, 64, 64)  # without a config, the tile bound is unknown
    for family in FAMILIES.values():
        assert family.why_not(7, 13, 17) == "N and K must be multiples of 8"
        assert family.why_not(2**31, 64, 64) == f"M, N and K must be at most {2**31 - 1}"
        assert family.why_not(0, 64, 64) == "M, N and K must be positive"


def test_family_flags_drive_the_checks_that_read_them() -> None:
    sm90, tiny = FAMILIES["cutlass_sm90"], FAMILIES["sm90_mma_tiny"]
    assert sm90.needs_cutlass and not tiny.needs_cutlass
    streamk = KernelConfig(128, 128, scheduler="streamk").to_dict()
    assert sm90.decompositions(streamk) == (0, 1, 2, 3)
    assert sm90.decompositions(KernelConfig(128, 128).to_dict()) == (0, 1)
    assert tiny.decompositions(TinyConfig(64, 64).to_dict()) == (0, 1, 2)
    # the tiny family sweeps split-K, never raster or swizzle
    variants = search_space.variants_for(64, 64, 16384, TinyConfig(64, 64).to_dict(), 132)
    assert all(v.raster == 0 and v.swizzle == 1 for v in variants)
    assert max(v.splits for v in variants) <= tiny.max_splits
    # the search keeps no candidate for a shape no family supports
    params = {"k": KernelConfig(128, 128).to_dict()}
    assert search_space.candidates(64, 60, 64, params) == []


def test_every_family_source_ships_and_stays_cutlass_free_where_it_says_so() -> None:
    for family in FAMILIES.values():
        for name in family.sources:
            assert templates.resource(name).is_file(), name
        text = family.render_tu(family.catalog())
        includes_cutlass = re.search(r'^#include [<"](cutlass|cute)/', text, re.M) is not None
        assert includes_cutlass == family.needs_cutlass, family.name


def test_c_status_tables_come_from_the_abi() -> None:
    enum = abi.status_enum()
    for code, (enumerator, _) in abi.STATUSES.items():
        assert f"{enumerator} = {code}" in enum
    for family in FAMILIES.values():
        assert enum in family.render_tu(family.catalog()[:1])
    from cuda_l2_explorer.tuner.materialize import status_string_cpp

    switch = status_string_cpp()
    assert all(f'case {code}: return "{name}";' in switch for code, name in abi.STATUS_NAMES.items())


def test_render_refuses_missing_and_unused_fields() -> None:
    with pytest.raises(KeyError, match="missing"):
        templates.render("tuner/csrc/entry_points.cuh")
    with pytest.raises(KeyError, match="unused"):
        templates.render("tuner/csrc/entry_points.cuh", name="x", other=1)
    assert "l2x_gemm_x_workspace" in templates.render("tuner/csrc/entry_points.cuh", name="x")


def _shipped(folder: str, patterns: tuple[str, ...]) -> set[str]:
    root = REPO / folder
    return {p.relative_to(REPO).as_posix() for pattern in patterns for p in root.glob(pattern)}


def test_every_template_file_ships_and_is_used() -> None:
    """What the sources name is what the wheel's package data holds (pyproject globs)."""
    shipped = _shipped("tuner", ("csrc/*.cu", "csrc/*.cuh", "export_templates/**/*.tmpl"))
    shipped |= _shipped("cutlass", ("*.cuh",))
    code = "\n".join(p.read_text() for p in (REPO / "tuner").glob("*.py"))
    code += (REPO / "explorer" / "engine" / "export" / "templates.py").read_text()
    for name in sorted(shipped):
        stem = name.removeprefix("tuner/export_templates/")
        assert name in code or stem in code, f"{name} is shipped but no module renders it"
        assert templates.resource(name).is_file()


def test_cutlass_pin_is_recorded_once_and_matches_the_extra() -> None:
    pin = families.pinned_cutlass()
    assert re.fullmatch(r"\d+\.\d+\.\d+\.\d+", pin)
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extra["tuner-build"] == [f"nvidia-cutlass=={pin}"]
    assert families.cutlass_series() == "4.2"


def test_cutlass_folder_is_data_not_the_cutlass_import_name() -> None:
    """From the repository root `import cutlass` finds no code of ours: the folder holds no Python
    (at most an empty namespace; a regular package elsewhere, nvidia-cutlass's, always wins)."""
    assert not list((REPO / "cutlass").glob("*.py"))
    assert files("cuda_l2_explorer.cutlass").joinpath("VERSION").is_file()
    probe = "import importlib.util; s = importlib.util.find_spec('cutlass'); print(s and s.origin)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    assert not out.stdout.strip().startswith(str(REPO / "cutlass")), out.stdout


def test_build_output_is_not_derived_from_the_package(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_L2_EXPLORER_TUNER_BUILD", raising=False)
    assert native.default_build_dir() == Path(".tuner-build")
    monkeypatch.setenv("CUDA_L2_EXPLORER_TUNER_BUILD", str(tmp_path / "b"))
    assert native.default_build_dir() == tmp_path / "b"
    monkeypatch.delenv("CUDA_L2_EXPLORER_TUNER_LIB", raising=False)
    (tmp_path / "b" / "lib").mkdir(parents=True)
    (tmp_path / "b" / "lib" / "x.so").write_bytes(b"")
    (tmp_path / "b" / "lib" / "latest.json").write_text('{"library": "x.so"}')
    assert native.default_library() == tmp_path / "b" / "lib" / "x.so"
