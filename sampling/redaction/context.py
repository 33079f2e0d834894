"""Words that name what follows them: "my password is ...", "CPF 123...", "手机号13812345678".
A value that is ambiguous on its own (a bare run of digits, a random token) is redacted when
such a word ends shortly before it."""

from __future__ import annotations

import re
from collections.abc import Iterable


class NamedBefore:
    """One of `words` ending at most `gap` characters (on the same line) before a position.
    Case is ignored; an ASCII word must start a word (`uid` is not in `uuid`, `key` not in
    `monkey`), other scripts have no word boundaries to go by."""

    def __init__(self, words: Iterable[str], gap: int) -> None:
        words = tuple(words)
        alternatives = "|".join(rf"(?<![a-z]){word}" if word.isascii() else word for word in words)
        self._pattern = re.compile(rf"(?:{alternatives})[^\n]{{0,{gap}}}$", re.IGNORECASE)
        # The longest a word and its gap can be: the text searched before a position.
        self.reach = gap + max(len(word) for word in words)

    def ends(self, before: str) -> bool:
        """A word of the list ends `before` (within the gap)."""
        return self._pattern.search(before, max(0, len(before) - self.reach)) is not None

    def before(self, text: str, position: int) -> bool:
        """A word of the list comes just before `text[position]`."""
        return self._pattern.search(text, max(0, position - self.reach), position) is not None
