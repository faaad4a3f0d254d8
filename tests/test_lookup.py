"""Lookup semantics (SPEC §8): unit cases, property tests, and the store-backed path."""

import random

import pytest
from cuda_l2_explorer.db.shapes import GRID_VALUES, Shape
from cuda_l2_explorer.engine.lookup import Candidate, rank
from hypothesis import given, settings
from hypothesis import strategies as st

GRID_SMALL = (64, 128, 256, 512, 1024)


def cand(m, n, k, speedup=1.1, **kw):
    defaults = dict(set_id="s/h100_F32F16F16F32", gpu="h100", mode="offline", source="published")
    defaults.update(kw)
    return Candidate(shape=Shape(m, n, k), speedup_best=speedup, **defaults)


def test_exact_beats_covering_and_covering_ranks_by_waste():
    cands = [
        cand(2048, 2048, 2048, 1.5),
        cand(1024, 1024, 1024, 1.01),
        cand(1024, 1024, 2048, 1.2),
        cand(512, 512, 512, 2.0),
    ]
    result = rank(Shape(1024, 1024, 1024), cands)
    assert [r.tier for r in result.candidates] == ["exact", "covering", "covering"]
    assert result.candidates[0].candidate.shape == Shape(1024, 1024, 1024)
    assert result.candidates[1].candidate.shape == Shape(1024, 1024, 2048)  # less padding first
    assert result.covered


def test_off_grid_query_gets_smallest_covering_config():
    cands = [cand(m, n, k) for m in GRID_SMALL for n in GRID_SMALL for k in GRID_SMALL]
    result = rank(Shape(1000, 1000, 1000), cands)
    top = result.candidates[0]
    assert top.tier == "covering" and top.candidate.shape == Shape(1024, 1024, 1024)
    assert top.runs_at == "padded to 1024_1024_1024"
    assert "upper bound" in top.predicted_basis


def test_measured_time_outranks_volume_for_covering():
    slow_small = cand(1024, 1024, 1024, source="measured", kernel_s=50e-6, kernel_padded_s=60e-6)
    fast_big = cand(1024, 1024, 2048, source="measured", kernel_s=40e-6, kernel_padded_s=45e-6)
    result = rank(Shape(1000, 1000, 1000), [slow_small, fast_big])
    assert [r.candidate.shape for r in result.candidates] == [fast_big.shape, slow_small.shape]


def test_prediction_uses_measured_baseline_at_the_query_shape():
    baseline_row = cand(
        1000,
        1000,
        1000,
        source="measured",
        set_id="other",
        kernel_s=30e-6,
        best_baseline_s=36e-6,
        speedup=1.2,
    )
    covering = cand(1024, 1024, 1024, source="measured", kernel_s=25e-6, kernel_padded_s=30e-6)
    result = rank(Shape(1000, 1000, 1000), [covering, baseline_row])
    cover = next(r for r in result.candidates if r.tier == "covering")
    assert cover.predicted_speedup == pytest.approx(36 / 30)
    assert "with the padding copy" in cover.predicted_basis


def test_runtime_shape_kernels_run_at_the_true_shape():
    near = cand(1024, 1024, 1024, runtime_shapes=True, speedup=1.3)
    far = cand(4096, 4096, 4096, runtime_shapes=True, speedup=1.5)
    result = rank(Shape(1000, 1000, 1000), [far, near])
    assert [r.candidate for r in result.candidates] == [near, far]
    assert all(r.tier == "nearest" and r.runs_at == "your shape" for r in result.candidates)


def test_nothing_covers_says_so_and_shows_nearest():
    cands = [cand(m, n, k) for m in GRID_VALUES for n in (64, 128) for k in (64, 128)]
    result = rank(Shape(20000, 64, 64), cands, limit=3)
    assert not result.covered
    assert "nothing covers" in result.message and "M above the largest config" in result.message
    assert [r.tier for r in result.candidates] == ["uncovered"] * 3
    assert result.candidates[0].candidate.shape == Shape(16384, 64, 64)
    assert all(r.predicted_speedup is None for r in result.candidates)


def test_no_data():
    result = rank(Shape(1, 1, 1), [])
    assert result.candidates == [] and not result.covered


shapes = st.builds(
    Shape, st.sampled_from(GRID_SMALL), st.sampled_from(GRID_SMALL), st.sampled_from(GRID_SMALL)
)
queries = st.builds(Shape, st.integers(1, 1500), st.integers(1, 1500), st.integers(1, 1500))
candidates = st.lists(
    st.builds(
        Candidate,
        set_id=st.sampled_from(["a", "b"]),
        gpu=st.sampled_from(["h100", "h200"]),
        mode=st.sampled_from(["offline", "server"]),
        source=st.sampled_from(["published", "measured"]),
        shape=shapes,
        runtime_shapes=st.booleans(),
        speedup_best=st.floats(0.2, 3.0),
        kernel_s=st.one_of(st.none(), st.floats(1e-6, 1e-2)),
        kernel_padded_s=st.one_of(st.none(), st.floats(1e-6, 1e-2)),
    ),
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(queries, candidates)
def test_properties(query, cands):
    result = rank(query, cands, limit=None)
    tiers = [r.tier for r in result.candidates]
    # a covering answer always covers, and is padded; exact and nearest run at the true shape
    for r in result.candidates:
        if r.tier == "covering":
            assert r.candidate.shape.covers(query) and not r.candidate.runtime_shapes
        if r.tier == "exact":
            assert r.candidate.shape == query
    # exact beats covering beats nearest; uncovered only when nothing else exists
    order = {"exact": 0, "covering": 1, "nearest": 2, "uncovered": 3}
    assert tiers == sorted(tiers, key=order.get)
    assert ("uncovered" in tiers) == (not result.covered and bool(cands))
    # ranks are 1..n and every runnable candidate is listed
    assert [r.rank for r in result.candidates] == list(range(1, len(tiers) + 1))
    if result.covered:
        assert len(result.candidates) == sum(
            1 for c in cands if c.shape == query or c.runtime_shapes or c.shape.covers(query)
        )
    # ordering is stable: the same answer whatever the input order
    shuffled = list(cands)
    random.Random(len(cands)).shuffle(shuffled)
    again = rank(query, shuffled, limit=None)
    assert [r.record() for r in again.candidates] == [r.record() for r in result.candidates]


@settings(max_examples=100, deadline=None)
@given(queries, candidates, st.integers(1, 5))
def test_limit_is_a_prefix(query, cands, limit):
    full = rank(query, cands, limit=None).candidates
    assert [r.record() for r in rank(query, cands, limit=limit).candidates] == [
        r.record() for r in full[:limit]
    ]


def test_lookup_through_the_cli(cli, loaded_db):
    result = cli("--db", loaded_db, "lookup", "1000", "1000", "1000", "--json", "--mode", "offline")
    assert result.code == 0, result.err
    data = result.json()
    assert data["query"] == {"m": 1000, "n": 1000, "k": 1000}
    assert data["covered"] is True
    top = data["candidates"][0]
    assert (top["m"], top["n"], top["k"], top["tier"]) == (1024, 1024, 1024, "covering")
    assert top["predicted_speedup"] == pytest.approx(1.02)  # best baseline: auto-tuning-tn 1.020
    assert top["evidence"]["source"] == "published"
    assert top["evidence"]["from"].endswith("speedup_offline.csv")
    assert [c["tier"] for c in data["candidates"]] == ["covering"] * 4
    exact = cli("--db", loaded_db, "lookup", "64", "64", "64", "--json", "--mode", "server").json()
    assert exact["candidates"][0]["tier"] == "exact"
    assert exact["candidates"][0]["predicted_speedup"] == pytest.approx(1.375)
