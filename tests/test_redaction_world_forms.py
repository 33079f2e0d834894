"""Values as people in other countries type them: IBANs all in lower case, with their spaces."""

from __future__ import annotations

import pytest
from stdnum import iban

from sampling.redaction import Redactor
from sampling.redaction.config import RedactConfig

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor.from_config(RedactConfig())


@pytest.mark.parametrize(
    "value",
    ["de89 3704 0044 0532 0130 00", "es91 2100 0418 4502 0005 1332", "gb82west12345698765432",
     "fr14 2004 1010 0505 0001 3m02 606", "nl91abna0417164300"],
)  # fmt: skip
def test_an_iban_in_lower_case_is_found(redactor: Redactor, value: str) -> None:
    assert iban.is_valid(value.upper())
    text = f"Bitte überweisen Sie an {value} bis Freitag."
    assert [(text[s.start : s.end], s.kind) for s in redactor.find(text)] == [(value, "IBAN")]


@pytest.mark.parametrize(
    "text",
    ["commit de89370400440532013001 merged", "xde89 3704 0044 0532 0130 00",
     "build de89 3704 0044 0532 0130 01 failed"],
)  # fmt: skip
def test_lower_case_runs_that_fail_the_check_are_left(redactor: Redactor, text: str) -> None:
    assert [s.kind for s in redactor.find(text) if s.kind == "IBAN"] == []
