"""The two consoles: results on stdout, progress and messages on stderr. Everything they write
passes the one masker (rl/masking.py) on its way out, so no command prints a password, whatever
message or table carries it."""

import sys
from collections.abc import Sequence
from typing import TextIO

from rich.console import Console

from rl.masking import mask_text
from rl.visible_text import visible_line


class MaskedStream:
    """`sys.stdout` or `sys.stderr` as they are at each write (tests and tools swap them), with
    every known secret and every URL password masked."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def _stream(self) -> TextIO:
        return getattr(sys, self._name)

    def write(self, text: str) -> int:
        return self._stream.write(mask_text(text))

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self._stream, "encoding", None) or "utf-8"


# Piped or captured output is not cut to 80 columns: tables keep whole URLs and paths.
out = Console(
    file=MaskedStream("stdout"),
    highlight=False,
    soft_wrap=True,
    width=None if sys.stdout.isatty() else 160,
)
err = Console(file=MaskedStream("stderr"), highlight=False, soft_wrap=True)  # one line each


def say(text: str) -> None:
    """One message on stderr as written: square brackets in it are text, not rich markup."""
    err.print(text, markup=False)


def warn_problems(problems: Sequence[str], *, shown: int = 5, more: int = 0) -> None:
    """The first `shown` problems met reading someone's files, one `warning:` line each (their
    text made visible: it may quote the files), then how many more: those past `shown`, and
    `more` that a reader counted without keeping them."""
    for line in problems[:shown]:
        say(f"warning: {visible_line(line)}")
    hidden = max(len(problems) - shown, 0) + more
    if hidden:
        say(f"warning: {hidden} more lines or rows skipped or left blank")
