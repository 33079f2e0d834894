"""Wallet seed phrases: 12 to 24 words of a BIP-39 list after a word that names them ("my seed
phrase is ...", "recovery phrase:", "助记词：...", "mis 12 palabras: ..."). Whoever holds the
words holds the wallet. The ten lists BIP-39 defines (`bip39_<language>.txt`, 2,048 words each,
written as people type them: composed, NFKC) are copied from the MIT-licensed `mnemonic`
package; nothing imports it at run time. A phrase is the words of one list: Spanish words with
their accents, Japanese ones between ideographic spaces, Chinese characters one a word, spaced
(run together, they are prose: the Chinese lists hold its commonest characters)."""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterator
from importlib import resources

from sampling.redaction.context import word_ends
from sampling.redaction.finders import register
from sampling.redaction.spans import ALL_VIEWS, SECRET_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

LANGUAGES = ("english", "spanish", "french", "italian", "portuguese", "czech", "japanese",
             "korean", "chinese_simplified", "chinese_traditional")  # fmt: skip


def word_list(language: str) -> tuple[str, ...]:
    return tuple(
        resources.files(__package__).joinpath(f"bip39_{language}.txt").read_text("utf-8").split()
    )


WORDS: tuple[str, ...] = word_list("english")


@functools.cache
def _indexes() -> dict[str, dict[str, int]]:
    """Each language's words with their places in its list (read on first use: the lists are
    most of a megabyte as Python strings)."""
    return {
        language: {word: index for index, word in enumerate(word_list(language))}
        for language in LANGUAGES
    }


@functools.cache
def _languages_of() -> dict[str, tuple[str, ...]]:
    """Each word of any list, with the languages whose list holds it (`abandon`: English and
    French)."""
    found: dict[str, tuple[str, ...]] = {}
    for language, index in _indexes().items():
        for word in index:
            found[word] = (*found.get(word, ()), language)
    return found


LENGTHS = (24, 21, 18, 15, 12)  # the phrase lengths BIP-39 defines, longest first
# A count of words names a phrase as people write it down ("my 24 words:", "mis 12 palabras").
_WORDS_OF = ("words", "palabras", "palavras", "mots", "parole", "wörter", "woorden", "slov",
             "słów", "слов", "слова", "kelime", "kata", "단어", "個の単語", "个词", "個詞",
             "个单词", "個單詞")  # fmt: skip
_COUNTED = tuple(f"{count} {words}" for count in (12, 24) for words in _WORDS_OF)
_NAMES = ("seed phrase", "seed words", "recovery phrase", "recovery words", "backup phrase",
          "secret phrase", "mnemonic", "wallet words", "seed", "助记词", "助記詞", "恢复短语",
          "シードフレーズ", "リカバリーフレーズ", "復元フレーズ", "복구 문구", "시드 문구",
          "phrase de récupération", "phrase secrète", "frase semilla",
          "frase de recuperación", "wiederherstellungsphrase", "frase de recuperação",
          "frase semente", "frase secreta", "frase di recupero", "seed-фраза", "сид-фраза",
          "сид фраза", "секретная фраза", "фраза восстановления", "мнемоническая фраза",
          "секретна фраза", "фраза відновлення", "kurtarma ifadesi", "gizli kelimeler",
          "frasa pemulihan", "frasa rahasia", "cụm từ khôi phục", "fraza odzyskiwania",
          "herstelzin", "복구 구문", "záchranná fráze", "obnovovací fráze", "zálohu slov",
          *_COUNTED)  # fmt: skip
# Names that say a phrase is meant, not a number's seed: after one, the phrase may come a few
# lines later (`seed` alone names a random generator's seed in every training script; a count
# of words, a sentence's length).
_TOLD_LATER = frozenset(_NAMES) - {"seed", "mnemonic", *_COUNTED}
_TOLD_LINES = 3
_GAP = 40  # characters between a naming word and the phrase's first word, on its line
# A phrase's first word on the line after its name ("mnemonic:" then "1. abandon ...").
_NEXT_LINE_START = re.compile(r"\n[ \t]*(?:\d{1,2}(?:[.):][ \t]*|[ \t]+))?")
# Words of a text that speaks of a wallet: there, a phrase that passes the checksum is one
# wherever it stands ("<12 words>" then "that's my MetaMask backup").
# ("ledger" and "crypto" name other things as often: an account book, cryptography; "ví",
# Vietnamese's wallet, is also its "ví dụ", for example.)
_WALLET_WORDS = ("wallet", "metamask", "trezor", "bip39", "bip-39", "bitcoin", "ethereum",
                 "钱包", "錢包", "ウォレット", "지갑", "carteira", "cartera", "billetera",
                 "portafoglio", "portefeuille", "portfel", "кошелёк", "кошелек", "кошельк",
                 "гаманець", "cüzdan", "dompet", "peněženk", "peňaženk", "portofel",
                 "πορτοφόλι", "novčanik", "новчаник", "lompakko", "plånbok", "tegnebog",
                 "lommebok", "ארנק", "محفظة", "वॉलेट", "ওয়ালেট", "กระเป๋าเงิน")  # fmt: skip
# A word of a list: Latin letters, kana, Hangul, or one Chinese character (a script's change
# ends a word: `助记词是abandon`); a phrase sets its words apart (`_run`).
_WORD = re.compile(r"[^\W\d_\u0370-\U0010ffff]+|[\u3040-\u30ff]+|[\uac00-\ud7a3]+|[\u4e00-\u9fff]")
# What may stand between two words: spaces (ideographic ones too), a line break, a comma, or a
# number as in a written-down list ("1. abandon 2. ability", "1 abandon 2 ability").
_BETWEEN = re.compile(r"[\s,;、，]*(?:\d{1,2}(?:[.):]\s*|\s+))?")


def _after_a_letter(lower: str, position: int) -> bool:
    """Inside a longer word (`abandon` in `xabandon`); CJK text has no spaces to go by (a
    phrase right after `助记词`)."""
    before = lower[position - 1 : position]
    return before.isalpha() and before < "\u2e80"


def _lines_on(lower: str, start: int) -> int:
    """Where the text's line `_TOLD_LINES` lines after the one at `start` ends."""
    end = start
    for _ in range(_TOLD_LINES + 1):
        end = lower.find("\n", end + 1)
        if end < 0:
            return len(lower)
    return end


def checksum_valid(words: list[str], language: str = "english") -> bool:
    """The phrase's last bits are the SHA-256 checksum of the rest, as BIP-39 defines it."""
    index = _indexes()[language]
    bits = "".join(f"{index[word]:011b}" for word in words)
    checksum_bits = len(bits) // 33
    entropy = int(bits[:-checksum_bits], 2).to_bytes(len(bits) * 32 // 33 // 8, "big")
    digest = f"{hashlib.sha256(entropy).digest()[0]:08b}"
    return bits[-checksum_bits:] == digest[:checksum_bits]


def _drawn(words: list[str]) -> bool:
    """Words drawn at random repeat one or two at most: the test vectors do more (`abandon` x11
    `about`, `legal winner thank year ... legal winner thank yellow`)."""
    return len(set(words)) >= len(words) - 2


@register("seed_phrase")
class SeedPhraseFinder:
    """The run of one list's words that starts within a few characters after a naming word (or
    on the line below it): the longest checksum-valid phrase from its start, or, mistyped, the
    whole run (12 words or more). In a text that speaks of a wallet, also a run anywhere that
    holds a checksum-valid phrase of distinct words, or is twelve distinct words or more."""

    kinds = frozenset({"SEED_PHRASE"})
    priority = SECRET_PRIORITY
    triggers = Triggers(words=(*_NAMES, *_WALLET_WORDS))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        lower, done = view.lower, 0
        names = [name for name in _NAMES if name in lower]
        if not names and not any(word in lower for word in _WALLET_WORDS):
            return
        # In the text's order: `seed` is a list word too, and the phrase after the first name
        # ("助记词：abandon ... seed ...") must not start at a `seed` inside it.
        for name_end in sorted({end for name in names for end in word_ends(lower, name)}):
            for start in self._starts_after(lower, name_end):
                language, run = self._run(lower, start) if start >= done else ("", [])
                if len(run) >= LENGTHS[-1]:
                    words = [lower[start:end] for start, end in run]
                    length = next((n for n in LENGTHS
                                   if n <= len(words) and checksum_valid(words[:n], language)),
                                  min(len(words), LENGTHS[0]))  # fmt: skip
                    done = run[length - 1][1]
                    yield Span(run[0][0], done, "SEED_PHRASE")
                    break
        if not self._twelve_list_words(lower):
            return
        if done == 0 and (told := [n for n in names if n in _TOLD_LATER]):
            # Named, then given a line or two on, in the conversation's next turn ("I typed my
            # recovery phrase into that site" ... "it was orbit lumber ..."): the first phrase
            # there, as in a text that speaks of a wallet.
            first = min(lower.find(name) for name in told)
            phrase = next(self._phrases_anywhere(lower, first, _lines_on(lower, first)), None)
            if phrase is not None:
                done = phrase.end
                yield phrase
        if any(word in lower for word in _WALLET_WORDS):
            yield from self._phrases_anywhere(lower, done, len(lower))

    @staticmethod
    def _starts_after(lower: str, name_end: int) -> Iterator[int]:
        """Where a list word starts within the gap after a name on its line, or first on the
        next line."""
        line_end = lower.find("\n", name_end)
        line_end = len(lower) if line_end < 0 else line_end
        listed = _languages_of()
        for word in _WORD.finditer(lower, name_end, min(line_end, name_end + _GAP + 8)):
            if word.start() - name_end > _GAP:
                break
            if word.group() in listed and not _after_a_letter(lower, word.start()):
                yield word.start()
        if line_end - name_end <= _GAP and (next_line := _NEXT_LINE_START.match(lower, line_end)):
            yield next_line.end()

    @staticmethod
    def _twelve_list_words(lower: str) -> bool:
        """Twelve list words in a row (numbers and punctuation aside): a quick test before the
        runs are read."""
        listed = bytes(map(_languages_of().__contains__, _WORD.findall(lower)))
        return b"\x01" * LENGTHS[-1] in listed

    def _phrases_anywhere(self, lower: str, start: int, end: int) -> Iterator[Span]:
        """Each phrase in a run of list words that starts in [start, end): the whole run of
        twelve distinct words or more, or a checksum-valid phrase of distinct words in it."""
        position, listed = start, _languages_of()
        while (match := _WORD.search(lower, position, end)) is not None:
            position = match.end()
            if match.group() not in listed or _after_a_letter(lower, match.start()):
                continue
            language, run = self._run(lower, match.start())
            if len(run) < LENGTHS[-1]:
                continue
            words = [lower[start:end] for start, end in run]
            # Twelve distinct list words in a row or more are no sentence of any language (none
            # of "the", "a", "of", "is" is in the list): the whole run, typed by hand or not (a
            # checksum-valid phrase inside a longer one is there by chance, one in 16 for 12
            # words, and hiding it alone left the rest of the words); where words repeat (a
            # test vector's `abandon` x11), only a checksum-valid phrase of distinct words.
            phrase = (0, len(words)) if _drawn(words) else self._phrase_in(words, language)
            if phrase is not None:
                first, length = phrase
                yield Span(run[first][0], run[first + length - 1][1], "SEED_PHRASE")
            position = run[-1][1]

    @staticmethod
    def _phrase_in(words: list[str], language: str) -> tuple[int, int] | None:
        """(first word, length) of the first checksum-valid phrase of distinct words in a run."""
        for first in range(len(words) - LENGTHS[-1] + 1):
            for length in LENGTHS:
                phrase = words[first : first + length]
                if (len(phrase) == length and _drawn(phrase)
                        and checksum_valid(phrase, language)):  # fmt: skip
                    return first, length
        return None

    @staticmethod
    def _run(lower: str, start: int) -> tuple[str, list[tuple[int, int]]]:
        """The language, and (start, end) of each word, of the longest run of one list's words
        that starts at `start`, 24 words at most."""
        first = _WORD.match(lower, start)
        if first is None:
            return "", []
        best: tuple[str, list[tuple[int, int]]] = ("", [])
        for language in _languages_of().get(first.group(), ()):
            index, run, position = _indexes()[language], [], start
            while len(run) < LENGTHS[0]:
                word = _WORD.match(lower, position)
                if word is None or word.group() not in index:
                    break
                run.append(word.span())
                position = _BETWEEN.match(lower, word.end()).end()  # type: ignore[union-attr]
                if position == word.end():
                    break  # nothing between it and the next: Chinese prose, or a longer word
            if len(run) > len(best[1]):
                best = (language, run)
        return best
