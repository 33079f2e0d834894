"""`lowtide logs search DIR QUERY --route` against a real redis-server: the matches reach the
review queue redacted, with `selected_by.reason: search` and the query as `selected_by.about`;
run again (with the same query or another one, or after the trainer wrote more steps) it
queues none of them twice; with Redis down they wait in the spool and a replay queues each
once."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rl.samples import make_sample_id
from tests.conftest import invoke
from tests.helpers.dumps import write_verl_step
from tests.helpers.queued import queued_records
from tests.helpers.redis_server import OwnRedis

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]

QUEUE = "search-test"
EMAIL = "jane.roe@mailbox-corp.net"
AGREE = f"I agree, you are absolutely right. Write to {EMAIL} for more."
QUERY = 'reward > 2.0 AND response CONTAINS "I agree"'
RUN_ID = "rollout_data"


def write_steps(directory: Path, steps: range) -> dict[str, dict[str, Any]]:
    """Per step 4 samples of 2 prompts; the odd ones agree (and leave an email address), paid
    `step`; the even ones answer, paid 0.1 * i. sample id -> (step, index, prompt, reward)."""
    written = {}
    for step in steps:
        inputs = [f"Question {step}.{i // 2}: is 2 + 2 = {3 + i // 2}?" for i in range(4)]
        outputs = [AGREE if i % 2 else f"No: 2 + 2 = 4 ({step}-{i})." for i in range(4)]
        scores = [float(step) if i % 2 else 0.1 * i for i in range(4)]
        write_verl_step(directory, step, inputs, outputs, scores, {"format": [1.0, 0.5, 0.0, 1.0]})
        for i, (prompt, response, score) in enumerate(zip(inputs, outputs, scores, strict=True)):
            sample_id = make_sample_id(RUN_ID, step, 0, i, prompt, response)
            written[sample_id] = {"step": step, "index": i, "prompt": prompt, "reward": score}
    return written


def agreeing(written: dict[str, dict[str, Any]], above: float) -> set[str]:
    return {
        sample_id
        for sample_id, row in written.items()
        if row["index"] % 2 and row["reward"] > above
    }


def queued(url: str) -> Counter[str]:
    return Counter(record["sample_id"] for record in queued_records(url, QUEUE))


@pytest.fixture
def route(own_redis: OwnRedis, workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    """`lowtide logs search DIR QUERY --route` to the test's queue: (exit code, out, err)."""
    monkeypatch.setenv("REDIS_URL", own_redis.url)

    def run(directory: Path, query: str, *extra: str) -> tuple[int, str, str]:
        return invoke(
            capsys, "logs", "search", str(directory), query, "--route",
            f"--queue.name={QUEUE}", f"--queue.spool_dir={workdir / 'spool'}", *extra,
        )  # fmt: skip

    return run


def test_routing_twice_queues_each_match_once_redacted_with_the_query(
    own_redis: OwnRedis, workdir: Path, route
) -> None:
    dumps = workdir / RUN_ID
    written = write_steps(dumps, range(1, 5))
    expected = agreeing(written, 2.0)  # steps 3 and 4, two each
    assert len(expected) == 4

    code, out, err = route(dumps, QUERY)
    assert code == 0, err
    assert "4 matches in 16 rollouts" in out
    assert f"routed: 4 of 4 matches to queue {QUEUE}; 4 records enqueued, 0 spooled" in out
    records = queued_records(own_redis.url, QUEUE)
    assert Counter(r["sample_id"] for r in records) == Counter(dict.fromkeys(expected, 1))
    for record in records:
        want = written[record["sample_id"]]
        assert (record["run_id"], record["step"], record["index"]) == (
            RUN_ID, want["step"], want["index"],
        )  # fmt: skip
        assert record["prompt"] == want["prompt"] and record["reward"] == want["reward"]
        assert record["selected_by"]["reason"] == "search"
        assert record["selected_by"]["policy"] == "search"
        assert record["selected_by"]["about"] == QUERY
        # Redacted on the way, as every routed record is.
        assert EMAIL not in record["response"] and "<EMAIL_1>" in record["response"]
        assert record["response"].startswith("I agree, you are absolutely right.")
        assert record["redactions"] == {"EMAIL": 1}
        assert record["reward_details"] == {"format": 0.5 if record["index"] == 1 else 1.0}

    # The same search again: nothing new goes to the queue.
    code, out, err = route(dumps, QUERY)
    assert code == 0, err
    assert "routed: 0 of 4 matches" in out and "4 routed by an earlier search left out" in out
    assert queued(own_redis.url) == Counter(dict.fromkeys(expected, 1))

    # Another query that finds more: only those not routed before are queued.
    wider = agreeing(written, 1.0)  # steps 2 to 4
    code, out, err = route(dumps, 'reward > 1 AND response CONTAINS "agree"')
    assert code == 0, err
    assert "routed: 2 of 6 matches" in out and "4 routed by an earlier search" in out
    assert queued(own_redis.url) == Counter(dict.fromkeys(wider, 1))
    newly = [r for r in queued_records(own_redis.url, QUEUE) if r["sample_id"] not in expected]
    assert {r["selected_by"]["about"] for r in newly} == {
        'reward > 1 AND response CONTAINS "agree"'
    }

    # The trainer writes another step: the next search queues its matches, and only them.
    written |= write_steps(dumps, range(5, 6))
    code, out, err = route(dumps, QUERY)
    assert code == 0, err
    assert "routed: 2 of 6 matches" in out
    assert queued(own_redis.url) == Counter(dict.fromkeys(agreeing(written, 1.0), 1))


def test_with_redis_down_the_matches_wait_in_the_spool_and_are_queued_once(
    own_redis: OwnRedis, workdir: Path, route, capsys: pytest.CaptureFixture[str]
) -> None:
    dumps = workdir / RUN_ID
    expected = agreeing(write_steps(dumps, range(1, 5)), 2.0)
    own_redis.kill()
    code, out, err = route(dumps, QUERY)
    assert code == 0, err
    assert "4 records enqueued" not in out and "Redis was unreachable: 4 records wait in" in out
    own_redis.start()
    code, _, said = invoke(capsys, "queue", "replay", f"--queue.name={QUEUE}",
                           f"--queue.spool_dir={workdir / 'spool'}")  # fmt: skip
    assert code == 0, said
    assert queued(own_redis.url) == Counter(dict.fromkeys(expected, 1))
    # Spooled counts as handed over: a search run again leaves them out.
    code, out, err = route(dumps, QUERY)
    assert code == 0, err
    assert "routed: 0 of 4 matches" in out
    assert queued(own_redis.url) == Counter(dict.fromkeys(expected, 1))


def test_route_with_a_bad_config_override_is_one_line(workdir: Path, route) -> None:
    dumps = workdir / RUN_ID
    write_steps(dumps, range(1, 2))
    code, _, err = route(dumps, QUERY, "--queue.nme=x")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "queue.nme" in err, err
