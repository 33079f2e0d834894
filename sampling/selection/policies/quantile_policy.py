"""The `quantile` policy: the bottom share of a batch."""

from __future__ import annotations

from collections.abc import Sequence

from rl.numbers import finite_items
from sampling.selection.policies.registry import PolicySettings, register_policy
from sampling.selection.policies.selected import Selected, selected
from sampling.selection.policies.values import bottom_count


def quantile(values: Sequence[float], q: float) -> Selected:
    """The bottom share `q` of the batch's finite values: the ceil(q * n) lowest, at least one
    when q > 0, ties broken by index (stable). The cutoff is the q-quantile by the inverted-CDF
    definition (numpy's "inverted_cdf"): the highest value picked, a value of the batch, so
    "value <= cutoff" holds for every pick; ties at the cutoff beyond the count are left out,
    so a batch of equal values gives exactly ceil(q * n), not all of them."""
    if not 0 <= q <= 1:
        raise ValueError(f"quantile must be between 0 and 1, got {q}")
    finite = finite_items(values)
    count = bottom_count(q, len(finite))
    if count == 0:
        return selected("quantile", [], {"quantile": float(q)})
    lowest = sorted(finite, key=lambda item: (item[1], item[0]))[:count]
    return selected("quantile", lowest, {"quantile": float(q), "cutoff": lowest[-1][1]})


@register_policy("quantile")
def _configured(config: PolicySettings, values: Sequence[float], _: Sequence[int]) -> Selected:
    return quantile(values, config.quantile)
