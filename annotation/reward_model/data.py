"""Reward-model data as `lowtide export` writes it: preference pairs and rated responses.

`load_rm_data(path)` takes the export's ratings file (`annotations.jsonl`: its sibling
`annotations.preferences.jsonl` is read too), a preferences file alone, or any JSONL whose rows
are `{prompt, chosen, rejected}` and/or `{prompt, response, rating}`. Pairs also come from rating
rows whose `meta.better_response` differs from the response, unless the row says its
reviewers disagree (`meta.agreed` false). A pair whose chosen side a reviewer wrote is marked
`written` (the export's `chosen_written`; in rows exported before that field, a
`meta.better_response` equal to the chosen text): `rm train --written-weight` weighs those. Each
pair and rated response keeps the agreement of its sample's reviewers (`meta.agreement`, 1 where
the row has none): `rm train --weight-by-agreement` weights the loss by it. A row whose reviews
were deleted in Label Studio (`meta.deleted_in_label_studio`, annotation/export.py) is skipped.
A rated response keeps the failure categories its reviewers ticked (the row's `categories`);
`rm train` fits the failure probe on them (annotation/reward_model/probe.py). A comparison's
preference rows do not say what went wrong with the worst, but its comparison row does: when the
export's `annotations.comparisons.jsonl` lies beside the ratings file, each pair whose rejected
side a comparison's reviewers named the worst carries the categories most of those reviewers
ticked (`Pair.rejected_categories`).
A malformed file fails with the line and the problem; a file without a single usable row fails
too.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from annotation.agreement import sample_agreement
from annotation.errors import AnnotationError
from annotation.export_rows import ExportPaths
from rl.jsonl import read_jsonl


class RMDataError(AnnotationError, ValueError):
    """The data cannot train or evaluate a reward model; the message says where and why."""


@dataclass(frozen=True)
class Pair:
    prompt: str
    chosen: str
    rejected: str
    sample_id: str
    agreement: float = 1.0  # of the sample's reviewers, in [0, 1] (annotation/agreement.py)
    written: bool = False  # chosen is a reviewer's own text, not one of the policy's responses
    # what the comparison's reviewers said went wrong with the rejected side, when it was the
    # worst shown (empty: not known, or nothing ticked)
    rejected_categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rated:
    prompt: str
    response: str
    rating: int  # 1 (bad) .. 5 (good)
    sample_id: str
    agreement: float = 1.0
    categories: tuple[str, ...] = ()  # the failure categories its reviewers ticked


@dataclass
class RMData:
    pairs: list[Pair] = field(default_factory=list)
    ratings: list[Rated] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)  # the training runs the rollouts came from
    sources: list[str] = field(default_factory=list)

    def split(self, holdout: float) -> tuple[RMData, RMData]:
        """(train, held out), by a hash of sample_id: stable across runs and data growth."""
        train, held = RMData(run_ids=self.run_ids, sources=self.sources), RMData()
        for pair in self.pairs:
            (held if _held_out(pair.sample_id, holdout) else train).pairs.append(pair)
        for rated in self.ratings:
            (held if _held_out(rated.sample_id, holdout) else train).ratings.append(rated)
        return train, held


def texts_of(pairs: list[Pair], rated: list[Rated]) -> list[tuple[str, str]]:
    """(prompt, response) of every chosen, then every rejected, then every rated response."""
    return (
        [(p.prompt, p.chosen) for p in pairs]
        + [(p.prompt, p.rejected) for p in pairs]
        + [(r.prompt, r.response) for r in rated]
    )


def distinct(texts: list[tuple[str, str]]) -> tuple[list[int], list[tuple[str, str]]]:
    """Each (prompt, response) once, and where each of `texts` is among them: a comparison's
    response sits in several pairs, and a rated response is its better response's rejected one;
    each is scored once."""
    index: dict[tuple[str, str], int] = {}
    slots = [index.setdefault(text, len(index)) for text in texts]
    return slots, list(index)


def _held_out(sample_id: str, holdout: float) -> bool:
    bucket = int(hashlib.sha256(sample_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return bucket < holdout


def load_rm_data(path: str | Path) -> RMData:
    path = Path(path)
    if path.is_dir():  # `--data` is the file `lowtide export --out` named, not its directory
        written = [str(p) for p in ExportPaths.written_in(path)]
        hint = f": {' or '.join(written)}?" if written else " (none is in it)"
        raise RMDataError(f"{path}: a directory; give the file `lowtide export` wrote{hint}")
    if not path.is_file():
        raise RMDataError(f"{path}: no such file (write it with `lowtide export`)")
    data = RMData(sources=[str(path)])
    # A sample may have several reviewers' pairs, and a comparison several pairs of orders.
    pairs: dict[tuple[str, str, str], Pair] = {}
    runs: set[str] = set()
    for number, row in _rows(path):
        _take(row, f"{path}:{number}", data, pairs, runs)
    sibling = ExportPaths.beside(path).preferences
    if sibling != path and sibling.is_file():
        data.sources.append(str(sibling))
        for number, row in _rows(sibling):
            _take(row, f"{sibling}:{number}", data, pairs, runs)
    comparisons = ExportPaths.beside(path).comparisons
    worst = _worst_categories(comparisons) if comparisons.is_file() else {}
    data.pairs = [
        replace(pair, rejected_categories=worst.get((pair.sample_id, pair.rejected), ()))
        for pair in pairs.values()
    ]
    data.run_ids = sorted(runs)
    if not data.pairs and not data.ratings:
        raise RMDataError(
            f"{path}: no preference rows ({{prompt, chosen, rejected}}) and no rating rows "
            "({prompt, response, rating}): nothing to train on. Review some tasks, then run "
            "`lowtide export`"
        )
    return data


def _rows(path: Path):
    def broken(number: int, problem: str) -> None:
        raise RMDataError(f"{path}:{number}: {problem}")

    return read_jsonl(path, broken)


def _take(
    row: dict[str, Any],
    where: str,
    data: RMData,
    pairs: dict[tuple[str, str, str], Pair],
    runs: set[str],
) -> None:
    sample_id = str(row.get("sample_id") or f"{where}")
    meta = row.get("meta") if isinstance(row.get("meta"), dict) else {}
    if meta.get("deleted_in_label_studio") is True:
        return  # its reviews are gone from Label Studio: no evidence any more
    if meta.get("run_id"):
        runs.add(str(meta["run_id"]))
    agreement = _agreement(meta, where)
    if "chosen" in row or "rejected" in row:
        prompt, chosen, rejected = (
            _text(row, key, where) for key in ("prompt", "chosen", "rejected")
        )
        written = _written(row, meta, chosen, where)
        pairs[sample_id, chosen, rejected] = Pair(
            prompt, chosen, rejected, sample_id, agreement, written
        )
        return
    if "rating" not in row:
        raise RMDataError(
            f"{where}: a row needs either chosen/rejected (a preference) or rating (a rated "
            f"response); it has {sorted(row)}"
        )
    prompt, response = _text(row, "prompt", where), _text(row, "response", where)
    rating = row["rating"]
    if rating is not None:
        if isinstance(rating, bool) or not isinstance(rating, int) or not 1 <= rating <= 5:
            raise RMDataError(f"{where}: rating must be an integer from 1 to 5, got {_got(rating)}")
        categories = _categories(row, where)
        data.ratings.append(Rated(prompt, response, rating, sample_id, agreement, categories))
    if meta.get("agreed") is False:
        return  # disputed: the export's preference rows decide whether its pairs count
    better = meta.get("better_response")
    if isinstance(better, str) and better.strip() and better.strip() != response.strip():
        pair = Pair(prompt, better, response, sample_id, agreement, written=True)
        pairs.setdefault((sample_id, better, response), pair)


def _categories(row: dict[str, Any], where: str) -> tuple[str, ...]:
    value = row.get("categories") or []
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise RMDataError(f"{where}: categories must be a list of strings, got {_got(value)}")
    return tuple(dict.fromkeys(name.strip() for name in value if name.strip()))


def _worst_categories(path: Path) -> dict[tuple[str, str], tuple[str, ...]]:
    """(sample id, response text) -> the categories more than half of the reviewers who named
    that response the worst ticked (their majority, as a rating row's `categories` is), from
    the export's comparison rows (annotation/comparison_rows.py). What it cannot read this way
    is skipped: it trains nothing here."""
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for _, row in _rows(path):
        meta = row.get("meta") if isinstance(row.get("meta"), dict) else {}
        if meta.get("deleted_in_label_studio") is True:
            continue
        text = {
            shown["label"]: shown["response"]
            for shown in _list(row.get("responses"))
            if isinstance(shown, dict)
            and isinstance(shown.get("label"), str)
            and isinstance(shown.get("response"), str)
        }
        named: dict[str, list[list[str]]] = {}
        for review in _list(meta.get("reviews")):
            worst = review.get("worst") if isinstance(review, dict) else None
            if isinstance(worst, str) and worst in text:
                ticked = _list(review.get("categories"))
                names = [n.strip() for n in ticked if isinstance(n, str) and n.strip()]
                named.setdefault(text[worst], []).append(names)
        for response, votes in named.items():
            majority = sample_agreement([None] * len(votes), votes).majority_categories
            kept = sorted(majority)
            if kept:
                found[str(row.get("sample_id")), response] = tuple(kept)
    return found


def _got(value: Any) -> str:
    """A value quoted in an error, cut: a file's field may hold megabytes."""
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _agreement(meta: dict[str, Any], where: str) -> float:
    value = meta.get("agreement", 1.0)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise RMDataError(
            f"{where}: meta.agreement must be a number from 0 to 1, got {_got(value)}"
        )
    return float(value)


def _written(row: dict[str, Any], meta: dict[str, Any], chosen: str, where: str) -> bool:
    value = row.get("chosen_written")
    if value is None:  # rows exported before the field: a single review's better response
        return meta.get("better_response") == chosen
    if not isinstance(value, bool):
        raise RMDataError(f"{where}: chosen_written must be true or false, got {_got(value)}")
    return value


def _text(row: dict[str, Any], key: str, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str):
        raise RMDataError(f"{where}: {key} must be a string, got {type(value).__name__}")
    return value
