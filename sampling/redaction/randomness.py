"""Whether a run of characters was drawn at random (a key, a token) or means something (a
word, an identifier, a hash, base64 of text): the tests the token finders share."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

_CLASSES = (str.islower, str.isupper, str.isdigit)
_HEX = re.compile(r"[0-9a-fA-F]+")
_LETTER_RUNS = re.compile(r"[a-z]{3,}|[A-Z]{3,}")
_LONG_LETTER_RUNS = re.compile(r"[a-z]{4,}|[A-Z]{4,}")


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character frequencies."""
    length = len(value)
    return -sum(n / length * math.log2(n / length) for n in Counter(value).values())


def character_classes(value: str) -> int:
    """How many of lower-case letters, capitals and digits `value` holds (0 to 3)."""
    return sum(any(test(char) for char in value) for test in _CLASSES)


def looks_random(value: str, *, hex_allowed: bool = True) -> bool:
    """A run of characters drawn at random, not a word, a number or an identifier: two classes
    of character at least (lower, upper, digit), and close to the entropy a random string of its
    length and alphabet has. Hex (a hash) counts only when `hex_allowed`."""
    if len(value) < 8 or value.isdigit() or character_classes(value) < 2:
        return False
    # Hex with dashes between its groups is hex too: a UUID, a hash written in parts.
    is_hex = _HEX.fullmatch(value.replace("-", "")) is not None
    if is_hex and not hex_allowed:
        return False
    # Random strings of n characters from an alphabet of a reach close to log2(min(n, a)) bits;
    # the margins keep 999 in 1,000 of them (measured: 64 random base64url characters have 4.88
    # bits or more in 99.9% of draws, against log2(64) = 6).
    alphabet = 16 if is_hex else 64
    expected = math.log2(min(len(value), alphabet))
    return shannon_entropy(value) >= expected - (0.9 if is_hex else 1.3)


def made_of_words(value: str, *, shortest: int = 3) -> bool:
    """Most of `value` in runs of `shortest` letters or more of one case (`getUserAccountById2`,
    `EXAMPLEKEY`): an identifier or a name. A random string of letters and digits has few: of
    random base64 runs of 20 to 64 characters, 1 in 20 passes with runs of three (most of
    them all in capitals and lower case), 1 in 150 with runs of four."""
    runs = _LETTER_RUNS if shortest == 3 else _LONG_LETTER_RUNS
    return sum(len(run) for run in runs.findall(value)) * 2 > len(value)


_WORD_LIKE = re.compile(r"[A-Z]?[a-z]{3,}")
_VOWELS = frozenset("aeiouAEIOU")


def reads_as_words(value: str) -> bool:
    """Seven letters in ten of `value` or more in word-like runs (a capital or none, then three
    lower-case letters or more with a vowel among them: `User`, `tokenizer`), and a word's share
    of vowels: an identifier (`UserProfileCardV2`, `llama3Tokenizer`). Measured on random runs
    of 12 to 19 letters and digits: 4 in 1,000 read so."""
    return _in_words(value, _WORD_LIKE, least_vowels=0.25)


# A word of a name: a capital or none, then lower-case letters, three letters at least (`Pad`,
# `Smol`, `facebook`); read with a vowel after its capital and no five consonants in a row.
_NAME_WORD = re.compile(r"[A-Z]?[a-z]{2,}")
_FIVE_CONSONANTS = re.compile(r"[^aeiouAEIOU]{5}")


def reads_as_a_name(value: str) -> bool:
    """Seven letters in ten of `value` or more in words, with acronyms, sizes and versions
    between them: a class's or a model's name (`Wav2Vec2SamePadLayer`, `F2PyDict_SetItemString`,
    `HuggingFaceTB/SmolLM3-3B`, `facebook/m2m100_418M`). Looser than `reads_as_words` (a
    three-letter CamelCase word counts) for a run nothing names as a secret, where a class
    name hidden from a reviewer costs more than the rare random run that reads so: measured on
    random runs of 20 to 64 base64 characters that look random, 3 in 10,000."""
    return _in_words(value, _NAME_WORD, least_vowels=0.2, not_in_a_word=_FIVE_CONSONANTS)


def _in_words(
    value: str,
    words: re.Pattern[str],
    least_vowels: float,
    not_in_a_word: re.Pattern[str] | None = None,
) -> bool:
    """Seven letters in ten of `value` or more in runs of `words` that read as words (three
    letters at least, a vowel after the capital, nothing `not_in_a_word` finds), and at least
    `least_vowels` of its letters vowels."""
    letters = sum(char.isalpha() for char in value)
    in_words = 0
    for match in words.finditer(value):
        run = match.group()
        if (
            len(run) >= 3
            and any(char in _VOWELS for char in run[run[0].isupper() :])
            and (not_in_a_word is None or not_in_a_word.search(run) is None)
        ):
            in_words += len(run)
    vowels = sum(char in _VOWELS for char in value)
    return letters > 0 and in_words >= 0.7 * letters and vowels >= least_vowels * letters


def encodes_text(value: str) -> bool:
    """`value` is base64 of readable text (`SGVsbG8sIFdvcmxkIQ`, a JSON object): encoded data in
    a code answer. A random key decodes to bytes that are not text."""
    if len(value) < 16:
        return False
    try:
        decoded = base64.b64decode(
            value + "=" * (-len(value) % 4),
            altchars=b"-_" if ("-" in value or "_" in value) else None,
            validate=True,
        ).decode("utf-8")
    except (ValueError, UnicodeDecodeError, binascii.Error):
        return False
    return all(char.isprintable() or char in "\n\t" for char in decoded)


# The ids an API gives its objects, a type's short name and a random run: public names that
# every response, log line and tool call carries, no secret. Anthropic's messages and tool calls
# (`msg_01...`, `toolu_01...`), OpenAI's (`chatcmpl-...`, `call_...`, `resp_...`), Stripe's
# objects (`evt_...`, `pi_...`, `cus_...`); the secret keys of the same APIs have other
# prefixes (`sk_live_`, `rk_live_`, `whsec_`, `sk-ant-`), and a payment's client secret
# (`pi_..._secret_...`) holds its word.
_OBJECT_ID = re.compile(
    r"(?:msg|toolu|srvtoolu|msgbatch|chatcmpl|cmpl|call|fc|resp|asst|thread|run|step|batch"
    r"|ftjob|req|evt|pi|ch|cus|in|ii|il|sub|si|price|prod|pm|seti|src|txn|acct|ba|card"
    r"|cs_test|cs_live|plan)[_-](?=[A-Za-z0-9]*[0-9])"
    r"[A-Za-z0-9]{14,64}"
)


def object_id(value: str) -> bool:
    """`value` is an id an API gave one of its objects (`toolu_01A09q90qw...`, `evt_1N4X...`):
    a name, not a secret."""
    return _OBJECT_ID.fullmatch(value) is not None


def unnamed_secret(value: str) -> bool:
    """A token that is a secret with no word naming it: random, not hex (a hash, a UUID, a git
    SHA), not made of words, not a class's or a model's name, not base64 of text, and not an
    API's id of an object. `=` padding aside."""
    value = value.rstrip("=")
    return looks_random(value, hex_allowed=False) and not (
        made_of_words(value, shortest=4)
        or reads_as_a_name(value)
        or encodes_text(value)
        or object_id(value)
    )
