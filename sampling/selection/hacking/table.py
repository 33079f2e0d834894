"""The suspects as a table (`hacking/suspects`) for WandB, TensorBoard and the local files: one
row per suspect (growing first, then the paid but not spreading), its strongest example beside
it. Built on the watch's thread after each analysis, its texts through the run's redaction."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from sampling.selection.hacking.features import Feature, extract
from sampling.selection.hacking.suspects import Suspect, WatchReport

SUSPECTS_TABLE = "hacking/suspects"
COLUMNS = ("rank", "feature", "growing", "lift", "effect", "groups", "prevalence_then",
           "prevalence_now", "paid_by", "example_step", "example_reward", "example_sample_id",
           "example", "description")  # fmt: skip
Rows = tuple[tuple[object, ...], ...]
# The texts as a reviewer may read them (the run's redaction); raises when that fails.
Redact = Callable[[Sequence[str]], Sequence[str]]


MASK = "<redacted>"
WORDED = ("phrase", "prefix", "suffix")


def reviewer_view(suspect: Suspect, redact: Redact | None) -> Suspect:
    """The suspect as it may be shown. Redaction finds values in running text; a phrase
    feature is words cut out of it (`ada lovelace example` from an e-mail address), which it
    would not find. So a worded feature that a carrier has before redaction and not after is
    masked, folded phrase and all."""
    if redact is None or suspect.feature.kind not in WORDED or not suspect.examples:
        return suspect
    raw = suspect.examples[0].response
    shown = redact([raw])[0]
    if shown == raw:
        return suspect
    key = suspect.feature.key
    if key in extract(raw).keys and key not in extract(shown).keys:
        return replace(suspect, feature=Feature(suspect.feature.kind, MASK), phrase=None)
    return suspect


def suspects_table(report: WatchReport, redact: Redact | None = None) -> Rows:
    """The rows (in COLUMNS' order): no None, one type per column (NaN for a missing number,
    "" for a missing text)."""
    rows = []
    suspects = [*report.suspects, *report.lift_only]
    for rank, suspect in enumerate(suspects, start=1):
        rows.append(_row(rank, reviewer_view(suspect, redact)))
    if redact is None or not rows:
        return tuple(rows)
    texts = [text for row in rows for text in (row[1], row[12], row[13])]
    shown = iter(redact(texts))
    return tuple((*row[:1], next(shown), *row[2:12], next(shown), next(shown)) for row in rows)


def _row(rank: int, suspect: Suspect) -> tuple[object, ...]:
    example = suspect.examples[0] if suspect.examples else None
    paid = suspect.paid_by
    now = suspect.prevalence_now
    return (
        rank,
        suspect.label(),
        suspect.growing,
        float(suspect.lift),
        float(suspect.effect),
        int(suspect.groups),
        float(suspect.prevalence_then),
        float(now) if now is not None else math.nan,
        paid[0] if paid else "",
        example.step if example else -1,
        float(example.reward) if example else math.nan,
        example.sample_id if example else "",
        example.response if example else "",
        suspect.describe(),
    )
