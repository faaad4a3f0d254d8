"""The isolated call's hold (worker.TorchBackend.isolated_call) on a simulated GPU timeline: a
stream that runs one thing after another, a host that takes a while to queue each, and an SM clock
that ramps up after the spin kernel's calibration, as a fresh worker's GPU does."""

from contextlib import contextmanager
from types import SimpleNamespace

import pytest
from cuda_l2_explorer.importer.harness.graph import GraphBackend
from cuda_l2_explorer.importer.harness.protocol import ProtocolSettings, measure
from cuda_l2_explorer.importer.harness.worker import (
    HOLD_MARGIN,
    MAX_HOLD_GROWTH,
    MIN_HOLD_S,
    Rotation,
    TorchBackend,
)

ISSUE_S = 30e-6  # host time to queue one operation (events, spin, call): a slow, fresh process
CALL_S = 4e-6  # the call's own time on the GPU
IDLE_HZ, BOOST_HZ = 345e6, 1980e6  # an H100's idle and boost SM clocks


class FakeTimeline:
    """One stream: an operation starts when the host has queued it and the previous one is done
    (and, behind a closed gate, once the gate opens)."""

    def __init__(self) -> None:
        self.host = 0.0
        self.stream_free = 0.0
        self.clock_hz = IDLE_HZ
        self.gated: list | None = None  # operations queued behind a closed gate
        self.gate: FakeGate | None = None

    def synchronize(self) -> None:
        """The host waits for the stream; behind a closed gate, until the gate's timeout."""
        if self.gated is not None and self.gate is not None:
            self.host = max(self.host, self.gate.closed_at + GATE_TIMEOUT_S)
            self.gate.timed_out = True
            self.gate.release()
        self.host = max(self.host, self.stream_free)

    def run(self, seconds: float, started=lambda at: None) -> None:
        self.host += ISSUE_S
        if self.gated is not None:
            self.gated.append((seconds, started))
            return
        start = max(self.host, self.stream_free)
        self.stream_free = start + seconds
        started(start)


GATE_TIMEOUT_S = 50e-3


class FakeGate:
    """device.StreamGate on the fake timeline, its timeout included."""

    def __init__(self, timeline: FakeTimeline) -> None:
        self.timeline = timeline
        timeline.gate = self
        self.closed_at = 0.0
        self.timed_out = False

    def close(self, stream: int) -> None:
        self.timeline.host += ISSUE_S
        self.closed_at = max(self.timeline.host, self.timeline.stream_free)
        self.timed_out = False
        self.timeline.gated = []

    def open(self) -> None:
        if self.timeline.gated is not None:
            self.release()

    def release(self) -> None:
        timeline, waiting = self.timeline, self.timeline.gated or []
        timeline.gated = None
        timeline.stream_free = max(timeline.stream_free, timeline.host)
        for seconds, started in waiting:
            started(timeline.stream_free)
            timeline.stream_free += seconds


class FakeEvent:
    def __init__(self, timeline: FakeTimeline) -> None:
        self.timeline = timeline
        self.at = 0.0

    def record(self) -> None:
        self.timeline.run(0.0, lambda at: setattr(self, "at", at))

    def synchronize(self) -> None:
        self.timeline.host = max(self.timeline.host, self.at)

    def elapsed_time(self, other: "FakeEvent") -> float:
        return (other.at - self.at) * 1e3  # ms, as torch's


def fake_torch(timeline: FakeTimeline) -> SimpleNamespace:
    calibrations = []

    def spin(cycles: int) -> None:
        timeline.run(cycles / timeline.clock_hz)
        if cycles == 1_000_000:  # the calibration spin: the clock ramps up right after it
            calibrations.append(timeline.clock_hz)
            timeline.clock_hz = BOOST_HZ

    cuda = SimpleNamespace(
        Event=lambda enable_timing: FakeEvent(timeline), _sleep=spin, synchronize=timeline.synchronize
    )
    return SimpleNamespace(cuda=cuda, calibrations=calibrations)


def _backend(timeline: FakeTimeline, call, gate=None, never_wait=(), **more) -> TorchBackend:
    impls = SimpleNamespace(
        inputs=SimpleNamespace(next=lambda: None),
        fns={"k": call, **more},
        stream=0,
        may_wait=lambda name: name not in never_wait,
    )
    backend = TorchBackend(fake_torch(timeline), impls, gate)
    backend.clock = lambda: timeline.host
    return backend


def test_a_gated_call_holds_exactly_as_long_as_queueing_takes():
    """Behind a closed gate (cuStreamWaitValue32), the events span the call alone and the GPU
    waits exactly until the host has queued the end event: no spin, no margin, no retry."""
    timeline = FakeTimeline()
    backend = _backend(timeline, lambda s: timeline.run(CALL_S), FakeGate(timeline), never_wait={"k"})
    for _ in range(3):
        before = backend.held_s
        assert backend.isolated_call("k") == pytest.approx(CALL_S)
        # queued after the gate: the start event, the call, the end event
        assert backend.held_s - before == pytest.approx(4 * ISSUE_S)
    assert backend.torch.calibrations == [] and backend.retries == 0


def test_a_launcher_that_synchronises_behind_the_gate_costs_one_timeout_then_takes_the_spin():
    """Such a launcher waits for its stream, which the gate holds until its timeout on the GPU:
    that call is thrown away, and from then on the launcher's hold is the bounded spin."""
    timeline = FakeTimeline()

    def synchronising(_s) -> None:
        timeline.synchronize()  # cudaDeviceSynchronize first
        timeline.run(CALL_S)

    backend = _backend(timeline, synchronising, FakeGate(timeline), never_wait={"k"})
    started = timeline.host
    first = backend.isolated_call("k")
    assert timeline.host - started > GATE_TIMEOUT_S  # one timeout paid
    assert backend.retries >= 1 and "k" in backend._ungated
    assert CALL_S <= first < CALL_S + 3 * ISSUE_S  # timed by the spin, as before the gate
    before = timeline.host
    backend.isolated_call("k")
    assert timeline.host - before < GATE_TIMEOUT_S  # never again


def test_a_launcher_that_may_synchronise_is_never_gated_and_a_failing_call_opens_the_gate():
    timeline = FakeTimeline()
    gate = FakeGate(timeline)

    def failing(_s) -> None:
        raise RuntimeError("launch failed")

    backend = _backend(timeline, lambda s: timeline.run(CALL_S), gate, never_wait={"bad"}, bad=failing)
    assert backend.isolated_call("k") == pytest.approx(CALL_S)
    assert backend.torch.calibrations == [IDLE_HZ]  # "k" (an imported module's) took the spin
    with pytest.raises(RuntimeError, match="launch failed"):
        backend.isolated_call("bad")
    assert timeline.gated is None  # opened: the stream runs on


def test_a_hold_calibrated_at_an_idle_clock_is_checked_on_the_gpu_and_lengthened():
    timeline = FakeTimeline()
    backend = _backend(timeline, lambda s: timeline.run(CALL_S))
    torch = backend.torch
    intended = backend.hold_s
    # Calibrated at 345 MHz, the 0.25 ms hold lasts 44 us at 1980 MHz: less than the ~150 us the
    # host takes to queue the events and the call behind it.
    assert intended * IDLE_HZ / BOOST_HZ < 5 * ISSUE_S
    measured = backend.isolated_call("k")
    assert torch.calibrations == [IDLE_HZ]
    assert measured == pytest.approx(CALL_S)  # the call's own time, no host time in it
    assert backend._hold_cycles["k"] / BOOST_HZ > 5 * ISSUE_S  # the hold grew to cover the queueing
    again = backend.isolated_call("k")  # and stays long enough for the next calls
    assert again == pytest.approx(CALL_S)


def test_a_launcher_that_synchronises_ends_with_a_bounded_hold():
    """Such a launcher waits for the spin itself: no hold covers it. The hold stops growing at
    MAX_HOLD_GROWTH x its first length, and the call's time includes its host time, as a user's."""
    timeline = FakeTimeline()

    def synchronising(_s) -> None:
        timeline.host = max(timeline.host, timeline.stream_free)  # cudaDeviceSynchronize first
        timeline.run(CALL_S)

    backend = _backend(timeline, synchronising)
    first = None
    for _ in range(10):
        measured = backend.isolated_call("k")
        first = first or backend._max_hold_cycles // MAX_HOLD_GROWTH
        assert backend._hold_cycles["k"] <= first * MAX_HOLD_GROWTH
        assert CALL_S < measured < CALL_S + 3 * ISSUE_S
    assert timeline.host < 10 * 4 * (first * MAX_HOLD_GROWTH / BOOST_HZ + 6 * ISSUE_S)


def _timed_hold(backend: TorchBackend, impl: str) -> float:
    """One isolated call of ``impl``; the GPU time its hold took (retries included)."""
    before = backend.held_s
    assert backend.isolated_call(impl) == pytest.approx(CALL_S)
    return backend.held_s - before


TARGET_S = max(MIN_HOLD_S, HOLD_MARGIN * 5 * ISSUE_S)  # five operations queued a call


def test_a_hold_a_stall_lengthened_shrinks_back_to_the_queueing_it_needs():
    """One slow queueing (a GC pause, a descheduled host) doubles the hold; the calls after it go
    back to HOLD_MARGIN x their own queueing instead of keeping the doubled hold for good."""
    global ISSUE_S
    timeline = FakeTimeline()
    timeline.clock_hz = BOOST_HZ
    backend = _backend(timeline, lambda s: timeline.run(CALL_S))
    # Each hold is sized from the last one's GPU time, which includes the moment between the
    # event before the spin and the spin: a few calls settle it.
    settled = [_timed_hold(backend, "k") for _ in range(4)][-1]
    assert settled == pytest.approx(TARGET_S, rel=0.05)
    normal, ISSUE_S = ISSUE_S, 20 * ISSUE_S  # one stalled arrival
    try:
        stalled = _timed_hold(backend, "k")
    finally:
        ISSUE_S = normal
    assert stalled > 10 * settled
    after = [_timed_hold(backend, "k") for _ in range(4)]
    assert after[0] > 2 * settled  # sized from the stall's queueing
    assert after[-1] == pytest.approx(settled, rel=0.05)


def test_a_clock_that_drops_between_arrivals_does_not_stretch_the_hold():
    """Calibrated at the boost clock, a spin of the same cycle count lasts 5.7x longer when the
    SM clock has dropped to idle during server mode's gap: the hold is sized on the GPU's
    timeline, so what the GPU spends holding stays near HOLD_MARGIN x the queueing."""
    timeline = FakeTimeline()
    timeline.clock_hz = BOOST_HZ
    backend = _backend(timeline, lambda s: timeline.run(CALL_S))
    _timed_hold(backend, "k")  # calibrated at boost
    timeline.clock_hz = IDLE_HZ  # every later arrival finds the GPU idled down
    spent = [_timed_hold(backend, "k") for _ in range(5)]
    assert spent[0] > 3 * spent[-1]
    assert spent[-1] == pytest.approx(TARGET_S, rel=0.05)


def test_each_implementation_keeps_its_own_hold():
    """A launcher that synchronises drives its own hold to the bound; the others' stay short."""
    timeline = FakeTimeline()
    timeline.clock_hz = BOOST_HZ

    def synchronising(_s) -> None:
        timeline.host = max(timeline.host, timeline.stream_free)
        timeline.run(CALL_S)

    backend = _backend(timeline, lambda s: timeline.run(CALL_S), sync=synchronising)
    for _ in range(4):
        backend.isolated_call("sync")
        last = _timed_hold(backend, "k")
    assert backend._hold_cycles["sync"] == backend._max_hold_cycles
    assert last == pytest.approx(TARGET_S, rel=0.05)


def test_only_an_imported_modules_kernel_may_wait_for_its_stream():
    """The rule holds for implementations added after the config's set-up too (cuBLASLt's
    auto-tuning aliases): the first gated server run held those two by the spin."""
    from cuda_l2_explorer.importer.harness.worker import Implementations

    imported, ours = SimpleNamespace(_module_kernel=True), SimpleNamespace(_module_kernel=False)
    assert Implementations.may_wait(imported, "kernel")
    assert Implementations.may_wait(imported, "kernel+padding")
    assert not Implementations.may_wait(imported, "cuBLASLt-auto-tuning-nn")
    assert not Implementations.may_wait(ours, "kernel")


class ReadLog:
    """Which input set each call read, in the order the GPU ran them; a call captured into a graph
    reads its set at every replay."""

    def __init__(self, timeline: FakeTimeline) -> None:
        self.timeline = timeline
        self.reads: list[tuple[str, int, bool]] = []  # (implementation, set, eager)
        self.capturing: list | None = None

    def fn(self, name: str):
        def run(s: int) -> None:
            if self.capturing is not None:
                self.capturing.append((name, s, False))
                return
            self.reads.append((name, s, True))
            self.timeline.run(CALL_S)

        return run

    def assert_every_eager_read_cold(self, count: int, names: list[str]) -> None:
        """Every eager call (isolated, host latency, an eager sample) reads a set that no call read
        within the previous ``count - 1``. (A replay reads the sets in its fixed order, so its first
        calls may find the last eager calls' sets in the L2: at most two of its calls.)"""
        assert len({name for name, _, _ in self.reads}) == len(names) and len(self.reads) > 3 * count
        for i, (_, s, eager) in enumerate(self.reads):
            recent = [seen for _, seen, _ in self.reads[max(0, i - count + 1) : i]]
            assert not eager or s not in recent, f"call {i} re-read set {s} within {count - 1} calls"


NAMES = ["kernel", "cuBLAS-tn", "cuBLAS-nn", "torch.matmul"]
SETS = 7


def _eager_backend(timeline: FakeTimeline, log: ReadLog, rotation: Rotation) -> TorchBackend:
    impls = SimpleNamespace(
        inputs=SimpleNamespace(
            next=rotation.next, restart=rotation.restart, count=SETS, sets=list(range(SETS))
        ),
        fns={name: log.fn(name) for name in NAMES},
        stream=0,
        may_wait=lambda name: False,
    )
    backend = TorchBackend(fake_torch(timeline), impls, FakeGate(timeline))
    backend.clock = lambda: timeline.host
    backend.sleep = lambda seconds: setattr(timeline, "host", timeline.host + seconds)
    return backend


@pytest.mark.parametrize("mode", ["server", "offline"])
def test_no_eager_call_reads_a_set_that_another_call_read_within_the_rotation(mode):
    """Cold L2 for every call, whichever implementation made the one before: a set comes back only
    after all the others were read. With a cursor per implementation, the kernel (warmed up for
    warmup_s, the others for two calls) read other sets than the baselines, which read the same
    set one after another within a round, from the L2 (the H100 server grid of 2026-11-25)."""
    timeline = FakeTimeline()
    log = ReadLog(timeline)
    backend = _eager_backend(timeline, log, Rotation(SETS))
    measure(backend, NAMES, ProtocolSettings(mode=mode, samples=12, warmup_s=40 * CALL_S, timing="eager"))
    log.assert_every_eager_read_cold(SETS, NAMES)


def test_the_eager_calls_between_graph_replays_read_the_sets_the_replays_read_longest_ago():
    """Offline, each implementation's isolated call and host latency follow graph replays, which read
    every set in order: the eager calls start again from the first."""
    timeline = FakeTimeline()
    log = ReadLog(timeline)
    eager = _eager_backend(timeline, log, Rotation(SETS))
    torch = eager.torch

    class FakeGraph:
        def __init__(self) -> None:
            self.calls: list[tuple[str, int, bool]] = []

        def replay(self) -> None:
            for name, s, _ in self.calls:
                log.reads.append((name, s, False))
                timeline.run(CALL_S)

    @contextmanager
    def capture(graph: FakeGraph, pool=None):
        log.capturing = graph.calls
        try:
            yield
        finally:
            log.capturing = None

    torch.cuda.CUDAGraph = FakeGraph
    torch.cuda.graph = capture
    torch.cuda.graph_pool_handle = lambda: None
    torch.cuda.current_stream = lambda: SimpleNamespace(cuda_stream=0)
    backend = GraphBackend(torch, eager.impls, eager)
    backend.prepare(NAMES)
    settings = ProtocolSettings(mode="offline", samples=6, warmup_s=0.0, latency_samples=6, timing="graph")
    measure(backend, NAMES, settings)
    log.assert_every_eager_read_cold(SETS, NAMES)
