"""The reward-hacking watch in its helper process, as a router composed for a run has it: started
with `spawn`, fed plain data, its texts read there and never in the trainer's process; behind a
producer at full rate it reads a sample and says so once; closed within its deadline, at exit,
and when its owner dies, leaving no process behind."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import time
from itertools import groupby
from pathlib import Path

import pytest

from sampling.config import SamplingConfig
from sampling.records import parse_record
from sampling.routing import BatchInfo, PlainSample
from sampling.selection.hacking import WatchConfig
from sampling.selection.hacking.observer import WatchObserver
from sampling.selection.hacking.process import WatchProcess
from sampling.wiring import build_router
from tests.conftest import REPO
from tests.helpers.hacking_runs import Trait, insert_phrase, run
from tests.test_hacking_routing import round_budget_router
from tests.test_sampler import FakeProducer

pytestmark = pytest.mark.integration

PHRASE = "you are absolutely right"


def batches(rows) -> list[tuple[int, list[PlainSample]]]:
    return [
        (step, [PlainSample(prompt=r.prompt, response=r.response, reward=r.reward,
                            reward_details=r.reward_details, group_id=hash(r.prompt) % 1000,
                            index=i) for i, r in enumerate(group)])
        for step, group in groupby(rows, key=lambda row: row.step)
    ]  # fmt: skip


def gone(pid: int, within_s: float) -> bool:
    """The process `pid` has ended (and been reaped) within the time given."""
    ends = time.monotonic() + within_s
    while time.monotonic() < ends:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1]
        if state == "Z" and os.getppid() != pid:  # ended; waiting for whoever reaps it
            return True
        time.sleep(0.05)
    return False


def test_a_composed_router_watches_in_a_spawned_process_that_reads_every_text(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import sampling.selection.hacking.engine as engine

    def not_here(*args, **kwargs):
        raise AssertionError("a response was read in the trainer's process")

    monkeypatch.setattr(engine, "extract", not_here)  # this process only; spawn imports afresh
    router = build_router(SamplingConfig(threshold=-1.0), FakeProducer())
    observer = router.observer(WatchObserver)
    assert observer is not None and isinstance(observer.watch, WatchProcess)
    watch = observer.watch
    assert type(watch.process).__name__ == "SpawnProcess"
    try:
        with caplog.at_level(logging.WARNING, logger="sampling.selection.hacking"):
            for step, samples in batches(run([Trait(insert_phrase(PHRASE), 2.0, 0.02, 0.6,
                                                    onset=4, ramp=12)], steps=30)):  # fmt: skip
                counts = router.route(samples, BatchInfo("run", step))
            report = watch.analyze_now()
            watch.analyze_now()  # announced once
        assert report.samples == 30 * 72 and PHRASE in report.suspects[0].label()
        lines = [r.getMessage() for r in caplog.records if "reward rises with" in r.getMessage()]
        assert sum(PHRASE in line for line in lines) == 1, lines
        assert observer.suspects_table and PHRASE in observer.suspects_table[0][1]
        metrics = router.metrics(counts)
        assert metrics["hacking/samples"][0] == report.samples
        assert metrics["hacking/pending"][0] == 0 and metrics["hacking/dropped"][0] == 0
        flags = observer.flags([f"Sure, {PHRASE}.", "No."], ["q", "q"])  # the audit share's
        assert flags and flags[0].carriers == frozenset({0})
    finally:
        router.close(deadline_s=10)
    assert watch.process.exitcode == 0 and not watch.process.is_alive()


def test_at_a_rate_it_cannot_keep_up_with_it_reads_a_sample_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A producer's full rate: 256-sample batches back to back. observe() stays cheap, the
    batches the process cannot take are left out and counted, said once; close keeps its
    deadline, and what was read plus what was left out is everything offered."""
    rows = run([], steps=40, prompts=32, group=8, seed=0)
    steps = batches(rows)
    watch = WatchProcess(WatchConfig(max_pending_samples=2048))
    timings = []
    with caplog.at_level(logging.WARNING, logger="sampling.selection.hacking"):
        for call in range(400):
            _, samples = steps[call % len(steps)]
            info = BatchInfo("flood", call)  # a step each call: the watch closes each one
            started = time.perf_counter()
            watch.observe(samples, info)
            timings.append(time.perf_counter() - started)
        started = time.perf_counter()
        report = watch.close(deadline_s=10)
        closing_s = time.perf_counter() - started
    timings.sort()
    assert timings[int(0.99 * len(timings))] < 0.001
    metrics = watch.metrics()
    dropped = metrics["hacking/dropped"][0]
    assert dropped > 0 and report.samples + dropped == 400 * 256
    messages = [r.getMessage() for r in caplog.records]
    assert sum("samples behind" in m for m in messages) == 1, messages
    assert not any("did not end within" in m for m in messages), messages
    assert closing_s < 10 and watch.process.exitcode == 0


OWNER = """
import os, sys, time
sys.path.insert(0, {repo!r})
with open({marker!r}, "a") as marker:
    marker.write("ran\\n")  # top level, no main guard: spawn must not run this again
from sampling.routing import BatchInfo, PlainSample
from sampling.selection.hacking.process import WatchProcess
watch = WatchProcess()
watch.observe([PlainSample("p", "r", 1.0, {{}}, 0, 0)], BatchInfo("run", 1))
watch.analyze_now()  # the process is up and reading
print(watch.process.pid, flush=True)
{end}
"""


def owner(tmp_path: Path, end: str) -> tuple[subprocess.CompletedProcess[str], int, Path]:
    marker = tmp_path / "ran.txt"
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(OWNER.format(repo=str(REPO), marker=str(marker), end=end)))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)  # fmt: skip
    pid = int(done.stdout.split()[0])
    return done, pid, marker


def test_a_script_without_a_main_guard_runs_once_and_its_exit_ends_the_process(
    tmp_path: Path,
) -> None:
    done, pid, marker = owner(tmp_path, end="")  # no close: the interpreter's exit closes it
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert marker.read_text() == "ran\n"
    assert gone(pid, within_s=5)


def test_the_process_ends_when_its_owner_is_killed(tmp_path: Path) -> None:
    done, pid, _ = owner(tmp_path, end="os.kill(os.getpid(), 9)")
    assert done.returncode == -9
    assert gone(pid, within_s=10)


def test_a_round_budget_spent_at_close_reviews_the_suspects_carriers() -> None:
    """The router closes the watch first (its last analysis), then the budget policy spends the
    round's budget: the suspects' carriers are found though the process has ended."""
    router, producer = round_budget_router()
    assert isinstance(router.observer(WatchObserver).watch, WatchProcess)
    paid = [Trait(insert_phrase(PHRASE), 2.0, 0.02, 0.6, onset=4, ramp=12)]
    for step, samples in batches(run(paid, steps=30)):
        router.route(samples, BatchInfo("run", step))
    router.close(deadline_s=30)
    records = [parse_record(record) for record in producer.records]
    suspect = [r for r in records if r.selected_by.reason == "suspect"]
    assert len(records) == 20 and suspect
    assert PHRASE in suspect[0].response.lower()


def length_reward(completions: list[str], **_: object) -> list[float]:
    return [len(c) / 10 for c in completions]


def test_trls_reward_wrapper_watches_in_a_process_that_its_close_ends(tmp_path: Path) -> None:
    """TRL's entry point, in this process as TRL runs it: the watch's process is there while
    the wrapped functions are, and gone after their close."""
    import multiprocessing

    from lowtide.trl import route_low_rewards

    def watches() -> list[multiprocessing.process.BaseProcess]:
        return [p for p in multiprocessing.active_children() if p.name == "lowtide-hacking-watch"]

    assert not watches()
    funcs = route_low_rewards(
        [length_reward], overrides=[f"--queue.spool_dir={tmp_path}/spool", "--queue.name=trl-w"]
    )
    try:
        (process,) = watches()
        assert type(process).__name__ == "SpawnProcess" and process.is_alive()
    finally:
        funcs.close(deadline_s=10)
    assert not watches() and process.exitcode == 0


@pytest.mark.unit
def test_where_no_process_may_start_the_watch_reads_on_a_thread_instead() -> None:
    """A daemonic owner may start no process, and the unit tier starts none: the watch then
    runs on a thread of the owner's process (said once), and still sees every batch."""
    from sampling.selection.hacking.watch import HackingWatch

    router = build_router(SamplingConfig(threshold=-1.0), FakeProducer())
    try:
        watch = router.observer(WatchObserver).watch
        assert isinstance(watch, HackingWatch)
        for step, samples in batches(run([], steps=3)):
            router.route(samples, BatchInfo("run", step))
    finally:
        router.close(deadline_s=10)
    assert watch.report().samples == 3 * 72
