"""Personal identity, tax, social security and health numbers of every country python-stdnum
checks (about 95 kinds of number: Canada's SIN, Korea's RRN, Japan's My Number, Spain's DNI and
NIE, France's NIR, Germany's Steuer-ID, the Dutch BSN, Poland's PESEL, Mexico's CURP, the Nordic
personal numbers, ...), after a word that names them. The words come from `identity_numbers.json`,
generated from stdnum's module descriptions and the names kept by hand in `national_ids.json`
(`python bench/redaction/identity_table.py` writes it again). A number alone is too often a
random one that passes a check digit (one in ten for a Luhn check), so only a number that a
word names within a few characters is tried, and only against the checks of the countries that
word belongs to.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from types import ModuleType

from sampling.redaction.context import NamesBeforeNumbers
from sampling.redaction.finders import register, table
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers


# The words (lower case) that name a number, and the checks of the numbers they name.
def _module(name: str) -> ModuleType | None:
    """A stdnum module of the table; None where the installed python-stdnum predates it (the
    table is generated from the newest one the pin allows)."""
    try:
        return importlib.import_module(f"stdnum.{name}")
    except ImportError:
        return None


_MODULES = {name: _module(name) for name in table("identity_numbers.json")["modules"]}
_NAMED: dict[str, tuple[ModuleType, ...]] = {
    word: found
    for word, modules in table("identity_numbers.json")["names"].items()
    if (found := tuple(m for name in modules if (m := _MODULES.get(name) or _module(name))))
}
_NAMES = NamesBeforeNumbers(_NAMED, reach=40)
# Numbers that have a kind of their own (found bare by identity.py): named, they keep it.
_OWN_KINDS = {"stdnum.us.ssn": "US_SSN", "stdnum.cn.ric": "CN_ID", "stdnum.br.cpf": "BR_CPF",
              "stdnum.in_.aadhaar": "IN_AADHAAR", "stdnum.in_.pan": "IN_PAN"}  # fmt: skip
# After the word: a few characters (`:`, `number is`, `Nr.`), then the number's groups of
# letters and digits joined by one separator each.
_WITHIN = 24
_GROUPS = re.compile(r"[A-Za-z0-9]+(?:[ ./-][A-Za-z0-9]+){0,6}")


@register("national_ids_more_countries")
class NationalIdFinder:
    """A number a word names (`SIN 130 692 544`, `DNI: 54362315-K`, `주민등록번호 971013-9019902`)
    that passes that country's check. The groups after the word are tried from the first one
    holding a digit, longest first, so that a number written in parts is found whole."""

    kinds = frozenset({"NATIONAL_ID", *_OWN_KINDS.values()})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(whole_words=tuple(_NAMED))  # NamesBeforeNumbers reads them whole
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_number(6):  # every one of these numbers has six digits in a row or more
            return
        text = view.text
        runs = (start for start, end in view.number_runs if _digits(text[start:end]) >= 6)
        for end, word in sorted(_NAMES.find(view.lower, runs).items()):
            yield from self._number_after(text, end, _NAMED[word])

    def _number_after(
        self, text: str, position: int, modules: tuple[ModuleType, ...]
    ) -> Iterator[Span]:
        window = text[position : position + _WITHIN + 40].split("\n", 1)[0]
        for match in _GROUPS.finditer(window):
            if match.start() > _WITHIN:
                return
            groups = re.split(r"(?<=[A-Za-z0-9])(?=[ ./-])", match.group())
            for first in range(len(groups)):
                if not any(char.isdigit() for char in groups[first]):
                    continue
                for last in range(len(groups), first, -1):  # longest first
                    candidate = "".join(groups[first:last]).lstrip(" ./-")
                    if sum(char.isdigit() for char in candidate) < 6:
                        break
                    valid = next((m for m in modules if _valid(m, candidate)), None)
                    if valid is not None:
                        start = position + match.start() + match.group().index(candidate)
                        kind = _OWN_KINDS.get(valid.__name__, "NATIONAL_ID")
                        yield Span(start, start + len(candidate), kind)
                        return


def _valid(module: ModuleType, candidate: str) -> bool:
    try:
        return bool(module.is_valid(candidate))
    except Exception:  # a few checks raise on numbers their tables lack (cn.ric's places)
        return False


def _digits(run: str) -> int:
    return sum(char.isdigit() for char in run)
