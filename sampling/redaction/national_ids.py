"""Identity, tax and social security numbers of many countries, after a word that names them:
Canada's SIN, Korea's RRN, Japan's My Number, Spain's DNI and NIE, France's NIR, Germany's
Steuer-ID, the Dutch BSN, Poland's PESEL, Mexico's CURP, the Nordic personal numbers, and more,
each checked with python-stdnum. A number alone is too often a random one that passes a check
digit (one in ten for a Luhn check), so only a number that a word names within a few characters
is tried, and only against the checks of the countries that word belongs to.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from types import ModuleType

from stdnum.au import tfn
from stdnum.be import nn
from stdnum.ca import sin
from stdnum.ch import ssn as ch_ssn
from stdnum.de import idnr as de_idnr
from stdnum.dk import cpr
from stdnum.ee import ik
from stdnum.es import dni as es_dni
from stdnum.es import nie
from stdnum.fi import hetu
from stdnum.fr import nir
from stdnum.gb import nhs
from stdnum.id import nik
from stdnum.ie import pps
from stdnum.il import idnr as il_idnr
from stdnum.jp import in_ as jp_in
from stdnum.kr import rrn
from stdnum.mx import curp
from stdnum.my import nric
from stdnum.nl import bsn
from stdnum.no import fodselsnummer
from stdnum.pl import pesel
from stdnum.ro import cnp
from stdnum.se import personnummer
from stdnum.tr import tckimlik
from stdnum.us import itin
from stdnum.za import idnr as za_idnr

from sampling.redaction.context import NamesBeforeNumbers
from sampling.redaction.spans import Span, Text

# The words (lower case) that name a number, and the checks of the numbers they name.
_NAMED: dict[str, tuple[ModuleType, ...]] = {
    "sin": (sin,), "social insurance number": (sin,), "assurance sociale": (sin,),
    "rrn": (rrn,), "resident registration number": (rrn,), "주민등록번호": (rrn,),
    "マイナンバー": (jp_in,),
    "個人番号": (jp_in,),
    "dni": (es_dni,), "nie": (nie,), "documento nacional de identidad": (es_dni,),
    "nir": (nir,), "insee": (nir,), "sécurité sociale": (nir,), "securite sociale": (nir,),
    "steuer-id": (de_idnr,), "steuerid": (de_idnr,), "identifikationsnummer": (de_idnr,),
    "idnr": (de_idnr,),
    "bsn": (bsn,), "burgerservicenummer": (bsn,),
    "pesel": (pesel,),
    "curp": (curp,),
    "personnummer": (personnummer,), "cpr": (cpr,), "fødselsnummer": (fodselsnummer,),
    "fodselsnummer": (fodselsnummer,), "henkilötunnus": (hetu,), "hetu": (hetu,),
    "tfn": (tfn,), "tax file number": (tfn,),
    "kimlik": (tckimlik,), "tckn": (tckimlik,),
    "cnp": (cnp,),
    "nhs number": (nhs,), "nhs no": (nhs,),
    "pps": (pps,), "ppsn": (pps,),
    "ahv": (ch_ssn,), "avs": (ch_ssn,), "sozialversicherungsnummer": (ch_ssn,),
    "itin": (itin,),
    "nric": (nric,), "mykad": (nric,),
    "nik": (nik,), "ktp": (nik,),
    "teudat zehut": (il_idnr,), "mispar zehut": (il_idnr,), "תעודת זהות": (il_idnr,),
    "isikukood": (ik,),
    "rijksregisternummer": (nn,), "numéro national": (nn,), "niss": (nn,),
    "south african id": (za_idnr,),
}  # fmt: skip
_NAMES = NamesBeforeNumbers(_NAMED, reach=40)
# After the word: a few characters (`:`, `number is`, `Nr.`), then the number's groups of
# letters and digits joined by one separator each.
_WITHIN = 24
_GROUPS = re.compile(r"[A-Za-z0-9]+(?:[ ./-][A-Za-z0-9]+){0,6}")


class NationalIdFinder:
    """A number a word names (`SIN 130 692 544`, `DNI: 54362315-K`, `주민등록번호 971013-9019902`)
    that passes that country's check. The groups after the word are tried from the first one
    holding a digit, longest first, so that a number written in parts is found whole."""

    kinds = frozenset({"NATIONAL_ID"})
    name = "national ids of more countries"

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
                    if any(module.is_valid(candidate) for module in modules):
                        start = position + match.start() + match.group().index(candidate)
                        yield Span(start, start + len(candidate), "NATIONAL_ID")
                        return


def _digits(run: str) -> int:
    return sum(char.isdigit() for char in run)
