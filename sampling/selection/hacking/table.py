"""The suspects as a table (`hacking/suspects`) for WandB, TensorBoard and the local files: one
row per suspect (growing first, then the paid but not spreading), its strongest example beside
it. Built on the watch's thread after each analysis, its texts through the run's redaction
(`shown_suspect`: what the console line, a suspect pick's `about` and the run report show too)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from sampling.selection.hacking.classes import members_of
from sampling.selection.hacking.features import Feature, extract
from sampling.selection.hacking.suspects import Example, Suspect, WatchReport

SUSPECTS_TABLE = "hacking/suspects"
COLUMNS = ("rank", "feature", "growing", "lift", "effect", "groups", "prevalence_then",
           "prevalence_now", "paid_by", "example_step", "example_reward", "example_sample_id",
           "example", "description")  # fmt: skip
Rows = tuple[tuple[object, ...], ...]
# The texts as a reviewer may read them (the run's redaction); raises when that fails.
Redact = Callable[[Sequence[str]], Sequence[str]]


MASK = "<redacted>"
WORDED = ("phrase", "prefix", "suffix")


def shown_suspect(suspect: Suspect, redact: Redact | None) -> Suspect:
    """The suspect as it may be shown: its feature's text, assembled phrase and examples
    through redaction (one call, so a value gets one placeholder throughout). Redaction finds
    values in running text; a phrase feature is words cut out of it (`ada lovelace example`
    from an e-mail address), which it would not find. So a worded feature that an example
    carries before redaction and not after is masked, assembled phrase and all (a word class
    too, when an example loses one of its words)."""
    if redact is None:
        return suspect
    feature, examples = suspect.feature, suspect.examples
    texts = [feature.text, suspect.phrase or "", *(example.response for example in examples)]
    text, phrase, *responses = redact(texts)
    shown = replace(
        suspect,
        feature=Feature(feature.kind, text),
        phrase=phrase if suspect.phrase is not None else None,
        examples=tuple(replace(e, response=r) for e, r in zip(examples, responses, strict=True)),
    )
    if _cut_by_redaction(_worded_keys(feature), examples, responses):
        return replace(shown, feature=Feature(feature.kind, MASK), phrase=None)
    return shown


def _worded_keys(feature: Feature) -> tuple[str, ...]:
    """The keys of the words a feature shows: a phrase's (prefix's, suffix's) own, or each of a
    word class's words (the last four digits of phone numbers said in one frame)."""
    if feature.kind in WORDED:
        return (feature.key,)
    return members_of(feature)  # () for a feature without words


def _cut_by_redaction(
    keys: Sequence[str], examples: Sequence[Example], redacted: Sequence[str]
) -> bool:
    """An example carries one of the keys before redaction and not after."""
    if not keys:
        return False
    for example, after in zip(examples, redacted, strict=True):
        if example.response != after:
            before_keys, after_keys = extract(example.response).keys, extract(after).keys
            if any(key in before_keys and key not in after_keys for key in keys):
                return True
    return False


def shown_report(report: WatchReport, redact: Redact | None) -> WatchReport:
    """Every suspect of the report as `shown_suspect` shows it."""
    if redact is None:
        return report
    return replace(
        report,
        suspects=tuple(shown_suspect(s, redact) for s in report.suspects),
        lift_only=tuple(shown_suspect(s, redact) for s in report.lift_only),
    )


def suspects_table(report: WatchReport, redact: Redact | None = None) -> Rows:
    """The rows (in COLUMNS' order), texts as `shown_suspect` shows them: no None, one type
    per column (NaN for a missing number, "" for a missing text)."""
    shown = shown_report(report, redact)
    suspects = [*shown.suspects, *shown.lift_only]
    return tuple(_row(rank, suspect) for rank, suspect in enumerate(suspects, start=1))


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
