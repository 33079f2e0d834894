"""Words that name what follows them: "my password is ...", "CPF 123...", "手机号13812345678".
A value that is ambiguous on its own (a bare run of digits, a random token) is redacted when
such a word ends shortly before it; code assigned to such a name (`password = os.environ[...]`)
is not a value. Also the reading finders share: each match of a shape as a span (`matches`), an
alternation of words longest first (`either`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator

from sampling.redaction.spans import Span


def word_ends(
    lower: str, word: str, start: int = 0, end: int | None = None, *, whole: bool = False
) -> Iterator[int]:
    """Where `word` ends in lower[start:end], at each place it starts a word: an ASCII word not
    right after an ASCII letter (`pin` is not in `spin`; `我的pin是` holds it, as CJK text has no
    spaces); with `whole`, nor right before one (`pin` is not in `pint`). A word of another
    script written with spaces (Latin's other letters, Greek, Cyrillic) likewise, by the letters
    of those scripts (`účet` is not in `účetní`); one of a script without spaces, anywhere."""
    end = len(lower) if end is None else end
    letter = (
        _ascii_letter if word.isascii() else _spaced_letter if _in_spaced_script(word) else None
    )
    at = lower.find(word, start, end)
    while at >= 0:
        after = at + len(word)
        if letter is None or not (
            letter(lower[at - 1 : at]) or (whole and letter(lower[after : after + 1]))
        ):
            yield after
        at = lower.find(word, after, end)


def either(words: Iterable[str]) -> str:
    """An alternation of `words` for a pattern, each escaped, the longest first (`总经理` before
    `经理`, `said to` before `said`)."""
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))


def matches(
    pattern: re.Pattern[str], text: str, kind: str, valid: Callable[[str], bool] | None = None
) -> Iterator[Span]:
    """Each match of `pattern` in `text` as a span of `kind`; with `valid`, only those whose
    text it accepts (a checksum, a decoded header)."""
    for match in pattern.finditer(text):
        if valid is None or valid(match.group()):
            yield Span(match.start(), match.end(), kind)


def _in_spaced_script(word: str) -> bool:
    """`word` starts and ends with letters of scripts written with spaces between words."""
    return _spaced_letter(word[:1]) and _spaced_letter(word[-1:])


def _spaced_letter(char: str) -> bool:
    """A letter of Latin, Greek or Cyrillic (no CJK, Thai or Arabic: `我的пароль`)."""
    return char < "\u0530" and char.isalpha()


def _ascii_letter(char: str) -> bool:
    return "a" <= char <= "z" or "A" <= char <= "Z"


_LETTERS = re.compile("[a-z]+")


class NamesBeforeNumbers:
    """The words of a list that end in the few characters before each run of digits of a text
    (`SIN 130 692 544`, `DOB: 03/14/1985`): looked for only there, since a search for every word
    over a whole text of prose costs more than the rest of a finder. An ASCII word is tried only
    when its last word of letters is one of the window's (then confirmed where it stands, alone:
    `sin` is not in `using`); a word of another script, only if the text holds it at all."""

    def __init__(self, words: Iterable[str], reach: int) -> None:
        self.reach = reach  # characters before a run of digits where a word may end
        self._by_last_word: dict[str, list[str]] = {}
        for word in (word for word in words if word.isascii()):
            self._by_last_word.setdefault(_LETTERS.findall(word)[-1], []).append(word)
        self._others = tuple(word for word in words if not word.isascii())

    def find(self, lower: str, runs: Iterable[int]) -> dict[int, str]:
        """{where a word ends: the word} before each of `runs` (where a run of digits starts)
        in the lower-case text."""
        others = () if lower.isascii() else tuple(word for word in self._others if word in lower)
        found: dict[int, str] = {}
        searched = 0  # a window is searched once, however many runs it comes before
        for run in runs:
            start = max(searched, run - self.reach)
            for letters in {match.group() for match in _LETTERS.finditer(lower, start, run)}:
                for word in self._by_last_word.get(letters, ()):
                    for end in word_ends(lower, word, max(0, start - len(word)), run, whole=True):
                        _keep_longest(found, end, word)
                    if " " in word and "  " in lower[max(0, start - 2 * len(word)) : run]:
                        # A form's label spaced out (`Date  of  Birth  :`, as OCR and fixed
                        # layouts set it): its words with any spaces between them.
                        for end in _spaced_ends(lower, word, max(0, start - 2 * len(word)), run):
                            _keep_longest(found, end, word)
            for word in others:
                for end in word_ends(lower, word, max(0, start - len(word)), run, whole=True):
                    _keep_longest(found, end, word)
            searched = run
        return found


@functools.lru_cache(maxsize=512)
def _spaced(word: str) -> re.Pattern[str]:
    return re.compile(r"[ \t]+".join(map(re.escape, word.split(" "))))


def _spaced_ends(lower: str, word: str, start: int, end: int) -> list[int]:
    """Where `word`, its words apart by one space or more, ends in lower[start:end], at a
    word's start and not in a longer word."""
    return [
        found.end()
        for found in _spaced(word).finditer(lower, start, end)
        if not _ascii_letter(lower[found.start() - 1 : found.start()])
        and not _ascii_letter(lower[found.end() : found.end() + 1])
    ]


def _keep_longest(found: dict[int, str], end: int, word: str) -> None:
    """Of the words that end at `end`, the longest names the value (`tgl lahir`, not `lahir`)."""
    if len(word) > len(found.get(end, "")):
        found[end] = word


class NamedBefore:
    """One of `words` ending at most `gap` characters (on the same line) before a position.
    Case is ignored; an ASCII word must start a word (`uid` is not in `uuid`, `key` not in
    `monkey`), other scripts have no word boundaries to go by."""

    def __init__(
        self, words: Iterable[str], gap: int, between: str | None = None, longest: int = 0
    ) -> None:
        """`between`: a regex of what may stand between the word and the position, at most
        `gap` characters of it (any characters of the line, where None); `longest`: the most
        characters a word matches, where the words are regexes longer than what they match."""
        words = tuple(words)
        # One look-behind for all the ASCII words: it turns away most places at once, where one
        # before each word was tried word by word.
        ascii_words = "|".join(word for word in words if word.isascii())
        alternatives = "|".join(
            ([rf"(?<![a-z])(?:{ascii_words})"] if ascii_words else [])
            + [word for word in words if not word.isascii()]
        )
        between = between or rf"[^\n]{{0,{gap}}}"
        self._pattern = re.compile(rf"(?:{alternatives}){between}$", re.IGNORECASE)
        # The longest a word and its gap can be: the text searched before a position.
        self.reach = gap + (longest or max(len(word) for word in words))

    def ends(self, before: str) -> bool:
        """A word of the list ends `before` (within the gap)."""
        return self._pattern.search(before, max(0, len(before) - self.reach)) is not None

    def before(self, text: str, position: int) -> bool:
        """A word of the list comes just before `text[position]`."""
        return self._pattern.search(text, max(0, position - self.reach), position) is not None


# Code that reads a secret from elsewhere: a call or an index (`os.environ["KEY"]`, `getpass()`),
# an attribute (`args.password`), a literal that is no value.
_CODE = re.compile(r"[A-Za-z_]\w*(?:(?:\.[A-Za-z_]\w*)+(?=[(\[)\],]|$)|(?=[(\[]))")
# Literals that are no value: in code (`api_key=None`) or as a flag (`"pass": "true"`).
NO_VALUE = frozenset({"none", "null", "nil", "undefined", "true", "false", "yes", "no"})


# A value that stands for a secret without being one: a variable or template reference
# (`$DB_PASS`, `${TOKEN}`, `$(cat pw)`, `%(pw)s`, `{secret}`, `{{ .Values.pw }}`,
# `<your-password>`, the variable's name: `LABEL_STUDIO_PASSWORD`; a reference or a command
# cut where the value's characters end, `${DB_PASSWORD` in a URL, `$(cat` before a space), a YAML
# tag (`!vault`), a mask or an elision (`****`, `xxxx`, `sk-...`, `sk-...your key here`, the
# last characters a CI log shows of a masked value: `xxxxjK9a`), a template cut at a space
# (`{{ lookup(`), a
# placeholder that says so (`your_password_here`, `changeme`, `sk_test_placeholder`), or a path
# to a file that holds one.
_PLACEHOLDER = re.compile(
    r"\$(?:[A-Z_][A-Z0-9_]*|[a-z_]+|\{.*|\(.*)|%\(\w+\)s|\{.*\}|<[^<>]*>|![A-Za-z]+"
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[*xX•.·…_-]+|\{\{.*|[xX*]{4,}[A-Za-z0-9]{1,4}|.*(?:\.\.\.|…).*|(?:~|\.{1,2}|/[\w.-]+)(?:/(?:[a-z0-9._-]+|[A-Z][a-z]+|[A-Z0-9_]+))+/?"
    r"|(?i:(?:.*[_-])?your[_ -].*|.*[_-]here|(?:.*[_-])?x{3,}|changeme|change_me|changeit"
    r"|password|passwd|secret|example|placeholder|redacted|dummy|todo|tbd"
    r"|.*[_-](?:placeholder|redacted|dummy|example|changeme))"
)


_ASKS_AGAIN = re.compile(r"[a-z-]+(?: [a-z-]+){0,3} (?:password|passphrase|pin)(?: again)?[ \t]*:")


# What such a prompt can take of a line: up to six words of letters and `-` (the Kelvin sign is
# a `k` in the lower case), then a colon. Only that stretch is read: the rest of a long line is
# not copied at each value of a line of thousands.
_PROMPT_STRETCH = re.compile(r"[A-Za-z\u212a-]*(?:[ \t]+[A-Za-z\u212a-]+){0,5}[ \t]*:?")


def next_prompt(text: str, start: int) -> bool:
    """What follows a secret's name at `start` is a prompt that asks for it again, not a value
    (`New password: ⏎Re-type new password: `): nothing was typed."""
    stretch = _PROMPT_STRETCH.match(text, start)
    rest = text[start : stretch.end()].rstrip().lower()
    # Plain words, then the name again and a colon (`Re-type new password:`), on the next line
    # or on the name's own where a view joins a label to the next line.
    return _ASKS_AGAIN.match(rest) is not None


# The shell's working directory and the one before it, named like a password (`pwd`).
_WORKING_DIRECTORY = re.compile(r"(?<![A-Za-z_])(?:OLD)?PWD[ \t]*$")


def working_directory(text: str, sign: int, value: str) -> bool:
    """`PWD=/srv`, `OLDPWD=~/src`: the name before the sign at `sign` is the shell's working
    directory and `value` a path, no secret."""
    return value[:1] in ("/", "~") and (
        _WORKING_DIRECTORY.search(text, max(0, sign - 10), sign) is not None
    )


# A type between a name and its value, as typed languages annotate one: `password:
# Optional[str] = "..."`, `const apiKey: string = "..."`, `let key: &'static str = "..."`,
# `val dbPassword: String? = "..."`, `token: str | None = "..."`. One identifier (dotted), a
# generic's brackets, `?`, a union of such; then the spaced `=` of an assignment, not `==` or
# `=>` (`password: A=00` is a password with an `=` in it; `Cookie: sid=x` names a cookie).
_TYPE = r"&?(?:'\w+[ \t]+)?(?:mut[ \t]+)?[A-Za-z_][A-Za-z_.]*(?:[\[<][^\n=:;{}]{0,60}?[\]>])?\??"
_ANNOTATION_AFTER = re.compile(rf"[ \t]*{_TYPE}(?:[ \t]*\|[ \t]*{_TYPE})*[ \t]+=(?![=>])")
_ANNOTATION_BEFORE = re.compile(rf"[ \t]*:[ \t]*{_TYPE}(?:[ \t]*\|[ \t]*{_TYPE})*[ \t]*$")


def annotated(text: str, colon: int) -> bool:
    """The `:` at `colon` starts a type annotation (`password: Optional[str] = ...`): what
    follows it is the value's type, and the value comes after the `=`."""
    return _ANNOTATION_AFTER.match(text, colon + 1) is not None


# Go's declaration, the type after the name: `var dbPassword string = "..."`.
_GO_TYPE_BEFORE = re.compile(rf"(?:^|\s)(?:var|const)[ \t]+[A-Za-z_]\w*([ \t]+{_TYPE})[ \t]*$")


def without_annotation(text: str, start: int, sign: int) -> int:
    """Where the name before the `=` at `sign` ends, read from `start`: before the type
    annotated between them, if there is one (`val dbPassword: String? = `, `var dbPassword
    string = `), otherwise at `sign`. The `=` after an annotation is spaced, as `annotated`
    reads one: `Cookie: sessionid=abc` names a cookie."""
    if text[sign - 1 : sign] not in (" ", "\t"):
        return sign
    annotation = _ANNOTATION_BEFORE.search(text, start, sign) if ":" in text[start:sign] else None
    if annotation is not None:
        return annotation.start()
    before = text[start:sign]
    go = _GO_TYPE_BEFORE.search(before) if "var" in before or "const" in before else None
    return sign if go is None else start + go.start(1)


# A test runner's line of results (`--- PASS: TestX (0.02s)`, `PASS: test_login`): `PASS` as
# it writes it, no password's name.
_TEST_STATUS = re.compile(
    r"[-=]{3}[ \t]+PASS:"  # go test's `--- PASS: TestX (0.02s)`
    r"|PASS:[ \t]+[\w./:-]*[Tt]est[\w./:-]*[ \t]*(?:\(\d+(?:\.\d+)?m?s\))?[ \t]*$"  # `PASS: test_x`
    r"|PASS:[ \t]+\S+[ \t]+\(\d+(?:\.\d+)?m?s\)[ \t]*$"  # any name, and how long it took
)


def results_line(text: str, start: int) -> bool:
    """The word at `start` (`PASS`) starts a test runner's line of results."""
    if not text.startswith("PASS", start):
        return False
    line_start = max(text.rfind("\n", 0, start) + 1, start - 8)  # `--- PASS:`, `=== PASS:`
    line_end = text.find("\n", start, start + 200)
    line = text[line_start : start + 200 if line_end < 0 else line_end]
    return _TEST_STATUS.search(line) is not None


# The verbs that give a value after the words naming it ("the password for the flat is ...",
# "SPZ mého auta je ...", "mật khẩu wifi là ..."), in many languages; `la` is `là` typed
# without its accent.
COPULAS = ("is", "was", "are", "ist", "lautet", "war", "est", "c'est", "c’est", "était", "es",
           "era", "son", "é", "è", "är", "var", "er", "on", "jest", "je", "это", "є", "là", "la",
           "adalah", "ialah", "yaitu", "ay", "kwa", "هي", "هو", "היא", "הוא", "คือ", "เป็น",
           "είναι")  # fmt: skip


def placeholder(value: str) -> bool:
    """`value` stands for a secret rather than being one (see _PLACEHOLDER)."""
    return _PLACEHOLDER.fullmatch(value.strip("'\"`")) is not None


def code_not_a_secret(value: str, name: str) -> bool:
    """An assigned value that is code, not a secret: `os.environ["DB_PASSWORD"]`,
    `getpass.getpass()`, `settings.SECRET_KEY`, `None`, or the name itself passed on
    (`password=password`)."""
    lower = value.rstrip(",)]").lower()  # the end of a call's argument list
    return _CODE.match(value) is not None or lower in NO_VALUE or lower == name


# Words that name a run of digits as a number of something else (an order, an invoice, a
# parcel), right before it: not a card or a phone, unless a phone is named too.
_NUMBER_OF = r"(?:\s*(?:numbers?|nos?\.?|nr\.?|#|ids?|codes?))?"
OTHER_NUMBER = NamedBefore(
    (*(rf"{word}{_NUMBER_OF}" for word in (
        "order", "invoice", "tracking", "transaction", "receipt", "shipment", "parcel",
        "booking", "confirmation", "reference", "ref", "ticket", "bestellung", "bestellnummer",
        "rechnung", "sendung", "auftrag", "commande", "facture", "pedido", "factura", "fattura",
        "ordine", "encomenda", "serial", "seriennummer", "série", "serie", "room",
        "page", "seite", "flight", "flug", "patent", "isbn", "aktenzeichen", "rechnungsnummer",
        "zamówienia", "faktury", "заказа", "заказ", "nota fiscal", "ndc", "sku", "upc", "ean",
        "gtin", "lot", "batch")),
     "订单号", "订单编号", "单号", "发票号", "流水号", "交易号", "注文番号", "伝票番号",
     "問い合わせ番号", r"주문\s*번호", r"송장\s*번호"),
    gap=3,
)  # fmt: skip
# One of the words of OTHER_NUMBER, anywhere: a test far cheaper than the words' places.
OTHER_HINT = re.compile(
    "order|invoice|tracking|transaction|receipt|shipment|parcel|booking|confirmation|ref|ticket"
    "|bestell|rechnung|sendung|auftrag|commande|facture|pedido|factura|fattura|ordine|encomenda"
    "|单号|订单|发票号|流水号|交易号|番号|問い合わせ|주문|송장|serie|série|room|page|seite|flight"
    "|flug|patent|isbn|aktenzeichen|zamówienia|faktury|заказ|nota fiscal|ndc|sku|upc|ean|gtin"
    "|lot|batch"
)


def names_another_number(before: str) -> bool:
    """A word right before the end of `before` names the digits after it as the number of
    something else (an order, an invoice, a room): not a card, a phone or an identity number."""
    tail = before[-OTHER_NUMBER.reach :]
    return OTHER_HINT.search(tail.lower()) is not None and OTHER_NUMBER.ends(tail)


def speaks_in_a_chat(lower: str, at: int, label: str) -> bool:
    """`label` at `at` starts its line, and on another line of the text it says something
    (two words or more after it and its colon): a chat's speaker (`Usuario: listo`,
    `العميل: كم رسوم...`), not a form's field, which names one value once."""
    line_start = lower.rfind("\n", 0, at) + 1
    if lower[line_start:at].strip(" \t"):
        return False
    return any(
        line.start() + (lower[line.start() : line.start() + 1] == "\n") != line_start
        for line in _speaker_lines(label).finditer(lower)
    )


@functools.lru_cache(maxsize=256)
def _speaker_lines(label: str) -> re.Pattern[str]:
    return re.compile(rf"(?:^|\n)[ \t]*{re.escape(label)}[ \t]*[:：][ \t]*\S+[ \t]+\S")
