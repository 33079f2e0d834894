"""Decisions into records, on the producer's thread: redaction first, then the `RolloutRecord`.

A record is redacted before it is built, so that nothing downstream (Redis, the spool, Label
Studio, a validation message) ever holds the text as it was; a redactor that fails drops the
record (RecordError naming the redactor, never the text) rather than send it unredacted.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sampling.records import (
    MAX_TEXT_CHARS,
    RecordError,
    RolloutRecord,
    compared_response,
)
from sampling.redaction import RedactionError, Redactor
from sampling.redaction.config import RedactConfig
from sampling.selection.decision import Decision, Metrics, sample_id_of


class RecordBuilder:
    def __init__(self, redact: RedactConfig, max_text_chars: int = MAX_TEXT_CHARS) -> None:
        self.max_text_chars = max_text_chars
        # Built here, so that a redactor path that does not resolve stops the run at its start.
        self.redactor = Redactor.from_config(redact) if redact.enabled else None
        self._redacted: Counter[str] = Counter()  # kind -> values replaced
        self._failed = 0
        self._lock = threading.Lock()  # counted on the producer thread, read on the caller's

    def prepare(self, decision: Decision) -> int:
        """Redacts the decision's texts ahead of `build` (Redactor.prepare); how many it
        searched. A failure is left to `build`, which counts and reports it."""
        if self.redactor is None:
            return 0
        searched = self._searched(*_texts_of(decision))
        with contextlib.suppress(Exception):
            self.redactor.prepare(searched)
        return len(searched)

    def build(self, decision: Decision) -> dict[str, Any]:
        """The record's JSON; RecordError when it cannot be made (invalid, or not redacted)."""
        sample, info, selection = decision.sample, decision.info, decision.selection
        compared = decision.compared
        shown, redactions, prefix_only, about = self._redacted_texts(*_texts_of(decision))
        if about != selection.about:  # a query may name the very value redaction hides
            selection = selection.model_copy(update={"about": about})
        own = compared.index(sample) + 1 if compared else 1  # the selected response's place
        members = [
            compared_response(
                member,
                sample_id_of(member, info),
                shown=None if shown is None else shown[place],
                shown_cut=prefix_only[place],
                max_text_chars=self.max_text_chars,
            )
            for place, member in enumerate(compared, 1)
        ]
        record = RolloutRecord.from_sample(
            sample,
            run_id=info.run_id,
            step=info.step,
            rank=info.rank,
            model_name_or_path=info.model_name,
            checkpoint_step=info.checkpoint_step,
            generation=dict(info.generation),
            selection=selection,
            max_text_chars=self.max_text_chars,
            shown=None if shown is None else (shown[0], shown[own]),
            shown_cut=(prefix_only[0], prefix_only[own]),
            redactions=redactions,
            reward_weights=info.reward_weights,
            compare=members,
            task_id=decision.sample_id if compared else None,
        )
        return record.model_dump(mode="json")

    def shown(self, texts: Sequence[str]) -> list[str]:
        """Texts as a reviewer may read them (redacted, when redaction is on); raises when
        redaction fails, so that nothing goes out as it was."""
        if self.redactor is None:
            return list(texts)
        return list(self.redactor.redact(list(texts)).texts)

    def metrics(self) -> Metrics:
        if self.redactor is None:
            return {}
        with self._lock:
            redacted, failed = dict(self._redacted), self._failed
        found: Metrics = {"sampling/redaction_failed": (failed, "sum")}
        return found | {f"sampling/redacted/{kind}": (n, "sum") for kind, n in redacted.items()}

    @property
    def _limit(self) -> int:
        # A text far past the cap is redacted only as far as it can be shown (and a margin).
        return 4 * self.max_text_chars

    def _searched(self, texts: list[str], about: str | None) -> list[str]:
        """What the redactor searches for a record: `prepare` and `build` must ask the same,
        or the texts found ahead are searched again."""
        return [t[: self._limit] for t in texts] + ([about] if about else [])

    def _redacted_texts(
        self, texts: list[str], about: str | None
    ) -> tuple[list[str] | None, dict[str, int] | None, list[bool], str | None]:
        """The texts (a prompt, then its responses) with placeholders, the counts by kind,
        whether each was redacted from a prefix only, and `about` (what the reason is about)
        redacted too. One call for all: a value gets the same placeholder in each text."""
        if self.redactor is None:
            return None, None, [False] * len(texts), about
        prefix_only = [len(text) > self._limit for text in texts]
        try:
            redaction = self.redactor.redact(self._searched(texts, about))
        except Exception as error:  # fail closed: any failure keeps the record in
            with self._lock:
                self._failed += 1
            message = (
                str(error)
                if isinstance(error, RedactionError)
                else f"redaction failed: {type(error).__name__}"  # its message may quote text
            )
            raise RecordError(f"not redacted ({message}): the record was dropped") from None
        if redaction.counts:
            with self._lock:
                self._redacted.update(redaction.counts)
        shown = list(redaction.texts)
        return shown[: len(texts)], redaction.counts, prefix_only, shown[-1] if about else about


def _texts_of(decision: Decision) -> tuple[list[str], str | None]:
    """The texts a record shows (the prompt, then its responses) and what its reason is about."""
    sample, compared = decision.sample, decision.compared
    responses = [m.response for m in compared] if compared else [sample.response]
    return [sample.prompt, *responses], decision.selection.about


@dataclass(frozen=True)
class PendingRecord:
    """A decision waiting for the producer's thread to build its record."""

    decision: Decision
    builder: RecordBuilder

    def prepare(self) -> int:
        return self.builder.prepare(self.decision)

    def build(self) -> dict[str, Any]:
        return self.builder.build(self.decision)
