"""Hypothesis strategies shared by the kernel families' config tests (test_tuner_tiny.py,
test_tuner_wgmma.py)."""

from hypothesis import strategies as st

# What a config field may hold in a hand-edited manifest: ints in and out of range, booleans (an
# int subclass), None and short text.
FIELD_VALUES = st.one_of(st.integers(-4, 300), st.booleans(), st.none(), st.text(max_size=2))
