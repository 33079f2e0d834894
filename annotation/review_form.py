"""The review form (a project's Label Studio labeling config) as lowtide reads it, parsed in one
place: the quality control (a choice among "1".."5", or the star `Rating` of projects made
before) with its keys, the failure categories with their keys and hints, and a comparison
form's best and worst picks.

The instructions panel, the suggestions, the export's category counts, the loop's reviewers and
the worker's config update all read a `ReviewForm`; none parses the XML itself. Whether a form
keeps the reward out of sight until the reviewer decides (a blind review) is read here too
(`reward_shown_before_deciding`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

from annotation.review_results import (
    BEST_FIELD,
    CHOICES_KIND,
    FAILURE_FIELD,
    QUALITY_FIELD,
    RATING_KIND,
    WORST_FIELD,
    QualityKind,
    quality_of,
)


class ReviewFormError(ValueError):
    """The labeling config is not XML; the message says where."""


@dataclass(frozen=True)
class FormChoice:
    """One `<Choice>`: what it shows, what an annotation stores (its alias, else its value),
    its hotkey and its hint ("" when it has none)."""

    value: str
    stored: str
    hotkey: str = ""
    hint: str = ""


@dataclass(frozen=True)
class QualityControl:
    """The quality control: its kind, what it labels, the ratings it offers and their keys."""

    kind: QualityKind
    to_name: str
    ratings: tuple[int, ...]
    keys: tuple[tuple[int, str], ...] = ()  # (rating, hotkey) of the choices that have one


@dataclass(frozen=True)
class ReviewForm:
    quality: QualityControl | None
    failure_to: str | None
    failures: tuple[FormChoice, ...]
    # A comparison form (annotation/compare_form.py): the labels to pick the best and the
    # worst from, with their keys; () in a single review form.
    best: tuple[FormChoice, ...] = ()
    worst: tuple[FormChoice, ...] = ()

    @property
    def is_comparison(self) -> bool:
        return bool(self.best and self.worst)

    @property
    def labels(self) -> tuple[str, ...]:
        """A comparison form's response labels (A, B, ...), in its order."""
        return tuple(choice.stored for choice in self.best)

    @property
    def categories(self) -> tuple[str, ...]:
        """The failure categories a reviewer can tick, in the form's order."""
        return tuple(choice.value for choice in self.failures)

    @property
    def quality_kind(self) -> QualityKind:
        """How a result for this form writes the rating (a choice when the form has no quality
        control: that is what the shipped config has)."""
        return self.quality.kind if self.quality is not None else CHOICES_KIND

    @classmethod
    def parse(cls, labeling_config_xml: str) -> ReviewForm:
        root = form_root(labeling_config_xml)
        failure = _named(root, "Choices", FAILURE_FIELD)
        best, worst = (_named(root, "Choices", name) for name in (BEST_FIELD, WORST_FIELD))
        return cls(
            quality=_quality(root),
            failure_to=None if failure is None else str(failure.get("toName")),
            failures=() if failure is None else _choices(failure),
            best=() if best is None else _choices(best),
            worst=() if worst is None else _choices(worst),
        )

    @classmethod
    def read(cls, labeling_config_xml: str) -> ReviewForm:
        """As `parse`, but a config that is not XML reads as a form with no controls (Label
        Studio itself rejects such a config, with its own message)."""
        try:
            return cls.parse(labeling_config_xml)
        except ReviewFormError:
            return cls(quality=None, failure_to=None, failures=())

    @classmethod
    def from_file(cls, path: str | Path) -> ReviewForm:
        return cls.parse(Path(path).read_text())


# The task fields that hold the reward or why the sample was picked, whatever the review: a form
# that shows one before the reviewer decides makes its reviews not blind.
REWARD_FIELDS = ("reward", "reward_text", "reward_details", "rewards_text", "selected_by",
                 "compare")  # fmt: skip
_FIELD = re.compile(r"\$(\w+)")


def form_root(labeling_config_xml: str) -> ElementTree.Element:
    """The form's XML tree; ReviewFormError for a form that is not XML."""
    try:
        return ElementTree.fromstring(labeling_config_xml)
    except ElementTree.ParseError as error:
        raise ReviewFormError(f"the labeling config is not valid XML ({error})") from None


def fields_by_moment(labeling_config_xml: str) -> tuple[set[str], set[str]]:
    """The task fields (`$name` in any attribute) a form shows before the reviewer has decided,
    and those it shows only after: inside a `<Panel>` (closed until clicked) of a
    `<View visibleWhen="choice-selected">` (there only once a choice is made), as the shipped
    forms keep them. ReviewFormError for a form that is not XML."""
    root = form_root(labeling_config_xml)
    parents = {child: parent for parent in root.iter() for child in parent}

    def waits(node: ElementTree.Element) -> bool:
        in_panel = after_choice = False
        while node in parents:
            node = parents[node]
            in_panel |= node.tag == "Panel"
            after_choice |= node.get("visibleWhen") == "choice-selected"
        return in_panel and after_choice

    early: set[str] = set()
    late: set[str] = set()
    for node in root.iter():
        for value in node.attrib.values():
            for name in _FIELD.findall(value):
                (late if waits(node) else early).add(name)
    return early, late


def reward_shown_before_deciding(labeling_config_xml: str) -> tuple[str, ...]:
    """The `REWARD_FIELDS` a form shows before the reviewer has decided (`fields_by_moment`);
    () for a form that is not XML."""
    try:
        early, _ = fields_by_moment(labeling_config_xml)
    except ReviewFormError:
        return ()
    return tuple(name for name in REWARD_FIELDS if name in early)


def _named(root: ElementTree.Element, tag: str, name: str) -> ElementTree.Element | None:
    return next((node for node in root.iter(tag) if node.get("name") == name), None)


def _choices(control: ElementTree.Element) -> tuple[FormChoice, ...]:
    return tuple(
        FormChoice(
            value=choice.get("value", ""),
            stored=choice.get("alias") or choice.get("value", ""),
            hotkey=choice.get("hotkey", ""),
            hint=choice.get("hint", ""),
        )
        for choice in control.iter("Choice")
    )


def _quality(root: ElementTree.Element) -> QualityControl | None:
    controls = (n for n in root.iter() if n.tag in ("Rating", "Choices"))
    node = next((n for n in controls if n.get("name") == QUALITY_FIELD), None)
    if node is None:
        return None
    if node.tag == "Rating":
        top = int(node.get("maxRating") or 5)
        return QualityControl(RATING_KIND, str(node.get("toName")), tuple(range(1, top + 1)))
    rated = [(quality_of({"choices": [choice.stored]}), choice) for choice in _choices(node)]
    return QualityControl(
        CHOICES_KIND,
        str(node.get("toName")),
        ratings=tuple(sorted({rating for rating, _ in rated if rating is not None})),
        keys=tuple(
            (rating, choice.hotkey)
            for rating, choice in rated
            if rating is not None and choice.stored.isdigit() and choice.hotkey
        ),
    )
