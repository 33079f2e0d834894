"""Selection policies and budget shares of your own, from outside the tree: a module in a
temporary directory registers one (or a config names its function by dotted path), a run config
names it, and a routing step selects with it end to end."""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path

import pytest

from lowtide.errors import UsageError
from lowtide.integrations import routing_settings
from sampling.records import parse_record
from sampling.routing import BatchInfo, PlainSample
from sampling.selection.policies import PolicyError, policy_for
from sampling.selection.shares import ShareError, shares_for
from sampling.wiring import build_router
from tests.test_sampler import FakeProducer

pytestmark = pytest.mark.unit

POLICIES = '''
from sampling.selection.policies import Selected, register_policy


def two_lowest(config, values, group_ids):
    """The two lowest finite values of the batch, whatever they are."""
    finite = sorted((value, index) for index, value in enumerate(values) if value == value)[:2]
    return Selected(
        policy="two_lowest",
        indices=sorted(index for _, index in finite),
        parameter={"count": 2.0},
        values={index: value for value, index in finite},
    )


register_policy("{name}")(two_lowest)
'''

SHARES = '''
from sampling.selection.shares import Take, register_share


@register_share("{name}")
def longest_answers(pool, count):
    """The longest responses: where padding hides."""
    def length(number):
        return len(pool.candidates[pool.groups[number].representative].response)

    ranked = sorted(pool.open_groups(), key=lambda number: (-length(number), number))
    return [Take(number, "{name}") for number in ranked[:count]]
'''


def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> str:
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def config_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lowtide.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def samples(rewards: list[float], lengths: list[int] | None = None) -> list[PlainSample]:
    lengths = lengths or [10] * len(rewards)
    return [
        PlainSample(f"prompt {i}", f"answer {i} " + "x" * lengths[i], reward, index=i)
        for i, reward in enumerate(rewards)
    ]


def test_a_policy_named_by_dotted_path_in_a_config_selects_a_routing_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, closing
) -> None:
    name = module(
        tmp_path, monkeypatch, "outside_policies_by_path", POLICIES.replace("{name}", "x1")
    )
    path = config_file(tmp_path, f"sampling: {{policy: '{name}:two_lowest', max_per_step: 8}}\n")
    settings = routing_settings(path, environ={})
    producer = FakeProducer()
    router = closing(build_router(settings.sampling, producer))
    counts = router.route(samples([0.9, 0.3, 0.8, 0.1, 0.5]), BatchInfo("run", 1))
    assert (counts.selected, counts.submitted) == (2, 2)
    records = [parse_record(record) for record in producer.records]
    assert sorted(r.prompt for r in records) == ["prompt 1", "prompt 3"]
    assert {r.selected_by.policy for r in records} == {"two_lowest"}
    assert {r.selected_by.parameter["count"] for r in records} == {2.0}


def test_a_policy_registered_by_name_is_known_once_its_module_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, closing
) -> None:
    name = module(
        tmp_path, monkeypatch, "outside_policies_by_name", POLICIES.replace("{name}", "pick2")
    )
    path = config_file(tmp_path, "sampling: {policy: pick2}\n")
    with pytest.raises(UsageError, match="unknown policy 'pick2'"):
        routing_settings(path, environ={})
    __import__(name)  # what a user's own script, or a module the config names, does
    producer = FakeProducer()
    router = closing(build_router(routing_settings(path, environ={}).sampling, producer))
    router.route(samples([0.9, 0.3, 0.8, 0.1, 0.5]), BatchInfo("run", 1))
    assert sorted(parse_record(r).prompt for r in producer.records) == ["prompt 1", "prompt 3"]


def test_a_misspelled_policy_fails_at_load_and_a_path_to_nothing_when_the_run_starts(
    tmp_path: Path,
) -> None:
    with pytest.raises(UsageError, match=r"unknown policy 'zscor' \(did you mean zscore\?"):
        routing_settings(config_file(tmp_path, "sampling: {policy: zscor}\n"), environ={})
    settings = routing_settings(
        config_file(tmp_path, "sampling: {policy: 'no_such_module_here:pick'}\n"), environ={}
    )
    with pytest.raises(PolicyError, match="cannot import module 'no_such_module_here'"):
        build_router(settings.sampling, FakeProducer())
    with pytest.raises(PolicyError, match="not a per-step policy"):
        policy_for("budget")


def test_a_budget_share_from_outside_takes_its_part_of_a_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = module(
        tmp_path, monkeypatch, "outside_shares", SHARES.replace("{name}", "longest_answers")
    )
    path = config_file(
        tmp_path,
        f"""\
        sampling:
          policy: budget
          review_budget: {{reviews: 4, per: round}}
          budget:
            audit_share: 0
            random_share: 0
            uncertainty_share: 0
            shares: {{'{name}:longest_answers': 0.5}}
        """,
    )
    settings = routing_settings(path, environ={})
    producer = FakeProducer()
    router = build_router(settings.sampling, producer)
    rewards = [0.9, 0.1, 0.8, 0.2, 0.7, 0.6, 0.5, 0.4]
    router.route(samples(rewards, lengths=[400, 5, 300, 6, 10, 11, 12, 13]), BatchInfo("run", 1))
    router.close()  # a round's budget is spent when it ends
    records = [parse_record(record) for record in producer.records]
    reasons = Counter(r.selected_by.reason for r in records)
    assert reasons == {"longest_answers": 2, "low_reward": 2}
    by_reason = {r.prompt: r.selected_by.reason for r in records}
    assert by_reason["prompt 0"] == by_reason["prompt 2"] == "longest_answers"
    assert by_reason["prompt 1"] == by_reason["prompt 3"] == "low_reward"


def test_budget_share_names_are_checked_at_load(tmp_path: Path) -> None:
    def loading(budget: str) -> None:
        text = f"sampling: {{policy: budget, review_budget: {{reviews: 4}}, budget: {budget}}}\n"
        routing_settings(config_file(tmp_path, text), environ={})

    with pytest.raises(UsageError, match="unknown budget share 'longest'"):
        loading("{shares: {longest: 0.1}}")
    with pytest.raises(UsageError, match="'audit' is a built-in share"):
        loading("{shares: {audit: 0.1}}")
    with pytest.raises(UsageError, match=r"uncertainty_share \+ shares is 1.1; at most 1"):
        loading("{shares: {'a.b:c': 0.5}, audit_share: 0.6, random_share: 0, "
                "uncertainty_share: 0}")  # fmt: skip
    with pytest.raises(UsageError, match="adaptive learns the built-in shares only"):
        loading("{shares: {'a.b:c': 0.1}, adaptive: true}")
    settings = routing_settings(
        config_file(
            tmp_path,
            "sampling: {policy: budget, review_budget: {reviews: 4}, "
            "budget: {shares: {'no_such_module_here:pick': 0.1}}}\n",
        ),
        environ={},
    )
    with pytest.raises(ShareError, match="cannot import module 'no_such_module_here'"):
        shares_for(settings.sampling.budget)
