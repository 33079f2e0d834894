"""Secrets that code gives by position, with no secret's name beside the value: the password
argument of the calls that take a user and a password (`smtp.login('ops@x', PW)`,
`new NetworkCredential("u", PW)`, `DriverManager.getConnection(url, "u", PW)`,
`auth=('u', PW)`), the SQL that sets one (`IDENTIFIED BY PW`, `PASSWORD(PW)`,
`WITH PASSWORD = N'PW'`), and the values of a Kubernetes Secret manifest.

Each finder looks for the words of its calls with `in` and str.find on the lower-cased text,
and reads the arguments from there only. A password is a literal: a variable, an expression or
a placeholder (`$DB_PASS`, `os.environ[...]`, `'<password>'`, `%s`, `:pw`) is none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sampling.redaction.context import NO_VALUE, placeholder
from sampling.redaction.finders import register
from sampling.redaction.spans import ALL_VIEWS, SECRET_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

# The calls that take a password by position, by their name in lower case (what it is called
# with, its owner or `new` before it aside), and which positional argument is the password
# (-1: the last). One argument before it at least, the user's, except where -1 says the call
# sets a password alone (`session.setPassword("...")`, `PASSWORD('...')`).
_CALLS: dict[str, int] = {
    # Python, Java, Go, Ruby, C#: a client's login (smtplib, ftplib, imaplib, Apache Commons
    # Net, MailKit, jlaffaye/ftp) and HTTP authentication (requests, httpx, aiohttp, Go's
    # net/http, OkHttp, RestAssured, Spring's builders and tokens, java.net, System.Net).
    "login": 1, "authenticate": 1, "auth": 1, "basic_auth": 1, "basicauth": 1,
    "httpbasicauth": 1, "httpdigestauth": 1, "httpproxyauth": 1, "digestauth": 1,
    "setbasicauth": 1, "withbasicauth": 1, "basicauthentication": 1, "withcredentials": 1,
    "setcredentials": 1, "usernamepasswordcredentials": 1,
    "usernamepasswordauthenticationtoken": 1, "passwordauthentication": 1,
    "networkcredential": 1, "plaincredentials": 1, "userpassword": 1, "crammd5auth": 1,
    # LDAP binds (python-ldap, go-ldap: a DN first, `_DN_FIRST`), PHP's and Go's SMTP.
    "simple_bind_s": 1, "simple_bind": 1, "bind_s": 1, "bind": 1, "plainauth": 2,
    # Database and mail connections: host (or URL), user, password.
    "getconnection": 2, "mysqli_connect": 2, "mysql_connect": 2, "mysqli": 2,
    "real_connect": 2, "pdo": 2, "connect": 2, "sequelize": 2, "ftp": 2, "ftp_tls": 2,
    "ftp_login": 2, "ldap_bind": 2, "imap_open": 2,
    # Cloud credentials: an id, then the secret (AWS's SDKs, Azure's client secret).
    "basicawscredentials": 1, "awsbasiccredentials": 1, "newstaticcredentials": 1,
    "clientsecretcredential": 2,
    # A password set alone: a setter or a builder's method (JSch, keyring, Django, Testcontainers),
    # POP3's `pass_`, SQL's PASSWORD() of MySQL.
    "setpassword": -1, "set_password": -1, "withpassword": -1, "password": -1,
    "old_password": -1, "pass_": -1,
    # OkHttp's `Credentials.basic(user, password)`, RestAssured's `.auth().basic(...)`.
    "basic": 1,
}  # fmt: skip
# `basic`, a common word elsewhere, only after what these calls are made on.
_BASIC_OWNER = re.compile(r"(?:credentials|auth\(\s*\)|preemptive\(\s*\))\s*\.\s*$", re.I)
# A class whose factory takes the arguments (`AwsBasicCredentials.create(id, secret)`).
_FACTORY = re.compile(r"[ \t]*\.[ \t]*(?:create|of)[ \t]*(?=\()")
# Calls that also read a DN first (an LDAP bind): elsewhere `bind` is a function's.
_DN_FIRST = frozenset({"bind", "bind_s", "simple_bind", "simple_bind_s"})
# The words one of which every call above holds (looked for first, in the lower case).
_CALL_WORDS = ("login", "auth", "credential", "password", "bind", "connect", "mysqli", "pdo",
               "sequelize", "ftp", "imap_open", "userpassword", "pass_", "basic")  # fmt: skip
# A tuple or list of a user and a password given as HTTP authentication (requests' `auth=`,
# Elasticsearch's `http_auth=` and `basic_auth=`); not a mapping's list (`"auth": [roles]`).
_AUTH_PAIR = re.compile(r"(?:http_|basic_|proxy_)?auth[ \t]*=[ \t]*[(\[]", re.I)

_IDENTIFIER_CHAR = re.compile(r"[\w$]")
# A string literal as an argument: its prefix (`b`, `r`, `f`, `N`, `@`, `$`), the quote, the
# text, and what turns it into a password's type (`.toCharArray()`, `.encode()`).
_LITERAL = re.compile(
    r"(?P<prefix>[bBrRuUfFnNlL@$]{0,2})(?P<quote>['\"`])(?P<value>(?:\\.|(?!(?P=quote))[^\\\n])*)"
    r"(?P=quote)(?:\s*\.\s*(?:toCharArray|getBytes|encode|ToCharArray)\(\s*\))?\Z"
)
# A value a program fills in: a query's parameter (`%s`, `?`, `:pw`, `@pw`, `$1`).
_PARAMETER = re.compile(r"%[sd]|\?|[:@&$]\w+|\$\d+")
_MOST_ARGUMENT_CHARS = 600
_PROSE = re.compile(r"[A-Za-z][A-Za-z ,.:;'!?()-]*")


def _literal_password(value: str, prefix: str) -> bool:
    """A literal that can be a password: four characters or more, and not a placeholder, a
    query's parameter, a flag, or a string the program fills in (`f"{pw}"`)."""
    if len(value) < 4 or len(set(value)) < 2 or value.lower() in NO_VALUE:
        return False
    if "{" in value and any(c in prefix for c in "fF$"):
        return False
    if " " in value and _PROSE.fullmatch(value) is not None:
        return False  # `.password("Enter your password")`: a label
    return not (placeholder(value) or _PARAMETER.fullmatch(value))


def _arguments(text: str, start: int) -> list[tuple[int, int]] | None:
    """The spans of the top-level arguments of the call whose `(` (or `[`) is at `start`, or
    None where it does not close within a few lines' worth of characters."""
    closing = {"(": ")", "[": "]", "{": "}"}
    stack = [closing[text[start]]]
    found: list[tuple[int, int]] = []
    begin, position = start + 1, start + 1
    end = min(len(text), start + _MOST_ARGUMENT_CHARS)
    while position < end:
        char = text[position]
        if char in "'\"`":
            close = position + 1
            while close < end and text[close] != char and text[close] != "\n":
                close += 2 if text[close] == "\\" else 1
            if close >= end or text[close] != char:
                return None
            position = close + 1
            continue
        if char in closing:
            stack.append(closing[char])
        elif char in ")]}":
            if char != stack.pop():
                return None
            if not stack:
                found.append((begin, position))
                return [(a, b) for a, b in found if text[a:b].strip()]
        elif char == "," and len(stack) == 1:
            found.append((begin, position))
            begin = position + 1
        position += 1
    return None


_KEYWORD_ARGUMENT = re.compile(r"\s*[A-Za-z_]\w*\s*(?:=(?!=)|:(?!:))")


def _positional(text: str, arguments: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The positional arguments: not `name=value` (Python) nor `name: value` (C#, Kotlin)."""
    return [(a, b) for a, b in arguments if _KEYWORD_ARGUMENT.match(text, a, b) is None]


def _literal_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Where a string literal argument's text is, if text[start:end] is one that can be a
    password."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    match = _LITERAL.match(text[start:end])
    if match is None or not _literal_password(match["value"], match["prefix"]):
        return None
    return start + match.start("value"), start + match.end("value")


@register("credential_calls")
class CredentialCallFinder:
    """The password of a call that takes a user and a password by position (`login`,
    `HTTPBasicAuth`, `NetworkCredential`, `getConnection`, `SetBasicAuth`, `PlainAuth`,
    `mysqli`, `auth=(user, pw)`, ...), where it is a literal: a variable passed on is none."""

    kinds = frozenset({"PASSWORD"})
    priority = SECRET_PRIORITY
    views = ALL_VIEWS
    triggers = Triggers(words=_CALL_WORDS)

    def find(self, view: Text) -> Iterator[Span]:
        text, lower = view.text, view.lower
        if "(" not in text and "[" not in text:
            return
        if "'" not in text and '"' not in text and "`" not in text:
            return
        seen: set[int] = set()
        for word in _CALL_WORDS:
            at = lower.find(word)
            while at >= 0:
                name_start, name_end = at, at + len(word)
                while name_start > 0 and _IDENTIFIER_CHAR.match(text, name_start - 1):
                    name_start -= 1
                while name_end < len(text) and _IDENTIFIER_CHAR.match(text, name_end):
                    name_end += 1
                if name_start not in seen:
                    seen.add(name_start)
                    yield from self._call(text, lower, name_start, name_end)
                at = lower.find(word, name_end)

    def _call(self, text: str, lower: str, name_start: int, name_end: int) -> Iterator[Span]:
        name = lower[name_start:name_end].lstrip("$")
        pair = _AUTH_PAIR.match(text, name_start)
        if pair is not None:
            arguments = _arguments(text, pair.end() - 1)
            if arguments is not None and len(arguments) == 2:
                span = _literal_span(text, *arguments[1])
                if span is not None:
                    yield Span(*span, "PASSWORD")
            return
        index = _CALLS.get(name)
        if index is None:
            return
        if (
            name == "basic"
            and _BASIC_OWNER.search(text, max(0, name_start - 40), name_start) is None
        ):
            return
        factory = _FACTORY.match(text, name_end)
        opening = factory.end() if factory is not None else name_end
        while opening < len(text) and text[opening] in " \t":
            opening += 1
        if text[opening : opening + 1] != "(":
            return
        arguments = _arguments(text, opening)
        if not arguments:
            return
        positional = _positional(text, arguments)
        if name == "connect" and len(positional) >= 4:
            # paramiko's (host, port, user, password): a port moves the password one on.
            port = text[positional[1][0] : positional[1][1]].strip()
            index = 3 if port.isdigit() else index
        if name in _DN_FIRST:
            first = _literal_span(text, *positional[0]) if positional else None
            if first is None or "=" not in text[first[0] : first[1]]:
                return
        if index == -1:
            if len(positional) > 3:
                return
            index = len(positional) - 1
        elif index >= len(positional) or len(positional) < 2:
            return
        span = _literal_span(text, *positional[index])
        if span is not None:
            yield Span(*span, "PASSWORD")


# SQL that sets a password: `IDENTIFIED BY 'PW'` (MySQL, MariaDB, ClickHouse, Oracle, where
# the user's password may be a bare word: `CREATE USER scott IDENTIFIED BY tiger`), and
# `PASSWORD = N'PW'` (SQL Server's Unicode literal). `SET PASSWORD ... = 'PW'` and
# PostgreSQL's `PASSWORD 'PW'` are read where a secret's name is (keyword, password_phrase),
# `PASSWORD('PW')` as a call above.
_IDENTIFIED = re.compile(
    r"identified[ \t]+(?:with[ \t]+['\"`]?[\w-]+['\"`]?[ \t]+)?(?:by|as)[ \t]+(?:password[ \t]+)?"
    r"(?:(?P<quote>['\"])(?P<quoted>[^'\"\n]+)(?P=quote)|(?P<bare>[^\s'\";,)`]+))",
    re.IGNORECASE,
)
# A bare word as the password only in a statement that creates or alters a user ("identified
# by their e-mail address" is prose).
_USER_STATEMENT = re.compile(r"(?:create|alter|grant)[ \t][^;\n]*$", re.IGNORECASE)
_UNICODE_LITERAL = re.compile(r"password[ \t]*=[ \t]*N'(?P<quoted>[^'\n]+)'", re.IGNORECASE)
# SQL*Plus substitution variables and bind parameters (`&pw`, `:pw`), SQL's own words.
_SQL_WORDS = frozenset({"values", "password", "externally", "globally", "default", "random"})
# PowerShell's secure string made from a literal, PHP's cURL option of `user:password`.
_SECURE_STRING = re.compile(
    r"convertto-securestring[ \t]+(?:-string[ \t]+)?"
    r"(?P<quote>['\"])(?P<quoted>[^'\"\n]+)(?P=quote)",
    re.IGNORECASE,
)
_CURL_USERPWD = re.compile(
    r"curlopt_userpwd[ \t]*,[ \t]*(?P<quote>['\"])[^'\"\n:]*:(?P<quoted>[^'\"\n]+)(?P=quote)",
    re.IGNORECASE,
)


@register("sql_password")
class SqlPasswordFinder:
    """The password a statement sets (`IDENTIFIED BY`, `PASSWORD = N'...'`), a PowerShell
    secure string made from a literal, and the password of PHP cURL's `CURLOPT_USERPWD`."""

    kinds = frozenset({"PASSWORD"})
    priority = SECRET_PRIORITY
    views = ALL_VIEWS
    triggers = Triggers(words=("identified", "password", "convertto-securestring",
                               "curlopt_userpwd"))  # fmt: skip
    _GATES = (
        ("identified", _IDENTIFIED),
        ("password", _UNICODE_LITERAL),
        ("convertto-securestring", _SECURE_STRING),
        ("curlopt_userpwd", _CURL_USERPWD),
    )

    def find(self, view: Text) -> Iterator[Span]:
        text, lower = view.text, view.lower
        for word, pattern in self._GATES:
            at = lower.find(word)
            while at >= 0:
                match = pattern.match(text, at)
                if match is not None:
                    span = self._value(text, match)
                    if span is not None:
                        yield Span(*span, "PASSWORD")
                at = lower.find(word, at + len(word))

    @staticmethod
    def _value(text: str, match: re.Match[str]) -> tuple[int, int] | None:
        group = "quoted" if match["quoted"] is not None else "bare"
        value = match[group]
        if group == "bare":
            if value.lower() in _SQL_WORDS or not _USER_STATEMENT.search(
                text, max(0, match.start() - 200), match.start()
            ):
                return None
            if value.startswith(("&", ":", "@", "$", "?", "%", "{", "<")):
                return None
        if not _literal_password(value, ""):
            return None
        return match.span(group)


# A Kubernetes Secret: every value under its `data:` (base64) and `stringData:` is a secret,
# whatever its key is called. The manifest's `kind: Secret` line (YAML, or JSON's
# `"kind": "Secret"`) in the lower case.
_SECRET_KIND = re.compile(
    r"(?m)^(?P<indent>[ \t]*(?:-[ \t]+)?)[\"']?kind[\"']?[ \t]*:[ \t]*[\"']?secret[\"']?[ \t]*"
    r"(?:#[^\n]*)?$"
)
_JSON_SECRET_KIND = re.compile(r"\"kind\"[ \t]*:[ \t]*\"secret\"")
_SECRET_KIND_SHAPE = rb"kind[\"']?[ \t]*:[ \t]*[\"']?secret"
_DATA_KEY = re.compile(r"(?:data|stringdata)[ \t]*:[ \t]*(?:#[^\n]*)?$")
_ENTRY = re.compile(r"(?P<indent>[ \t]*)(?:[\"'][^\"'\n]+[\"']|[^\s:#][^:\n]*?)[ \t]*:(?:[ \t]+|$)")
_JSON_DATA = re.compile(r"\"(?:data|stringData)\"[ \t]*:[ \t]*\{")
_JSON_ENTRY = re.compile(r"\"[^\"\n]+\"[ \t]*:[ \t]*\"(?P<value>(?:\\.|[^\"\\\n])*)\"")


def _secret_value(value: str) -> bool:
    return bool(value) and value.lower() not in NO_VALUE and not placeholder(value)


@register("kubernetes_secret")
class KubernetesSecretFinder:
    """Every value of a Kubernetes Secret's `data:` and `stringData:`, in YAML (each document
    of a stream and each item of a list that says `kind: Secret`; block scalars whole) or JSON.
    A ConfigMap's data, and the Secret's metadata, stay."""

    kinds = frozenset({"SECRET"})
    priority = SECRET_PRIORITY
    views = ALL_VIEWS
    triggers = Triggers(shapes=(_SECRET_KIND_SHAPE,))

    def find(self, view: Text) -> Iterator[Span]:
        lower = view.lower
        if "secret" not in lower or "data" not in lower:
            return
        for kind in _SECRET_KIND.finditer(lower):
            yield from self._yaml(view.text, lower, kind)
        for kind in _JSON_SECRET_KIND.finditer(lower):
            yield from self._json(view.text, kind.start())

    def _yaml(self, text: str, lower: str, kind: re.Match[str]) -> Iterator[Span]:
        column = len(kind["indent"].expandtabs())  # the keys of the Secret's mapping start here
        lines = _lines(text)
        here = next(i for i, (start, end) in enumerate(lines) if start <= kind.start() <= end)
        first = here
        if "-" not in kind["indent"]:  # a list item's first line is its mapping's first
            while first > 0:
                above = _mapping_line(text, lines[first - 1], column)
                if above is None:
                    break
                first -= 1
                if above == "item":
                    break
        last = here
        while last + 1 < len(lines) and _mapping_line(text, lines[last + 1], column) == "key":
            last += 1
        number = first
        while number <= last:
            start, end = lines[number]
            line = lower[start:end]
            stripped = line.lstrip(" \t-")
            number += 1
            if len(line) - len(stripped) != column or _DATA_KEY.match(stripped) is None:
                continue
            yield from self._entries(text, lines, number, last, column)

    @staticmethod
    def _entries(
        text: str, lines: list[tuple[int, int]], number: int, last: int, column: int
    ) -> Iterator[Span]:
        """The values of the `data:` mapping whose entries start on line `number`."""
        entry_indent = None
        while number <= last:
            line_start, line_end = lines[number]
            indent = _indent(text, lines[number])
            number += 1
            if indent is None:
                continue
            if indent <= column:
                break
            entry = _ENTRY.match(text, line_start, line_end)
            if entry is None or (entry_indent is not None and indent > entry_indent):
                # A line of the value above it, folded (a plain scalar over several lines).
                content = text[line_start:line_end].strip()
                if _secret_value(content):
                    offset = text.index(content, line_start)
                    yield Span(offset, offset + len(content), "SECRET")
                continue
            entry_indent = indent
            value_start, value_end = entry.end(), line_end
            comment = text.find(" #", value_start, value_end)
            value = text[value_start : comment if comment >= 0 else value_end].strip()
            if value[:1] in ("|", ">"):
                continue  # a block scalar: its lines follow, more indented
            if value[:1] in ("'", '"') and len(value) > 1 and value[-1] == value[0]:
                value = value[1:-1]
            if _secret_value(value):
                offset = text.index(value, value_start)
                yield Span(offset, offset + len(value), "SECRET")

    def _json(self, text: str, at: int) -> Iterator[Span]:
        opening = _enclosing_brace(text, at)
        if opening is None:
            return
        closing = _matching_brace(text, opening)
        for data in _JSON_DATA.finditer(text, opening, closing):
            end = _matching_brace(text, data.end() - 1)
            if end - data.end() > 0 and _depth(text, opening, data.start()) == 1:
                for entry in _JSON_ENTRY.finditer(text, data.end(), end):
                    if _secret_value(entry["value"]):
                        yield Span(entry.start("value"), entry.end("value"), "SECRET")


def _lines(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for line in text.split("\n"):
        spans.append((start, start + len(line)))
        start += len(line) + 1
    return spans


def _indent(text: str, line: tuple[int, int]) -> int | None:
    """A line's indent (a list item's dash counts as indent), None for a blank or comment line."""
    content = text[line[0] : line[1]]
    stripped = content.lstrip(" \t")
    if not stripped or stripped.startswith("#"):
        return None
    return len(content) - len(stripped)


def _mapping_line(text: str, line: tuple[int, int], column: int) -> str | None:
    """How a line stands to the mapping whose keys start at `column`: "key" where it is in it
    (blank, a comment, or indented that far), "item" where it is the dash that opens it (a list
    item's first key), None where it is out of it (less indented, or a document's `---`)."""
    content = text[line[0] : line[1]]
    if content.startswith(("---", "...")):
        return None
    stripped = content.lstrip(" \t")
    if not stripped or stripped.startswith("#"):
        return "key"
    indent = len(content) - len(stripped)
    if indent >= column:
        return "key"
    if stripped.startswith("-"):
        after = stripped[1:]
        if indent + 1 + len(after) - len(after.lstrip(" ")) == column:
            return "item"
    return None


def _enclosing_brace(text: str, at: int) -> int | None:
    depth = 0
    for position in range(at - 1, max(-1, at - 4000), -1):
        char = text[position]
        if char == "}":
            depth += 1
        elif char == "{":
            if depth == 0:
                return position
            depth -= 1
    return None


def _braces(text: str, opening: int) -> Iterator[tuple[int, int]]:
    """(position, depth after it) of each brace of JSON outside its strings, from `opening` on."""
    depth, in_string, position = 0, False, opening
    while position < len(text):
        char = text[position]
        if in_string:
            if char == "\\":
                position += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{}":
            depth += 1 if char == "{" else -1
            yield position, depth
        position += 1


def _matching_brace(text: str, opening: int) -> int:
    return next((at for at, depth in _braces(text, opening) if depth == 0), len(text))


def _depth(text: str, opening: int, position: int) -> int:
    """How deep `position` is in the braces opened from `opening` on (1: the object's own)."""
    depth = 0
    for at, after in _braces(text, opening):
        if at >= position:
            break
        depth = after
    return depth
