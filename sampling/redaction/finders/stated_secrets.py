"""Secrets that a sentence states, in the words people use in many languages: "my password is
Tr0ub4dor&3", "das Passwort ist Sommer2024!", "mot de passe : soleil123", "密码是...",
"password: letmein", and the short codes that unlock things ("my PIN is 4829", "OTP: 551203",
"the CVV is 123", "验证码 882211").

Each finder looks for its naming words with `in` and str.find on the lower-cased text (a regex
alternation over a 2 KB text costs tens of microseconds, a substring test well under one), and
matches what follows from there only.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator

from sampling.redaction.context import (
    COPULAS,
    NO_VALUE,
    annotated,
    code_not_a_secret,
    next_prompt,
    placeholder,
    results_line,
    word_ends,
    working_directory,
)
from sampling.redaction.finders import register
from sampling.redaction.randomness import made_of_words
from sampling.redaction.spans import ALL_VIEWS, SECRET_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

# The verbs that give a value ("is", "ist", "lautet", "est", "es", "é", "är", "это", ...), and the
# words that start what it is for ("for the router", "für das WLAN", "de la tarjeta").
_VERBS = (r"(?:is|was|are|were|will\s+be|has\s+been|be|becomes?|now|set\s+to|changed\s+to"
          r"|to|as|est|était|sera|ist|lautet|war|wird|auf|es|era|será|é|foi|è|är|var|er|on|jest"
          r"|je|был|будет|это|c'est|c’est|là|la|ay|adalah|ialah|isch|huwa|hija|waa|e|hai|है)(?!\w)"
          r"|[—–]")  # fmt: skip
# "Your" before a code, as an SMS says it (`Kod pengesahan anda 590317`, `votre code`).
_YOUR = (r"your|anda|kamu|votre|vos|ihr|ihre|dein|deine|uw|je|tu|su|seu|sua|sizin|ваш|ваша"
         r"|váš|vaš|tiegħek")  # fmt: skip
_FOR = (r"of|for|to|on|at|in|from|with|de|du|des|del|della|dello|delle|dei|degli|di|da|al"
        r"|alla|au|aux|für|zum|zur|vom|auf|pour|para|per|voor|van|для|от|к|на|до|do|na|til|för"
        r"|dla")  # fmt: skip
_CJK = r"\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
_CJK_CHAR = re.compile(f"[{_CJK}]")
_SPACE = re.compile(r"\s")
# The most characters of a line read around a password's label: what it opened before the label,
# and the rest of the line a value may run on to. Each label reads a bounded stretch, so that a
# line of thousands of labels is read in time proportional to its length.
_LINE_REACH = 1024
# Where a value ends: white space, a quote, or punctuation around it (ASCII and CJK).
_VALUE_CHARS = r"[^\s\"'`”’»«。、,;<>()]"


# What may follow a value at the end of its line: nothing, or closing tags, quotes and brackets
# (`Password: letmein</p>`, `"Password: letmein"}`).
_LINE_END = re.compile(r"(?:</[a-zA-Z][\w-]*>|[\s\"'}\],])*")
_CAPITAL_INSIDE = re.compile(r"[a-zà-ÿ][A-ZÀ-Þ]")  # `myPass`: letters that are no plain word
# The groups of PasswordPhraseFinder._REST that put a colon or a verb's colon before a value.
_LABEL_GROUPS = ("colon", "verb_colon", "for_colon")
# What closes a value's line, and what must open before the label for it to close that
# (`"Password: x"}`; a comma after JSON's quotes).
_CLOSERS = {'"': '"', "'": "'", "`": "`", "}": "{", "]": "[", ")": "(", ",": "\"'`[{("}
# A label that starts its line (`password`, `  密码`, `<li>Password`) or a field of a list or a
# clause (`network: CafeNet / password`, `无线网络：CafeNet，密码`, `すみません、password`): one to
# three words after the line's start or a mark; and a value's end at a mark that is not a comma
# (`; `, `）`, `。`, `です`), not at another word.
_LABEL = re.compile(r"(?:^|[.!?。、,;/|])[\s>]*(?:[^\W\d_]{1,24}[ -]){0,2}[^\W\d_]{1,24}\Z")
# A label after another field of its line (`network: CafeNet / password`, `账号：admin，密码`),
# and the end of a field's value: a mark of any script, a word of another, or the line's end.
_FIELD_LABEL = re.compile(
    r"[:=][ \t]*[^\s:=][^\n:=]*?[/|,;、][ \t]*(?:[^\W\d_]{1,24}[ -]){0,2}[^\W\d_]{1,24}\Z"
)
_ENDS_A_FIELD = re.compile(r" ?(?:[.,;:!?)\]}/|>。、」』]|[^\x00-\u024f\s])|[ \t]*(?:\n|\Z)")
_ENDED_BY_A_MARK = re.compile(r" ?[;)）。」』!！?？]| ?[^\x00-\u024f\s]")


@register("password_phrase")
class PasswordPhraseFinder:
    """A password a sentence gives. After the word for it (inflected: `passwords`,
    `lösenordet`, `şifrem`), a few words naming what it is for ("for the router", "für das
    WLAN"), a verb (`is`, `ist`, `est`, `es`, `é`, `是`, ...) or a colon: the next run of
    characters is the password when it holds a digit or a symbol. Letters alone are a password
    only where nothing else can be meant: quoted, with a capital inside (`MonkeyBusiness`), or
    after a colon with nothing after it on the line ("Password: letmein"), so that "the password
    is incorrect" stays as it is."""

    kinds = frozenset({"SECRET"})
    priority = SECRET_PRIORITY
    views = ALL_VIEWS
    # A substring test costs ~1 µs on 2 KB of text, so an ASCII text is tested for the words
    # of languages often written in ASCII alone (the first holds password, passwort, passcode,
    # mot de passe, passord, ...); the rest, and the words with other letters, only in a text
    # that is not ASCII, as text in those languages almost never is.
    _GATES = (
        ("pass", ("password", "passwd", "passwort", "passphrase", "passcode", "mot de passe",
                  "passord", "pass", "passwrd", "passowrd")),
        ("pasw", ("pasword",)),  # the typos people make in a hurry
        ("pw", ("pwd", "pw")),
        # French's `mot de passe` abridged, after a determiner: alone, `MDP` is a Markov
        # decision process as often (`the MDP is M=(S,A,P,R)`).
        ("mdp", ("mon mdp", "ton mdp", "votre mdp", "son mdp", "le mdp", "nouveau mdp",
                 "du mdp", "mdp provisoire", "mdp temporaire")),
        ("kennwort", ("kennwort",)), ("wachtwoord", ("wachtwoord",)),
        ("senha", ("senha",)), ("clave", ("clave",)), ("kata ", ("kata sandi", "kata laluan")),
        ("lozinka", ("lozinka",)), ("geslo", ("geslo",)), ("parool", ("parool",)),
    )  # fmt: skip
    _NOT_ASCII = ("contraseña", "contrasena", "hasło", "haslo", "şifre", "sifre", "lösenord",
                  "losenord", "jelszó", "jelszo", "heslo", "salasana", "adgangskode", "parola",
                  "parolă", "slaptažodis", "κωδικός πρόσβασης", "лозинка", "гасло",
                  "mật khẩu", "пароль", "密码", "密碼", "口令", "パスワード", "비밀번호", "비번",
                  "סיסמה", "סיסמא", "פסוורד", "كلمة المرور", "كلمة السر", "كلمة سر", "رمز العبور",
                  "رمز عبور", "گذرواژه", "پسورد", "पासवर्ड", "পাসওয়ার্ড", "پاس ورڈ",
                  "รหัสผ่าน")  # fmt: skip
    # Each word where _value_after reads it: a short one whole, a longer one at a word's start.
    triggers = Triggers(
        word_starts=tuple(w for _, group in _GATES for w in group if len(w) >= 5),
        whole_words=tuple(w for _, group in _GATES for w in group if len(w) < 5),
        words=_NOT_ASCII,
    )
    _REST = re.compile(
        rf"[^\W\d_]{{0,3}}"  # an inflection
        # What it is for, then a verb or a colon ("for the router is", "del wifi:", "for ana:").
        rf"(?:[ \t]+(?:(?:{_FOR})[ \t][^\n]{{0,24}}?(?:[ \t]|(?=[:=])))?"
        rf"(?:(?:(?:{_VERBS})[ \t]*){{1,3}}(?P<verb_colon>[:=])?|(?P<for_colon>[:=](?!//)))[ \t]*"
        # The value on the next line: after a colon, or indented ("lautet\n    S3cr3t!").
        rf"(?:(?<=[:=])[ \t]*\n[ \t]*|\n[ \t]+)?"
        rf"|[ \t]*(?P<colon>[:=])[ \t]*(?:\n[ \t]*)?"  # the value on its line or the next
        rf"|[ \t]*[{_CJK}]{{0,4}}?(?:是|为|為|成了|成|は|는|이)[ \t]*[:=]?[ \t]*"
        rf"|[ \t]+"
        # What it is for and the password at once, where the sentence leaves the verb out
        # ("пароль от почты c0ffee+Cake", "пароль к базе Sn0wdr1ft"): a value with a digit and
        # a symbol, or with letters, a capital or eight characters (not a year, a count or
        # `admin2`), that ends the line.
        rf"|[ \t]+(?:{_FOR})[ \t][^\n]{{0,24}}?(?:[ \t]|\n[ \t]+)"
        rf"(?=[^\s]*[0-9])(?=[^\s]*[^\w\s.,;:!?]|(?=[^\s]*[^\W\d_])"
        rf"(?:(?-i:[^\s]*[A-ZÀ-ÞА-ЯЁ])|[^\s]{{8}}))"
        rf"(?=[^\s]+[ \t]*(?:\n|$|[.!?]))"
        rf")"
        rf"(?:[\"'`“‘«„](?P<quoted>[^\n\"'`”’»“]{{4,64}})[\"'`”’»“]"
        # `?password=&page=2`: an empty value of a query, the next parameter after it.
        rf"|(?!(?<==)&)(?P<bare>{_VALUE_CHARS}{{4,64}})"
        r"|(?!(?<==)&)(?P<token>[^\s\"'`]{4,64})(?=[ \t]*(?:\n|$)))",  # alone on its line
        re.IGNORECASE,
    )
    # Words that name a password only as a label ("pass: ..."): in a sentence, "pass" is a verb.
    _BEFORE_A_COLON_ONLY = frozenset({"pass"})
    # Letters that say there is no value here (a type, a state), after a label's colon.
    _NOT_A_VALUE = frozenset({"string", "text", "bytes", "required", "optional", "none", "null",
                              "true", "false", "hidden", "redacted", "masked", "empty", "blank",
                              "unknown", "unset", "secret", "password"})  # fmt: skip

    def find(self, view: Text) -> Iterator[Span]:
        lower = view.lower
        words = [word for gate, group in self._GATES if gate in lower for word in group]
        if not view.text.isascii():
            words += [word for word in self._NOT_ASCII if word in lower]
        for word in words:
            # A short word is not inflected: `pw` is not in `pwned`.
            for end_of_word in word_ends(lower, word, whole=len(word) < 5):
                start = end_of_word - len(word)
                if not (_in_a_reference(lower, start) or results_line(view.text, start)):
                    found = list(self._value_after(view.text, end_of_word, word))
                    yield from found or _later_in_its_clause(view.text, end_of_word, word)

    def _value_after(self, text: str, position: int, word: str) -> Iterator[Span]:
        match = self._REST.match(text, position)
        if match is None or (word in self._BEFORE_A_COLON_ONLY and match["colon"] is None):
            return  # "pass" is a verb in a sentence (after a login's mailbox: LoginPairFinder)
        labelled = any(match[name] is not None for name in _LABEL_GROUPS)
        value_start = next(match.start(g) for g in ("quoted", "token", "bare") if match[g])
        colon = text.find(":", position, value_start)
        if colon >= 0 and annotated(text, colon):
            return  # `password: Optional[str] = "..."`: a type; the value is after the `=`
        if match["quoted"] is not None:
            start, end = match.span("quoted")
        elif match["token"] is not None:
            if not labelled:
                return
            start, end = match.span("token")
            if self._a_field(text, position - len(word)):
                end = self._field_end(text, start, end)
        else:
            start, end = match.span("bare")
            glued = _CJK_CHAR.search(text, start + 1, end)
            if glued is not None and not _CJK_CHAR.match(text, start):
                end = glued.start()  # `rafisuka입니다`: the sentence goes on in its own script
            elif labelled:
                end = self._rest_of_the_token(text, position - len(word), start, end)
            word_start = position - len(word)
            if match["colon"] == "=" and text[word_start - 1 : word_start] in ("?", "&", ";"):
                ampersand = text.find("&", start, end)  # a query's next parameter
                end = ampersand if ampersand > start else end
            if not (labelled and self._ends_its_line(text, end)):
                while end > start and text[end - 1] in ".!?:":
                    end -= 1  # the sentence's end, not the password's
        line_start = max(text.rfind("\n", 0, position) + 1, position - _LINE_REACH)
        if (
            text[end - 1 : end] == ")"
            and "(" not in text[start:end]
            and text.rfind("(", line_start, position) > text.rfind(")", line_start, position)
        ):
            end -= 1  # a bracket the sentence opened before: `(using password: YES)`
        value = text[start:end]
        if value.lower() in NO_VALUE:
            return  # `using password: NO`: whether one was given, not what
        if len(value) < 4 or len(set(value)) < 2 or placeholder(value.removesuffix(";")):
            return  # too short to be one, `****`, or a placeholder (`$DB_PASS`, `changeme`,
            # `<your-password>;` ending a connection string)
        if working_directory(text, position, value):
            return  # the shell's working directory: `PWD=/app`
        if self._MAPPING_KEY.match(text, end) is not None and self._KEY.fullmatch(value):
            return  # `password:⏎  min_length: 14`: the next line is the mapping's first key
        if next_prompt(text, start):
            return  # `New password: ⏎Re-type new password:`: the next line asks again
        if match["quoted"] is None and self._words_after_a_space(match, value):
            return  # `-field=password secret/db`: a path or a name, not what a sentence gives
        if match["quoted"] is None and not labelled and value.startswith("-"):
            return  # `$env:SVC_PW -AsPlainText`: the command's next option
        if match["quoted"] is None and not labelled and _an_option(text, position - len(word)):
            return  # `--ask-password URL`: an option's name, whose value the command line's is
        if _letters(value.replace(" ", "")) and not self._letters_are_the_password(
            match, value, end
        ):
            return
        given = "".join(match[name] or "" for name in _LABEL_GROUPS)
        assigned = "=" in given
        if (
            assigned
            and match["quoted"] is None
            and self._next_assignment(value, text[position:start])
        ):
            return  # `DB_PASSWORD=⏎DEBUG=1`: an empty value, then the next assignment
        if assigned and match["quoted"] is None and code_not_a_secret(value, word):
            return  # `password = os.environ["DB_PASSWORD"]`
        yield Span(start, end, "SECRET")

    _ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(?!=)")
    _MAPPING_KEY = re.compile(r":(?:[ \t]|$)", re.MULTILINE)
    _KEY = re.compile(r"[A-Za-z_][\w-]*")

    def _next_assignment(self, value: str, between: str) -> bool:
        """After `=` and white space, a name of words and `=`: the next line's or field's
        assignment (after a label's colon, `password: abc=x` is the password)."""
        assignment = self._ASSIGNMENT.match(value)
        return (
            assignment is not None
            and any(char.isspace() for char in between)
            and made_of_words(assignment.group(1))
        )

    _JOINED_WORDS = re.compile(r"[^\W\d_]+(?:[/._-][^\W\d_]+)+")
    _INFLECTION_AND_SPACE = re.compile(r"[^\W\d_]{0,3}[ \t]+")

    _END_TAG = re.compile(r"</[a-zA-Z][\w-]*>$")

    def _rest_of_the_token(self, text: str, label_start: int, start: int, end: int) -> int:
        """After a label's colon, a value that runs on to the line's end in one piece is the
        password whole (`Password: ab(c;d<e`), but for what closes the markup or the quotes the
        line opened before the label (`"Password: letmein"}`, `<p>Password: x</p>`)."""
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        if line_end - start > _LINE_REACH:
            return end  # a line of data (a hostile one of thousands of labels), not a password
        token = text[start:line_end].rstrip()
        if len(token) <= end - start or _SPACE.search(token) or _CJK_CHAR.search(token):
            return end
        token = self._END_TAG.sub("", token)
        if self._a_field(text, label_start):
            token = token[: self._field_end(token, 0, len(token))]
        opened = text[
            max(text.rfind("\n", 0, label_start) + 1, label_start - _LINE_REACH) : label_start
        ]
        while token and any(c in opened for c in _CLOSERS.get(token[-1], "\n")):
            token = token[:-1]
        return max(end, start + len(token))

    # The next field of a connection string (`Password=x;Encrypt=True`): a name and `=`.
    _NEXT_FIELD = re.compile(r";[ \t]*[A-Za-z][\w ]{0,30}=")

    @staticmethod
    def _a_field(text: str, label_start: int) -> bool:
        """The label is a field of a connection string (a `;` before it on its line): only
        there does a `;Name=` end the value, for `;` and `=` may be a password's own
        characters (`password: 0;A=`)."""
        return text.rfind(";", text.rfind("\n", 0, label_start) + 1, label_start) >= 0

    def _field_end(self, text: str, start: int, end: int) -> int:
        """Where a value ends that runs into the next field of its connection string."""
        field = self._NEXT_FIELD.search(text, start, end)
        return end if field is None else field.start()

    @staticmethod
    def _ends_its_line(text: str, end: int) -> bool:
        line_end = text.find("\n", end)
        return not text[end : len(text) if line_end < 0 else line_end].strip()

    def _words_after_a_space(self, match: re.Match[str], value: str) -> bool:
        """Words joined by `/`, `.` or `-` after the word and a space alone (no verb, no colon)."""
        value_group = "bare" if match["bare"] is not None else "token"
        between = match.string[match.start() : match.start(value_group)]
        return (
            self._INFLECTION_AND_SPACE.fullmatch(between) is not None
            and self._JOINED_WORDS.fullmatch(value) is not None
        )

    def _letters_are_the_password(self, match: re.Match[str], value: str, end: int) -> bool:
        if match["quoted"] is not None or _CAPITAL_INSIDE.search(value):
            return True
        labelled = any(match[name] is not None for name in _LABEL_GROUPS)
        line_end = match.string.find("\n", match.end())
        rest_of_line = match.string[match.end() : None if line_end < 0 else line_end]
        if not labelled or value.lower() in self._NOT_A_VALUE:
            return False
        if _LINE_END.fullmatch(rest_of_line) is not None:
            return True
        # A label that starts its line or a field (`password: kaponupo; ...`, `Wi-Fi: Cafe /
        # 密码：lorasura）`), the value ended by a mark rather than by more words ("Password:
        # incorrect, try again" is not).
        line_start = match.string.rfind("\n", 0, match.start()) + 1
        label = match.string[line_start : match.start()]  # `^`: the line's start, not pos
        if _FIELD_LABEL.search(label, max(0, len(label) - 80)) is not None:
            # In a line of fields the value ends where its field does: at any mark, the
            # sentence's end included (`network: CafeNet / password: sunshine.`).
            return _ENDS_A_FIELD.match(match.string, end) is not None
        return (
            _ENDED_BY_A_MARK.match(rest_of_line) is not None
            and _LABEL.search(label, max(0, len(label) - 80)) is not None
        )


# A password given further on in its sentence, past the words that say what it is for ("la
# contraseña que tengo es ...", "mật khẩu wifi quán là ...", "הסיסמה לראוטר היא ...", "DB 비밀번호
# 바꿨어요: ..."): within the clause (no line break, no sentence's end), a colon or a verb that
# gives a value in one of many languages, then a value shaped as a password; or, with no verb,
# one a few words on that no word of a sentence resembles (letters, digits and a symbol).
_CLAUSE = 64
# Not the words that are English or code as well (`on`, `la`, `er`, `var`, `son`, `ay`): further
# on in a sentence they are those ("the password field on login_v2 page").
_CLAUSE_VERBS = "|".join(
    re.escape(verb) for verb in COPULAS if verb not in {"on", "la", "er", "var", "son", "ay"}
)
_ADVERBS = r"now|still|just|jetzt|nun|maintenant|bien|ahora|agora|ora|nu|teraz|теперь|giờ"
_GIVES = re.compile(
    rf"(?:^|(?<=[\s,]))(?:{_CLAUSE_VERBS})(?:[ \t]+(?:{_ADVERBS}))?(?=[ \t])|:(?=[ \t])|：",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"\n|[.!?。！？](?=\s|$)")
_LATER_VALUE = re.compile(r"[ \t]*(?P<value>[^\s\"'`<>()\[\]{},;，。、]{6,64})")
_STRONG_SYMBOLS = frozenset("!@#$%^&*+=?~")
_SCHEME = re.compile(r"(?i)(?:sha|md|aes|hmac|pbkdf|bcrypt|scrypt|argon|rsa|des|crc|utf|iso|rfc"
                     r"|wpa|tls|ssl|x|v|ver|version)[-_ ]?\d")  # fmt: skip
# A mailbox, as the values below are told apart from one and a login's is read before its password.
_MAILBOX = r"[^@\s/]+@[^@\s/]+\.[A-Za-z]{2,}"
_A_MAILBOX = re.compile(_MAILBOX)
_NO_VALUE_SIGNS = frozenset("()[]{}=;\"'`<>@/")
_IN_A_BLOB = frozenset("+/=_0123456789")
_QUERY = re.compile(r"&\w+=")  # `...&page=2`: a query string's parameters
_APOSTROPHE = re.compile(r"(?<=\w)['’](?=\w)")  # `c'est`, `j'ai`: no quote


def _later_in_its_clause(text: str, position: int, word: str) -> list[Span]:
    """A password further on in the clause the word for it starts (comment above)."""
    before, after = (
        text[position - len(word) - 1 : position - len(word)],
        text[position : position + 1],
    )
    if before in _IN_A_BLOB or not (after.isspace() or after in ":：" or not after.isascii()):
        return []  # inside base64 (`...+pw3+GW...`) or another word: no sentence
    end = position + _CLAUSE
    clause_end = _CLAUSE_END.search(text, position, end)
    if clause_end is not None:
        end = clause_end.start()
    gave = False
    # The first two verbs or colons: "for the flat on the coast is ..."
    for gives in itertools.islice(_GIVES.finditer(text, position, end), 2):
        if _code_between(text, position, gives.start()):
            return []  # code, a call or markup: the other finders read those
        gave = True
        match = _LATER_VALUE.match(text, gives.end())
        if match is not None and _password_shaped(match["value"], strong=False):
            value_end = match.start("value") + len(_trimmed(match["value"]))
            return [Span(match.start("value"), value_end, "SECRET")]
    if gave:
        return []
    # No verb: a value a few words on (after a space), that no word of a sentence resembles.
    for at, word in _words_of(text, position, end, most=4):
        if _code_between(text, position, at):
            break
        if text[at - 1].isspace() and _password_shaped(word, strong=True):
            return [Span(at, at + len(_trimmed(word)), "SECRET")]
    return []


def _code_between(text: str, start: int, end: int) -> bool:
    """Signs of code, a call, markup, a URL or a mailbox between a password's word and what
    may be its value (an apostrophe inside a word, `c'est`, is none)."""
    return any(sign in _NO_VALUE_SIGNS for sign in _APOSTROPHE.sub("", text[start:end]))


_CLAUSE_WORD = re.compile(r"[^\s]+")


def _words_of(text: str, start: int, end: int, most: int) -> list[tuple[int, str]]:
    """The first `most` words between `start` and `end`, with where each starts (the first
    glued to the word before it, in a script written without spaces, counts as one)."""
    return [(m.start(), m.group()) for m in _CLAUSE_WORD.finditer(text, start, end)][:most]


def _trimmed(value: str) -> str:
    """A value without the marks that end a sentence after it, nor a word of a script written
    without spaces glued to it (`ploy@5566ค่ะ`)."""
    for index, char in enumerate(value):
        if ord(char) > 0x24F and not char.isdigit():
            value = value[:index]
            break
    return value.rstrip(".,:;")  # a `!` or `?` after it is hidden too: it may be the password's


def _password_shaped(value: str, strong: bool) -> bool:
    """Letters and digits, with a symbol or eight characters or more (`Sonnenblume_1987`,
    `ploy@5566`, `Jakarta#123`); `strong`, a symbol too. Never a mailbox, a URL, a path, a
    variable, a placeholder or a scheme's name (`SHA-256`, `AES256`, `v2.1`)."""
    value = _trimmed(value)
    letters = sum(char.isalpha() for char in value)
    digits = sum(char.isdigit() for char in value)
    symbols = sum(char in _STRONG_SYMBOLS for char in value)
    if len(value) < 6 or not letters or not digits:
        return False
    if not (symbols or (len(value) >= 8 and not strong)):
        return False
    if (
        "://" in value
        or value[0] in "/~$%\\"
        or _A_MAILBOX.fullmatch(value)
        or _QUERY.search(value)
    ):
        return False
    return not (placeholder(value) or _SCHEME.match(value))


@register("unlock_code")
class CodeFinder:
    """A code that unlocks something, given after its name: a PIN (4 digits or more), a card's
    CVV, a one-time or verification code, a door or alarm code: digits, grouped with spaces or
    dashes or not, `#` or `*` at the end."""

    kinds = frozenset({"SECRET"})
    priority = SECRET_PRIORITY
    views = ALL_VIEWS
    # Names that are a code's alone, and `code`, which names one only after these words.
    _NAMES = (("pin", ("pin",)), ("cv", ("cvv", "cvc")), ("otp", ("otp",)),
              ("crypto", ("cryptogramme",)), ("puk", ("puk",)),
              ("nip", ("nip",)))  # (gate, names; `NIP`: a PIN in Spanish and French)  # fmt: skip
    _CODE_KINDS = re.compile(
        r"(?:security|access|door|gate|alarm|unlock|one[- ]time|verification|confirmation|2fa"
        r"|two[- ]factor|auth|authentication|authenticator|backup|recovery|sms|login|sign[- ]in"
        r"|pin|passcode|entry|safe|lock|lockbox|lock box|key ?box|key ?safe|keypad|locker|padlock"
        r"|combination|intercom|buzzer|garage|building)[ \t]*$"
    )
    # The kind after the code's word (`code for gate`, `code to the front door`).
    _KIND_AFTER = re.compile(
        r"s?[ \t]+(?:for|to|of)[ \t]+(?:the[ \t]+|your[ \t]+|my[ \t]+)?(?:front[ \t]+|main[ \t]+"
        r"|side[ \t]+|back[ \t]+)?(?:door|gate|alarm|building|lockbox|key ?box|key ?safe|safe"
        r"|garage|entrance|intercom|buzzer|locker|padlock|flat|apartment)(?![a-z])"
    )
    # The word for a code in other languages, and the kinds of code that make it one that
    # unlocks something, written before it (`MitID-kode`, `avainlaatikon koodi`, `sms-code`) or
    # after it (`code de la boîte à clés`, `kod odbioru`, `código de acceso`): stems, lower case.
    # (Turkish's `kodu`, `kodunuz`: the code, your code; Baltic and Icelandic forms.)
    _CODE_WORDS = ("kode", "koodi", "kod", "kód", "código", "codigo", "codice", "код", "code",
                   "kodu", "kodunuz", "kodas", "kods", "kood", "kóði", "kóða", "kodingiz",
                   "kodi", "koodh", "koodhka", "koodhkaaga", "kodiċi")  # fmt: skip
    _KIND_STEMS = re.compile(
        r"(?<![^\W\d_])(?:sms|otp|tan\b|mitid|bankid|nemid|2fa|digicode|boîte|boite|porte\b|portail"
        r"|entrée|entree|accès|acces|sécurité|securite|vérification|verification|confirmation|tür"
        r"|sicherheit|zugang|bestätigung|einmal|deur|poort|toegang|verificatie|bevestiging|avain"
        r"|ovi\b|portti|vahvistus|turva|kertakäyttö|dør|adgang|bekræft|sikkerhed|engangs"
        r"|dörr|verifiering|odbior|dostęp|dostep|drzwi|bram[ay]?\b|weryfik|potwierdz|bezpiecz"
        r"|jednoraz|seguridad|acceso|puerta|portón|porton|verificación|verificacion|confirmación"
        r"|segurança|acesso|porta\b|portão|verificação|sicurezza|accesso|cancello|verifica|conferma"
        r"|доступ|подтвержд|домофон|двер|безопасн|смс|ověřov|přístup|dveř|brán|doğrulama"
        r"|güvenlik|giriş|kapı|onay|verifikasi|keamanan|akses|pintu|pengesahan|xác|bảo mật"
        r"|cửa|authenticator|schlüssel|отриман|получени|belépés|ellenőrz|megerősít|patvirtin"
        r"|prisijung|apstiprin|pieslēg|kinnitus|sisselog|staðfest|innskrán|blik\b|puk\b"
        r"|potvrzen|potvrd|overenie|tasdiq|təsdiq|qapı|xaqiijin|domofon"
        r"|interkom|citofono|portero|interphone|klingel|budov)",
    )
    _NOT_ASCII = ("验证码", "動態碼", "动态码", "校验码", "安全码", "取件码", "暗証番号",
                  "認証コード", "確認コード", "セキュリティコード", "セキュリティーコード",
                  "인증번호", "인증 번호", "인증코드", "보안코드", "보안 코드", "код подтверждения",
                  "пин-код", "пин", "الرمز السري", "رمز التحقق", "رمز الأمان", "رمز التفعيل",
                  "کد تایید", "کد تأیید", "کد امنیتی", "ভেরিফিকেশন কোড", "যাচাইকরণ কোড", "পিন",
                  "ওটিপি", "ओटीपी", "पिन", "सत्यापन कोड", "รหัสยืนยัน", "รหัส otp", "mã otp",
                  "mã xác nhận", "mã xác thực", "mã pin")  # fmt: skip
    # A code's name in languages written in Latin letters, the code's kind after `code` or in
    # one word with it (`code de vérification`, `código de seguridad`, `Bestätigungscode`):
    # (gate, names), each name tested only where its gate is in the text.
    _OTHER_LANGUAGES = (
        ("code", ("code de vérification", "code de verification", "code de confirmation",
                  "code de sécurité", "code de securite", "code d'accès", "code d'acces",
                  "bestätigungscode", "bestaetigungscode", "sicherheitscode", "zugangscode",
                  "einmalcode", "anmeldecode", "verificatiecode", "beveiligingscode",
                  "toegangscode")),
        ("dig", ("código de verificación", "código de seguridad", "código de acceso",
                 "codigo de acesso", "codigo de verificacao", "codigo de seguranca",
                 "código de confirmación", "código de verificação", "código de confirmação",
                 "código de segurança", "código de acesso", "codigo de verificacion",
                 "codigo de seguridad", "codigo de acceso", "codigo de verificacao")),
        ("codice", ("codice di verifica", "codice di sicurezza", "codice di accesso")),
        ("kod", ("kod weryfikacyjny", "kod dostępu", "doğrulama kodu", "verifieringskod",
                 "bekræftelseskode", "bekreftelseskode")),
    )  # fmt: skip
    triggers = Triggers(
        whole_words=(
            *(name for _, names in _NAMES for name in names),
            *(word for word in _CODE_WORDS if word.isascii()),
        ),
        word_starts=("code",),
        words=(
            *_NOT_ASCII,
            *(name for _, names in _OTHER_LANGUAGES for name in names),
            *(word for word in _CODE_WORDS if not word.isascii()),
        ),
    )
    _REST = re.compile(
        r"[ \t]*(?:-?[ \t]*(?:code|number|no\.?|num|#)\b)?"  # "PIN code", "PIN-Code", "PIN number"
        # "on the back", "de la boîte à clés", "odbioru": words before a verb or a colon
        rf"(?:[ \t]+(?:(?:{_FOR})[ \t])?[^\n]{{0,24}}?[ \t]*(?={_VERBS}|[:=]|(?:{_YOUR})(?!\w)))?"
        rf"(?:[ \t]*(?:{_VERBS}|here(?!\w)|bien(?!\w)|,?[ \t]*it(?:'|’)?s(?!\w)|[:=#(\[-]"
        rf"|(?:ko|ku|my|mi|mon|ma|mein|meine|meu|minha|mijn|min|mitt|moj|mój|{_YOUR})(?!\w)"
        # The code's kind between its word and it (`kod BLIK 739 204`, `Kod PUK lama: ...`).
        rf"|{_KIND_STEMS.pattern}[^\W\d_]*"
        rf"|是|为|為|は|는|은)[ \t]*){{0,3}}"
        # Not glued to more of a word or a number (`1234abc`, `1234.5`); a word of a script
        # written without spaces may follow at once (`6810です`, `317005입니다`).
        # (A door's code may end in a letter: `1984X`, `4477B`.)
        rf"(?P<code>\d(?:[ -]?\d){{2,11}}(?:[#*]|(?-i:[A-Z])(?![A-Za-z]))?)(?![.-]*(?![{_CJK}])\w)",
        re.IGNORECASE,
    )

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_number(3):  # every code has 3 digits or more
            return
        lower = view.lower
        text = view.text
        for gate, names in self._NAMES:
            if gate not in lower:
                continue
            for name in names:  # a whole word: `pint` and `otpauth` are others
                for end_of_word in word_ends(lower, name, whole=True):
                    yield from self._code_after(
                        text, end_of_word, least_digits=3 if name != "pin" else 4
                    )
        if "code" in lower:
            for end_of_word in word_ends(lower, "code"):
                kind = self._CODE_KINDS.search(
                    lower, max(0, end_of_word - 44), end_of_word - 4
                ) or self._KIND_AFTER.match(lower, end_of_word)
                if kind is not None:
                    # A card's security code, its CVV, has three digits.
                    least = 3 if kind.group().rstrip() == "security" else 4
                    yield from self._code_after(text, end_of_word, least_digits=least)
        for word in self._CODE_WORDS:
            if word in lower:
                for end_of_word in word_ends(lower, word, whole=True):
                    if self._a_kind_of_code(lower, end_of_word - len(word), end_of_word):
                        yield from self._code_after(text, end_of_word, least_digits=4)
        for gate, names in self._OTHER_LANGUAGES:
            if gate in lower:
                for name in names:
                    for end_of_word in word_ends(lower, name):
                        yield from self._code_after(text, end_of_word, least_digits=4)
        if not text.isascii():
            for word in self._NOT_ASCII:
                if word in lower:
                    for end_of_word in word_ends(lower, word):
                        yield from self._code_after(text, end_of_word, least_digits=4)

    def _a_kind_of_code(self, lower: str, start: int, end: int) -> bool:
        """A kind of code that unlocks something, in the word glued before it or the words
        before it in its sentence (`MitID-kode`, `avainlaatikon koodi`, `I did the 2FA, the
        code was`), or the few words after it (`code de la boîte`, `kod odbioru`)."""
        before = lower[max(0, start - 40) : start]
        before = before[max(before.rfind("."), before.rfind("\n"), before.rfind("?")) + 1 :]
        after = lower[end : end + 20]
        after = after[: min((i for i in (after.find(c) for c in ",.:\n") if i >= 0), default=20)]
        return self._KIND_STEMS.search(before) is not None or (
            self._KIND_STEMS.search(after) is not None
        )

    def _code_after(self, text: str, position: int, least_digits: int) -> Iterator[Span]:
        match = self._REST.match(text, position)
        if match is None:
            return
        code = match["code"]
        if sum(char.isdigit() for char in code) >= least_digits and not _A_DATE.fullmatch(code):
            yield Span(match.start("code"), match.end("code"), "SECRET")


# A date written with dashes: when a code was made or used, not the code (`... on 2024-01-02`).
_A_DATE = re.compile(r"(?:19|20)\d\d-[01]\d-[0-3]\d|[0-3]?\d-[01]?\d-(?:19|20)\d\d")


# The words that name a Wi-Fi network's key, in lower case: WPA and PSK labels ("WPA2 key",
# "WPA2-PSK passphrase"), the network's kind before a key's word ("wifi password", "wireless
# key", "WLAN-Schlüssel", "无线密码"), and the key's word before the network ("clé Wi-Fi").
_KEY_WORDS = (r"key|passphrase|password|passwort|kennwort|pass|pw|psk|code|schlüssel|clé|clave"
              r"|contraseña|senha|密码|密钥|パスワード|キー|비밀번호|пароль")  # fmt: skip
_WIFI_LABEL = re.compile(
    r"(?<![a-z_])(?:"
    rf"(?:wpa[23]?|wep)(?:[- ]?(?:psk|sae|personal))?(?:[ -]?(?:{_KEY_WORDS}))?"
    r"|(?<![a-z])psk"
    rf"|(?:wi-?fi|wlan|wireless|hotspot|router|network)[ -]?(?:security[ -])?(?:{_KEY_WORDS})"
    r"|(?:clé|clave|code|mot de passe|contraseña|senha|passwort|kennwort)[ ](?:du |de la |de |del "
    r"|des |do |da |für das |des )?(?:wi-?fi|wpa|wlan|réseau|red|rede)"
    r"|netzwerkschlüssel|无线网?密码|网络密钥|無線lan[^\n]{0,4}?(?:パスワード|キー)|暗号化キー"
    r"|무선[^\n]{0,4}?비밀번호)(?![a-z_])"
)
# After the label: what the key is for in brackets, a colon or a verb, and the key itself on the
# same line or the next.
_WIFI_VALUE = re.compile(
    r"[^\S\n]*(?:\([^)\n]{0,24}\)[^\S\n]*)?"
    r"(?P<sep>[:=：]|(?:is|ist|est|c'est|c’est|es|lautet|是|为|は|는)(?![a-z]))?[^\S\n]*"
    r"(?:\n[^\S\n]*)?"
    r"(?:[\"'“‘«](?P<quoted>[^\n\"'”’»]{8,63})[\"'”’»]|(?P<bare>[^\s\"'`<>，。、]{8,66}))"
)
# A `Key:` line below a network's name (`SSID: CafeNet` / `Key: ...`).
_KEY_LINE = re.compile(
    r"\n?[^\S\n]*(?:key|password|passphrase|pass|pw|密码|パスワード|비밀번호|clé|clave"
    r"|schlüssel|passwort)(?=[^\S\n]*[:=：])"
)
_NETWORK_BEFORE = re.compile(
    r"(?:ssid|network|wi-?fi|wlan|hotspot|网络|無線|ネットワーク|네트워크)"
)
# The first words of the labels above: the label is matched where one of them stands.
_WIFI_LABEL_STARTS = ("wpa", "wep", "psk", "wi-fi", "wifi", "wlan", "wireless", "hotspot",
                      "router", "network", "clé", "clave", "code", "mot de passe", "contraseña",
                      "senha", "passwort", "kennwort", "netzwerkschlüssel", "无线", "网络密钥",
                      "無線", "暗号化キー", "무선")  # fmt: skip
# What follows a WPA label that is a setting, not a key (`key_mgmt=WPA-PSK`, `WPA2 PSK: AES`).
_WIFI_SETTINGS = ("wpa", "psk", "sae", "tkip", "ccmp", "aes", "none", "open", "enterprise")


@register("wifi_key")
class WifiKeyFinder:
    """A Wi-Fi network's key after the words that name it ("WPA key: ...", "WPA2 PSK: ...",
    "wifi password: ...", "WLAN-Schlüssel: ...", a `Key:` line under the network's name). A WPA
    key is 8 to 63 characters (64 hex digits raw): letters alone are one too after such a label
    and a colon, where nothing else is given; after a verb they need a capital inside, and with
    neither, the line must end after them ("wireless key correcthorsebattery")."""

    kinds = frozenset({"SECRET"})
    priority = SECRET_PRIORITY
    views = ALL_VIEWS
    triggers = Triggers(
        words=("wpa", "psk", "wep", "wifi", "wi-fi", "wlan", "wireless", "hotspot", "router",
               "ssid", "network", "无线", "网络", "無線", "ネットワーク", "무선", "네트워크",
               "réseau", "de red", "da rede", "暗号化キー"),
    )  # fmt: skip

    def find(self, view: Text) -> Iterator[Span]:
        lower = view.lower
        for label in _labels(lower, _WIFI_LABEL_STARTS, _WIFI_LABEL):
            yield from self._key_after(view.text, label.end(), line_label=False)
        if ":" in lower or "=" in lower or "：" in lower:
            for label in _labels(lower, ("\n",), _KEY_LINE, at_start=True):
                if _NETWORK_BEFORE.search(lower, max(0, label.start() - 120), label.start()):
                    yield from self._key_after(view.text, label.end(), line_label=True)

    def _key_after(self, text: str, position: int, line_label: bool) -> Iterator[Span]:
        match = _WIFI_VALUE.match(text, position)
        if match is None or (line_label and match["sep"] is None):
            return
        quoted = match["quoted"] is not None
        start, end = match.span("quoted" if quoted else "bare")
        while not quoted and end > start and text[end - 1] in ".,;:!?)]}":
            end -= 1
        value = text[start:end]
        if not 8 <= len(value) <= 64 or placeholder(value):
            return
        if value.lower().startswith(_WIFI_SETTINGS) and len(value) < 16:
            return  # a setting: `WPA2-PSK`, `wpa-psk-ccmp`
        if quoted or self._a_key(text, value, end, match["sep"] or ""):
            yield Span(start, end, "SECRET")

    @staticmethod
    def _a_key(text: str, value: str, end: int, sep: str) -> bool:
        """After a colon anything is the key; after a verb, not a word ("is incorrect"); with
        neither, what ends the line, or holds digits and letters."""
        if sep in (":", "=", "："):
            return True
        letters = value.isalpha()
        if sep:
            return not letters or _CAPITAL_INSIDE.search(value) is not None
        line_end = text.find("\n", end)
        if _LINE_END.fullmatch(text, end, len(text) if line_end < 0 else line_end):
            return True
        return not letters and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


# The words that name a list of one-time backup codes (GitHub's `xxxxx-xxxxx`, Google's
# `1234 5678`), and one code of such a list: letters and digits with a digit among them, in one
# or two groups.
_CODE_LIST_NAME = re.compile(
    r"(?<![a-z])(?:(?:backup|recovery|scratch|emergency|2fa|two[- ]factor|mfa|one[- ]time"
    r"|otp)[ -]?(?:codes|keys)|backup[ -]code|recovery[ -]code"
    r"|codes? de (?:secours|récupération|sauvegarde)|códigos? de (?:respaldo|recuperación)"
    r"|wiederherstellungscodes?|notfallcodes?|备用码|备份码|恢复码|恢复代码|救援代码"
    r"|yedek[ ]kod[a-zıüşç]{0,6}|kurtarma[ ]kod[a-zıüşç]{0,6}"
    r"|c[óo]digos? de (?:backup|recupera[çc][ãa]o|seguran[çc]a)|codic[ei] di (?:backup|recupero)"
    r"|herstelcodes?|back-?upcodes?|kody? zapasow[a-ząęóż]{0,3}|kody? odzyskiwania"
    r"|резервн[а-я]{0,3} код[а-я]{0,3}|коды? восстановления|mã dự phòng|mã khôi phục"
    r"|kode (?:cadangan|pemulihan)"
    r"|バックアップ\s?コード|リカバリー\s?コード|백업\s?코드|복구\s?코드)"
)
# The names' starts, one of which is in each (looked for first): a kind of code and `code` or
# `key` together (`scratch` or `otp` alone is in many texts), or a name in another language.
_CODE_LIST_STARTS = (
    *(f"{kind}{joint}{thing}"
      for kind in ("backup", "recovery", "scratch", "emergency", "2fa", "two-factor",
                   "two factor", "mfa", "one-time", "one time", "otp")
      for joint in ("", " ", "-") for thing in ("code", "key")),
    "code de", "codes de", "código", "wiederherstellungscode", "notfallcode", "备用码", "备份码",
    "yedek kod", "kurtarma kod", "codigo", "codice di", "codici di", "herstelcode", "backupcode",
    "back-upcode", "kod zapasow", "kody zapasow", "kod odzysk", "kody odzysk", "резервн",
    "коды восст", "код восст", "mã dự phòng", "mã khôi phục", "kode cadangan", "kode pemulihan",
    "恢复码", "恢复代码", "救援代码", "バックアップ", "リカバリー", "백업", "복구",
)  # fmt: skip
_CODE = r"(?=[A-Za-z0-9 -]{0,24}[0-9])[A-Za-z0-9]{4,12}(?:[- ][A-Za-z0-9]{4,12}){0,5}(?![\w-])"
_CODE_LIST = re.compile(
    r"(?:[^\n:：]{0,30}?(?:[:：]|\s(?:are|is|sind|sont|son|é|è|to|это|là|adalah)(?!\w)|(?=\n))"
    r"|(?=[ \t]+[A-Za-z0-9]*[0-9]))[ \t]*"  # or the code right after its name ("yedek kodum 7H2K")
    rf"(?P<codes>(?:\n[ \t]*)?(?:[-*•]|\d{{1,2}}[.)])?[ \t]*{_CODE}"
    rf"(?:[ \t]*[,;]?[ \t]*\n?[ \t]*(?:[-*•]|\d{{1,2}}[.)])?[ \t]*{_CODE})*)"
)


@register("backup_codes")
class BackupCodeFinder:
    """A list of backup or recovery codes after the words that name them ("2FA backup codes:",
    then one a line or several on one): every code of the list, from the first to the last."""

    kinds = frozenset({"SECRET"})
    priority = SECRET_PRIORITY
    views = ALL_VIEWS
    triggers = Triggers(words=_CODE_LIST_STARTS)

    def find(self, view: Text) -> Iterator[Span]:
        for name in _labels(view.lower, _CODE_LIST_STARTS, _CODE_LIST_NAME):
            match = _CODE_LIST.match(view.text, name.end())
            if match is not None:
                start, end = match.span("codes")
                start += len(match["codes"]) - len(match["codes"].lstrip())
                yield Span(start, end, "SECRET")


# The words that name a TOTP or HOTP secret (what an authenticator app is given), and the
# secret: base32, whole or in groups of four as a setup page shows it (`jbsw y3dp ehpk 3pxp`).
_TOTP_NAME = re.compile(
    r"(?<![a-z])(?:(?:totp|hotp|otp|2fa|mfa|two[- ]factor|authenticator|authy)[ _-]?"
    r"(?:secret(?:[ _-]key)?|seed|key|setup[ _-]key)|setup[ _-]key|secret[ _-]key|shared[ _-]secret"
    r"|base32[ _-]secret|(?:totp|hotp)\()"
)
_TOTP_SECRET = re.compile(
    r"[^\S\n]*(?:[:=：]|is(?!\w))?[^\S\n]*(?:\n[^\S\n]*)?[\"'`]?"
    r"(?P<secret>(?:[A-Za-z2-7]{4} ){3,15}[A-Za-z2-7]{2,4}(?![\w-])"
    r"|(?=[A-Z2-7]*[2-7])[A-Z2-7]{16,128}={0,6}(?![\w-])|(?=[a-z2-7]*[2-7])[a-z2-7]{16,128}(?![\w-]))"
)


@register("totp_secret")
class TotpSecretFinder:
    """A TOTP or HOTP secret after the words that name it ("2FA secret key: jbsw y3dp ...",
    "setup key", `pyotp.TOTP('JBSWY3DP...')`): base32 of 16 characters or more, in one case,
    with a digit, or in groups of four."""

    kinds = frozenset({"SECRET"})
    priority = SECRET_PRIORITY
    views = ALL_VIEWS
    triggers = Triggers(
        whole_words=("otp",),  # not in `hotpath`
        words=("totp", "hotp", "2fa", "mfa", "two-factor", "two factor", "authenticator",
               "authy", "setup key", "setup-key", "setup_key", "secret key", "secret-key",
               "secret_key", "shared secret", "shared-secret", "shared_secret", "base32"),
    )  # fmt: skip

    def find(self, view: Text) -> Iterator[Span]:
        starts = (*self.triggers.words, *self.triggers.whole_words)
        for name in _labels(view.lower, starts, _TOTP_NAME):
            match = _TOTP_SECRET.match(view.text, name.end())
            if match is not None:
                yield Span(match.start("secret"), match.end("secret"), "SECRET")


def _labels(
    lower: str, starts: tuple[str, ...], pattern: re.Pattern[str], *, at_start: bool = False
) -> Iterator[re.Match[str]]:
    """The matches of `pattern` where one of `starts` (the first words of its labels) stands,
    and with `at_start` at the text's start too: a regex of many alternatives tried at every
    character costs ~100 µs on 2 KB of text, tried at the few places its words are, a few."""
    tried: set[int] = set()
    if at_start and (match := pattern.match(lower, 0)) is not None:
        tried.add(0)
        yield match
    for word in starts:
        at = lower.find(word)
        while at >= 0:
            if at not in tried:
                tried.add(at)
                match = pattern.match(lower, at)
                if match is not None:
                    yield match
            at = lower.find(word, at + 1)


# A user and the password after it, as chat and notes give a login: "username mwilliams pass
# Winter#2023", "user ana, pw: x9!", "login is admin / Tr0pic@l-99", "creds admin/x9!".
# A login's mailbox, then a slash or a password's word, then its password
# ("family.ortega@example.com / Ortega2019!Tacos", "ana@example.com pass x9!").
_MAILBOX_THEN_PASSWORD = re.compile(
    rf"(?<![^\s\"'(<,;:]){_MAILBOX}[ \t]*,?[ \t]+(?:/|(?i:pass(?:word)?|pw|pwd)[ \t]*[:=]?)"
    r"[ \t]+(?P<value>[^\s,;<>\"'`/]{6,64})"
)
_USER_THEN_PASSWORD = re.compile(
    r"(?i)(?<![\w-])(?:user(?:name)?|usr|login)(?![\w-])"
    r"(?:[ \t]+(?:for|to|of|on|at)[ \t][^\n/:]{0,32}?(?=[ \t]+is[ \t]))?"  # "for the portal"
    r"[ \t]*(?:is[ \t]+|[:=][ \t]*)?"
    r"[^\s/:,;=<>\"'`]{2,64}"
    r"(?:[ \t]*,?[ \t]+(?:pass(?:word)?|pw|pwd)(?![\w-])[ \t]*(?:is[ \t]+|[:=][ \t]*)?"
    r"|[ \t]+/[ \t]+|/)(?P<value>[^\s,;<>\"'`]{4,64})"  # `x /y`: an option, `/persistent:no`
)


@register("login_pair")
class LoginPairFinder:
    """A password given after the user it logs in ("username mwilliams pass Winter#2023",
    "login is admin / Tr0pic@l-99"); a Dockerfile's `ENV DB_PASS "..."` is the fields view's
    (fields.py). The value holds a
    digit or a symbol, or letters of both cases: "login is required / please retry" stays."""

    kinds = frozenset({"SECRET"})
    priority = SECRET_PRIORITY
    triggers = Triggers(words=("user", "usr", "login", "@"))  # literals: cheapest
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        lower = view.lower
        if " / " in text or " pass" in lower or " pw" in lower:
            for match in _MAILBOX_THEN_PASSWORD.finditer(text):
                value = match["value"]
                mixed = value != value.lower() and value != value.upper()
                if _password_shaped(value, strong=not mixed):  # not a hash, not `sales2024`
                    yield Span(match.start("value"), match.end("value"), "SECRET")
        if not ("user" in lower or "usr" in lower or "login" in lower):
            return  # `@` alone made the finder run: a mailbox's pair only
        for match in _USER_THEN_PASSWORD.finditer(text):
            start, end = match.span("value")
            while end > start and text[end - 1] in ".!?)":
                end -= 1  # the sentence's end
            if _a_password(text[start:end]):
                yield Span(start, end, "SECRET")


def _a_password(value: str) -> bool:
    """Four characters or more, not a placeholder, with a digit or a symbol or both cases."""
    if len(value) < 4 or placeholder(value) or value.startswith(("$", "<", "{")):
        return False
    return not _letters(value) or (
        any(char.isupper() for char in value) and any(char.islower() for char in value)
    )


def _letters(value: str) -> bool:
    """Letters alone, a script's vowel signs and other marks among them (`ఎప్పుడూ`, "never":
    its signs are no `isalpha`)."""
    return all(char.isalpha() or unicodedata.category(char)[0] == "M" for char in value)


_IDENTIFIER_START = re.compile(r"[A-Za-z0-9_]*$")


def _an_option(text: str, start: int) -> bool:
    """The word at `start` ends a command-line option's name (`--ask-password`, `-password`),
    not a compound's (`WLAN-Passwort`, `Wi-Fi-password`): its token starts with a hyphen."""
    token_start = start
    while token_start and not text[token_start - 1].isspace():
        token_start -= 1
    return text[start - 1 : start] == "-" and text[token_start : token_start + 1] == "-"


def _in_a_reference(lower: str, start: int) -> bool:
    """The word at `start` is part of a variable's reference (`$POSTGRES_PASSWORD`,
    `${DB_PASS}`, `%DB_PASSWORD%`): it names the variable, and what follows is no value of it."""
    begin = _IDENTIFIER_START.search(lower, max(0, start - 40), start)
    head = begin.start() if begin else start
    return lower[head - 1 : head] in ("$", "%") or lower[head - 2 : head] == "${"
