import polars as pl
import pytest
from cuda_l2_explorer.db.filter_expr import FilterError, parse_filter
from hypothesis import given
from hypothesis import strategies as st

FRAME = pl.DataFrame(
    {
        "m": [64, 1024, 4096],
        "n": [64, 64, 4096],
        "k": [64, 128, 4096],
        "speedup": [1.2, 0.8, 1.01],
        "set_id": ["a", "b", "a"],
    }
)


def rows(text):
    return FRAME.filter(parse_filter(text, FRAME.columns))["m"].to_list()


def test_filters():
    assert rows("m >= 1024 and speedup < 1") == [1024]
    assert rows("speedup > 1 or n == 64") == [64, 1024, 4096]
    assert rows("not (speedup > 1)") == [1024]
    assert rows("64 < m <= 4096") == [1024, 4096]
    assert rows("set_id == 'a'") == [64, 4096]
    assert rows("M * N >= 65536") == [1024, 4096]
    assert rows("") == [64, 1024, 4096]


@pytest.mark.parametrize(
    "bad",
    [
        "m >=",
        "__import__('os')",
        "m.real > 1",
        "open('x')",
        "m in [1]",
        "lambda: 1",
        "nope > 1",
        "m > True",
        "m ** 2 > 1",
        "x" * 600,
        "m > 1; n < 2",
    ],
)
def test_bad_filters_raise_one_line(bad):
    with pytest.raises(FilterError) as info:
        parse_filter(bad, FRAME.columns)
    assert "\n" not in str(info.value)


@given(st.text(max_size=60))
def test_any_text_either_parses_or_raises_filter_error(text):
    try:
        expr = parse_filter(text, FRAME.columns)
    except FilterError:
        return
    try:
        FRAME.filter(expr)
    except pl.exceptions.PolarsError:
        pass  # a valid expression can still mismatch types (e.g. m == 'a'); never anything worse
