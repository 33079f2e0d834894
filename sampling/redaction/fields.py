"""Structured data read as "label: value" lines: the fields view's pieces (views.py builds it).

The finders of values named by a word (a date of birth, a name, a record number) read the words
right before a value. Structured data puts them elsewhere: in a key spelt as code
(`"date_of_birth": "1987-02-11"`, `dateOfBirth: ...`, `full-name=...`), in the header line of a
CSV, markdown, psql or HTML table, in an SQL column list (an insert's or a dump's `COPY`), in an
element's or a form field's name, in an INI section's keys, in a vCard's property names (`FN:`,
`BDAY:`).
Here each value of such data is paired with what names it, and the fields view reads each pair
as a line of its own, `<label words>: <value>`, the label's words spaced
(`date_of_birth`, `dateOfBirth` and `date-of-birth` all read "date of birth"). Only the values
are kept as they are (a span found in one maps back to exactly its characters; a vCard's `ADR`
reads as an address is written, the whole value standing for it); the labels
and the separators between values map back to the characters between values; what holds no
pair is left out of the view (the other views read it).

A text pays for this only where it may hold such data, and prose is turned away by what costs
next to nothing (single characters looked for in C, each of the few colons looked at once):
a key is parsed for only where a colon or `=` has a quote or a key written as code before it
(or a quoted value after it), a table only where the text holds a `|`, a `VALUES (`, or a
delimiter near the start of its first line, of a line after a colon or a code fence (every
line, where it holds a tab), a vCard only after `BEGIN:VCARD`. A CSV header spaced as prose is
(`name, email, dob`) must name personal data.

A column or key named only "name" (`name,price`, `"name": "..."`) is read as a person's name
only where another column or key of the record names personal data (an e-mail, a phone, a
birth date, an address): a catalogue's `Steel Bracket` is no one's name; a name under a
qualifier that is not a person's (`product_name`, `displayName`) is left out, and so is code's
assignment (`student_id = 12345`: an example, read as it is by the other views).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from sampling.redaction.context import placeholder


class Field(NamedTuple):
    label: str  # the label as the view reads it (words spaced)
    parts: tuple[tuple[int, int], ...]  # [start, end) of the value's parts in the text
    joint: str = ""  # what the view reads between two parts
    rendered: str | None = None  # what the view reads for the whole value, where not its parts


# --- labels ----------------------------------------------------------------------------------

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[_.\-\s]+")


# A name's key written as one word (`fullname`, `firstname` in a form's field).
_ONE_WORD_NAME = re.compile(r"(?i)\b(full|first|last|given|family)(name)\b")


# Keys of one word that name a given or a family name in other languages (`prenom`, `vorname`,
# `cognome`, `fname`): read as the English label the finders of names know.
_GIVEN_OR_FAMILY = {
    **dict.fromkeys(("prenom", "prénom", "vorname", "voornaam", "imie", "imię", "forename",
                     "fname", "firstname", "fornavn", "förnamn", "etunimi", "jmeno", "jméno",
                     "keresztnév", "prenume", "имя", "ім'я", "όνομα"), "first name"),
    **dict.fromkeys(("cognome", "apellido", "apellidos", "sobrenome", "nachname", "familienname",
                     "achternaam", "nazwisko", "lname", "lastname", "efternamn", "etternavn",
                     "sukunimi", "prijmeni", "příjmení", "vezetéknév", "nume", "фамилия",
                     "прізвище", "επώνυμο", "surname"), "last name"),
}  # fmt: skip


def label_words(key: str) -> str:
    """A key's words, spaced: `date_of_birth`, `dateOfBirth`, `date-of-birth`, `DATE_OF_BIRTH`
    read "date of birth" in lower case (the case of each letter kept); `fullname` reads "full
    name", `prenom` and `cognome` "first name" and "last name"."""
    words = _ONE_WORD_NAME.sub(r"\1 \2", _SEPARATORS.sub(" ", _CAMEL.sub(" ", key)).strip())
    return _GIVEN_OR_FAMILY.get(words.lower(), words)


# Words of a name's label before "name" that make it a person's (`full_name`, `patientName`);
# another word there (`product_name`, `displayName`, `hostname`) names something else.
_PERSON_QUALIFIERS = frozenset({
    "full", "first", "last", "given", "family", "middle", "maiden", "legal", "birth", "patient",
    "customer", "client", "employee", "contact", "person", "member", "holder", "cardholder",
    "sender", "recipient", "guest", "passenger", "student", "applicant", "candidate", "owner",
    "parent", "spouse", "beneficiary", "emergency", "real", "your", "my", "his", "her", "their",
    "author", "committer", "git",  # `GIT_AUTHOR_NAME`, `author_name`
})  # fmt: skip
_NAME_WORDS = frozenset({"name", "names", "nombre", "nom", "naam", "navn", "nome"})
# Words of a key or column that name personal data: beside one of them, a column or key named
# just "name" holds a person's.
_PERSONAL_WORDS = frozenset({
    "email", "mail", "e-mail", "phone", "telephone", "tel", "mobile", "cell", "dob", "birth",
    "birthday", "bday", "born", "ssn", "sin", "address", "street", "zip", "postcode", "postal",
    "patient", "passport", "gender", "sex", "nationality", "surname", "firstname", "lastname",
    "first", "last", "given", "family", "contact", "emergency", "employee", "diagnosis",
    "telefone", "telefono", "teléfono", "celular", "móvil", "cpf", "rg", "dni", "nif", "curp",
    "nhs", "aadhaar", "iban", "nascimento", "nacimiento", "naissance", "geburtsdatum", "correo",
    "endereço", "dirección", "adresse",
    # a given or a family name's key in another language (`{"nome": ..., "cognome": ...}`)
    *_GIVEN_OR_FAMILY,
})  # fmt: skip
# A column named by a person's role (`Driver`, `Patient`): beside such a column, a table without
# a rule under its header is read too.
_ROLE_WORDS = frozenset({
    "driver", "customer", "client", "patient", "passenger", "employee", "caller", "witness",
    "tenant", "student", "applicant", "claimant", "insured", "member", "guest", "cliente",
    "paciente", "trabajador", "funcionário", "empleado", "colaborador", "salarié", "mitarbeiter",
})  # fmt: skip


def _words(label: str) -> list[str]:
    return label.lower().split()


def _name_label(words: list[str]) -> bool | None:
    """True: the label names a person's name (`full name`, `patient name`); False: a name of
    something else (`product name`); None: no name (or just "name", decided by the record)."""
    if not words or words[-1] not in _NAME_WORDS:
        return None
    if len(words) == 1:
        return None
    return all(word in _PERSON_QUALIFIERS for word in words[:-1])


def _bare_name(words: list[str]) -> bool:
    return len(words) == 1 and words[0] in _NAME_WORDS


def _personal(words: list[str]) -> bool:
    return any(word in _PERSONAL_WORDS for word in words) or _name_label(words) is True


def _kept(fields: list[Field]) -> list[Field]:
    """The fields of one record, a bare "name" only beside a personal one (module docstring),
    a name of something else (`product_name`) left out; a bare "name" beside only a family
    name's key is the given name (`{"nome": ..., "cognome": ...}`), beside only a given name's
    the family name (`{"prenom": ..., "nom": ...}`)."""
    words = [_words(field.label) for field in fields]
    personal = any(_personal(w) for w in words)
    labels = {field.label.lower() for field in fields}
    other_half = None
    if ("first name" in labels) != ("last name" in labels):
        other_half = "last name" if "first name" in labels else "first name"
    return [
        field._replace(label=other_half) if other_half and _bare_name(w) else field
        for field, w in zip(fields, words, strict=True)
        if _name_label(w) is not False and (personal or not _bare_name(w))
    ]


# --- keys and values: JSON, YAML, code, query strings ---------------------------------------

# A key, quoted or not, its colon or `=`, and its value: quoted (to the closing quote on the
# line) or not (to the line's end, a closing bracket, or a comma before the next key).
_NEXT_KEY = r"""[ \t]*["'`]?[^\W\d][\w.-]*["'`]?[ \t]*[:=]"""
# A log's or a query string's next `key=value` after a space or `&` (`first_name=Jo
# last_name=Li`, `?first_name=Jo&last_name=Li`): a plain value ends before it.
_NEXT_ASSIGNED = r"""[ \t&][^\W\d][\w.-]{0,63}=(?!=)"""
_PAIR = re.compile(
    r"""(?<![\w.-])(?P<q>["'`]?)(?P<key>[^\W\d][\w.-]{0,63})(?P=q)"""
    r"""(?P<sign>[ \t]*[:=])(?![:=/>~])[ \t]*"""
    r"""(?:"(?P<dq>[^"\n{\[][^"\n]*)"|'(?P<sq>[^'\n{\[][^'\n]*)'"""
    rf"""|(?!{_NEXT_KEY})(?P<plain>(?:[^\s"'{{\[,]|,(?!{_NEXT_KEY}))"""
    rf"""(?:[^\n,}}\] \t&]|,(?!{_NEXT_KEY})|(?!{_NEXT_ASSIGNED})[ \t&])*))"""
)
_QUOTES = "\"'`"
# A key written as code (`date_of_birth`, `date-of-birth`, `patient.dob`, `dateOfBirth`).
_CODE_KEY = re.compile(r"[^\W_][_.-]+[^\W_]|[a-z][A-Z]")
_PLAIN_END = " \t,;)]}"
_QUOTED_VALUE = ('"', "'", ' "', " '")


def _names_a_value(text: str, at: int) -> bool:
    """The colon or `=` at `at` may join a key to its value: a quote before it (`"dob":`) or
    after it (`name: "Jo"`), or a key written as code right before it. Prose has a colon or
    two a page: each is looked at with a few calls to C."""
    if text.startswith(_QUOTED_VALUE, at + 1):
        return True
    start = at - 1 if text[at - 1 : at] == " " else at
    before = text[start - 1 : start]
    if not before.isalpha():  # `06:42`, `x = 1`, the text's start
        return before != "" and before in _QUOTES
    tail = text[max(0, start - 48) : start]
    if "_" in tail or "-" in tail or "." in tail or not tail.islower():
        word = tail.rsplit(None, 1)[-1]
        return _CODE_KEY.search(word) is not None
    return False  # words of prose, in lower case


def _signs(text: str) -> tuple[bool, bool, list[int]]:
    """One look at each colon and `=` of the text (prose has few): whether a key may come
    before one (`_names_a_value`), whether a vCard begins at one, and where each line after a
    line that ends in a colon starts (a table introduced: "The patients:\n")."""
    pairs = vcard = False
    after_colons = []
    at = text.find(":")
    while at >= 0:
        following = text[at + 1 : at + 2]
        if following == "\n":
            after_colons.append(at + 2)
        elif following in _V and text.startswith(("VCARD", "vcard", "vCard"), at + 1):
            vcard = True
        if not pairs:
            pairs = _names_a_value(text, at)
        at = text.find(":", at + 1)
    if not pairs:
        at = text.find("=")
        while at >= 0 and not pairs:
            pairs = _names_a_value(text, at)
            at = text.find("=", at + 1)
    return pairs, vcard, after_colons


def _pairs(text: str) -> list[Field]:
    found = []
    for match in _PAIR.finditer(text):
        key = match.group("key")
        if match.group("sign")[0] in " \t" and match.group("sign")[-1] == "=":
            continue  # code's assignment (`student_id = 12345`): an example, read as it is
        value = next(g for g in ("dq", "sq", "plain") if match.group(g) is not None)
        start, end = match.span(value)
        if value == "plain":
            while end > start and text[end - 1] in _PLAIN_END:
                end -= 1
            # A key that is plain words with a plain value already reads as it should.
            if not match.group("q") and _CODE_KEY.search(key) is None:
                continue
        if end > start and not _stands_in(text[start:end]):
            found.append(Field(label_words(key), ((start, end),)))
    return _kept(found)


def _stands_in(value: str) -> bool:
    """A value that refers to one elsewhere (`${DB_PASSWORD}`, `$(cat /run/secrets/pw)`, `{{
    .Values.pw }}`, `<your-password>`): the text as it is already reads it so, and a line of the
    fields view, cut at a brace or a space, would not."""
    return value.startswith(("$", "%(", "{{", "<")) or placeholder(value)


# --- tables: CSV, TSV, markdown, SQL column lists -------------------------------------------

_HEADER_CELL = re.compile(r"[^\W\d][\w .'/#()&-]{0,39}")
_MOST_HEADER_WORDS = 4
_LONGEST_HEADER = 400
_LONGEST_CELL = 42  # a header's cell, with its quotes and spaces
# A header line: two label cells or more and the line break a row follows; cells of a line
# spaced as prose (`name, email`) one word each, or quoted. Possessive: prose fails at once.
_LABEL = r"""(?:"[^"\n]{1,40}+"|'[^'\n]{1,40}+'|[^\W\d][\w .'/#()&-]{0,39}+)"""
_WORD_LABEL = r"""(?:"[^"\n]{1,40}+"|'[^'\n]{1,40}+'|[^\W\d][\w'/#&-]{0,39}+)"""
_HEADER_LINE = re.compile(
    rf"[ \t]*+(?:{_LABEL}(?:([,;\t]){_LABEL})(?:\1{_LABEL})*+"
    rf"|{_WORD_LABEL}(?:([,;]) ?{_WORD_LABEL})(?:\2 ?{_WORD_LABEL})*+)[ \t]*+\r?\n"
)
_V = "Vv"


def _may_hold_keys(text: str) -> bool:
    """Where a key and its value (or a vCard, or a table after a colon) may be: a quote, a brace,
    an underscore, two colons or `=` signs (prose has a colon a paragraph, YAML one a line), or
    one with a key alone before it on its line. Searches for one character, in C, first."""
    if '"' in text or "{" in text or "_" in text:
        return True
    colon, equal = text.find(":"), text.find("=")
    if colon < 0 and equal < 0:
        return False
    sign = max(colon, equal)
    if (colon >= 0 and equal >= 0) or text.find(text[sign], sign + 1) >= 0:
        return True
    # The one colon or `=`: a key alone on its line before it (`dateOfBirth: ...`), not prose.
    line = text.rfind("\n", 0, sign) + 1
    return sign - line < 64 and text.find(" ", line, sign) < 0 and _names_a_value(text, sign)


def _delimiter_near_start(text: str) -> bool:
    """A comma or semicolon in a header's first cell's reach (a tab is looked for apart), not
    as prose has one: words, then the comma and a space."""
    at = text.find(",", 0, _LONGEST_CELL)
    if at < 0:
        at = text.find(";", 0, _LONGEST_CELL)
    return at >= 0 and (
        text[at + 1 : at + 2] != " " or text[0] in _QUOTES or text.find(" ", 0, at) < 0
    )


_NO_SIGNS: tuple[bool, bool, list[int]] = (False, False, [])


def _header(cells: list[tuple[int, int]], text: str, one_word: bool = False) -> list[str] | None:
    """The labels of a header line's cells (`one_word`: a word each, unless quoted), or None
    where it is no header."""
    labels = []
    for start, end in cells:
        cell = text[start:end]
        words = len(cell.split())
        if (
            _HEADER_CELL.fullmatch(cell) is None
            or words > _MOST_HEADER_WORDS
            or (one_word and words > 1 and text[start - 1 : start] not in _QUOTES[:2])
        ):
            return None
        labels.append(label_words(cell))
    if len(labels) < 2 or len({label.lower() for label in labels}) < len(labels):
        return None
    return labels


def _table_fields(labels: list[str], rows: list[list[tuple[int, int]]]) -> list[Field]:
    fields = [Field(label, (cell,)) for row in rows for label, cell in zip(labels, row,
              strict=True) if cell[1] > cell[0]]  # fmt: skip
    words = [_words(label) for label in labels]
    personal = any(_personal(w) for w in words)
    wanted = {
        label.lower()
        for label, w in zip(labels, words, strict=True)
        if _name_label(w) is not False and (personal or not _bare_name(w))
    }
    return [field for field in fields if field.label.lower() in wanted]


def _lines(text: str, start: int = 0) -> Iterator[tuple[int, int]]:
    """[start, end) of each line from `start`, without its line break."""
    while start <= len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        yield start, end if text[end - 1 : end] != "\r" else end - 1
        start = end + 1


def _trimmed(text: str, start: int, end: int, quotes: str = "\"'`") -> tuple[int, int]:
    while start < end and text[start] in " \t":
        start += 1
    while end > start and text[end - 1] in " \t":
        end -= 1
    if end - start >= 2 and text[start] in quotes and text[end - 1] == text[start]:
        start, end = start + 1, end - 1
    return start, end


def _delimited(text: str, start: int, end: int, delimiter: str) -> list[tuple[int, int]]:
    """The cells of a CSV line (a quoted cell may hold the delimiter), each trimmed."""
    cells, position = [], start
    while True:
        cell_start = position
        while position < end and text[position] in " \t":
            position += 1
        if position < end and text[position] == '"':
            close = position + 1
            while True:
                close = text.find('"', close, end)
                if close < 0 or text[close + 1 : close + 2] != '"':
                    break
                close += 2
            position = end if close < 0 else close + 1
        at = text.find(delimiter, position, end)
        cell_end = end if at < 0 else at
        cells.append(_trimmed(text, cell_start, cell_end))
        if at < 0:
            return cells
        position = at + 1


def _header_lines(text: str, after_colons: list[int]) -> list[int]:
    """Where a CSV table's header may start: the text's first line, a line after one that ends
    in a colon, after a blank line (a table pasted under a question) or after a code fence;
    every line where the text holds a tab (TSV)."""
    if "\t" in text:
        return [start for start, _ in _lines(text)]
    starts = [0, *after_colons, *_after_blank_lines(text)]
    if "`" not in text:
        return sorted(set(starts))
    at = text.find("```")
    while at >= 0:
        line_end = text.find("\n", at)
        if line_end < 0:
            break
        starts.append(line_end + 1)
        at = text.find("```", line_end)
    return sorted(set(starts))


def _after_blank_lines(text: str) -> list[int]:
    """Where each line after a blank one starts."""
    found = []
    at = text.find("\n\n")
    while at >= 0:
        found.append(at + 2)
        at = text.find("\n\n", at + 2)
    return found


def _csv(text: str, starts: list[int]) -> list[Field]:
    found: list[Field] = []
    read_to = 0
    for start in starts:
        if start < read_to:
            continue  # a row of the table before
        end = text.find("\n", start)
        if end < 0 or end - start > _LONGEST_HEADER:
            continue  # a header has rows after it, and short cells
        end -= text[end - 1 : end] == "\r"
        if _HEADER_LINE.match(text, start) is None:
            continue  # no header's shape (prose: a comma after many words, a full stop)
        for delimiter in ",;\t":
            first = text.find(delimiter, start, end)
            if first < 0 or first - start > _LONGEST_CELL:
                continue  # no header (prose: a comma after many words)
            spaced = text.startswith(" ", first + 1) and delimiter != "\t"
            if spaced and text[start] not in _QUOTES and text.find(" ", start, first) >= 0:
                continue  # prose: words, a comma and a space, more words
            row_end = text.find("\n", end + 1)
            row_end = len(text) if row_end < 0 else row_end
            if text.count(delimiter, end + 1, row_end) < text.count(delimiter, start, end):
                continue  # no row under it (a quoted cell may hold more delimiters)
            # Prose puts a space after its commas: a header spaced so has one word a cell.
            spaced = spaced or (delimiter != "\t" and text.find(delimiter + " ", start, end) >= 0)
            labels = _header(_delimited(text, start, end, delimiter), text, spaced)
            if labels is None or (spaced and not any(_personal(_words(x)) for x in labels)):
                continue  # spaced, it must name personal data (prose: "Red, green, blue")
            rows = []
            for line_start, line_end in _lines(text, end + 1):
                row = _delimited(text, line_start, line_end, delimiter)
                if len(row) != len(labels):
                    break
                rows.append(row)
                read_to = line_end
            found += _table_fields(labels, rows)
            break
    return found


# A markdown table's rule under its header: `|---|:--:|`, `--- | ---`; a database client's,
# `----+------` (psql) or `+----+------+` (mysql).
_MARKDOWN_RULE = re.compile(
    r"^[ \t]*[|+]?[ \t]*:?-{3,}:?[ \t]*(?:[|+][ \t]*:?-{3,}:?[ \t]*)+[|+]?[ \t]*$", re.MULTILINE
)


def _piped(text: str, start: int, end: int) -> list[tuple[int, int]]:
    start, end = _trimmed(text, start, end, "")
    if text[start : start + 1] == "|":
        start += 1
    if text[end - 1 : end] == "|" and end - 1 > start:
        end -= 1
    return _delimited(text, start, end, "|")


def _markdown(text: str) -> list[Field]:
    found: list[Field] = []
    for rule in _MARKDOWN_RULE.finditer(text):
        if rule.start() == 0:
            continue
        header_end = rule.start() - 1
        header_start = text.rfind("\n", 0, header_end) + 1
        labels = _header(_piped(text, header_start, header_end), text)
        if labels is None:
            continue
        rows, position = [], rule.end() + 1
        while position < len(text):
            line_end = text.find("\n", position)
            line_end = len(text) if line_end < 0 else line_end
            if _MARKDOWN_RULE.match(text, position) is not None:
                rows = rows[:-1]  # the next table's rule: the row before it is its header
                break  # (each table's rows are read once, not again from every rule above)
            row = _piped(text, position, line_end)
            if "|" not in text[position:line_end] or len(row) != len(labels):
                break
            rows.append(row)
            position = line_end + 1
        found += _table_fields(labels, rows)
    return found


def _names_a_person(label: str) -> bool:
    words = _words(label)
    return _personal(words) or words[-1] in _ROLE_WORDS


def _rule_less(text: str) -> list[Field]:
    """A table of `|`-separated cells without a rule under its header (`Nome | CPF | Telefone`
    then its rows): read only where a label of its header names personal data, the rows those
    lines after it with as many cells."""
    found: list[Field] = []
    previous_piped = False
    position = 0
    for start, end in _lines(text):
        if start < position:
            continue
        piped = text.find("|", start, end) >= 0
        if piped and not previous_piped and end < len(text):
            following = text.find("\n", end + 1)
            following = len(text) if following < 0 else following
            if (
                _MARKDOWN_RULE.match(text, end + 1) is None
                and text.find("|", end + 1, following) >= 0
            ):
                labels = _header(_piped(text, start, end), text)
                if labels is not None and any(_names_a_person(label) for label in labels):
                    rows = []
                    for line_start, line_end in _lines(text, end + 1):
                        row = _piped(text, line_start, line_end)
                        if text.find("|", line_start, line_end) < 0 or len(row) != len(labels):
                            break
                        rows.append(row)
                        position = line_end
                    found += _table_fields(labels, rows)
        previous_piped = piped
    return found


_INSERT = re.compile(
    r"\binsert\s+(?:ignore\s+)?into\s+[\w.`\"\[\]]+\s*\((?P<columns>[^()]{1,800})\)\s*values\s*",
    re.IGNORECASE,
)
_SQL_VALUE = re.compile(r"\s*(?:'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|[^\s,()'\"]+)\s*")


def _may_insert(text: str) -> bool:
    """A `VALUES (` in the text (each parenthesis looked at: prose has few)."""
    at = text.find("(")
    while at >= 0:
        if text[max(0, at - 8) : at].rstrip().lower().endswith("values"):
            return True
        at = text.find("(", at + 1)
    return False


def _sql(text: str) -> list[Field]:
    found: list[Field] = []
    for insert in _INSERT.finditer(text):
        columns = [label_words(c.strip(' \t\n`"[]')) for c in insert.group("columns").split(",")]
        rows, position = [], insert.end()
        while text.startswith("(", position):
            row, position = [], position + 1
            while (value := _SQL_VALUE.match(text, position)) is not None:
                row.append(_trimmed(text, value.start(), value.end(), "'\""))
                position = value.end()
                if not text.startswith(",", position):
                    break
                position += 1
            if not text.startswith(")", position) or len(row) != len(columns):
                break
            rows.append(row)
            position += 1
            comma = re.compile(r"\s*,\s*").match(text, position)
            if comma is None:
                break
            position = comma.end()
        if rows and all(columns):
            found += _table_fields(columns, rows)
    return found


# A PostgreSQL dump's `COPY table (columns) FROM stdin;`, its rows tab-separated up to `\.`.
_COPY = re.compile(
    r"\bCOPY[ \t]+[\w.\"]+[ \t]*\((?P<columns>[^()\n]{1,800})\)[ \t]+FROM[ \t]+stdin;?[ \t]*\n"
)


def _copy(text: str) -> list[Field]:
    found: list[Field] = []
    for copy in _COPY.finditer(text):
        columns = [label_words(c.strip(' \t"')) for c in copy.group("columns").split(",")]
        rows = []
        for line_start, line_end in _lines(text, copy.end()):
            if text.startswith("\\.", line_start) or line_end == line_start:
                break
            if text.startswith("COPY", line_start) and _COPY.match(text, line_start):
                break  # the next statement's: each one's rows are read once
            row = _delimited(text, line_start, line_end, "\t")
            if len(row) != len(columns):
                break
            rows.append(row)
        if rows and all(columns):
            found += _table_fields(columns, rows)
    return found


# An HTML table (a notebook's DataFrame, a page's): its header row's `<th>` cells, then rows of
# `<td>` cells holding text alone.
_ROW_START = re.compile(r"(?i)<tr\b[^<>]{0,200}>")
_ROW_END = re.compile(r"(?i)</tr\s*>")
_HTML_CELL = re.compile(r"(?is)<(?P<tag>t[hd])\b[^>]*>\s*(?P<value>[^<]{0,200}?)\s*</t[hd]\s*>")


def _html_rows(text: str) -> Iterator[tuple[int, int]]:
    """[start, end) of each row's cells: from the last `<tr>` before each `</tr>` (one pass,
    whatever the markup's nesting or its unclosed rows)."""
    position = 0
    for close in _ROW_END.finditer(text):
        opened = None
        for opened in _ROW_START.finditer(text, position, close.start()):  # noqa: B007
            pass
        if opened is not None:
            yield opened.end(), close.start()
        position = close.end()


def _html_tables(text: str) -> list[Field]:
    found: list[Field] = []
    labels: list[str] | None = None
    rows: list[list[tuple[int, int]]] = []
    for start, end in _html_rows(text):
        cells = list(_HTML_CELL.finditer(text, start, end))
        if cells and all(cell.group("tag").lower() == "th" for cell in cells):
            if labels and rows:
                found += _table_fields(labels, rows)
            labels = _header([cell.span("value") for cell in cells], text)
            rows = []
        elif labels is not None and len(cells) == len(labels):
            rows.append([cell.span("value") for cell in cells])
    if labels and rows:
        found += _table_fields(labels, rows)
    return found


# An element holding text alone (`<email>ana@...</email>`, `<birthDate>...</birthDate>`,
# `<pin>...</pin>`), and a form's field with its value (`<input name="fullname" value="...">`):
# the element's or the field's name read as the words before its value.
_ELEMENT = re.compile(r"<(?P<key>[A-Za-z][\w.-]{0,63})>(?P<value>[^<>\n]{1,200})</(?P=key)>")
# An element named by its attribute, as tool calls and configs write them (`<parameter
# name="holder">Jonas Weber</parameter>`, `<property name="db.password">...</property>`).
_NAMED_ELEMENT = re.compile(
    r"""<(?P<tag>[A-Za-z][\w.:-]{0,63})\s+(?:name|key)\s*=\s*["'](?P<key>[^"'<>\n]{1,64})["']"""
    r"[^<>\n]{0,200}>(?P<value>[^<>\n]{1,200})</(?P=tag)>"
)
_INPUT = re.compile(r"(?i)<input\b[^<>]{0,1000}>")
_INPUT_NAME = re.compile(r"""(?i)\bname\s*=\s*["']([^"'<>]{1,64})["']""")
_INPUT_VALUE = re.compile(r"""(?i)\bvalue\s*=\s*(?:"([^"<>\n]{1,200})"|'([^'<>\n]{1,200})')""")


def _markup(text: str) -> list[Field]:
    found = []
    if "</" in text:
        named = _NAMED_ELEMENT.finditer(text) if "name=" in text or "key=" in text else ()
        for element in (*_ELEMENT.finditer(text), *named):
            start, end = _trimmed(text, *element.span("value"), "")
            if end > start and not _stands_in(text[start:end]):
                found.append(Field(label_words(element.group("key")), ((start, end),)))
    if "<input" in text or "<INPUT" in text:
        for tag in _INPUT.finditer(text):
            name = _INPUT_NAME.search(text, tag.start(), tag.end())
            value = _INPUT_VALUE.search(text, tag.start(), tag.end())
            if name is None or value is None:
                continue
            group = 1 if value.group(1) is not None else 2
            start, end = value.span(group)
            if not _stands_in(text[start:end]):
                found.append(Field(label_words(name.group(1)), ((start, end),)))
    return _kept(found)


# An INI file's section (`[user]` in a git config, `[client]` in my.cnf) and its `key = value`
# lines: the record a section's keys are read together in.
_INI_SECTION = re.compile(r"(?m)^[ \t]*\[[\w .\"-]{1,64}\][ \t]*$")
_INI_LINE = re.compile(r"(?m)^[ \t]*(?P<key>[A-Za-z][\w.-]{0,63})[ \t]*=(?P<value>[^\n]*)")


# A Dockerfile's `ENV NAME value` and `ARG NAME value`, the older form without `=`.
_DOCKERFILE_LINE = re.compile(
    r"(?m)^[ \t]*(?:ENV|ARG)[ \t]+(?P<key>[A-Za-z_][A-Za-z0-9_]*)[ \t]+(?P<value>[^\s=][^\n]*)$"
)


def _dockerfile(text: str) -> list[Field]:
    found = []
    for line in _DOCKERFILE_LINE.finditer(text):
        start, end = _trimmed(text, *line.span("value"))
        if end > start and not _stands_in(text[start:end]):
            found.append(Field(label_words(line.group("key")), ((start, end),)))
    return _kept(found)


def _ini(text: str) -> list[Field]:
    found: list[Field] = []
    sections = [match.end() for match in _INI_SECTION.finditer(text)]
    for start, end in zip(sections, [*sections[1:], len(text)], strict=True):
        fields = []
        for line in _INI_LINE.finditer(text, start, end):
            value_start, value_end = _trimmed(text, *line.span("value"))
            if value_end > value_start and not _stands_in(text[value_start:value_end]):
                fields.append(Field(label_words(line.group("key")), ((value_start, value_end),)))
        found += _kept(fields)
    return found


# --- vCards ----------------------------------------------------------------------------------

_VCARD_LINE = re.compile(
    r"^(?:item\d+\.)?(?P<property>[A-Za-z-]+)(?:;[^:\n]*)?:(?P<value>[^\n\r]*)", re.MULTILINE
)
# A vCard's properties that hold personal data, the label each reads as, and what joins the
# parts of a structured value (`N:Family;Given;;;`, `ADR:;;Street;City;Region;Code;Country`).
_VCARD = {"FN": ("full name", None), "N": ("full name", " "), "BDAY": ("birthday", None),
          "TEL": ("phone", None), "ADR": ("address", None), "EMAIL": ("email", None),
          "NICKNAME": ("nickname", None)}  # fmt: skip


def _address(value: str) -> str:
    """A vCard's `ADR` value (`PO box;extended;street;locality;region;code;country`) as an
    address is written: `742 Evergreen Terrace, Springfield, IL 62704`, `Kastanienallee 12,
    10435 Berlin`."""
    parts = [part.strip() for part in value.split(";")] + [""] * 7
    street, locality, region, code = parts[2] or parts[1] or parts[0], *parts[3:6]
    if region and code:
        return f"{street}, {locality}, {region} {code}"
    return ", ".join(part for part in (street, f"{code} {locality}".strip()) if part)


def _vcards(text: str) -> list[Field]:
    found: list[Field] = []
    for card in re.finditer(r"(?i)begin:vcard(?P<body>.*?)(?:end:vcard|\Z)", text, re.DOTALL):
        for line in _VCARD_LINE.finditer(text, card.start("body"), card.end("body")):
            label, joint = _VCARD.get(line.group("property").upper(), (None, None))
            if label is None:
                continue
            start, end = _trimmed(text, *line.span("value"))
            if label == "address" and end > start:
                found.append(Field(label, ((start, end),), rendered=_address(text[start:end])))
            elif joint is None:
                parts = [(start, end)] if end > start else []
            else:
                parts, position = [], start
                for part in text[start:end].split(";"):
                    part_start, part_end = _trimmed(text, position, position + len(part))
                    if part_end > part_start:
                        parts.append((part_start, part_end))
                    position += len(part) + 1
            if parts:
                found.append(Field(label, tuple(parts), joint or ""))
    return found


# --- the view's pieces -----------------------------------------------------------------------


def field_pieces(text: str) -> list[tuple[int, int, str]] | None:
    """The replacements (start, end, new) that turn `text` into its fields view: each value
    kept, what comes before it read as its label (and a line break); None where the text holds
    no structured data."""
    fields: list[Field] = []
    pairs, vcard, after_colons = _signs(text) if _may_hold_keys(text) else _NO_SIGNS
    if vcard:
        fields += _vcards(text)
    if "|" in text:
        fields += _markdown(text)
        fields += _rule_less(text)
    if "(" in text and _may_insert(text):
        fields += _sql(text)
    if "stdin" in text and "COPY" in text:
        fields += _copy(text)
    if "<" in text:
        if "<th" in text or "<TH" in text:
            fields += _html_tables(text)
        fields += _markup(text)
    if "[" in text and "=" in text and _INI_SECTION.search(text) is not None:
        fields += _ini(text)
    if "ENV " in text or "ARG " in text:
        fields += _dockerfile(text)
    if after_colons or "\t" in text or "`" in text or "\n\n" in text:
        fields += _csv(text, _header_lines(text, after_colons))
    elif _delimiter_near_start(text) and _HEADER_LINE.match(text) is not None:  # 1st line
        fields += _csv(text, [0])
    if pairs:
        fields += _pairs(text)
    if not fields:
        return None
    fields.sort(key=lambda field: field.parts[0])
    replacements: list[tuple[int, int, str]] = []
    position = 0
    for field in fields:
        if field.parts[0][0] < position:
            continue  # inside a value already read (a table's cell that looks like a key)
        start, end = field.parts[0]
        replacements.append((position, start, f"{chr(10) if position else ''}{field.label}: "))
        if field.rendered is not None:  # read as written elsewhere: the whole value stands for it
            replacements.append((start, field.parts[-1][1], field.rendered))
        else:
            for part_start, part_end in field.parts[1:]:
                replacements.append((end, part_start, field.joint))
                end = part_end
        position = field.parts[-1][1]
    replacements.append((position, len(text), ""))
    return replacements
