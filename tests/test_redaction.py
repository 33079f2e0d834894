"""The redactor on its own: each kind found (and its near misses left alone), placeholders
stable within a record, allowlists, a user's patterns and redactor, failures that fail closed,
and config mistakes as one clear message."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rl.plugins import PluginPathError
from sampling.config import SamplingConfig
from sampling.redaction import RedactionError, Redactor
from sampling.redaction.config import RedactConfig
from tests.helpers.redaction import REDACTOR

pytestmark = pytest.mark.unit

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
KEY_BLOCK = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6\n"
    "ffAt0gBYY2vtvlbxvp84D2vR6yH0Vmz3\n-----END RSA PRIVATE KEY-----"
)
# kind -> (text around the value, the value that must disappear)
POSITIVES = {
    "EMAIL": ("write to {} today", "jane.doe+review@example.co.uk"),
    "PHONE": ("call {} now", "+44 20 7946 0958"),
    "CARD": ("card {} expires", "4111 1111 1111 1111"),
    "IBAN": ("pay to {} please", "GB82 WEST 1234 5698 7654 32"),
    "IP_ADDRESS": ("the host {} answered", "203.0.113.42"),
    "US_SSN": ("SSN {} on file", "123-45-6789"),
    "UK_NINO": ("NI number {} here", "AB 12 34 56 C"),
    "JWT": ("Authorization: Bearer {}", JWT),
    "PRIVATE_KEY": ("my key:\n{}\nthanks", KEY_BLOCK),
    "PASSWORD": ("postgres://admin:{}@db.internal:5432/app", "Tr0ub4dor&3"),
    "API_KEY": ("export AWS_ACCESS_KEY_ID={}", "AKIAIOSFODNN7EXAMPLE"),
    "SECRET": ("password = '{}'", "hunter2hunter2"),
    "HIGH_ENTROPY": ('{{"blob": "{}"}}', "q8Zr2vN6xK4mT1pW9bY3cF7hJ5dL0sAe"),
    "PERSON_NAME": ("my name is {}, hi", "Priya Raghunathan"),
}
NEAR_MISSES = [
    "order 4111 1111 1111 1112 shipped",  # 16 digits failing Luhn
    "ticket 1234567812345678",  # Luhn fails too
    "IBAN GB82 WEST 1234 5698 7654 33 is mistyped",  # mod-97 fails
    "version 1.2.3.400 released",  # not an IPv4 address (400 > 255)
    "SSN 000-12-3456 is never issued",
    "NI number GB 12 34 56 C uses a prefix never issued",
    "meet at 10:30 on 2024-05-01, room 12",
    "std::vector and a::b are C++",
    "Secret: the plan is simple.",
    "the monkey found the key to the token economy",
    "I looked at it: dot com companies",
    "meet at 5 (at) the cafe",
    "bypass: 1234, compass: 270N, the pass: 4 yards",
    '{"pass": "true", "pw": null}',
    "name: Optional[str] = None",  # a type, not a person
    "the delay was 2 ms. Latency rose after that",
    "Dear Sir or Madam, Hello World! Hi there, hi Team!",
    "This is the best, Most people agree.",
    "我叫什么名字？",
    "call 555-0100 (seven digits only)",
    "eyJ alone is not a token",
]


@pytest.mark.parametrize("kind", sorted(POSITIVES))
def test_each_kind_is_found_and_replaced(kind: str) -> None:
    template, value = POSITIVES[kind]
    result = REDACTOR.redact([template.format(value)])
    assert value not in result.texts[0]
    assert f"<{kind}_1>" in result.texts[0]
    assert result.counts == {kind: 1}


@pytest.mark.parametrize(
    "written",
    [
        "jane.doe [at] example [dot] org",
        "john(at)example.com",
        "j dot smith at gmail dot com",
        "Sales (AT) Uni-Bonn (DOT) DE",
    ],
)
def test_an_email_written_out_for_people_is_an_email(written: str) -> None:
    # A reviewer reads it as well as the address itself.
    result = REDACTOR.redact([f"write to {written} today"])
    assert result.texts == ("write to <EMAIL_1> today",) and result.counts == {"EMAIL": 1}


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_left_alone(text: str) -> None:
    result = REDACTOR.redact([text])
    assert result.texts == (text,) and result.counts == {}


@pytest.mark.parametrize(
    "phone", ["555-123-4567", "(555) 123-4567", "+1 555 123 4567", "07700 900123", "1-800-555-0199"]
)
def test_phone_formats(phone: str) -> None:
    assert REDACTOR.redact([f"ring {phone} later"]).texts == ("ring <PHONE_1> later",)


def test_ipv6_and_tokens_of_several_services() -> None:
    text = (
        "from 2001:db8::8a2e:370:7334 with ghp_abcdefghijklmnopqrstuvwxyz0123456789 "
        "and sk_live_4eC39HqLyjWDarjtT1zdp7dc"
    )
    result = REDACTOR.redact([text])
    assert result.texts == ("from <IP_ADDRESS_1> with <API_KEY_1> and <API_KEY_2>",)


def test_a_url_keeps_its_user_and_host() -> None:
    text = "DATABASE_URL=postgres://app:s3cr3t-pw@db.example.com/prod"
    assert REDACTOR.redact([text]).texts == (
        "DATABASE_URL=postgres://app:<PASSWORD_1>@db.example.com/prod",
    )


def test_placeholders_are_stable_within_a_record_and_restart_for_the_next() -> None:
    prompt = "Mail ann@example.com and bob@example.com."
    response = "I wrote to bob@example.com; ann@example.com is cc'd."
    result = REDACTOR.redact([prompt, response])
    assert result.texts == (
        "Mail <EMAIL_1> and <EMAIL_2>.",
        "I wrote to <EMAIL_2>; <EMAIL_1> is cc'd.",
    )
    assert result.counts == {"EMAIL": 4}
    assert REDACTOR.redact(["bob@example.com"]).texts == ("<EMAIL_1>",)


def test_overlapping_finds_hide_every_character() -> None:
    text = "key AKIAIOSFODNN7EXAMPLE@example.com"
    out = REDACTOR.redact([text]).texts[0]
    assert "AKIA" not in out and "example.com" not in out


def test_allowlist_exact_and_regex() -> None:
    config = RedactConfig(allow=["help@example.com"], allow_regex=[r".*@lowtide\.dev"])
    redactor = Redactor.from_config(config)
    text = "help@example.com, team@lowtide.dev, jane@example.com"
    assert redactor.redact([text]).texts == ("help@example.com, team@lowtide.dev, <EMAIL_1>",)


def test_kinds_can_be_switched_off_or_chosen() -> None:
    text = "jane@example.com from 203.0.113.42"
    off = Redactor.from_config(RedactConfig(disable=["ip_address"]))
    assert off.redact([text]).texts == ("<EMAIL_1> from 203.0.113.42",)
    only = Redactor.from_config(RedactConfig(kinds=["IP_ADDRESS"]))
    assert only.redact([text]).texts == ("jane@example.com from <IP_ADDRESS_1>",)


def test_a_user_pattern_and_a_user_redactor() -> None:
    config = RedactConfig(
        patterns=[{"kind": "EMPLOYEE_ID", "regex": r"EMP-[0-9]{6}"}],
        redactor="tests.helpers.redaction_plugins:codenames",
    )
    result = Redactor.from_config(config).redact(["EMP-123456 leads Project Falcon; EMP-123456."])
    assert result.texts == ("<EMPLOYEE_ID_1> leads <CODENAME_1>; <EMPLOYEE_ID_1>.",)
    assert result.counts == {"EMPLOYEE_ID": 2, "CODENAME": 1}


@pytest.mark.parametrize("function", ["broken", "out_of_range"])
def test_a_failing_user_redactor_raises_without_the_text(function: str) -> None:
    config = RedactConfig(redactor=f"tests.helpers.redaction_plugins:{function}")
    redactor = Redactor.from_config(config)
    with pytest.raises(RedactionError) as caught:
        redactor.redact(["the secret plan of jane@example.com"])
    assert "jane" not in str(caught.value) and "secret plan" not in str(caught.value)
    assert "tests.helpers.redaction_plugins" in str(caught.value)


def test_a_redactor_path_that_does_not_resolve() -> None:
    with pytest.raises(PluginPathError, match=r"sampling\.redact\.redactor: .*codename"):
        Redactor.from_config(RedactConfig(redactor="tests.helpers.redaction_plugins:codename"))
    with pytest.raises(PluginPathError, match=r"is a .*, not a function"):
        Redactor.from_config(RedactConfig(redactor="tests.helpers.redaction_plugins:NOT_CALLABLE"))


@pytest.mark.parametrize(
    ("redact", "fragments"),
    [
        (
            {"disable": ["EMAILS"]},
            ["redact.disable", "unknown kind 'EMAILS'", "did you mean 'EMAIL'?"],
        ),
        ({"kinds": ["PHONE", "SSN"]}, ["redact.kinds", "unknown kind 'SSN'", "US_SSN"]),
        ({"patterns": [{"kind": "emp id", "regex": "x"}]}, ["patterns.0.kind", "not a kind name"]),
        (
            {"patterns": [{"kind": "EMP", "regex": "("}]},
            ["patterns.0.regex", "not a valid regular"],
        ),
        ({"patterns": [{"kind": "EMP", "regex": "x*"}]}, ["matches the empty string"]),
        ({"allow_regex": ["[a-"]}, ["allow_regex", "not a valid regular expression"]),
        ({"redactor": "not a path"}, ["redact.redactor", "not a dotted path"]),
        ({"enabeld": True}, ["redact.enabeld", "Extra inputs"]),
    ],
)
def test_config_mistakes(redact: dict, fragments: list[str]) -> None:
    with pytest.raises(ValidationError) as caught:
        SamplingConfig(redact=redact)
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message


def test_on_by_default_and_false_switches_it_off() -> None:
    assert SamplingConfig().redact.enabled
    assert not SamplingConfig(redact=False).redact.enabled


def test_the_readme_section_shows_a_valid_config_and_every_kind() -> None:
    import re

    import yaml

    from rl.config import LoggerConfig
    from sampling.redaction.kinds import BUILTIN_KINDS
    from tests.helpers.docs import page

    section = page("redaction.md")
    block = re.search(r"```yaml\n(.*?)```", section, flags=re.S)
    assert block is not None
    shown = yaml.safe_load(block[1])
    redact = SamplingConfig(**shown["sampling"]).redact
    assert redact.disable == ["IP_ADDRESS"] and redact.patterns[0].kind == "EMPLOYEE_ID"
    allowed = Redactor(
        [], kinds=set(), allow=redact.allow, allow_regex=redact.allow_regex
    )._allowed("team@example.com")
    assert allowed
    assert LoggerConfig(**shown["logger"]).redact.enabled
    kinds = re.search(r"Kinds: `([A-Z_ \n]+)`", section)
    assert kinds is not None and kinds[1].split() == list(BUILTIN_KINDS)
