"""International Bank Account Numbers: the country's format and the mod-97 check. (Cards are read
with the other runs of digits, numbers.py; account numbers after their name, named_values.py.)"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sampling.redaction.checks import ascii_word_char, is_iban
from sampling.redaction.finders import register
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers


@register("iban")
class IbanFinder:
    kinds = frozenset({"IBAN"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(shapes=(rb"[a-z]{2}[0-9]{2}",))  # GB82..., in lower case
    views = ALL_VIEWS
    _CANDIDATE = re.compile(
        r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?",
        re.ASCII,
    )

    # All in lower case (`de89 3704 ...`), as some type it: the check is the same.
    _LOWER_CANDIDATE = re.compile(
        r"[a-z](?<![A-Za-z0-9][a-z])[a-z]\d{2}(?: ?[a-z0-9]{4}){2,7}(?: ?[a-z0-9]{1,3})?",
        re.ASCII,
    )

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if view.has_number_after_capitals(2):
            yield from self._checked(text, self._CANDIDATE)
        yield from self._checked(text, self._LOWER_CANDIDATE)

    @staticmethod
    def _checked(text: str, candidates: re.Pattern[str]) -> Iterator[Span]:
        for match in candidates.finditer(text):
            # The pattern may take in a word that follows: try the longest prefix first.
            value = match.group()
            pieces = value.split(" ") if " " in value else [value]
            for count in range(len(pieces), 0, -1):
                kept = " ".join(pieces[:count])
                end = match.start() + len(kept)
                if end < len(text) and ascii_word_char(text[end]):
                    continue
                if is_iban(kept.replace(" ", "").upper()):
                    yield Span(match.start(), end, "IBAN")
                    break
