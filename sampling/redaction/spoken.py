"""Numbers said digit by digit, as a call's or a voice message's transcript writes them: "my card
is four two five nine zero one one two ...", "double zero", "cinq un sept trois", "onze nove seis
dois", "०८०の३३६७" read as digits, so that the finders of cards, phones and identity numbers
read them (views.py builds the spoken view from these pieces and maps each digit back to its
word).

A run of four digit words or more (or digits among them) is a number; fewer is prose ("one or
two", "tres cosas"). Words of English, Spanish, Portuguese, French, German, Italian, Dutch,
Indonesian, Turkish and Hindi; `double`/`triple` before a digit; tens (`forty two`,
`cinquante`) in English, French, Spanish, Italian and Portuguese; `の` between groups of
digits, as Japanese says a phone number.
"""

from __future__ import annotations

import re

from sampling.redaction.triggers import WordEnds

_DIGITS = {
    "0": "zero oh nought cero zéro null nul nol kosong sıfır शून्य",
    "1": "one uno una um un une eins een één satu bir एक",
    "2": "two dos dois deux zwei zwo due twee dua iki दो",
    "3": "three tres três trois drei tre drie tiga üç तीन",
    "4": "four cuatro quatro quatre vier quattro empat dört चार",
    "5": "five cinco cinq fünf cinque vijf lima beş पांच पाँच",
    "6": "six seis meia sechs sei zes enam altı छह छः",
    "7": "seven siete sete sept sieben sette zeven tujuh yedi सात",
    "8": "eight ocho oito huit acht otto delapan sekiz आठ",
    "9": "nine nueve nove neuf neun negen sembilan dokuz नौ",
}
_TENS = {
    "2": "twenty veinte vinte vingt venti",
    "3": "thirty treinta trinta trente trenta",
    "4": "forty cuarenta quarenta quarante quaranta",
    "5": "fifty cincuenta cinquenta cinquante cinquanta",
    "6": "sixty sesenta sessenta soixante sessanta",
    "7": "seventy setenta",
    "8": "eighty ochenta oitenta ottanta",
    "9": "ninety noventa novanta",
}
_REPEATS = {"double": 2, "triple": 3}
DIGIT_OF = {word: digit for digit, words in _DIGITS.items() for word in words.split()}
TENS_OF = {word: digit for digit, words in _TENS.items() for word in words.split()}
_WORDS = sorted({*DIGIT_OF, *TENS_OF, *_REPEATS}, key=len, reverse=True)
# Looked for with a space on each side, in a copy of the lower case where each sign that may
# stand between two words of a number is a space (`four-two,five`).
_ENDS = WordEnds([f" {word} " for word in _WORDS], literal=True)
_SPACED = bytes(
    32 if chr(byte) in "\n\t\r,.;:-" else byte + 32 if 65 <= byte <= 90 else byte
    for byte in range(256)
)
# A word of the tables, or digits, not inside a longer word (`someone`, `tone`, `ones`).
_LETTER = r"[^\W\d_]|[\u0900-\u097f]"
_TOKEN = re.compile(
    rf"(?<!{_LETTER})(?:{'|'.join(map(re.escape, _WORDS))})(?!{_LETTER})|(?<![\w.])[0-9]+(?![\w])",
    re.IGNORECASE,
)
# Between two words of a number: spaces, a hyphen, or a comma or full stop (a pause).
_BETWEEN = re.compile(r"[ \t]*(?:[,.;:][ \t]*|-[ \t]*|[ \t]+)")
_FEWEST = 4  # words (and digits) in a run
_NEAR = 14  # characters from one word's end to the next one's, at most, in a run
_JAPANESE_GROUPS = re.compile(r"(?<=[0-9])の(?=[0-9])")


def spoken_pieces(text: str) -> list[tuple[int, int, str]] | None:
    """The replacements (start, end, new) that write each spoken run of `text` in digits (each
    word its digits, a pause a space, a space between words nothing); None where it has none."""
    # One pass of bytes.translate: ASCII letters in lower case, pauses as spaces, a space on
    # each side (the words' own letters past ASCII are lower case as people write them).
    data = b" " + text.encode("utf-8", "surrogatepass").translate(_SPACED) + b" "
    ends = _ENDS.ends(data)
    pieces: list[tuple[int, int, str]] = []
    if len(ends) >= _FEWEST - 1:
        lower = text.lower()
        if len(lower) != len(text):  # (`İ` lowers to two characters: keep each where it was)
            lower = "".join(char.lower()[:1] for char in text)
        if len(data) != len(text) + 2:  # past ASCII: the ends in characters
            ends = _ENDS.char_ends(f" {lower} ", data)
        # Each end is one past the space after a word and one past the space put before the
        # text: the word ends two characters before it.
        for start, end in _clusters([end - 2 for end in ends]):
            pieces += _run_pieces(text, lower, start, end)
    if "の" in text:
        pieces += [(match.start(), match.end(), "-") for match in _JAPANESE_GROUPS.finditer(text)]
    return sorted(pieces) if pieces else None


def _clusters(ends: list[int]) -> list[tuple[int, int]]:
    """Stretches of the text where `_FEWEST - 1` words of the tables or more end close to one
    another: the only places a run is looked for (a line of prose has a few far apart)."""
    found: list[tuple[int, int]] = []
    first = 0
    for index in range(1, len(ends) + 1):
        if index == len(ends) or ends[index] - ends[index - 1] > _NEAR:
            if index - first >= _FEWEST - 1:
                start, end = max(0, ends[first] - 12), ends[index - 1] + 2 * _NEAR
                if found and start <= found[-1][1]:  # (one stretch: each run read once)
                    start = found.pop()[0]
                found.append((start, end))
            first = index
    return found


def _run_pieces(text: str, lower: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """The pieces of each run of `_FEWEST` tokens or more in text[start:end]."""
    tokens = list(_TOKEN.finditer(lower, start, min(end, len(lower))))
    pieces: list[tuple[int, int, str]] = []
    run: list[re.Match[str]] = []
    for token in [*tokens, None]:
        if (
            token is not None
            and run
            and _BETWEEN.fullmatch(lower, run[-1].end(), token.start()) is not None
        ):
            run.append(token)
            continue
        if sum(1 for part in run if part.group() not in _REPEATS) >= _FEWEST and _varied(run):
            pieces += _written(lower, run)
        run = [token] if token is not None else []
    return pieces


def _varied(run: list[re.Match[str]]) -> bool:
    """Three digits or more in the run: a number, not a list of one word (`null, null, ...`)."""
    return len({DIGIT_OF.get(part.group(), part.group()) for part in run}) >= 3


def _written(lower: str, run: list[re.Match[str]]) -> list[tuple[int, int, str]]:
    """Each token of `run` as its digits, and what stands between two tokens as nothing (a
    space between words), a space (a pause, or between two numbers written in digits)."""
    pieces: list[tuple[int, int, str]] = []
    repeat = 1
    for index, token in enumerate(run):
        word = token.group()
        if index:
            before = run[index - 1]
            between = lower[before.end() : token.start()]
            pause = any(sign in between for sign in ",.;:") or (  # `... 9312 9943`
                before.group().isdigit() and word.isdigit() and min(len(word), len(before[0])) > 1
            )
            joined = before.group() in TENS_OF and _unit(word)  # `forty, two`: one number
            pieces.append((before.end(), token.start(), " " if pause and not joined else ""))
        if word in _REPEATS:
            repeat = _REPEATS[word]
            pieces.append((token.start(), token.end(), ""))
            continue
        if word in TENS_OF:
            following = run[index + 1].group() if index + 1 < len(run) else ""
            digits = TENS_OF[word] + ("" if _unit(following) else "0")  # `forty two`, `forty`
        elif word.isdigit() and repeat == 1:
            continue  # digits already
        else:
            digits = DIGIT_OF.get(word, word)
        pieces.append((token.start(), token.end(), digits * repeat))
        repeat = 1
    return pieces


def _unit(word: str) -> bool:
    """`word` says a digit from one to nine: after a ten, the number's last digit."""
    return DIGIT_OF.get(word, "0") != "0"
