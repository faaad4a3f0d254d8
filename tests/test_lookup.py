"""Lookup semantics (SPEC §8, issue 16): unit cases, property tests, and the store-backed path.

The answer names a winner: a kernel only when its prediction for your shape beats the best
baseline beyond the run-to-run spread, else "keep <baseline>"; one GPU and one accumulator at a
time; runtime-shape kernels only where their family's limits allow the shape.
"""

import dataclasses
import json
import os
import random
import stat

import pytest
from cuda_l2_explorer.db.shapes import GRID_VALUES, Shape
from cuda_l2_explorer.engine.lookup import BASELINE, Candidate, answer, choose_gpu, rank
from cuda_l2_explorer.tuner import tiny
from hypothesis import given, settings
from hypothesis import strategies as st

GRID_SMALL = (64, 128, 256, 512, 1024)
UPSTREAM = os.path.join(os.path.dirname(__file__), "data", "upstream")


def cand(m, n, k, speedup=1.1, **kw):
    """A published row by default (its outcome as the views give it: any ratio above 1 wins)."""
    defaults = dict(set_id="s/h100_F32F16F16F32", gpu="h100", mode="offline", source="published")
    defaults.update(kw)
    if "outcome" not in kw and defaults["source"] == "published":
        defaults["outcome"] = "win" if speedup > 1 else "loss" if speedup < 1 else "same"
    return Candidate(shape=Shape(m, n, k), speedup_best=speedup, **defaults)


def measured(m, n, k, kernel_us, baseline_us, spread=0.01, **kw):
    """A measured row: kernel and best-baseline medians with a +-spread p10/p90 (as the views do)."""
    k_s, b_s = kernel_us * 1e-6, baseline_us * 1e-6
    low, high = b_s * (1 - spread) / (k_s * (1 + spread)), b_s * (1 + spread) / (k_s * (1 - spread))
    defaults = dict(set_id="ours/h100_F32F16F16F32", runtime_shapes=True, family="cutlass_sm90", tile_m=128)
    defaults.update(kw)
    return cand(
        m, n, k, b_s / k_s, source="measured", kernel_s=k_s, kernel_p10_s=k_s * (1 - spread),
        kernel_p90_s=k_s * (1 + spread), best_baseline_s=b_s, baseline_p10_s=b_s * (1 - spread),
        baseline_p90_s=b_s * (1 + spread), best_baseline="cuBLASLt-auto-tuning-tn",
        outcome="win" if low > 1 else "loss" if high < 1 else "same", **defaults,
    )  # fmt: skip


def kernels(result):
    return [r for r in result.candidates if r.tier != BASELINE]


def test_exact_beats_covering_and_covering_ranks_by_waste():
    cands = [
        cand(2048, 2048, 2048, 1.5),
        cand(1024, 1024, 1024, 1.01),
        cand(1024, 1024, 2048, 1.2),
        cand(512, 512, 512, 2.0),
    ]
    result = rank(Shape(1024, 1024, 1024), cands)
    assert [r.tier for r in kernels(result)] == ["exact", "covering", "covering"]
    assert result.candidates[0].candidate.shape == Shape(1024, 1024, 1024)
    assert kernels(result)[1].candidate.shape == Shape(1024, 1024, 2048)  # less padding first
    assert result.covered


def test_off_grid_query_gets_smallest_covering_config():
    cands = [cand(m, n, k) for m in GRID_SMALL for n in GRID_SMALL for k in GRID_SMALL]
    result = rank(Shape(1000, 1000, 1000), cands)
    top = kernels(result)[0]
    assert top.tier == "covering" and top.candidate.shape == Shape(1024, 1024, 1024)
    assert top.runs_at == "padded to 1024_1024_1024"
    assert "upper bound" in top.predicted_basis


def test_measured_time_outranks_volume_for_covering():
    slow_small = cand(1024, 1024, 1024, source="measured", kernel_s=50e-6, kernel_padded_s=60e-6)
    fast_big = cand(1024, 1024, 2048, source="measured", kernel_s=40e-6, kernel_padded_s=45e-6)
    result = rank(Shape(1000, 1000, 1000), [slow_small, fast_big])
    assert [r.candidate.shape for r in kernels(result)] == [fast_big.shape, slow_small.shape]


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
    assert [r.candidate for r in kernels(result)] == [near, far]
    assert all(r.tier == "nearest" and r.runs_at == "your shape" for r in kernels(result))


def test_nothing_covers_says_so_and_shows_nearest():
    cands = [cand(m, n, k) for m in GRID_VALUES for n in (64, 128) for k in (64, 128)]
    result = rank(Shape(20000, 64, 64), cands, limit=4)
    assert not result.covered
    assert "nothing covers" in result.message and "M above the largest config" in result.message
    assert [r.tier for r in result.candidates] == [BASELINE, "uncovered", "uncovered", "uncovered"]
    assert result.candidates[1].candidate.shape == Shape(16384, 64, 64)
    assert all(r.predicted_speedup is None for r in kernels(result))
    assert result.answer.startswith("keep ") and "no kernel here can run 20000_64_64" in result.answer


def test_no_data():
    result = rank(Shape(1, 1, 1), [])
    assert result.candidates == [] and not result.covered and "no data" in result.answer


# ---------------------------------------------------------------------------- the baseline


def test_a_measured_win_beyond_the_spread_is_the_answer():
    win = measured(1024, 1024, 1024, kernel_us=10.0, baseline_us=12.0)
    result = rank(Shape(1024, 1024, 1024), [win])
    top = result.candidates[0]
    assert top.tier == "exact" and top.beats_baseline and not result.keep_baseline
    assert top.predicted_low == pytest.approx(12 * 0.99 / (10 * 1.01))
    assert top.predicted_high == pytest.approx(12 * 1.01 / (10 * 0.99))
    assert [r.tier for r in result.candidates] == ["exact", BASELINE]
    assert result.answer.startswith("use ours/h100_F32F16F16F32 1024_1024_1024 (exact")
    assert "1.200x [1.176-1.224]" in result.answer


def test_a_win_inside_the_spread_keeps_the_baseline():
    same = measured(1024, 1024, 1024, kernel_us=10.0, baseline_us=10.3, spread=0.05)
    result = rank(Shape(1024, 1024, 1024), [same])
    assert result.keep_baseline and [r.tier for r in result.candidates] == [BASELINE, "exact"]
    keep = result.candidates[0]
    assert keep.candidate.best_baseline == "cuBLASLt-auto-tuning-tn" and keep.predicted_speedup == 1.0
    assert result.answer.startswith(
        "keep cuBLASLt-auto-tuning-tn (10.30 us of device time at your shape, measured on h100"
    )
    assert (
        "best measured kernel here is ours/h100_F32F16F16F32 1024_1024_1024 (exact) at 1.030x"
        in result.answer
    )
    assert "(device time) over cuBLASLt-auto-tuning-tn" in result.answer and result.measure is None
    assert "not faster beyond the run-to-run spread" in result.answer


def test_an_upper_bound_never_beats_the_baseline():
    result = rank(Shape(1000, 1000, 1000), [cand(1024, 1024, 1024, 1.3)])
    assert result.keep_baseline
    bound = kernels(result)[0]
    assert bound.predicted_low is None and bound.predicted_high == pytest.approx(1.3)
    assert "upper bound" in bound.predicted_basis
    assert (
        "no kernel here was measured: s/h100_F32F16F16F32 1024_1024_1024 (covering) at <= 1.300x"
        in result.answer
    )
    assert result.measure in result.answer and "--mnk 1024_1024_1024 --mode offline" in result.measure


def test_a_published_bound_is_never_weighed_against_a_measured_device_time():
    """The baseline's figure is a measured device time; the reference set's covering kernel has
    only a published (host-timed) upper bound. The answer weighs the measured kernel against the
    baseline and says the published one is only published, with the command that would measure
    it; the ranking lists every measured kernel before the published ones."""
    query = Shape(4096, 14336, 4096)
    ours = measured(4096, 16384, 4096, kernel_us=830.0, baseline_us=790.0)
    published = cand(4096, 16384, 4096, 1.05, set_id="cuda-l2/h100_F32F16F16F32", best_baseline="cuBLAS-tn")
    result = rank(query, [published, ours])
    assert [(r.tier, r.candidate) for r in result.candidates[1:]] == [
        ("nearest", ours),
        ("covering", published),
    ]
    command = (
        "cuda-l2-explorer bench --set <checkout>/kernels/h100_F32F16F16F32 --set-name cuda-l2 "
        "--mnk 4096_16384_4096 --mode offline"
    )
    assert result.answer == (
        "keep cuBLASLt-auto-tuning-tn (790.00 us of device time at 4096_16384_4096, measured on h100 "
        "offline); best measured kernel here is ours/h100_F32F16F16F32 4096_16384_4096 (nearest) at "
        "0.952x [0.933-0.971] (device time) over cuBLASLt-auto-tuning-tn: slower; "
        "cuda-l2/h100_F32F16F16F32 4096_16384_4096 (covering) at <= 1.050x (published, host-timed) over "
        f"cuBLAS-tn is only published, not measured here: measure it with `{command}`"
    )
    assert result.measure == command
    records = [r.record() for r in result.candidates]
    assert [r["metric"] for r in records] == ["device_time", "device_time", "published"]
    assert [r["evidence"]["metric"] for r in records] == ["device_time", "device_time", "published"]
    # a published claim of no win beside a measured kernel is not worth a command
    modest = cand(4096, 16384, 4096, 0.9, set_id="cuda-l2/h100_F32F16F16F32")
    quiet = rank(query, [modest, ours])
    assert "only published" not in quiet.answer and quiet.measure is None


def test_a_published_win_leads_only_where_nothing_was_measured_and_says_so():
    """With no measurement on the GPU, the reference system's published win is the advice (and the
    answer says it is only published); where the best baseline was measured, a published win (no
    spread: not a win beyond the noise) ranks after keeping the measured baseline."""
    win = cand(64, 64, 64, 1.25, set_id="cuda-l2/h100_F32F16F16F32", best_baseline="cuBLAS-nn")
    alone = rank(Shape(64, 64, 64), [win])
    assert alone.winner.candidate is win
    assert alone.answer.startswith(
        "use cuda-l2/h100_F32F16F16F32 64_64_64 (exact, runs at your shape): predicted 1.250x "
        "(published, host-timed) over cuBLAS-nn on h100 offline"
    )
    assert alone.answer.endswith(f"only published, not measured here: measure it with `{alone.measure}`")
    assert alone.to_json()["measure"] == alone.measure and "--mnk 64_64_64" in alone.measure
    result = rank(Shape(64, 64, 64), [win, measured(64, 64, 64, 5.0, 4.0)])
    assert result.keep_baseline
    assert [r.tier for r in result.candidates] == [BASELINE, "exact", "exact"]
    assert result.candidates[2].candidate is win
    assert result.answer.startswith("keep cuBLASLt-auto-tuning-tn (4.00 us of device time at your shape")
    assert result.answer.endswith(f"only published, not measured here: measure it with `{result.measure}`")
    # on another GPU (nothing measured there) it still leads its own group
    other = cand(64, 64, 64, 1.25, gpu="a100", set_id="cuda-l2/a100_F32F16F16F32", best_baseline="cuBLAS-nn")
    mixed = rank(Shape(64, 64, 64), [other, win, measured(64, 64, 64, 5.0, 4.0)])
    assert mixed.candidates[0].candidate is other


def test_a_win_measured_far_away_is_not_an_estimate_for_your_shape():
    """A runtime-shape set loses at your shape; one of its kernels won at a far config. The answer
    keeps the baseline; the far win is listed after it, not first."""
    query = Shape(8192, 8192, 8192)
    lose_here = measured(8192, 8192, 8192, kernel_us=1700.0, baseline_us=1645.0)
    win_far = measured(2048, 4096, 1024, kernel_us=28.0, baseline_us=31.0)
    result = rank(query, [win_far, lose_here])
    assert [(r.tier, r.candidate) for r in result.candidates] == [
        (BASELINE, result.candidates[0].candidate),
        ("exact", lose_here),
        ("nearest", win_far),
    ]
    assert result.candidates[0].candidate.shape == query  # the figure is the one at your shape


def test_the_nearest_config_of_a_runtime_shape_set_is_its_estimate():
    query = Shape(4096, 14336, 4096)
    nearest_win = measured(4096, 16384, 4096, kernel_us=800.0, baseline_us=850.0)
    farther_loss = measured(4096, 12288, 4096, kernel_us=700.0, baseline_us=650.0)
    result = rank(query, [farther_loss, nearest_win])
    assert result.candidates[0].candidate is nearest_win and result.candidates[0].tier == "nearest"
    assert "estimate" in result.candidates[0].predicted_basis
    # the same set losing at its nearest config keeps the baseline, however it does farther away
    nearest_loss = measured(4096, 16384, 4096, kernel_us=900.0, baseline_us=850.0)
    farther_win = measured(4096, 12288, 4096, kernel_us=600.0, baseline_us=650.0)
    result = rank(query, [farther_win, nearest_loss])
    assert result.keep_baseline
    keep = result.candidates[0].candidate
    assert keep.shape == Shape(4096, 16384, 4096) and keep.best_baseline_s == pytest.approx(850e-6)


def test_one_baseline_entry_per_gpu_and_mode():
    cands = [
        measured(64, 64, 64, 4.0, 5.0, gpu="h100"),
        measured(64, 64, 64, 4.0, 3.0, gpu="h200"),
        measured(64, 64, 64, 4.0, 3.0, gpu="h200", mode="server"),
    ]
    result = rank(Shape(64, 64, 64), cands, limit=None)
    baselines = [(r.candidate.gpu, r.candidate.mode) for r in result.candidates if r.tier == BASELINE]
    assert baselines == [("h100", "offline"), ("h200", "offline"), ("h200", "server")]
    assert result.candidates[0].candidate.gpu == "h100" and result.candidates[0].tier == "exact"


# ---------------------------------------------------------------------------- family limits


@pytest.mark.parametrize("query", [Shape(1, 1, 1), Shape(7, 13, 17), Shape(64, 60, 64), Shape(64, 64, 63)])
def test_runtime_shape_kernels_honour_their_family_alignment(query):
    ours = [measured(m, 64, 64, 4.0, 5.0) for m in (64, 128)]
    covering = cand(64, 64, 64, 1.2, set_id="cuda-l2/h100_F32F16F16F32")
    result = rank(query, [*ours, covering], limit=None)
    assert all(r.tier != "nearest" for r in result.candidates)
    unfit = [r for r in result.candidates if r.candidate in ours]
    assert unfit == [] or all(r.tier == "uncovered" for r in unfit)
    assert "2 runtime-shape kernel(s) cannot run it" in result.message
    assert ours[0].why_not(query) == "N and K must be multiples of 8 (family cutlass_sm90)"
    # nothing runnable but the published covering row, an upper bound: keep the baseline
    assert result.keep_baseline and kernels(result)[0].candidate is covering
    # with nothing covering either, the answer says why our kernels cannot run it
    alone = rank(query, ours)
    assert not alone.covered and "multiples of 8" in alone.candidates[1].predicted_basis


def test_the_tiny_family_declares_its_grid_limit_on_m():
    tile_m = 16
    edge = tiny.MAX_M_TILES * tile_m
    fits = measured(64, 64, 64, 4.0, 5.0, family=tiny.TINY_FAMILY, tile_m=tile_m)
    assert fits.why_not(Shape(edge, 64, 64)) is None
    assert fits.why_not(Shape(edge + 1, 64, 64)) == (
        f"M must be at most {edge} ({tiny.MAX_M_TILES} tiles of {tile_m} rows) (family {tiny.TINY_FAMILY})"
    )
    assert rank(Shape(edge + 1, 64, 64), [fits]).candidates[1].tier == "uncovered"


# ---------------------------------------------------------------------------- one GPU


def test_choose_gpu_prefers_this_machine_then_measured_rows():
    rows = [
        cand(64, 64, 64, gpu="a100"),
        cand(128, 64, 64, gpu="a100"),
        cand(64, 64, 64, gpu="3090"),
        measured(64, 64, 64, 4.0, 5.0),
    ]
    query = Shape(64, 64, 64)
    assert choose_gpu(query, rows, "a100") == ("a100", "this machine's GPU")
    gpu, why = choose_gpu(query, rows, None)
    assert (gpu, why) == ("h100", "most measured rows for this shape: 1")
    gpu, why = choose_gpu(query, rows, "l40s")  # this machine's GPU has no data: said so
    assert gpu == "h100" and why.endswith("this machine's l40s has none")
    assert choose_gpu(query, rows[:3], None) == ("a100", "most rows for this shape: 2")


def test_answer_never_mixes_gpus_unless_asked():
    h100 = measured(64, 64, 64, 5.0, 4.0)
    a100 = cand(64, 64, 64, 1.4, gpu="a100", set_id="cuda-l2/a100_F32F16F16F32")
    result = answer(Shape(64, 64, 64), [a100, h100], machine_gpu="h100")
    assert {r.candidate.gpu for r in result.candidates} == {"h100"} and result.keep_baseline
    assert result.gpu == "h100" and result.gpu_choice == "this machine's GPU"
    assert result.notes == ["rows of a100 left out (another GPU: --gpu G or --any-gpu)"]
    assert "64_64_64 on h100 (this machine's GPU), any mode" in result.scope()
    mixed = answer(Shape(64, 64, 64), [a100, h100], any_gpu=True, machine_gpu="h100")
    assert {r.candidate.gpu for r in mixed.candidates} == {"h100", "a100"} and mixed.gpu is None
    assert mixed.candidates[0].candidate is a100  # the published exact win, on another GPU


# ---------------------------------------------------------------------------- properties

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
        best_baseline_s=st.one_of(st.none(), st.floats(1e-6, 1e-2)),
        outcome=st.sampled_from([None, "win", "loss", "same"]),
        family=st.sampled_from([None, "cutlass_sm90"]),
    ),
    max_size=25,
)
ORDER = {"exact": 0, "covering": 1, "nearest": 2, "uncovered": 3}


@settings(max_examples=300, deadline=None)
@given(queries, candidates)
def test_properties(query, cands):
    result = rank(query, cands, limit=None)
    entries = result.candidates
    # a covering answer always covers, and is padded; exact and nearest run at the true shape
    for r in entries:
        if r.tier == "covering":
            assert r.candidate.shape.covers(query) and not r.candidate.runtime_shapes
        if r.tier == "exact":
            assert r.candidate.shape == query
        if r.tier == "nearest":
            assert r.candidate.runtime_shapes and r.candidate.why_not(query) is None
    # winners (beyond the spread) first, then one baseline per GPU and mode, then the rest;
    # each part in tier order; uncovered only when nothing else exists
    groups = {(c.gpu, c.mode) for c in cands if not result.covered or (_runs(query, c))}
    first_baseline = next((i for i, r in enumerate(entries) if r.tier == BASELINE), len(entries))
    winners = entries[:first_baseline]
    assert all(r.beats_baseline for r in winners)
    # a published win never leads where a runnable row measured the best baseline (same GPU, mode)
    measured_groups = {
        (c.gpu, c.mode) for c in cands if c.source == "measured" and c.best_baseline_s and _runs(query, c)
    }
    leading = {(r.candidate.gpu, r.candidate.mode) for r in winners if r.candidate.source == "published"}
    assert not leading & measured_groups
    assert [r.tier for r in winners] == sorted((r.tier for r in winners), key=ORDER.get)
    baselines = [(r.candidate.gpu, r.candidate.mode) for r in entries if r.tier == BASELINE]
    assert baselines == sorted(groups)
    rest = [r for r in entries[first_baseline:] if r.tier != BASELINE]
    if result.covered:  # the measured kernels, then those only published, each in tier order
        published = [r.candidate.source == "published" for r in rest]
        assert published == sorted(published)
    for part in ("measured", "published") if result.covered else (None,):
        tiers = [r.tier for r in rest if part in (None, r.candidate.source)]
        assert tiers == sorted(tiers, key=ORDER.get)
    assert ("uncovered" in [r.tier for r in rest]) == (not result.covered and bool(cands))
    # the answer names the top entry
    if entries:
        assert result.answer.startswith("keep " if entries[0].tier == BASELINE else "use ")
    # ranks are 1..n and every runnable candidate is listed
    assert [r.rank for r in entries] == list(range(1, len(entries) + 1))
    if result.covered:
        assert sum(1 for r in entries if r.tier != BASELINE) == sum(1 for c in cands if _runs(query, c))
    # ordering is stable: the same answer whatever the input order
    shuffled = list(cands)
    random.Random(len(cands)).shuffle(shuffled)
    again = rank(query, shuffled, limit=None)
    assert [r.record() for r in again.candidates] == [r.record() for r in entries]
    assert again.answer == result.answer


def _runs(query: Shape, c: Candidate) -> bool:
    if c.shape == query:
        return True
    return c.why_not(query) is None if c.runtime_shapes else c.shape.covers(query)


@settings(max_examples=100, deadline=None)
@given(queries, candidates, st.integers(1, 5))
def test_limit_is_a_prefix(query, cands, limit):
    full = rank(query, cands, limit=None)
    short = rank(query, cands, limit=limit)
    assert [r.record() for r in short.candidates] == [r.record() for r in full.candidates[:limit]]
    assert short.answer == full.answer


# ---------------------------------------------------------------------------- the store and the CLI


def test_lookup_through_the_cli(cli, loaded_db):
    result = cli("--db", loaded_db, "lookup", "1000", "1000", "1000", "--json", "--mode", "offline")
    assert result.code == 0, result.err
    data = result.json()
    assert data["query"] == {"m": 1000, "n": 1000, "k": 1000}
    assert data["covered"] is True and data["keep_baseline"] is True and data["gpu"] == "h100"
    assert data["answer"].startswith("keep cuBLASLt-auto-tuning-tn")
    keep, top = data["candidates"][:2]
    assert keep["tier"] == BASELINE and keep["baseline"] == "cuBLASLt-auto-tuning-tn"
    assert (top["m"], top["n"], top["k"], top["tier"]) == (1024, 1024, 1024, "covering")
    assert top["predicted_speedup"] == pytest.approx(1.02)  # best baseline: auto-tuning-tn 1.020
    assert top["predicted_low"] is None and top["predicted_high"] == pytest.approx(1.02)
    assert top["evidence"]["source"] == "published"
    assert top["evidence"]["from"].endswith("speedup_offline.csv")
    assert [c["tier"] for c in data["candidates"]] == [BASELINE] + ["covering"] * 4
    exact = cli("--db", loaded_db, "lookup", "64", "64", "64", "--json", "--mode", "server").json()
    assert exact["candidates"][0]["tier"] == "exact" and exact["mode"] == "server"
    assert exact["candidates"][0]["predicted_speedup"] == pytest.approx(1.375)
    text = cli("--db", loaded_db, "lookup", "64", "64", "64", "--mode", "server")
    assert text.out.startswith("answer: use cuda-l2/h100_F32F16F16F32 64_64_64 (exact")
    assert (
        "64_64_64 on h100 (most rows for this shape: " in text.err and "server, fp32 accumulation" in text.err
    )


def test_lookup_rows_carry_the_speedups_views_figures():
    """The narrow lookup query gives each row the figures of the ``speedups`` view (the bundled
    dataset: measured device times and published ratios), and names the fastest baseline."""
    from cuda_l2_explorer.db import reads
    from cuda_l2_explorer.db.store import Store

    with Store.open(None, read_only=True, with_bundled=True) as store:
        rows = reads.lookup_rows(store, reads.Filters())
        view = store.con.execute(
            "SELECT set_id, gpu, mode, source, m, n, k, run_id, min(speedup), arg_min(baseline, speedup), "
            "max(speedup) FILTER (WHERE baseline = 'best-baseline'), "
            "max(outcome) FILTER (WHERE baseline = 'best-baseline'), "
            "max(kernel_s) FILTER (WHERE baseline = 'best-baseline'), "
            "max(baseline_s) FILTER (WHERE baseline = 'best-baseline') "
            "FROM speedups WHERE baseline NOT LIKE '%-max' AND baseline <> 'best-baseline' OR "
            "baseline = 'best-baseline' GROUP BY ALL"
        ).fetchall()
        baselines = store.con.execute(
            "SELECT run_id, m, n, k, implementation, median FROM measured_times "
            "WHERE implementation <> 'kernel' AND NOT padded"
        ).fetchall()
    expected = {row[:8]: row[8:] for row in view}
    assert len(rows) == len(expected) > 2000
    sources = set()
    for r in rows:
        key = tuple(r[c] for c in ("set_id", "gpu", "mode", "source", "m", "n", "k", "run_id"))
        best, _, speedup, outcome, kernel_s, baseline_s = expected[key]
        assert r["speedup_best"] == pytest.approx(speedup) == pytest.approx(best)
        assert (r["outcome"], r["kernel_s"], r["best_baseline_s"]) == (outcome, kernel_s, baseline_s)
        sources.add(r["source"])
    assert sources == {"measured", "published"}
    fastest: dict[tuple, list] = {}
    for run, m, n, k, name, median in baselines:
        fastest.setdefault((run, m, n, k), []).append((median, name))
    by_config = {(r["run_id"], r["m"], r["n"], r["k"]): r["best_baseline"] for r in rows}
    # Every measured row names the fastest of its config's baselines. Configs whose kernel has no
    # ratio (it escaped graph capture, timed out or failed to build: SPEC 7 shows those apart)
    # have baselines but no lookup row.
    measured_keys = {(r["run_id"], r["m"], r["n"], r["k"]) for r in rows if r["source"] == "measured"}
    assert len(measured_keys) > 2000 and measured_keys <= set(fastest)
    assert all(by_config[c] == min(fastest[c])[1] for c in measured_keys)


def test_equally_fast_baselines_resolve_to_the_first_name(db_path):
    """Two baselines with the same median: the best is named by the first name, the same every
    time (an arbitrary pick named either, query by query)."""
    from cuda_l2_explorer.db import reads
    from cuda_l2_explorer.db.store import Store

    configs = {(64 * i, 64, 64): (10.0, 8.0) for i in range(1, 9)}
    with Store.open(db_path) as store, store.transaction():
        _tuned_set_measured(store, configs)
        tied = [
            ("t1", m, n, k, "torch.matmul", "device_time", "s", 20, 8e-6, 7.9e-6, 8.1e-6, "ok")
            for m, n, k in configs
        ]
        columns = "run_id m n k implementation metric unit n_samples median p10 p90 status".split()
        store.insert_rows("measurements", columns, tied)
    with Store.open(db_path, read_only=True, with_bundled=False) as store:
        rows = reads.lookup_rows(store, reads.Filters())
    assert len(rows) == len(configs)
    assert {r["best_baseline"] for r in rows} == {"cuBLASLt-auto-tuning-tn"}  # before torch.matmul


def test_lookup_reads_only_the_views_it_needs():
    """``lookup`` opens the store with lazy views: the five tables it reads, no derived view, and
    the same answer as a store with every view."""
    from cuda_l2_explorer.db import reads
    from cuda_l2_explorer.db.store import Store
    from cuda_l2_explorer.engine.lookup import lookup, open_lookup_store

    query = Shape(1000, 1000, 1000)
    with Store.open(None, read_only=True, with_bundled=True) as store:
        full = lookup(store, query, gpu="h100", machine_gpu=None).to_json()
    with open_lookup_store(None, with_bundled=True) as store:
        lazy = lookup(store, query, gpu="h100", machine_gpu=None).to_json()
        made = {
            r[0] for r in store.con.execute("SELECT view_name FROM duckdb_views() WHERE temporary").fetchall()
        }
    assert lazy == full and lazy["candidates"]
    assert {f"all_{t}" for t in reads.LOOKUP_TABLES} <= made
    assert not made & {"speedups", "measured_times", "all_samples", "all_search_log"}


def _few_rows(name: str, folder, configs=("64_64_64", "4096_16384_4096", "8192_16384_8192")):
    """The upstream CSV ``name`` cut to a few configs (a whole file takes seconds to import)."""
    lines = open(os.path.join(UPSTREAM, name)).read().splitlines()
    target = folder / name
    target.write_text(
        "\n".join([lines[0], *(line for line in lines if line.split(",")[0] in configs)]) + "\n"
    )
    return target


def test_fp16_sets_are_never_offered_for_fp32(cli, db_path, tmp_path):
    fp16 = _few_rows("cuda_l2_a100_F16F16F16F16_speedup_offline.csv", tmp_path)
    fp32 = _few_rows("cuda_l2_a100_F32F16F16F32_speedup_offline.csv", tmp_path)
    assert cli("--db", db_path, "-q", "import-results", fp16, fp32).code == 0
    data = cli("--db", db_path, "lookup", "4096", "14336", "4096", "--json", "--any-gpu").json()
    assert data["accumulator"] == "F32F16F16F32"
    assert {c["set_id"] for c in data["candidates"] if c["tier"] != BASELINE} == {"cuda-l2/a100_F32F16F16F32"}
    assert any("--accumulator fp16" in note for note in data["notes"])
    fp16_answer = cli("--db", db_path, "lookup", "4096", "14336", "4096", "--json", "--accumulator", "fp16")
    data = fp16_answer.json()
    assert {c["set_id"] for c in data["candidates"] if c["tier"] != BASELINE} == {"cuda-l2/a100_F16F16F16F16"}
    # a set that accumulates in fp16, named with --set, is looked up as such
    named = cli("--db", db_path, "lookup", "64", "64", "64", "--json", "--set", "cuda-l2/a100_F16F16F16F16")
    assert named.json()["accumulator"] == "F16F16F16F16"
    bad = cli("--db", db_path, "lookup", "64", "64", "64", "--accumulator", "tf32")
    assert bad.code == 2 and "--accumulator must be fp32 or fp16" in bad.err


def test_this_machines_gpu_is_the_default(cli, db_path, tmp_path, monkeypatch):
    """The driver's tool names this machine's GPU; a script in its place on PATH stands in for a
    GPU on this CPU machine (the GPU tests check the real one)."""
    h100 = _few_rows("cuda_l2_h100_F32F16F16F32_speedup_offline.csv", tmp_path)
    a100 = _few_rows("cuda_l2_a100_F32F16F16F32_speedup_offline.csv", tmp_path)
    assert cli("--db", db_path, "-q", "import-results", h100, a100).code == 0
    tool = tmp_path / "bin" / "nvidia-smi"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho 'NVIDIA A100-SXM4-80GB'\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tool.parent}{os.pathsep}{os.environ['PATH']}")
    data = cli("--db", db_path, "lookup", "64", "64", "64", "--json").json()
    assert (data["gpu"], data["gpu_choice"]) == ("a100", "this machine's GPU")
    assert {c["gpu"] for c in data["candidates"]} == {"a100"}
    asked = cli("--db", db_path, "lookup", "64", "64", "64", "--json", "--gpu", "h100").json()
    assert (asked["gpu"], asked["gpu_choice"]) == ("h100", "asked for")
    tool.write_text("#!/bin/sh\necho 'No devices were found' >&2\nexit 6\n")  # a driver, no GPU
    data = cli("--db", db_path, "lookup", "64", "64", "64", "--json").json()
    assert data["gpu_choice"] == "most rows for this shape: 3"  # every config covers 64_64_64


# ---------------------------------------------------------------------------- calibration


def _tuned_set_measured(store, measured: dict) -> None:
    """A tuned set of ours (as `tune` records it) with one bench run: per config the kernel's and
    the best baseline's medians (us), each with a +-1% p10/p90."""
    from cuda_l2_explorer.tuner.catalog import KernelConfig

    params = json.dumps({"kernel": KernelConfig(128, 128).to_dict(), "variant": {}, "kernel_name": "k"})
    store.con.execute(
        "INSERT INTO kernel_sets (set_id, name, gpu, accumulator, origin) "
        "VALUES ('tuned/h100_F32F16F16F32', 'tuned', 'h100', 'F32F16F16F32', 'ours')"
    )
    store.con.execute(
        "INSERT INTO runs (run_id, kind, set_id, gpu, mode, status, tool_version) "
        "VALUES ('t1', 'bench', 'tuned/h100_F32F16F16F32', 'h100', 'offline', 'complete', 'test')"
    )
    rows = []
    for (m, n, k), (kernel_us, baseline_us) in measured.items():
        store.con.execute(
            "INSERT INTO kernels (kernel_id, set_id, m, n, k, runtime_shapes, family, params) "
            "VALUES (?, 'tuned/h100_F32F16F16F32', ?, ?, ?, true, 'cutlass_sm90', ?)",
            [f"tuned:{m}_{n}_{k}", m, n, k, params],
        )
        for impl, us in (("kernel", kernel_us), ("cuBLASLt-auto-tuning-tn", baseline_us)):
            s = us * 1e-6
            rows.append(("t1", m, n, k, impl, "device_time", "s", 20, s, s * 0.99, s * 1.01, "ok"))
    columns = "run_id m n k implementation metric unit n_samples median p10 p90 status".split()
    store.insert_rows("measurements", columns, rows)


def test_calibration_sets_each_tuned_config_beside_what_lookup_predicts_without_it(cli, db_path, tmp_path):
    """Each prediction comes from the other measured rows (device time, as the measurement), never
    from a published ratio (the reference system's host timing), even one that covers the shape."""
    from cuda_l2_explorer.db.store import Store
    from cuda_l2_explorer.engine.lookup import calibration

    published = _few_rows("cuda_l2_h100_F32F16F16F32_speedup_offline.csv", tmp_path, ("8192_8192_8192",))
    assert cli("--db", db_path, "-q", "import-results", published).code == 0
    measured = {
        (1024, 1024, 1024): (10.0, 12.0),
        (1024, 1024, 2048): (20.0, 21.0),
        (4096, 4096, 4096): (50.0, 45.0),
        (8192, 8192, 4096): (100.0, 80.0),
    }
    with Store.open(db_path) as store, store.transaction():
        _tuned_set_measured(store, measured)
    with Store.open(db_path, read_only=True, with_bundled=False) as store:
        report = calibration(store)
        just_one = calibration(store, shapes=[Shape(1024, 1024, 1024)])
    by_shape = {str(p.shape): p for p in report.points}
    assert set(by_shape) == {"1024_1024_1024", "1024_1024_2048", "4096_4096_4096", "8192_8192_4096"}
    # The published 8192^3 covers these two, but their predictions come from each other's rows.
    assert by_shape["4096_4096_4096"].predicted.speedup == pytest.approx(0.8)
    assert by_shape["8192_8192_4096"].predicted.speedup == pytest.approx(0.9)
    point = by_shape["1024_1024_1024"]  # predicted from its nearest other config, 1024_1024_2048
    assert point.predicted.speedup == pytest.approx(21 / 20) and point.measured == pytest.approx(1.2)
    assert "tuned/h100_F32F16F16F32 1024_1024_2048 (nearest)" in point.predicted_from and not point.inside
    assert all(p.metric == "device_time" and "cuda-l2" not in p.predicted_from for p in report.points)
    assert point.text().startswith(
        "1024_1024_1024 on h100 offline, device_time ratios: lookup predicted 1.050x [1.029-1.071]"
    )
    assert point.text().endswith("measured 1.200x [1.176-1.224] (outside the prediction)")
    ratios = [1.2 / 1.05, 1.05 / 1.2, 0.9 / 0.8, 0.8 / 0.9]
    assert report.summary() == (
        "predictor calibration over 4 tuned config(s), device_time ratios: measured/predicted geomean "
        f"1.000 (from {min(ratios):.3f} to {max(ratios):.3f}), 0 of 4 inside the predicted interval"
    )
    assert [str(p.shape) for p in just_one.points] == ["1024_1024_1024"]


def test_a_covering_config_far_larger_than_the_shape_is_bounded_by_the_baseline_nearby():
    """1000^3 on the bundled data once got 'best measured kernel: cuda-l2 12288_4096_4096
    (covering) at <= 0.854x': that config's own ratio, while its kernel runs 664 us against the
    baseline's 6.5 us at 1024^3. A baseline at a smaller covering config bounds the ratio, and
    the answer names the measured kernel with the best prediction for the shape."""
    query = Shape(1000, 1000, 1000)
    huge = measured(
        12288, 4096, 4096, 664.0, 567.0, set_id="ref/h100_F32F16F16F32", runtime_shapes=False, family=None
    )
    near = measured(1024, 1024, 1024, 6.73, 6.46)
    result = rank(query, [huge, near])
    by_shape = {str(r.candidate.shape): r for r in kernels(result)}
    assert by_shape["12288_4096_4096"].predicted_speedup == pytest.approx(6.46 / 664.0, rel=1e-6)
    assert "smallest measured config covering your shape" in by_shape["12288_4096_4096"].predicted_basis
    assert "ours/h100_F32F16F16F32 1024_1024_1024 (nearest) at 0.960x" in result.answer


def test_the_keep_figure_is_the_nearest_baseline_even_where_that_kernel_cannot_run_your_shape():
    """64x64x7 on the bundled data once said 'keep cuBLASLt-auto-tuning-nn (125.58 us of device
    time at 12288_12288_128)': the nearest baseline among the rows whose kernels could run K = 7
    (a reference set's covering configs), while our set had the baseline measured at 64x64x64 and
    its kernels, needing K % 8 == 0, were left out. The baseline's time is a fact of the GPU, not
    of the kernel beside it: the nearest measured one is the figure."""
    query = Shape(64, 64, 7)
    ours = measured(64, 64, 64, 2.2, 2.57)  # runtime shapes, K a multiple of 8: cannot run K = 7
    far = measured(
        12288, 12288, 128, 150.0, 125.58, set_id="ref/h100_F32F16F16F32", runtime_shapes=False, family=None
    )
    far = dataclasses.replace(far, best_baseline="cuBLASLt-heuristic-tn")
    result = rank(query, [ours, far])
    assert result.keep_baseline
    keep = result.candidates[0]
    assert keep.tier == BASELINE and keep.candidate.shape == Shape(64, 64, 64)
    assert "keep cuBLASLt-auto-tuning-tn (2.57 us of device time at 64_64_64" in result.answer
    assert all(r.candidate is not ours for r in kernels(result) if r.tier != "uncovered")
    # The covering kernel's bound is over the baseline at 64x64x64 (covering your shape), and it
    # is named so: not the baseline that ran 12288x12288x128 beside that kernel.
    covering = next(r for r in kernels(result) if r.tier == "covering")
    assert covering.predicted_speedup == pytest.approx(2.57 / 150.0)
    assert covering.baseline == covering.record()["baseline"] == "cuBLASLt-auto-tuning-tn"
    assert covering.record()["evidence"]["baseline"] == "cuBLASLt-heuristic-tn"
    named = "12288_12288_128 (covering) at <= 0.017x (device time) over cuBLASLt-auto-tuning-tn"
    assert named in result.answer
