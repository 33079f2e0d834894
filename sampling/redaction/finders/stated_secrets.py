"""Secrets that a sentence states, in the words people use in many languages: "my password is
Tr0ub4dor&3", "das Passwort ist Sommer2024!", "mot de passe : soleil123", "密码是...",
"password: letmein", and the short codes that unlock things ("my PIN is 4829", "OTP: 551203",
"the CVV is 123", "验证码 882211").

Each finder looks for its naming words with `in` and str.find on the lower-cased text (a regex
alternation over a 2 KB text costs tens of microseconds, a substring test well under one), and
matches what follows from there only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sampling.redaction.context import code_not_a_secret, word_ends
from sampling.redaction.finders import register
from sampling.redaction.spans import ALL_VIEWS, SECRET_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

# The verbs that give a value ("is", "ist", "lautet", "est", "es", "é", "är", "это", ...), and the
# words that start what it is for ("for the router", "für das WLAN", "de la tarjeta").
_VERBS = (r"(?:is|was|are|were|will\s+be|has\s+been|be|becomes?|now|set\s+to|changed\s+to"
          r"|to|as|est|était|sera|ist|lautet|war|wird|auf|es|era|será|é|foi|è|är|var|er|on|jest"
          r"|je|был|будет|это)(?!\w)|[—–]")  # fmt: skip
_FOR = (r"of|for|to|on|at|in|from|with|de|du|des|del|di|da|für|zum|zur|vom|auf|pour|para|per"
        r"|voor|van|для|от|do|na|til|för|dla")  # fmt: skip
_CJK = r"\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
_CJK_CHAR = re.compile(f"[{_CJK}]")
# Where a value ends: white space, a quote, or punctuation around it (ASCII and CJK).
_VALUE_CHARS = r"[^\s\"'`”’»«。、,;<>()]"


# What may follow a value at the end of its line: nothing, or closing tags, quotes and brackets
# (`Password: letmein</p>`, `"Password: letmein"}`).
_LINE_END = re.compile(r"(?:</[a-zA-Z][\w-]*>|[\s\"'}\],])*")
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
                  "passord", "pass")),
        ("pw", ("pwd", "pw")), ("kennwort", ("kennwort",)), ("wachtwoord", ("wachtwoord",)),
        ("senha", ("senha",)), ("clave", ("clave",)),
    )  # fmt: skip
    _NOT_ASCII = ("contraseña", "contrasena", "hasło", "haslo", "şifre", "sifre", "lösenord",
                  "losenord", "jelszó", "jelszo", "heslo", "salasana", "adgangskode", "parola",
                  "mật khẩu", "пароль", "密码", "密碼", "口令", "パスワード", "비밀번호", "סיסמה",
                  "كلمة المرور", "पासवर्ड")  # fmt: skip
    # Each word where _value_after reads it: a short one whole, a longer one at a word's start.
    triggers = Triggers(
        word_starts=tuple(w for _, group in _GATES for w in group if len(w) >= 5),
        whole_words=tuple(w for _, group in _GATES for w in group if len(w) < 5),
        words=_NOT_ASCII,
    )
    _REST = re.compile(
        rf"[^\W\d_]{{0,3}}"  # an inflection
        rf"(?:[ \t]+(?:(?:{_FOR})[ \t][^\n]{{0,24}}?[ \t])?"  # what it is for
        rf"(?:(?:{_VERBS})[ \t]*){{1,3}}(?P<verb_colon>[:=])?[ \t]*"
        rf"|[ \t]*(?P<colon>[:=])[ \t]*"
        rf"|[ \t]*[{_CJK}]{{0,4}}?(?:是|为|為|成了|成|は|는|이)[ \t]*[:=]?[ \t]*"
        rf"|[ \t]+)"
        rf"(?:[\"'`“‘«„](?P<quoted>[^\n\"'`”’»“]{{4,64}})[\"'`”’»“]"
        rf"|(?!&)(?P<bare>{_VALUE_CHARS}{{4,64}}))",  # `?password=&page=2`: an empty value
        re.IGNORECASE,
    )
    # Words that name a password only as a label ("pass: ..."): in a sentence, "pass" is a verb.
    _BEFORE_A_COLON_ONLY = frozenset({"pass"})
    # Letters that say there is no value here (a type, a state), after a label's colon.
    _NOT_A_VALUE = frozenset({"string", "text", "bytes", "required", "optional", "none", "null",
                              "true", "false", "hidden", "redacted", "masked", "empty", "blank",
                              "unknown", "unset", "secret", "password"})  # fmt: skip
    _CAPITAL_INSIDE = re.compile(r"[a-zà-ÿ][A-ZÀ-Þ]")

    def find(self, view: Text) -> Iterator[Span]:
        lower = view.lower
        words = [word for gate, group in self._GATES if gate in lower for word in group]
        if not view.text.isascii():
            words += [word for word in self._NOT_ASCII if word in lower]
        for word in words:
            # A short word is not inflected: `pw` is not in `pwned`.
            for end_of_word in word_ends(lower, word, whole=len(word) < 5):
                yield from self._value_after(view.text, end_of_word, word)

    def _value_after(self, text: str, position: int, word: str) -> Iterator[Span]:
        match = self._REST.match(text, position)
        if match is None or (word in self._BEFORE_A_COLON_ONLY and match["colon"] is None):
            return
        if match["quoted"] is not None:
            start, end = match.span("quoted")
        else:
            start, end = match.span("bare")
            glued = _CJK_CHAR.search(text, start + 1, end)
            if glued is not None and not _CJK_CHAR.match(text, start):
                end = glued.start()  # `rafisuka입니다`: the sentence goes on in its own script
            while end > start and text[end - 1] in ".!?:":
                end -= 1  # the sentence's end, not the password's
        value = text[start:end]
        if len(value) < 4 or len(set(value)) < 2 or value.startswith(("<", "${", "{{", "%(")):
            return  # too short to be one, `****`, or a placeholder
        if value.replace(" ", "").isalpha() and not self._letters_are_the_password(
            match, value, end
        ):
            return
        assigned = "=" in ((match["colon"] or "") + (match["verb_colon"] or ""))
        if assigned and match["quoted"] is None and code_not_a_secret(value, word):
            return  # `password = os.environ["DB_PASSWORD"]`
        yield Span(start, end, "SECRET")

    def _letters_are_the_password(self, match: re.Match[str], value: str, end: int) -> bool:
        if match["quoted"] is not None or self._CAPITAL_INSIDE.search(value):
            return True
        labelled = match["colon"] is not None or match["verb_colon"] is not None
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


@register("unlock_code")
class CodeFinder:
    """A code that unlocks something, given after its name: a PIN (4 digits or more), a card's
    CVV, a one-time or verification code, a door or alarm code: digits, grouped with spaces or
    dashes or not, `#` or `*` at the end."""

    kinds = frozenset({"SECRET"})
    priority = SECRET_PRIORITY
    views = ALL_VIEWS
    # Names that are a code's alone, and `code`, which names one only after these words.
    _NAMES = (("pin", ("pin",)), ("cv", ("cvv", "cvc")), ("otp", ("otp",)))  # (gate, names)
    _CODE_KINDS = re.compile(
        r"(?:security|access|door|gate|alarm|unlock|one[- ]time|verification|confirmation|2fa"
        r"|two[- ]factor|auth|authentication|authenticator|backup|recovery|sms|login|sign[- ]in"
        r"|pin|passcode|entry|safe|lock)[ \t]*$"
    )
    _NOT_ASCII = ("验证码", "動態碼", "动态码", "校验码", "安全码", "取件码", "暗証番号",
                  "認証コード", "인증번호", "код подтверждения", "пин-код", "пин")  # fmt: skip
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
                 "código de confirmación", "código de verificação", "código de confirmação",
                 "código de segurança", "código de acesso", "codigo de verificacion",
                 "codigo de seguridad", "codigo de acceso", "codigo de verificacao")),
        ("codice", ("codice di verifica", "codice di sicurezza", "codice di accesso")),
        ("kod", ("kod weryfikacyjny", "kod dostępu", "doğrulama kodu", "verifieringskod",
                 "bekræftelseskode", "bekreftelseskode")),
    )  # fmt: skip
    triggers = Triggers(
        whole_words=tuple(name for _, names in _NAMES for name in names),
        word_starts=("code",),
        words=(*_NOT_ASCII, *(name for _, names in _OTHER_LANGUAGES for name in names)),
    )
    _REST = re.compile(
        r"[ \t]*(?:-?[ \t]*(?:code|number|no\.?|num|#)\b)?"  # "PIN code", "PIN-Code", "PIN number"
        rf"(?:[ \t]+(?:{_FOR})[ \t][^\n]{{0,24}}?[ \t]+(?={_VERBS}|[:=]))?"  # "on the back"
        rf"(?:[ \t]*(?:{_VERBS}|here(?!\w)|[:=#-]|是|为|為|は|는)[ \t]*){{0,3}}"
        # Not glued to more of a word or a number (`1234abc`, `1234.5`); a word of a script
        # written without spaces may follow at once (`6810です`, `317005입니다`).
        rf"(?P<code>\d(?:[ -]?\d){{2,11}}[#*]?)(?![.-]*(?![{_CJK}])\w)",
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
                if self._CODE_KINDS.search(lower, max(0, end_of_word - 44), end_of_word - 4):
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

    def _code_after(self, text: str, position: int, least_digits: int) -> Iterator[Span]:
        match = self._REST.match(text, position)
        if match is None:
            return
        code = match["code"]
        if sum(char.isdigit() for char in code) >= least_digits:
            yield Span(match.start("code"), match.end("code"), "SECRET")
