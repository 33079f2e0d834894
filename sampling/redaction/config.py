"""`sampling.redact`: which kinds are redacted, what is never redacted, and what a user adds.

```yaml
sampling:
  redact:
    disable: [IP_ADDRESS]            # or `kinds: [EMAIL, PHONE]`: only these built-in kinds
    allow: [support@example.com]     # exact values left as they are
    allow_regex: ['.*@example\\.com']  # values that fully match one of these are left too
    patterns:                        # more kinds: <EMPLOYEE_ID_1>, ...
      - {kind: EMPLOYEE_ID, regex: 'EMP-[0-9]{6}'}
    redactor: mypkg.pii:find_spans   # (text: str) -> iterable of (start, end, KIND)
    finders: [mypkg.pii:EmployeeIdFinder]  # or a name registered with finders.register
    phone_regions: [US, GB, CN]      # how numbers without `+` are read, in this order
```
`redact: false` switches it off (then rollouts reach reviewers verbatim).
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from rl.config_base import ConfigSection, FunctionPath, SwitchedSection
from rl.plugins import is_dotted_path
from rl.suggest import did_you_mean
from sampling.redaction.kinds import BUILTIN_KINDS, DEFAULT_PHONE_REGIONS, KIND_NAME


def _compiled(regex: str, *, may_match_empty: bool = False) -> str:
    try:
        pattern = re.compile(regex)
    except re.error as error:
        raise ValueError(f"{regex!r} is not a valid regular expression: {error}") from None
    if not may_match_empty and pattern.fullmatch(""):
        raise ValueError(f"{regex!r} matches the empty string: it would redact nothing useful")
    return regex


def _builtin_kind(name: str) -> str:
    """A built-in kind, or one a finder registered from outside declares."""
    from sampling.redaction.finders import registered_kinds  # light: imports no finder

    upper = name.upper()
    known_kinds = [*BUILTIN_KINDS, *sorted(registered_kinds() - BUILTIN_KINDS.keys())]
    if upper not in known_kinds:
        hint = did_you_mean(upper, known_kinds)
        known = ", ".join(known_kinds)
        raise ValueError(f"unknown kind {name!r}{f' ({hint})' if hint else ''}; kinds: {known}")
    return upper


class RedactPattern(ConfigSection):
    kind: str = Field(description="placeholder stem in upper case: EMPLOYEE_ID -> <EMPLOYEE_ID_1>")
    regex: str = Field(description="Python regular expression; the whole match is redacted")

    @field_validator("kind")
    @classmethod
    def _kind_name(cls, value: str) -> str:
        if not KIND_NAME.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a kind name: upper-case letters, digits and _, "
                "starting with a letter (at most 40)"
            )
        return value

    @field_validator("regex")
    @classmethod
    def _regex(cls, value: str) -> str:
        return _compiled(value)


class RedactConfig(SwitchedSection):
    enabled: bool = Field(True, description="redact before a record leaves the trainer's process")
    kinds: list[str] | None = Field(None, description="only these built-in kinds (default: all)")
    disable: list[str] = Field(default_factory=list, description="built-in kinds switched off")
    allow: list[str] = Field(default_factory=list, description="exact values never redacted")
    allow_regex: list[str] = Field(
        default_factory=list, description="values fully matching one of these are never redacted"
    )
    patterns: list[RedactPattern] = Field(default_factory=list, description="kinds of your own")
    finders: list[str] = Field(
        default_factory=list,
        description="finders of your own: a name registered with "
        "sampling.redaction.finders.register, or the dotted path of a finder class",
    )
    redactor: FunctionPath | None = Field(
        None, description="dotted path: (text: str) -> iterable of (start, end, KIND)"
    )
    phone_regions: list[str] = Field(
        default_factory=lambda: list(DEFAULT_PHONE_REGIONS),
        description="regions (ISO 3166 codes) whose national numbering reads a phone number "
        "written without `+`, in order",
    )

    @field_validator("kinds", "disable")
    @classmethod
    def _known_kinds(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else [_builtin_kind(name) for name in value]

    @field_validator("allow_regex")
    @classmethod
    def _regexes(cls, value: list[str]) -> list[str]:
        return [_compiled(regex, may_match_empty=True) for regex in value]

    @field_validator("finders")
    @classmethod
    def _finder_names(cls, value: list[str]) -> list[str]:
        if not value:
            return value
        from sampling.redaction.finders import finder_names

        known = finder_names()
        for name in value:
            if name not in known and not is_dotted_path(name):
                close = did_you_mean(name, known, quote=False) or "known: " + ", ".join(known)
                raise ValueError(
                    f"unknown finder {name!r} ({close}; or the dotted path of a finder class: "
                    "package.module:Finder)"
                )
        return value

    @field_validator("phone_regions")
    @classmethod
    def _regions(cls, value: list[str]) -> list[str]:
        regions = [code.upper() for code in value]
        for code in [code for code in regions if code not in DEFAULT_PHONE_REGIONS]:
            # libphonenumber's region list, imported only for regions other than the default's
            from sampling.redaction.phones import supported_region

            if not supported_region(code):
                raise ValueError(
                    f"{code!r} is not a region libphonenumber knows: use an ISO 3166 code (US, GB, "
                    "CN, IN, DE, ...)"
                )
        return regions

    def builtin_kinds(self) -> list[str]:
        """The built-in kinds this config redacts, in priority order."""
        chosen = self.kinds if self.kinds is not None else list(BUILTIN_KINDS)
        return [kind for kind in BUILTIN_KINDS if kind in chosen and kind not in self.disable]
