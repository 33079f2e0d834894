"""Redaction in the routing core: records are redacted on the thread that builds them (the
producer's), the counts reach the router's metrics, and a failing redactor drops the record
(counted) with a message that holds none of its text."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from sampling.config import QueueConfig, SamplingConfig
from sampling.records import parse_record
from sampling.routing import BatchInfo, PlainSample
from sampling.transport.producer import Producer
from sampling.wiring import build_router

pytestmark = pytest.mark.unit

PROMPT = "Reset the account of jane.doe@example.com, card 4111 1111 1111 1111."
RESPONSE = "Done: jane.doe@example.com has a new password; call +44 20 7946 0958."
PLANTED = ("jane.doe@example.com", "4111 1111 1111 1111", "+44 20 7946 0958")


class BuildingProducer:
    """Builds the records when flushed, on a thread of its own, as the real producer does."""

    def __init__(self) -> None:
        self.pending: list = []
        self.records: list[dict] = []
        self.threads: set[str] = set()
        self.stats = None

    def submit(self, records: list) -> None:
        self.pending += records

    def flush(self) -> None:
        def build() -> None:
            self.threads.add(threading.current_thread().name)
            for source in self.pending:
                try:
                    self.records.append(source.build())
                except Exception as error:  # what the producer does with RecordError
                    self.records.append({"error": str(error)})

        thread = threading.Thread(target=build, name="builder")
        thread.start()
        thread.join()
        self.pending = []

    def close(self, deadline_s: float) -> None:
        pass


def sample(prompt: str = PROMPT, response: str = RESPONSE, index: int = 0) -> PlainSample:
    return PlainSample(prompt=prompt, response=response, reward=0.0, index=index)


def test_records_are_redacted_off_the_callers_thread_and_counted(closing) -> None:
    producer = BuildingProducer()
    router = closing(build_router(SamplingConfig(threshold=0.5), producer))
    counts = router.route([sample()], BatchInfo("run", 1))
    assert producer.records == []  # nothing built (or redacted) on the caller's thread
    producer.flush()
    assert producer.threads == {"builder"}
    record = parse_record(producer.records[0])
    assert record.prompt == "Reset the account of <EMAIL_1>, card <CARD_1>."
    assert record.response == "Done: <EMAIL_1> has a new password; call <PHONE_1>."
    assert record.redactions == {"EMAIL": 2, "CARD": 1, "PHONE": 1}
    assert record.prompt_chars == len(record.prompt) and not record.prompt_cut
    metrics = router.metrics(counts)
    assert metrics["sampling/redacted/EMAIL"] == (2, "sum")
    assert metrics["sampling/redacted/CARD"] == (1, "sum")
    assert metrics["sampling/redaction_failed"] == (0, "sum")


def test_a_text_far_past_the_cap_keeps_its_original_length_in_the_record(closing) -> None:
    """Only the part that can be shown is redacted; the record still says how long it was."""
    producer = BuildingProducer()
    router = closing(build_router(SamplingConfig(threshold=0.5), producer, max_text_chars=100))
    long_response = "a@example.com " + "x" * 10_000
    router.route([sample(response=long_response)], BatchInfo("run", 1))
    producer.flush()
    record = parse_record(producer.records[0])
    assert record.response_cut and record.response.startswith("<EMAIL_")
    assert record.response_chars == len(long_response)


def test_a_text_that_placeholders_push_past_the_cap_is_sent_cut(closing) -> None:
    """An address shorter than its placeholder, in a text just under the cap: the redacted text
    is cut, and the record is still built (its length is more than what was kept)."""
    producer = BuildingProducer()
    router = closing(build_router(SamplingConfig(threshold=0.5), producer, max_text_chars=100))
    response = "write to a@b.co " + "x" * 83  # 99 characters; 102 once redacted
    router.route([sample(response=response)], BatchInfo("run", 1))
    producer.flush()
    record = parse_record(producer.records[0])
    assert record.response_cut and record.response.startswith("write to <EMAIL_")
    assert record.response_chars > len(record.response)


def test_a_long_text_that_redaction_shrinks_under_the_cap_still_says_it_was_cut(closing) -> None:
    """Only the first 4x the cap of a text is redacted: when that prefix collapses to a short
    placeholder, what follows it is gone, and the record must say so."""
    producer = BuildingProducer()
    router = closing(build_router(SamplingConfig(threshold=0.5), producer, max_text_chars=100))
    key = "-----BEGIN PRIVATE KEY-----\n" + "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" * 10
    key += "\n-----END PRIVATE KEY-----"
    response = key + " and then " + "more words " * 100  # past 4x the cap, key first
    router.route([sample(response=response)], BatchInfo("run", 1))
    producer.flush()
    record = parse_record(producer.records[0])
    assert record.response_cut and record.response_chars == len(response)


def test_switched_off_the_record_is_verbatim(closing) -> None:
    producer = BuildingProducer()
    router = closing(build_router(SamplingConfig(threshold=0.5, redact=False), producer))
    router.route([sample()], BatchInfo("run", 1))
    producer.flush()
    record = parse_record(producer.records[0])
    assert record.prompt == PROMPT and record.redactions == {}
    assert not any(name.startswith("sampling/redact") for name in router.metrics(
        router.route([], BatchInfo("run", 2))))  # fmt: skip


def test_a_failing_redactor_drops_the_record_and_says_so_without_the_text(closing) -> None:
    producer = BuildingProducer()
    config = SamplingConfig(
        threshold=0.5, redact={"redactor": "tests.helpers.redaction_plugins:broken"}
    )
    router = closing(build_router(config, producer))
    counts = router.route([sample()], BatchInfo("run", 1))
    producer.flush()
    (error,) = producer.records
    assert set(error) == {"error"}
    assert "tests.helpers.redaction_plugins:broken raised ValueError" in error["error"]
    assert not any(value in error["error"] for value in PLANTED)
    assert router.metrics(counts)["sampling/redaction_failed"] == (1, "sum")


@pytest.mark.integration
def test_the_real_producer_skips_an_unredactable_record_and_queues_the_rest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A real Producer (its thread builds the records) against the Redis the tests use: the
    record whose redactor fails is never queued or spooled, the others are, and the log line
    names the failure without the text."""
    import redis

    from tests.helpers.queued import queued_records

    config = SamplingConfig(
        threshold=0.5, redact={"redactor": "tests.helpers.redaction_plugins:broken"}
    )
    queue = QueueConfig(name="redaction-failing", spool_dir=str(tmp_path / "spool"),
                        max_latency_ms=20)  # fmt: skip
    redis.Redis.from_url(queue.redis_url.get_secret_value()).delete(f"rq:queue:{queue.name}")
    producer = Producer(queue)
    router = build_router(config, producer)
    with caplog.at_level(logging.ERROR):
        router.route([sample()], BatchInfo("run", 1))
        router.close(5.0)
    assert producer.stats.unbuilt == 1 and producer.stats.enqueued == 0
    assert producer.stats.spooled == 0
    assert queued_records(queue.redis_url.get_secret_value(), queue.name) == []
    assert not any(value in caplog.text for value in PLANTED)
    assert "the record was dropped" in caplog.text


def test_a_prepared_record_is_redacted_ahead_and_built_the_same(
    closing, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`prepare` searches a record's texts before it is built (the producer redacts a few
    records, then builds them); the build reads those spans instead of searching again, and
    the record is the one built without it."""
    from sampling.redaction.redactor import Redactor

    searched: list[str] = []
    find = Redactor._find

    def counted(self: Redactor, text: str) -> list:  # type: ignore[type-arg]
        searched.append(text)
        return find(self, text)

    monkeypatch.setattr(Redactor, "_find", counted)
    producer = BuildingProducer()
    router = closing(build_router(SamplingConfig(threshold=0.5), producer))
    router.route([sample(), sample(prompt=PROMPT + " ", index=1)], BatchInfo("run", 1))
    prepared, plain = producer.pending
    prepared.prepare()
    assert searched == [PROMPT, RESPONSE]
    record, other = parse_record(prepared.build()), parse_record(plain.build())
    assert searched == [PROMPT, RESPONSE, PROMPT + " "]  # the response: found once, kept
    assert (record.prompt + " ", record.response) == (other.prompt, other.response)
    assert record.redactions == other.redactions == {"EMAIL": 2, "CARD": 1, "PHONE": 1}


def test_the_producer_prepares_a_run_of_sources_then_builds_them() -> None:
    """Sources are prepared until their texts reach PREPARED_TEXTS, then built; a source
    without `prepare` (a built record) is taken as it comes."""
    from sampling.transport.producer import PREPARED_TEXTS, ProducerStats, _built

    events: list[tuple[str, int]] = []

    class Source:
        def __init__(self, number: int) -> None:
            self.number = number

        def prepare(self) -> int:
            events.append(("prepare", self.number))
            return 2  # a prompt and a response

        def build(self) -> dict:
            events.append(("build", self.number))
            return {"number": self.number}

    run = PREPARED_TEXTS // 2
    sources = [Source(number) for number in range(run + 3)]
    built = _built([{"number": -1}, *sources], ProducerStats())
    assert built == [{"number": number} for number in range(-1, run + 3)]
    runs = [range(run), range(run, run + 3)]
    steps = ("prepare", "build")
    assert events == [(step, n) for numbers in runs for step in steps for n in numbers]
