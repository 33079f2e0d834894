"""Wallet seed phrases: 12 to 24 words of the BIP-39 English list after a word that names them
("my seed phrase is ...", "recovery phrase:", "助记词：..."). Whoever holds the words holds the
wallet. The list (`bip39_english.txt`, 2,048 words) is copied from the MIT-licensed `mnemonic`
package; nothing imports it at run time."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from importlib import resources

from sampling.redaction.context import NamedBefore
from sampling.redaction.finders import register
from sampling.redaction.spans import ALL_VIEWS, SECRET_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

WORDS: tuple[str, ...] = tuple(
    resources.files(__package__).joinpath("bip39_english.txt").read_text("ascii").split()
)
_INDEX = {word: index for index, word in enumerate(WORDS)}
LENGTHS = (24, 21, 18, 15, 12)  # the phrase lengths BIP-39 defines, longest first
_NAMES = ("seed phrase", "seed words", "recovery phrase", "recovery words", "backup phrase",
          "secret phrase", "mnemonic", "wallet words", "seed", "助记词", "助記詞", "恢复短语",
          "シードフレーズ", "リカバリーフレーズ", "복구 문구", "시드 문구",
          "phrase de récupération", "phrase secrète", "frase semilla",
          "frase de recuperación", "wiederherstellungsphrase")  # fmt: skip
_NAMED = NamedBefore(_NAMES, gap=40)
# A word of the phrase, and what may stand between two: spaces, a line break, a comma, or a
# number as in a written-down list ("1. abandon 2. ability").
_WORD = re.compile(r"[a-z]{3,8}")
_BETWEEN = re.compile(r"[\s,;]*(?:\d{1,2}[.):]\s*)?")


def checksum_valid(words: list[str]) -> bool:
    """The phrase's last bits are the SHA-256 checksum of the rest, as BIP-39 defines it."""
    bits = "".join(f"{_INDEX[word]:011b}" for word in words)
    checksum_bits = len(bits) // 33
    entropy = int(bits[:-checksum_bits], 2).to_bytes(len(bits) * 32 // 33 // 8, "big")
    digest = f"{hashlib.sha256(entropy).digest()[0]:08b}"
    return bits[-checksum_bits:] == digest[:checksum_bits]


@register("seed_phrase")
class SeedPhraseFinder:
    """The run of BIP-39 words that starts within a few characters after a naming word: the
    longest checksum-valid phrase from its start, or, mistyped, the whole run (12 words or more)."""

    kinds = frozenset({"SEED_PHRASE"})
    priority = SECRET_PRIORITY
    triggers = Triggers(words=_NAMES)
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        lower, position = view.lower, 0
        while (match := _WORD.search(lower, position)) is not None:
            position = match.end()
            if match.group() not in _INDEX or not _NAMED.before(lower, match.start()):
                continue
            run = self._run(lower, match.start())
            if len(run) < LENGTHS[-1]:
                continue
            words = [lower[start:end] for start, end in run]
            length = next((n for n in LENGTHS if n <= len(words) and checksum_valid(words[:n])),
                          min(len(words), LENGTHS[0]))  # fmt: skip
            yield Span(run[0][0], run[length - 1][1], "SEED_PHRASE")
            position = run[length - 1][1]

    @staticmethod
    def _run(lower: str, start: int) -> list[tuple[int, int]]:
        """(start, end) of each list word of the run that starts at `start`, 24 at most."""
        run: list[tuple[int, int]] = []
        position = start
        while len(run) < LENGTHS[0]:
            word = _WORD.match(lower, position)
            if word is None or word.group() not in _INDEX:
                break
            if "a" <= lower[word.end() : word.end() + 1] <= "z":
                break  # a longer word that starts like one of the list
            run.append(word.span())
            position = _BETWEEN.match(lower, word.end()).end()  # type: ignore[union-attr]
        return run
