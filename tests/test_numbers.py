"""rl.numbers: what counts as a usable (finite) number, answered in one place."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rl.numbers import (
    average_ranks,
    finite_floats,
    finite_items,
    finite_or_none,
    none_if_not_finite,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, 1.0),
        (-2.5, -2.5),
        (np.float32(0.5), 0.5),
        (np.int64(3), 3.0),
        (None, None),
        (True, None),
        ("1.5", None),
        (b"1", None),
        (math.nan, None),
        (-math.inf, None),
        (10**400, None),  # a JSON integer too large for a float
        ([1.0], None),
        ({"a": 1}, None),
    ],
)
def test_finite_or_none_takes_finite_real_numbers_only(value: object, expected: float | None):
    found = finite_or_none(value)
    assert found == expected
    assert found is None or type(found) is float


def test_finite_floats_and_items_keep_order_and_positions():
    values = [1, math.nan, 2.5, math.inf, -1.0]
    assert finite_floats(values) == [1.0, 2.5, -1.0]
    assert finite_items(values) == [(0, 1.0), (2, 2.5), (4, -1.0)]


def test_none_if_not_finite_leaves_every_other_value_as_it_is():
    assert none_if_not_finite(math.nan) is None
    assert none_if_not_finite(math.inf) is None
    assert none_if_not_finite(0.25) == 0.25
    assert none_if_not_finite("inf") == "inf"
    assert none_if_not_finite(7) == 7
    assert none_if_not_finite(None) is None


def test_average_ranks_give_ties_the_mean_of_their_ranks():
    assert average_ranks([3.0, 1.0, 2.0, 1.0, 5.0]) == [3.0, 0.5, 2.0, 0.5, 4.0]
    assert average_ranks([]) == []
