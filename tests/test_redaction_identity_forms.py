"""Identity numbers after their names, as people write them: in the groups and separators of
their country (`1 85 05 78 006 084 91`, `X-1234567-L`, `11.222.333/0001-81`), compact, in
either case; numbers without a check digit only in their written form after their own name."""

# ruff: noqa: E501  (a case reads best on one line)
from __future__ import annotations

import importlib
import itertools
import re
from datetime import date

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sampling.redaction.finders import table
from tests.helpers.redaction import REDACTOR
from tests.test_redaction_properties import PLACEHOLDER

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("text", "value"), [
    ("Codice fiscale: RSSMRA85T10A562S", "RSSMRA85T10A562S"),  # digits in twos and threes
    ("פנייה לשירות\nת.ז.: 039337423\nתיאור: ניתוק", "039337423"),  # Teudat Zehut, abbreviated
    ("voici mon numéro de registre national pour le dossier : 85.07.30-033.28", "85.07.30-033.28"),
    ("ok ma my NRIC is S1234567D right?", "S1234567D"),  # Singapore: a check letter
    ("FIN no. G1234567X, pass type S Pass", "G1234567X"),
    ("il mio codice fiscale è rssmra85t10a562s, grazie", "rssmra85t10a562s"),
    ("N° de sécurité sociale : 1 85 05 78 006 084 91", "1 85 05 78 006 084 91"),
    ("numéro de sécurité sociale 185057800608491.", "185057800608491"),
    ("n° INSEE n.º 1 85 05 78 006 084 91; vérifié", "1 85 05 78 006 084 91"),  # short groups before it
    ("CNPJ: 11.222.333/0001-81", "11.222.333/0001-81"),
    ("N° de sécu : 1 84 12 76 451 089 46", "1 84 12 76 451 089 46"),  # as people say it
    ("Steueridentifikationsnummer: 65 929 970 489", "65 929 970 489"),  # one compound word
    ("cnpj 11222333000181", "11222333000181"),
    ("NIE: X-1234567-L", "X-1234567-L"),  # a letter group first
    ("su nie es x1234567l", "x1234567l"),
    ("Mi DNI es 29.141.777-H y vivo en Madrid.", "29.141.777-H"),  # dots stdnum's compact() keeps
    ("dni 29141777h", "29141777h"),
    ("Meine Steuer-ID lautet 45 778 913 601.", "45 778 913 601"),
    ("steuer-id: 45778913601", "45778913601"),
    ("CURP: BOXW310820HNERXN09", "BOXW310820HNERXN09"),
    ("mi curp es boxw310820hnerxn09", "boxw310820hnerxn09"),
    ("Mi RFC es GILT 580410 8L0 para la factura.", "GILT 580410 8L0"),
    ("Ο ΑΜΚΑ μου είναι 01016701755.", "01016701755"),
    ("Citizen identification number: 1112.22.333", "1112.22.333"),  # the Dutch BSN's longest name
    ("マイナンバー: 6214 9832 0257 y gracias", "6214 9832 0257"),  # no licence plate (ナンバー)
    ("DNI: 12.345.678", "12.345.678"),  # Argentina: no check digit, its written form
    ("Mi cédula es 1.234.567.890, gracias.", "1.234.567.890"),  # Colombia: no check digit
    ("cedula de ciudadania 12.345.678", "12.345.678"),
    # Brazil's RG (no check all states share: its written form), Austria's SV-Nr. (at.vnr),
    # Egypt's national ID (a birth date and a governorate), a number on the line after its
    # label, an Aadhaar asked for in a sentence that goes on before it.
    ("Cópia do RG 38.417.922-6 anexada ao cadastro.", "38.417.922-6"),
    ("Declaro, portadora do RG nº 27.554.310-X, que", "27.554.310-X"),
    ("SV-Nr. 4522 150389, ÖGK Wien", "4522 150389"),
    ("Meine SV-Nummer ist 7811 150389.", "7811 150389"),
    ("رقم قومي 30108122101567", "30108122101567"),
    ("الرقم القومى: 29503150101234", "29503150101234"),
    ("Rijksregisternummer (voor toegangsbadge):\n90.02.11-123.93", "90.02.11-123.93"),
    ("Aadhaar card ki copy chahiye urgent for KYC, mera number 367281450925 hai", "367281450925"),
    # Colombia's cédula after `CC`/`C.C.`; abbreviations that name a checked number only in its
    # written form (Canada's `NAS`, Belgium's `NN`, the Czech `RČ`); a label ending in `Nr.` or
    # `n°` on a line of its own; Romania's fiscal code; Pakistan's CNIC after `ID card`, or
    # without its dashes after its own name; Portugal's citizen card; Bangladesh's `NID`.
    ("identificado con C.C. 79.845.112 expedida en 2009", "79.845.112"),
    ("CC 1.032.448.715 expedida en Cali", "1.032.448.715"),
    ("c.c 80.214.665", "80.214.665"),
    ("NAS : 458 929 007", "458 929 007"),
    ("Mon NAS est 651 337 420.", "651 337 420"),
    ("N° national : 82.07.04-102.94", "82.07.04-102.94"),
    ("NN 76.06.19-291.01", "76.06.19-291.01"),
    ("AHV-Nr.\n756.9948.7164.33", "756.9948.7164.33"),
    ("AVS n°\n756.4254.2757.42", "756.4254.2757.42"),
    ("RČ: 710326/0923", "710326/0923"),
    ("r.č. 630115/6785, trvalý pobyt", "630115/6785"),
    ("Rodné číslo\n921102/8640", "921102/8640"),
    ("PFA, CIF 2761020022681", "2761020022681"),
    ("CUI: 66328583, sediul social", "66328583"),
    ("cod fiscal 5307082", "5307082"),
    ("ID card 28069-7357617-8 attached", "28069-7357617-8"),
    ("CNIC 4883358825814", "4883358825814"),
    ("CC 16946135 0 CA1 válido até 2030", "16946135 0 CA1"),
    ("NID: 4615723098", "4615723098"),
    ("NID no 1987269543210", "1987269543210"),
])  # fmt: skip
def test_a_named_number_is_hidden_whole_in_its_written_forms(text: str, value: str) -> None:
    (out,) = REDACTOR.redact([text]).texts
    head, tail = text.split(value)
    assert re.fullmatch(re.escape(head) + PLACEHOLDER + re.escape(tail), out), out


@pytest.mark.parametrize("text", [
    "Codice fiscale: RSSMRA85T10A562X",  # the check letter is wrong
    "NIE: X-1234567-K",
    "NRIC: S1234567A",  # Singapore's check letter is D
    "DNI 12345678 de Argentina",  # no check digit: bare digits after the name are left
    "DNI: 12.345.678.901",  # too many groups for a DNI
    "DNI: 12.345.678-K",  # not the Argentine form, and no Spanish check letter that passes
    "Mi cédula es 12.345, gracias.",
    "RUC number 20.123.456.789",  # 123.456.789 passes Paraguay's check: no cut from a number
    "RUC number 123.456.789-AB",
    "Pedido nº 12.345.678 enviado el 12.05.2024.",  # an order number, not a named one
    "Factura 2024/0001-81 pagada el 03.04.2024.",
    "Rechnung Nr. 45 778 913 601 vom 12.05.2024.",
    "Expediente 1.234.567.890 archivado el 12.05.2024.",
    # Grouped as an Aadhaar and passing its check, but named as another number.
    "Invoice number: 2024 0001 7788",
    "Rechnungsnummer: 2024 0001 7788",
    "Order 2024 0001 7788 shipped.",
    # Three groups that pass Aadhaar's check inside a longer run of groups: no Aadhaar.
    "see 2345 6789 0124 5678 and",
    "see 5678 2345 6789 0124 and",
    # A French court's docket after `RG`; no real date or governorate; a failed check; a
    # number named as an invoice's after the document's word; an order on the label's next line.
    "RG n° 23/04417 — audience du 12 mars",
    "RG 2024/0031-7 arquivado",
    "الرقم القومي 29013011234567",
    "SV-Nr. 1237 010181",
    "Aadhaar update pending; invoice number 499118665246",
    "Rijksregisternummer (zie bijlage):\nPedido 2024100432",
    # `CC` of an e-mail, an engine's cc, an amount after `CC`; `NAS` and `NN` of a network's
    # storage and a neural network; a label with nothing after it; a failed check; a range of
    # years, a ratio, a path; an order's number of a CNIC's shape; a Spanish company's CIF;
    # `rč` inside a word.
    "Para: ventas\nCC: gerencia\nAsunto: pedido 1.234.567",
    "Moto de 250 cc, modelo 2019, 12.500 km",
    "CC: $1.200.000 de presupuesto",
    "CC 1.200.000 COP",
    "NAS Synology DS920+ with 4x 4TB",
    "NN 0.001 lr, batch 256",
    "AHV-Nr.\nbitte nachreichen",
    "756.1234.5678.90",
    "RČ 2024/2025",
    "build 123456/7890 passed",
    "path /srv/data/710326/0923",
    "Order 31533-6369016-4",
    "CUI 2024/2025",
    "CIF B12345678",
    "NID 2024/2025",
    "určitě 7103260923",
])  # fmt: skip
def test_numbers_that_fail_or_are_not_named_are_left(text: str) -> None:
    assert REDACTOR.redact([text]).texts == (text,)


# Modules with a format() of their own: how to make the body of a valid number (the check is
# found by trying each character), and the alphabet of the check characters.
def _digits(count: int) -> st.SearchStrategy[str]:
    return st.text("0123456789", min_size=count, max_size=count)


_BIRTH = st.dates(date(1940, 1, 1), date(1999, 12, 28))
_DIGIT, _TWO = "0123456789", 2
BODIES = {
    "br.cpf": (_digits(9), _TWO),
    "br.cnpj": (st.builds(lambda d: d + "0001", _digits(8)), _TWO),
    "fr.nir": (st.builds(lambda s, b, d: f"{s}{b:%y%m}{d}", st.sampled_from("12"), _BIRTH, _digits(8)), _TWO),
    "de.idnr": (st.builds(lambda a, b: a + b, st.sampled_from("123456789"), _digits(9)), 1),
    "ca.sin": (st.builds(lambda a, b: a + b, st.sampled_from("1234567"), _digits(7)), 1),
    "ch.ssn": (st.builds(lambda d: "756" + d, _digits(9)), 1),
    "cl.rut": (st.builds(lambda a, b: a + b, st.sampled_from("123456789"), _digits(7)), 1),
    "ar.cuit": (st.builds(lambda a, b: a + b, st.sampled_from(["20", "23", "27"]), _digits(8)), 1),
    "nl.bsn": (st.builds(lambda a, b: a + b, st.sampled_from("123456789"), _digits(7)), 1),
    "jp.in_": (_digits(11), 1),
    "kr.rrn": (st.builds(lambda b, d: f"{b:%y%m%d}1{d}", _BIRTH, _digits(5)), 1),
    "za.idnr": (st.builds(lambda b, d: f"{b:%y%m%d}{d}08", _BIRTH, _digits(4)), 1),
    "se.personnummer": (st.builds(lambda b, d: f"{b:%y%m%d}{d}", _BIRTH, _digits(3)), 1),
    "be.nn": (st.builds(lambda b, d: f"{b:%y%m%d}{d}", _BIRTH, _digits(3)), _TWO),
    "cz.rc": (st.builds(lambda b, d: f"{b:%y%m%d}{d}", st.dates(date(1954, 1, 1), date(1999, 12, 28)), _digits(3)), 1),
    "gb.nhs": (st.builds(lambda a, b: a + b, st.sampled_from("4"), _digits(8)), 1),
}  # fmt: skip
NAMES = table("identity_numbers.json")["names"]


def _completed(module: object, body: str, checks: int) -> str | None:
    for tail in itertools.product(_DIGIT, repeat=checks):
        if module.is_valid(body + "".join(tail)):  # type: ignore[attr-defined]
            return body + "".join(tail)
    return None


@st.composite
def named_formatted_numbers(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(st.sampled_from(sorted(BODIES)))
    module = importlib.import_module(f"stdnum.{name}")
    body_strategy, checks = BODIES[name]
    number = _completed(module, draw(body_strategy), checks)
    assume(number is not None)
    written = module.format(number)
    words = sorted(word for word, modules in NAMES.items() if name in modules)
    return draw(st.sampled_from(words)), draw(st.sampled_from([written, written.lower()]))


@given(
    named_formatted_numbers(),
    st.sampled_from(["", "Hola, ", "Please keep my ", "好的，", "Bitte: "]),
    st.sampled_from([": ", " ", " is ", " nº ", " = ", "\u00a0"]),
    st.sampled_from(["", ".", ", thanks.", " y gracias", "。", " (ok)"]),
)
@settings(max_examples=300, deadline=None)
def test_a_valid_formatted_number_after_its_name_is_hidden_whole(
    named: tuple[str, str], opening: str, joint: str, closing: str
) -> None:
    word, written = named
    head, tail = f"{opening}{word.capitalize()}{joint}", closing
    (out,) = REDACTOR.redact([head + written + tail]).texts
    assert re.fullmatch(re.escape(head) + PLACEHOLDER + re.escape(tail), out), (head + written, out)
