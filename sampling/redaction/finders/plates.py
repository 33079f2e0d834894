"""Vehicle licence plates after a word that names one ("licence plate AB12 CDE", "车牌号：
京A·12345", "Kennzeichen: B-MW 1234"): a plate alone is a short run of letters and digits
like a product code or a room number; the word before it says whose car it is."""

from __future__ import annotations

import re
from collections.abc import Iterator

from sampling.redaction.finders import register
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

_NAMES = ("license plate", "licence plate", "number plate", "registration plate", "plate number",
          "plate no", "reg no", "kennzeichen", "nummernschild", "plaque",
          "immatriculation", "matrícula", "matricula", "placa", "targa", "kenteken", "车牌",
          "車牌", "ナンバー", "번호판", "차량번호")  # fmt: skip
# The name, a few words (`number`, `is`, `:`, `号`), then the plate: up to four groups of
# letters, digits and a Chinese province's character, joined by a space, `-` or `·`.
_GROUP = r"[a-z0-9\u4e00-\u9fff](?:[a-z0-9]|[·・-](?=[a-z0-9])){0,8}"  # 京A·12345: a province leads
_PLATE = re.compile(
    rf"(?:{'|'.join(map(re.escape, _NAMES))})"
    r"(?:\s*(?:(?:number|no|nr)(?:\.|(?![a-z0-9]))|号码?|號碼?))?\s*(?:(?:(?:ist|is|was|est|es)\b|[:：是为])\s*)*"
    rf"(?P<plate>{_GROUP}(?: {_GROUP}){{0,3}})(?![a-z0-9])"
)
# A group after a space belongs to the plate when it holds a digit or is one to three letters
# (`AB12 CDE`), not a word that goes on with the sentence (`B-MW 1234 is parked`).
_TAIL_GROUP = re.compile(r"(?=.*[0-9])[a-z0-9·・-]+|[a-z]{1,3}")  # a province only leads
_FIRST_GROUP = re.compile(r"[0-9\u4e00-\u9fff·・-]")
_NOT_TAIL = frozenset({"is", "was", "and", "or", "the", "in", "on", "at", "for", "to", "of"})


@register("licence_plate")
class LicencePlateFinder:
    kinds = frozenset({"LICENSE_PLATE"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(words=_NAMES)
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        for match in _PLATE.finditer(view.lower):
            first, *rest = match.group("plate").split(" ")
            groups = [first]
            for group in rest:
                if group in _NOT_TAIL or _TAIL_GROUP.fullmatch(group) is None:
                    break
                groups.append(group)
            plate = " ".join(groups)
            # A plate holds a digit, and not only digits; its first group a digit, a province's
            # character or a joiner (`B-MW 1234`), not a word ("the licence plate reader v2").
            digits = sum(char.isdigit() for char in plate)
            if not digits or digits == len(plate.replace(" ", "")):
                continue
            if _FIRST_GROUP.search(first) is None:
                continue
            start = match.start("plate")
            yield Span(start, start + len(plate), "LICENSE_PLATE")
