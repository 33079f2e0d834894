"""The did-you-mean hint for a misspelled name: one rule for every package and the command line.

It lives in `rl`, the bottom layer, so that `sampling`, `annotation` and `lowtide` can all use it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, choices: Iterable[str], *, n: int = 1, cutoff: float = 0.6) -> list[str]:
    """Up to `n` choices near enough to `word` (similarity ratio >= cutoff), nearest first."""
    return difflib.get_close_matches(word, list(choices), n=n, cutoff=cutoff)


def did_you_mean(
    word: str,
    choices: Iterable[str],
    *,
    n: int = 1,
    cutoff: float = 0.6,
    quote: bool = True,
    capital: bool = False,
) -> str:
    """The hint `did you mean 'x'?` (`'x' or 'y'` when n > 1), or "" when no choice is near
    enough. `quote=False` names the choices bare (flags, key paths); `capital` starts a sentence."""
    names = closest(word, choices, n=n, cutoff=cutoff)
    if not names:
        return ""
    shown = " or ".join(repr(name) if quote else name for name in names)
    return f"{'D' if capital else 'd'}id you mean {shown}?"
