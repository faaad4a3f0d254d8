"""The CUPTI cross-check's rule (importer/harness/graph.py), on numbers: no GPU needed."""

from __future__ import annotations

from cuda_l2_explorer.importer.harness.graph import cross_check


def test_a_launch_gap_per_kernel_is_allowed_beside_five_percent():
    # 64x128x64 on an H100: graph 2.24 us a call, CUPTI's one kernel 2.07 us (8% apart).
    assert cross_check(2.24e-6, 2.07e-6, kernels=1) is None
    assert cross_check(201.3e-6, 204.9e-6, kernels=1) is None  # 4096^3: within 5%


def test_a_graph_faster_than_its_kernels_is_flagged():
    """Work the graph did not time (a side stream, a missed kernel) makes it look faster."""
    code, detail = cross_check(4.0e-6, 5.0e-6, kernels=1)
    assert code == "timing-mismatch" and "ratio 0.800" in detail and "passes between" not in detail


def test_a_graph_slower_than_kernels_plus_gaps_is_flagged():
    _, detail = cross_check(10.0e-6, 5.0e-6, kernels=2)
    assert "5.00 us a call passes between the graph's kernels" in detail  # the excess, named
    assert cross_check(5.9e-6, 5.0e-6, kernels=2) is None  # 5% + 2 x 0.5 us


def test_a_graph_that_missed_its_launch_is_told_apart_from_a_fast_one():
    """A launcher on the legacy default stream runs outside the capture: the replay is ~empty."""
    from cuda_l2_explorer.importer.harness.graph import escaped_capture

    why = escaped_capture(0.17e-6, 8.96e-6)  # measured: a reference-system kernel on an H100
    assert why is not None and "escaped the CUDA graph" in why and "8.96 us" in why
    assert escaped_capture(4.0e-6, 5.0e-6) is None  # 20% fast: a timing mismatch, still its work
    assert escaped_capture(2.0e-6, None) is None  # no CUPTI figure: nothing to say
