"""The interface every trainer adapter implements (sampling/sources/adapter.py), on a toy trainer
that hands over one sample at a time, as a fourth trainer's folder would: one subclass, its
samples put into `Bursts`, a fake router of our own interface."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import pytest

from sampling.batch import BatchInfo, PlainSample
from sampling.selection.decision import RouteCounts
from sampling.sources.adapter import MIN_FLUSH_S, Bursts, TrainerAdapter
from sampling.sources.idle_window import IdleWindow

pytestmark = pytest.mark.unit
QUIET_S = 0.3


class FakeRouter:
    def __init__(self, fail: bool = False) -> None:
        self.batches: list[list[Any]] = []
        self.closed: list[float] = []
        self.fail = fail

    def route(self, samples: Sequence[Any], info: BatchInfo) -> RouteCounts:
        if self.fail:
            raise RuntimeError("the core broke")
        self.batches.append(list(samples))
        return RouteCounts(selected=len(samples), capped=0, deduped=0, submitted=len(samples))

    def close(self, deadline_s: float) -> None:
        self.closed.append(deadline_s)


class ToyRouting(TrainerAdapter):
    log = logging.getLogger("tests.toy")

    def __init__(self, router: Any, *, max_samples: int = 100, capacity: int = 1000) -> None:
        window = IdleWindow(QUIET_S, max_samples=max_samples)
        super().__init__(router)
        self.ends: list[bool] = []
        self.samples = Bursts(
            self, self._deliver, window, name="toy", what="samples", capacity=capacity
        )

    def score(self, reward: float) -> None:  # what the trainer calls, on its own thread
        self.samples.put(reward)

    def _deliver(self, rewards: list[float], burst_over: bool) -> None:
        self.ends.append(burst_over)
        if rewards:
            with self.guard("could not route a batch"):
                batch = [PlainSample("p", "r", r, index=i) for i, r in enumerate(rewards)]
                self.route(batch, BatchInfo("toy", step=len(self.ends)))

    def drain(self, deadline_s: float) -> None:
        self.samples.close(deadline_s)


def wait_for(condition: Any, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_burst_is_routed_once_it_is_quiet_and_close_routes_the_rest() -> None:
    router = FakeRouter()
    toy = ToyRouting(router)
    for reward in (0.1, 0.2, 0.3):
        toy.score(reward)
    assert router.batches == []  # the burst is not over yet
    wait_for(lambda: router.batches)
    assert [[s.reward for s in b] for b in router.batches] == [[0.1, 0.2, 0.3]]
    assert toy.ends == [True] and toy.routed.batches == 1 and toy.routed.submitted == 3
    toy.score(0.4)
    toy.close(deadline_s=2)
    toy.close(deadline_s=2)  # a second close does nothing
    assert [[s.reward for s in b] for b in router.batches] == [[0.1, 0.2, 0.3], [0.4]]
    assert len(router.closed) == 1 and router.closed[0] >= MIN_FLUSH_S
    toy.score(0.5)  # after close: taken, never routed, never raised
    assert toy.samples.waiting == 0


def test_a_full_window_is_routed_at_once_and_the_burst_ends_when_quiet() -> None:
    router = FakeRouter()
    toy = ToyRouting(router, max_samples=4)
    for reward in range(8):
        toy.score(float(reward))
    wait_for(lambda: len(toy.ends) == 3)
    # Two full windows, then, once quiet, the end of the burst with nothing left in it.
    assert [len(b) for b in router.batches] == [4, 4] and toy.ends == [False, False, True]
    toy.close(deadline_s=2)


def test_a_problem_never_reaches_the_trainer_and_is_warned_about_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    toy = ToyRouting(FakeRouter(fail=True))
    with caplog.at_level(logging.WARNING, logger="tests.toy"):
        for _ in range(2):
            toy.score(0.1)
            toy.samples.flush()
        toy.close(deadline_s=2)
    assert toy.problems == {"could not route a batch": 2}
    warnings = [r.getMessage() for r in caplog.records if r.name == "tests.toy"]
    assert warnings == [
        "lowtide: could not route a batch (RuntimeError: the core broke); training goes on"
    ]


def test_close_still_flushes_the_router_when_draining_fails() -> None:
    class Broken(ToyRouting):
        def drain(self, deadline_s: float) -> None:
            super().drain(deadline_s)
            raise OSError("disk gone")

    router = FakeRouter()
    toy = Broken(router)
    toy.close(deadline_s=1)
    assert toy.problems == {"could not route what was waiting": 1} and len(router.closed) == 1


def test_a_full_queue_turns_samples_away_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    router = FakeRouter()
    toy = ToyRouting(router, capacity=2)
    with caplog.at_level(logging.WARNING, logger="tests.toy"):
        for reward in range(50):  # faster than the worker takes them
            toy.score(float(reward))
        toy.close(deadline_s=2)
    turned_away = toy.problems["turned away"]
    assert turned_away >= 1 and sum(map(len, router.batches)) == 50 - turned_away
    warnings = [r.getMessage() for r in caplog.records if r.name == "tests.toy"]
    assert warnings == ["lowtide: over 2 samples wait to be routed; more are not routed (training "
                        "goes on)"]  # fmt: skip
