"""Selection policies on small batches: edge cases of empty, equal, non-finite and tied values."""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any

import pytest

from rl.samples import Sample
from sampling.config import SamplingConfig
from sampling.records import Selection
from sampling.selection.policies import (
    Selected,
    bottom_count,
    component_values,
    group_relative,
    mean_and_std,
    quantile,
    select,
    threshold,
    zscore,
)

pytestmark = pytest.mark.unit

NAN, INF = math.nan, math.inf


def picked(selected: Selected) -> list[int]:
    assert selected.indices == sorted(selected.indices)
    assert set(selected.values) == set(selected.indices)
    return selected.indices


# --- threshold ---


def test_threshold_selects_strictly_below() -> None:
    selected = threshold([0.1, 0.2, 0.3, -1.0], 0.2)
    assert picked(selected) == [0, 3]
    assert selected.values == {0: 0.1, 3: -1.0}
    assert selected.parameter == {"threshold": 0.2}


def test_threshold_edge_cases() -> None:
    assert picked(threshold([], 0.2)) == []
    assert picked(threshold([0.5, 0.5, 0.5], 0.2)) == []
    assert picked(threshold([0.1, 0.1], 0.2)) == [0, 1]
    assert picked(threshold([NAN, -INF, INF, 0.0], 0.2)) == [3]  # -inf is not "low", it is broken
    with pytest.raises(ValueError, match="threshold must be a finite number"):
        threshold([0.1], NAN)


# --- quantile ---


def test_quantile_takes_the_bottom_share_with_its_cutoff() -> None:
    values = [0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6, 0.0]
    selected = quantile(values, 0.2)
    assert picked(selected) == [1, 9]
    assert selected.parameter == {"quantile": 0.2, "cutoff": 0.1}
    assert all(value <= selected.parameter["cutoff"] for value in selected.values.values())


def test_quantile_count_has_no_float_noise() -> None:
    assert 0.07 * 100 > 7  # 7.000000000000001
    assert bottom_count(0.07, 100) == 7
    assert len(quantile([float(n) for n in range(100)], 0.07).indices) == 7
    assert bottom_count(0.25, 10) == 3  # ceil(2.5)


def test_quantile_edge_cases() -> None:
    assert picked(quantile([], 0.1)) == []
    assert quantile([], 0.1).parameter == {"quantile": 0.1}
    assert picked(quantile([NAN, INF], 0.5)) == []
    assert picked(quantile([0.3, 0.3, 0.3, 0.3], 0.5)) == [0, 1]  # ties by index, capped at 2
    assert picked(quantile([0.5, 0.2, 0.2, 0.9], 0.25)) == [1]  # tie at the cutoff: first index
    assert picked(quantile([0.5, 0.4], 1e-9)) == [1]  # tiny q still gives one
    assert picked(quantile([0.5, 0.4, 0.3], 0.999)) == [0, 1, 2]
    assert picked(quantile([0.5, 0.4, 0.3], 1.0)) == [0, 1, 2]
    assert picked(quantile([0.5, 0.4, 0.3], 0.0)) == []
    for bad in (-0.1, 1.1, NAN):
        with pytest.raises(ValueError, match="quantile must be between 0 and 1"):
            quantile([0.1], bad)


def test_quantile_ignores_non_finite_values() -> None:
    # n_finite = 4, so q = 0.5 takes 2; the NaN and infinities neither count nor get picked.
    selected = quantile([NAN, 0.4, -INF, 0.1, INF, 0.3, 0.2], 0.5)
    assert picked(selected) == [3, 6]
    assert selected.parameter["cutoff"] == 0.2


# --- group_relative ---


def test_group_relative_selects_below_mean_minus_k_std() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.5, 0.6, 0.4]
    groups = [0, 0, 0, 0, 1, 1, 1]
    selected = group_relative(values, groups, 1.0)
    # group 0: mean 0.75, std ~0.433, bar ~0.317 -> index 1; group 1: bar ~0.418 -> index 6
    assert picked(selected) == [1, 6]
    assert selected.parameter == {"k": 1.0}
    assert selected.detail[1]["group_mean"] == pytest.approx(0.75)
    assert selected.detail[1]["group_std"] == pytest.approx(math.sqrt(0.1875))
    assert selected.detail[6]["group_bar"] == pytest.approx(0.5 - math.sqrt(0.02 / 3))


def test_group_relative_with_k_zero_selects_below_the_group_mean() -> None:
    assert picked(group_relative([0.1, 0.2, 0.3, 5.0, 6.0], [7, 7, 7, 9, 9], 0.0)) == [0, 3]


def test_group_relative_edge_cases() -> None:
    assert picked(group_relative([], [], 1.0)) == []
    assert picked(group_relative([0.1, 0.9, 0.5], [0, 1, 2], 0.0)) == []  # groups of one
    assert picked(group_relative([0.1, 0.1, 0.1], [0, 0, 0], 0.0)) == []  # equal: float noise
    assert picked(group_relative([0.3, 0.3, 0.1, 0.1], [0, 0, 1, 1], 0.0)) == []
    with pytest.raises(ValueError, match="2 values but 1 group ids"):
        group_relative([0.1, 0.2], [0], 1.0)
    with pytest.raises(ValueError, match="k must be"):
        group_relative([0.1], [0], -1.0)


def test_group_relative_ignores_non_finite_values() -> None:
    # Without the NaN and inf, group 0 is [0.0, 1.0]: mean 0.5, std 0.5; k = 0.9 -> bar 0.05.
    values = [0.0, NAN, 1.0, INF, -INF]
    selected = group_relative(values, [0, 0, 0, 0, 0], 0.9)
    assert picked(selected) == [0]
    assert selected.detail[0]["group_mean"] == 0.5 and selected.detail[0]["group_std"] == 0.5
    # A group left with one finite value has no spread.
    assert picked(group_relative([0.2, NAN, 0.9], [0, 0, 1], 0.0)) == []


def test_group_relative_lowest_if_none() -> None:
    values, groups = [1.0, 0.0, 1.0, 1.0], [0, 0, 0, 0]  # 0.0 sits at mean - 1.73 std
    assert picked(group_relative(values, groups, 3.0)) == []
    selected = group_relative(values, groups, 3.0, lowest_if_none=True)
    assert picked(selected) == [1]
    assert selected.detail[1]["lowest_in_group"] == 1.0
    # A tie for lowest picks nobody; no spread still picks nobody.
    assert picked(group_relative([0.0, 0.0, 1.0], [0, 0, 0], 5.0, lowest_if_none=True)) == []
    assert picked(group_relative([0.5, 0.5], [0, 0], 5.0, lowest_if_none=True)) == []
    # When someone is below the bar, the fallback does not add anyone.
    selected = group_relative([1.0, 0.0, 1.0, 1.0], groups, 1.0, lowest_if_none=True)
    assert "lowest_in_group" not in selected.detail[1]


# --- zscore ---


def test_zscore_selects_below_minus_k() -> None:
    values = [0.0, 1.0, 1.0, 1.0, 1.0]  # mean 0.8, std 0.4: z of 0.0 is -2
    selected = zscore(values, 1.5)
    assert picked(selected) == [0]
    assert selected.parameter == pytest.approx({"k": 1.5, "mean": 0.8, "std": 0.4})
    assert selected.detail[0]["zscore"] == pytest.approx(-2.0)
    assert picked(zscore(values, 2.5)) == []


def test_zscore_edge_cases() -> None:
    assert picked(zscore([], 1.0)) == []
    assert picked(zscore([0.4], 0.0)) == []
    assert picked(zscore([0.1, 0.1, 0.1], 0.0)) == []  # zero std selects nothing
    assert picked(zscore([0.1, 0.3], 0.0)) == [0]  # k = 0: below the mean
    assert picked(zscore([5e-324, 0.0, 0.0], 0.0)) == []  # spread underflows to 0: nothing
    with pytest.raises(ValueError, match="k must be"):
        zscore([0.1], INF)


def test_zscore_ignores_non_finite_values() -> None:
    with_broken = zscore([0.0, NAN, 1.0, -INF, 1.0, INF, 1.0, 1.0], 1.5)
    assert picked(with_broken) == [0]
    assert with_broken.parameter == pytest.approx({"k": 1.5, "mean": 0.8, "std": 0.4})


def test_statistics_survive_huge_and_tiny_values() -> None:
    mean, std = mean_and_std([1e308, -1e308, 1e308]) or (NAN, NAN)
    assert math.isfinite(mean) and math.isfinite(std) and std > 0
    assert picked(zscore([1e308, -1e308, 1e308], 0.5)) == [1]
    assert picked(zscore([3e-300, 1e-300, 3e-300], 0.5)) == [1]


# --- select, caps, components ---


@pytest.mark.parametrize(
    ("settings", "expected", "parameter"),
    [
        ({"policy": "threshold", "threshold": 0.25}, [0, 1, 4], {"threshold": 0.25}),
        ({"policy": "quantile", "quantile": 0.2}, [1], {"quantile": 0.2, "cutoff": 0.0}),
        ({"policy": "group_relative", "group_k": 0.0}, [0, 1, 4], {"k": 0.0}),
        ({"policy": "zscore", "group_k": 1.0}, [1], {"k": 1.0}),
    ],
)
def test_select_dispatches_on_the_config(
    settings: dict[str, Any], expected: list[int], parameter: dict[str, float]
) -> None:
    values = [0.2, 0.0, 0.9, 0.8, 0.1]
    groups = [0, 0, 0, 1, 1]
    selected = select(SamplingConfig(**settings), values, groups)
    assert selected.policy == settings["policy"]
    assert picked(selected) == expected
    assert parameter.items() <= selected.parameter.items()


def test_selection_for_builds_the_records_selected_by() -> None:
    selected = group_relative([1.0, 0.0, 1.0, 1.0], [0, 0, 0, 0], 1.0)
    selection = selected.selection_for(1, component="format")
    assert isinstance(selection, Selection)
    assert selection.policy == "group_relative" and selection.value == 0.0
    assert selection.component == "format"
    assert selection.parameter["k"] == 1.0 and "group_bar" in selection.parameter


def test_component_values() -> None:
    def sample(reward: float, details: dict[str, float]) -> Sample:
        return Sample(0, 0, "p", "r", (1,), (2,), False, reward, MappingProxyType(details))

    samples = [sample(0.5, {"format": 1.0}), sample(NAN, {"format": 0.0}), sample(0.1, {})]
    assert component_values(samples, None)[::2] == [0.5, 0.1]
    assert math.isnan(component_values(samples, None)[1])
    formats = component_values(samples, "format")
    assert formats[:2] == [1.0, 0.0] and math.isnan(formats[2])
    assert picked(threshold(formats, 0.5)) == [1]  # the sample without the component: never
