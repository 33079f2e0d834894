"""Redaction: secrets and personal data replaced by typed placeholders (`<EMAIL_1>`) before a
record leaves the trainer's process. `Redactor` (redactor.py) does the work; `config.py` is the
`sampling.redact` section; kinds.py names the built-in kinds; the finders are `finders/` (one
module per family, registered by name), and `triggers.py` decides which of them run on a text.
The redactor, its token rules and the phone and ID libraries load on first use, not with the
config."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sampling.redaction.redactor import (
        Redaction,
        RedactionError,
        Redactor,
        redactor_for_run,
    )

__all__ = ["Redaction", "RedactionError", "Redactor", "redactor_for_run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from sampling.redaction import redactor

        return getattr(redactor, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
