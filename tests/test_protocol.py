"""SPEC §7 protocol logic on the CPU: statistics, sizing, scheduling, correctness and audit rules."""

import random
import statistics
from dataclasses import asdict

import pytest
from cuda_l2_explorer.db.shapes import LEGACY_ROTATION_CAP, ROTATION_CAP, Shape
from cuda_l2_explorer.importer.harness.audit import AuditObservation, audit_findings
from cuda_l2_explorer.importer.harness.plan import BenchPlan, job_for
from cuda_l2_explorer.importer.harness.protocol import (
    FINAL_MARGIN,
    FINALISTS,
    ProtocolSettings,
    calls_per_sample,
    classify_correctness,
    measure,
    percentile,
    rotation_sets,
    round_orders,
    server_gaps,
    spread_rounds,
    summarize,
    tuning_finalists,
)
from hypothesis import given
from hypothesis import strategies as st

values = st.lists(st.floats(1e-7, 1.0, allow_nan=False), min_size=2, max_size=200)


@given(values)
def test_summary_matches_the_statistics_module(xs):
    s = summarize(xs)
    deciles = statistics.quantiles(xs, n=10, method="inclusive")
    assert s.median == pytest.approx(statistics.median(xs))
    assert s.p10 == pytest.approx(deciles[0]) and s.p90 == pytest.approx(deciles[-1])
    assert s.p99 == pytest.approx(statistics.quantiles(xs, n=100, method="inclusive")[-1])
    assert s.mean == pytest.approx(statistics.fmean(xs))
    assert s.min <= s.p10 <= s.median <= s.p90 <= s.p99 <= s.max


def test_percentile_edges():
    assert percentile([3.0], 90) == 3.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_rotation_spans_twice_l2_within_memory():
    l2 = 50 * 2**20
    tiny = 2 * (64 * 64 * 3 + 64 * 64)  # 64^3: many sets
    assert rotation_sets(tiny, l2, 80 * 2**30) * tiny >= 2 * l2  # the default cap spans 2x
    big = 2 * (3 * 16384 * 16384 + 16384 * 16384)  # 2 GiB a set: two sets already exceed L2
    assert rotation_sets(big, l2, 80 * 2**30) == 2
    # 16384^3 on a nearly full GPU: as many as fit in half the free memory, at least one
    assert rotation_sets(big, l2, 3 * 2**30) == 1
    assert rotation_sets(tiny, l2, 80 * 2**30, max_sets=64) == 64  # capped


@given(st.integers(1, 10**9), st.integers(1, 2**30), st.integers(0, 2**40))
def test_rotation_bounds(per_set, l2, free):
    n = rotation_sets(per_set, l2, free)
    assert 1 <= n <= ROTATION_CAP
    assert n == 1 or n * per_set <= 0.5 * free


def test_calls_per_sample():
    assert calls_per_sample(2e-6) == 500
    assert calls_per_sample(5e-3) == 1
    assert calls_per_sample(0.0) == 4096
    assert calls_per_sample(1e-9) == 4096


def test_rounds_are_shuffled_permutations():
    names = ["kernel", "a", "b", "c", "d"]
    orders = round_orders(names, 20, random.Random(1))
    assert all(sorted(o) == sorted(names) for o in orders)
    assert len({tuple(o) for o in orders}) > 5


def test_server_gaps_have_the_target_mean():
    gaps = server_gaps(20000, 100.0, random.Random(3))
    assert statistics.fmean(gaps) == pytest.approx(0.01, rel=0.05)
    assert min(gaps) >= 0
    with pytest.raises(ValueError):
        server_gaps(1, 0, random.Random(0))


class FakeBackend:
    """Deterministic device: each impl has a fixed per-call time; records what ran."""

    def __init__(self, per_call, per_unit=1):
        self.per_call = per_call
        self.per_unit = per_unit  # calls in one unit: a captured graph's calls
        self.log = []
        self.slept = []

    def calls_per_unit(self, impl):
        return self.per_unit

    def offline_sample(self, impl, units):
        self.log.append(("offline", impl, units))
        calls = units * self.per_unit
        return self.per_call[impl] * calls, self.per_call[impl] * calls + 5e-6

    def host_latency(self, impl):
        self.log.append(("host", impl, 1))
        return self.per_call[impl] + 2e-5

    def isolated_call(self, impl):
        self.log.append(("isolated", impl, 1))
        return self.per_call[impl] + 3e-6  # the events' floor

    def sleep(self, seconds):
        self.slept.append(seconds)


@given(st.dictionaries(st.integers(0, 99).map(str), st.floats(1e-6, 1e-2), min_size=1, max_size=12))
def test_tuning_finalists_are_the_close_contenders_fastest_first(screen):
    chosen = tuning_finalists(screen)
    fastest = min(screen.values())
    assert chosen and screen[chosen[0]] == fastest and len(chosen) <= FINALISTS
    assert [screen[n] for n in chosen] == sorted(screen[n] for n in chosen)
    assert all(screen[n] <= fastest * (1 + FINAL_MARGIN) for n in chosen)
    # Every contender left out is slower than each finalist, or beyond the margin.
    for name in set(screen) - set(chosen):
        assert screen[name] > fastest * (1 + FINAL_MARGIN) or screen[name] >= screen[chosen[-1]]


def test_a_clear_screen_winner_needs_no_final():
    assert tuning_finalists({"0": 10.0, "1": 10.5, "2": 11.0}) == ["0"]
    assert tuning_finalists({"0": 10.1, "1": 10.0, "2": 10.15, "3": 10.19}) == ["1", "0", "2"]
    assert tuning_finalists({}) == []


def test_offline_measurement():
    backend = FakeBackend({"kernel": 2e-6, "cuBLAS-nn": 1e-3})
    result = measure(backend, ["kernel", "cuBLAS-nn"], ProtocolSettings(samples=7, warmup_s=0.0))
    assert result["kernel"].calls_per_sample == 500 and result["cuBLAS-nn"].calls_per_sample == 1
    assert summarize(result["kernel"].device).median == pytest.approx(2e-6)
    assert summarize(result["kernel"].host).median == pytest.approx(2.2e-5)
    assert len(result["kernel"].device) == 7
    sampled = {impl for kind, impl, calls in backend.log if kind == "offline" and calls > 1}
    assert sampled == {"kernel"}  # only the fast one needs several calls per sample
    assert backend.slept == []


def test_offline_samples_of_graph_units_are_per_call():
    """A unit of 8 graph-captured calls: R counts calls, the figures stay per call."""
    backend = FakeBackend({"kernel": 2e-6, "cuBLAS-nn": 1e-3}, per_unit=8)
    result = measure(backend, ["kernel", "cuBLAS-nn"], ProtocolSettings(samples=5, warmup_s=0.0))
    assert result["kernel"].calls_per_sample == 63 * 8  # ceil(1 ms / 16 us) units of 8 calls
    assert result["cuBLAS-nn"].calls_per_sample == 8  # one unit already spans 8 ms
    assert summarize(result["kernel"].device).median == pytest.approx(2e-6)
    assert summarize(result["cuBLAS-nn"].device).median == pytest.approx(1e-3)
    # The isolated call (one call between events) is kept apart from the per-call device time.
    assert result["kernel"].isolated == [pytest.approx(5e-6)] * 5 and len(result["kernel"].host) == 5


def test_timing_must_be_graph_or_eager():
    assert ProtocolSettings().timing == "graph"
    with pytest.raises(ValueError, match="timing"):
        ProtocolSettings(timing="events")


def test_server_measurement_sleeps_before_every_call():
    """Each arrival: a gap, then the host latency of one call and one isolated call (its device
    figure, the events' floor included); no back-to-back "device time" is claimed."""
    backend = FakeBackend({"kernel": 1e-5, "torch.matmul": 2e-5})
    result = measure(backend, ["kernel", "torch.matmul"], ProtocolSettings(mode="server", samples=10, seed=5))
    assert len(backend.slept) == 20
    assert result["torch.matmul"].device == []
    assert result["torch.matmul"].isolated == [pytest.approx(2.3e-5)] * 10
    assert result["kernel"].host == [pytest.approx(3e-5)] * 10
    timed = [kind for kind, _impl, _calls in backend.log if kind != "offline"]
    assert timed == ["host", "isolated"] * 20  # one pair per arrival


def test_server_gaps_are_the_gpus_idle_time_bookkeeping_included():
    """The gap before an arrival counts from the end of the last arrival's calls: the host's
    bookkeeping in between (here a clock that moves 1 ms whenever it is read) is part of it."""

    class TickingBackend(FakeBackend):
        def __init__(self, per_call):
            super().__init__(per_call)
            self.now = 0.0

        def clock(self):
            self.now += 1e-3
            return self.now

    impls = ["kernel", "torch.matmul"]
    settings = ProtocolSettings(mode="server", samples=10, seed=5)
    backend = TickingBackend({"kernel": 1e-5, "torch.matmul": 2e-5})
    measure(backend, impls, settings)
    rng = random.Random(settings.seed)
    round_orders(impls, settings.samples, rng)
    gaps = server_gaps(20, settings.target_qps, rng)
    assert backend.slept[0] == pytest.approx(gaps[0])
    assert backend.slept[1:] == [pytest.approx(max(0.0, g - 1e-3)) for g in gaps[1:]]


def test_long_samples_are_capped_by_the_budget_and_spread_over_rounds():
    """A 20 ms sample (a large GEMM) takes min_samples samples, spread over the rounds; a tiny
    one takes every round. Latencies are taken in latency_samples rounds."""
    backend = FakeBackend({"big": 20e-3, "tiny": 2e-6})
    settings = ProtocolSettings(
        samples=15, warmup_s=0.0, min_samples=5, sample_budget_s=0.1, latency_samples=7
    )
    result = measure(backend, ["big", "tiny"], settings)
    assert len(result["big"].device) == 5 and len(result["tiny"].device) == 15
    assert len(result["big"].isolated) == 5 and len(result["tiny"].isolated) == 7
    assert len(result["tiny"].host) == 7
    big_rounds = [i for i, (kind, impl, _c) in enumerate(backend.log) if kind == "offline" and impl == "big"]
    assert len(big_rounds) == 2 + 5  # two warm-up units, then five samples
    assert settings.samples_for(0.05) == 5 and settings.samples_for(1e-3) == 15
    assert spread_rounds(5, 15) == {0, 3, 6, 9, 12} and spread_rounds(20, 15) == set(range(15))


def test_only_the_first_implementation_warms_the_clocks():
    backend = FakeBackend({"a": 1e-3, "b": 1e-3})
    measure(backend, ["a", "b"], ProtocolSettings(samples=1, warmup_s=0.01))
    warm = [impl for kind, impl, _c in backend.log if kind == "offline"][:-2]
    assert warm.count("a") == 10 and warm.count("b") == 2


def test_interleaving_changes_between_rounds():
    backend = FakeBackend({name: 1e-3 for name in "abcdef"})
    measure(backend, list("abcdef"), ProtocolSettings(samples=10, warmup_s=0.0, seed=2))
    measured = [impl for kind, impl, calls in backend.log if kind == "offline"][6 * 2 :]  # after warm-up
    rounds = [tuple(measured[i : i + 6]) for i in range(0, 60, 6)]
    assert all(sorted(r) == list("abcdef") for r in rounds)
    assert len(set(rounds)) > 3


def test_correctness_rules():
    ok = classify_correctness(2.1e-4, 2.0e-4, "F32F16F16F32")
    assert ok.status == "ok" and ok.findings == () and ok.error_ratio == pytest.approx(1.05)
    fp16 = classify_correctness(4e-3, 2.0e-4, "F32F16F16F32")
    assert [f[0] for f in fp16.findings] == ["fp16_accumulation_suspected"]
    assert classify_correctness(4e-3, 2.0e-4, "F16F16F16F16").findings == ()  # expected in an fp16 set
    assert classify_correctness(0.3, 2e-4, "F32F16F16F32").status == "incorrect"
    assert classify_correctness(float("nan"), 2e-4, "F32F16F16F32").status == "incorrect"
    assert classify_correctness(1e-4, 2e-4, "F32F16F16F32", finite=False).status == "incorrect"
    assert classify_correctness(1e-4, None, "F32F16F16F32").status == "ok"


def test_audit_rules():
    assert audit_findings(AuditObservation(calls=5)) == []
    codes = lambda obs: [code for code, _ in audit_findings(obs)]  # noqa: E731
    assert codes(AuditObservation(calls=5, sync_api_calls=5)) == ["sync_per_call"]
    assert codes(AuditObservation(calls=5, sync_api_calls=1)) == []  # one sync is not per call
    assert codes(AuditObservation(calls=5, blocked_behind_sleep=True)) == ["sync_per_call"]
    assert codes(AuditObservation(calls=5, torch_allocations=5)) == ["alloc_per_call"]
    assert codes(AuditObservation(calls=5, malloc_api_calls=10)) == ["alloc_per_call"]
    assert codes(AuditObservation(calls=5, foreign_stream_kernels=5)) == ["hidden_stream_work"]
    assert codes(AuditObservation(calls=5, new_threads=1)) == ["extra_threads"]
    assert codes(AuditObservation(calls=5, trace_available=False)) == ["audit_partial"]


@pytest.mark.parametrize("cap", [0, -1, ROTATION_CAP + 1])
def test_a_rotation_cap_outside_its_bounds_is_refused(cap):
    with pytest.raises(ValueError, match="rotation cap"):
        ProtocolSettings(rotation_cap=cap)


def test_the_rotation_cap_reaches_the_worker_and_the_run_record():
    plan = BenchPlan(shapes=[Shape(64, 64, 64)], settings=ProtocolSettings(rotation_cap=4096))
    assert job_for(plan, Shape(64, 64, 64), with_kernel=False)["protocol"]["rotation_cap"] == 4096
    assert plan.params()["protocol"]["rotation_cap"] == 4096


def test_a_recorded_protocol_is_read_back_and_old_records_keep_the_old_cap():
    settings = ProtocolSettings(samples=7, rotation_cap=512)
    assert ProtocolSettings.from_record(asdict(settings)) == settings
    old = {k: v for k, v in asdict(settings).items() if k != "rotation_cap"}  # recorded before the cap
    assert ProtocolSettings.from_record({**old, "retired_field": 1}).rotation_cap == LEGACY_ROTATION_CAP
