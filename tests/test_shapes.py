import pytest
from cuda_l2_explorer.db.errors import UsageError
from cuda_l2_explorer.db.shapes import MAX_DIM, Shape, floor_seconds, grid_shapes, parse_dim, parse_mnk
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(
    "text", ["0", "-1", "1e3", "abc", "", " ", "1.0", "0x40", "10**12", str(10**12), "٣"]
)
def test_bad_dimensions_are_refused(text):
    with pytest.raises(UsageError):
        parse_dim(text)


@given(st.integers(min_value=1, max_value=MAX_DIM))
def test_every_positive_int32_round_trips(value):
    assert parse_dim(str(value)) == value
    assert parse_dim(f" {value} ") == value


@given(st.text(max_size=12))
def test_parse_dim_accepts_only_plain_decimal(text):
    try:
        value = parse_dim(text)
    except UsageError:
        return
    assert text.strip().lstrip("+").isdigit() and text.strip().lstrip("+").isascii()
    assert 1 <= value <= MAX_DIM


def test_parse_mnk():
    assert parse_mnk("64_4096_64") == Shape(64, 4096, 64)
    for bad in ("64_64", "64_64_64_64", "64x64x64", "0_1_1", "a_b_c"):
        with pytest.raises(UsageError):
            parse_mnk(bad)


def test_grid_and_floor():
    grid = grid_shapes()
    assert len(grid) == 1000 and len(set(grid)) == 1000
    big = Shape(8192, 8192, 8192)
    assert floor_seconds(big, "h100") == pytest.approx(2 * 8192**3 / 989e12)
    tiny = Shape(64, 64, 64)
    assert floor_seconds(tiny, "h100") == pytest.approx(2 * 3 * 64 * 64 / 3.35e12)
    assert floor_seconds(tiny, "h200") < floor_seconds(tiny, "h100")
    assert floor_seconds(tiny, "a100") is None
