"""Contact details: e-mail addresses, also written out so that scrapers miss them (`jane (at)
example (dot) org`) or encoded in base64 JSON (`eyJlbWFpbCI6...`). Phone numbers are read with
the other runs of digits (numbers.py)."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from sampling.redaction.context import matches
from sampling.redaction.finders import register
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import SPACE, Triggers

# Combining marks, which `\w` leaves out: Latin accents written apart (`é` as `e` and U+0301),
# Arabic and Hebrew points, the kana voicing marks, and the whole of the Indic and South-East
# Asian blocks, whose vowel signs are marks.
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
    "\u0900-\u0dff\u0e00-\u0eff\u0f00-\u109f\u1780-\u17ff\u1ab0-\u1aff\u1dc0-\u1dff"
    "\u20d0-\u20ff\u3099\u309a"
)
# Scripts written without spaces between words: an address's end where its letters meet them.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
# The part before the `@`. CJK runs into the words around it without a space: a local part in
# CJK has no ASCII letters (`请发到山田@...` is all of it), and one in other scripts none of
# CJK, starting where the CJK before it ends (`邮箱是wang.fang@...`).
_LOCAL = (
    rf"(?:(?<![\w.%+{_MARKS}-])|(?<=[{_CJK}]))(?![{_CJK}_])[\w{_MARKS}]"
    rf"(?:(?![{_CJK}])[\w.%+{_MARKS}-]){{0,63}}"
    rf"|(?<![\w.%+{_MARKS}-])(?=\d[\d.%+_-]*[{_CJK}]|[{_CJK}])(?:(?![A-Za-z])[\w.%+{_MARKS}-]){{1,64}}"
)
# A label of a domain: letters, digits and marks of any script, and hyphens. Each repeat is one
# character class (a look-ahead takes `_` out), so that a long run that is no address fails in
# one pass, not in every way of splitting it between two classes.
_LABEL = rf"(?!_)[\w{_MARKS}](?:(?!_)[\w{_MARKS}-]){{0,62}}"
# The last label: ASCII letters (which may run into CJK text); punycode; letters and marks.
_TLD = (
    rf"[A-Za-z]{{2,24}}(?=[{_CJK}]|(?![\w-]))|(?i:xn--)[A-Za-z0-9-]{{1,59}}(?![\w-])"
    rf"|(?:(?![_\d])[\w{_MARKS}]){{2,24}}(?![\w-])"
)


@register("email")
class EmailFinder:
    kinds = frozenset({"EMAIL"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(words=("@",))
    views = ALL_VIEWS
    # RFC 6531 and IDNA: letters and digits of any script (with their combining marks) in the
    # local part and the domain's labels; the last label letters of one script or punycode.
    _EMAIL = re.compile(rf"(?:{_LOCAL})@{_LABEL}(?:\.{_LABEL})*\.(?:{_TLD})")

    _LOCAL_PART = 64  # the most characters an address has before its `@`

    def find(self, view: Text) -> Iterator[Span]:
        """What finditer over the whole text finds, searched from each `@`: every address holds
        one, at most 64 characters after where it starts, so the regex need not try each word
        of the text."""
        text, position = view.text, 0
        at = text.find("@")
        while at >= 0:
            match = self._EMAIL.search(text, max(position, at - self._LOCAL_PART))
            if match is None:
                return
            start, position = match.span()
            at = text.find("@", position)
            # `scheme://user:password@host` is a URL's credentials, not an address; a colon
            # after a label (`邮箱：ada@...`, `Email:ada@...`) is not.
            if start and text[start - 1] == ":" and self._in_url(text, start - 1):
                continue
            # `https://<key>@o1.ingest.sentry.io/5`: a URL's user, no mailbox.
            if text.endswith("://", 0, start):
                continue
            # `git@github.com:org/repo.git`, `ssh -T git@gitlab.example.com`: the account every
            # code host serves SSH from, nobody's mailbox.
            if text.startswith(("git@", "Git@", "GIT@"), start):
                continue
            if self._login(text, start, position):
                continue
            yield Span(start, position, "EMAIL")

    # A remote path after a login and host (`deploy@web1.example.com:/var/www`, `:~/src`), and a
    # command that logs in to a host, then its options and their values, and the files it
    # copies (`scp build.tar.gz deploy@web01...:releases/`: a word with a dot or a slash).
    _REMOTE_PATH = re.compile(r":(?:/(?!/)|~)")
    _LOGIN_COMMAND = re.compile(
        r"(?<![\w.-])(?:ssh|scp|sftp|mosh|autossh|sshfs|ssh-copy-id|rsync)"
        r"(?:[ \t]+-[^\s@]*(?:[ \t]+[^\s@-][^\s@]*)?|[ \t]+(?!-)(?=[^\s@]*[~./])[^\s@]+)*[ \t]+$"
    )

    def _login(self, text: str, start: int, end: int) -> bool:
        """`ssh deploy@bastion.example.com`, `scp f ubuntu@host.example.org:/tmp/`: a login on a
        host, nobody's mailbox."""
        if self._REMOTE_PATH.match(text, end) is not None:
            return True
        line_start = text.rfind("\n", 0, start) + 1
        return self._LOGIN_COMMAND.search(text, max(line_start, start - 200), start) is not None

    @staticmethod
    def _in_url(text: str, colon: int) -> bool:
        """The colon is a URL's, between its user and password: `://` before it in its word."""
        word_start = max(text.rfind(" ", 0, colon), text.rfind("\n", 0, colon)) + 1
        return text.find("://", word_start, colon) >= 0


@register("encoded_email")
class EncodedEmailFinder:
    """An e-mail address inside JSON encoded in base64 (`eyJ...`, standard or URL-safe: a
    cookie's or a state parameter's payload, a token's claims): the whole encoded run, which
    hides the address from every other finder."""

    kinds = frozenset({"EMAIL"})
    priority = PERSONAL_PRIORITY
    views = ALL_VIEWS
    # `{"` and `{ "` in base64 (in lower case for the scan).
    triggers = Triggers(words=("eyj", "eyai"))
    _RUN = re.compile(r"(?<![A-Za-z0-9+/_-])ey[JA][A-Za-z0-9+/_-]{16,4096}={0,2}")
    _LONGEST = 4096

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if "eyJ" not in text and "eyA" not in text:
            return
        yield from matches(self._RUN, text, "EMAIL", self._holds_an_address)

    @staticmethod
    def _holds_an_address(run: str) -> bool:
        run = run.rstrip("=")
        run = run[: len(run) - len(run) % 4]  # whole groups of four: a cut run decodes too
        try:
            data = base64.b64decode(run.replace("-", "+").replace("_", "/"), validate=True)
        except (binascii.Error, ValueError):
            return False
        decoded = data.decode("utf-8", "replace")
        return "@" in decoded and EmailFinder._EMAIL.search(decoded) is not None


@register("written_email")
class WrittenEmailFinder:
    """E-mail addresses written out so that scrapers miss them, which people still can read:
    `jane.doe (at) example (dot) org`, `john[at]mail.com`, `j dot smith at gmail dot com`, in
    the words of other languages too (`ana arroba gmail ponto com`, `max (at) web (punkt) de`,
    `claire (arobase) orange (point) fr`, `r.singh[@]zoho[.]in`). The `@` is an "at" in brackets,
    a bare " at " when the domain's dots are written out too ("look at it" alone stays as it
    is) and it ends in a top-level domain, not another " dot " ("dot by dot"), or a word that
    only names the `@` sign (`arroba`); the domain ends in letters like a real one."""

    kinds = frozenset({"EMAIL"})
    priority = PERSONAL_PRIORITY
    views = ALL_VIEWS
    _AT_WORDS = r"(?:at|@|arroba|arobase|chiocciola)"
    _AT = rf"\s*[(\[{{<]\s*{_AT_WORDS}\s*[)\]}}>]\s*"
    _DOT = r"\s*[(\[{<]\s*(?:dot|\.|punto|ponto|punkt|point)\s*[)\]}>]\s*"
    _DOT_SAID = r"\s+(?:dot|punto|ponto|punkt)\s+"
    _LABEL = r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?"
    # The top-level domains a spoken address ends in: a country's two letters, or one of the
    # generic ones people give their mail at ("this dot plot" is none).
    _SPOKEN_TLD = (
        r"(?:[a-z]{2}|com|net|org|edu|gov|mil|int|info|biz|name|pro|mobi|asia|app|dev|xyz|online"
        r"|site|tech|email|mail|cloud|live|me|io|ai|co)"
    )
    # Repeats are bounded (an address has a few dotted parts) so that a hostile text of
    # "a dot a dot ..." costs each start a few steps, not the rest of the text.
    _BRACKETED_AT = re.compile(
        rf"(?<![\w.%+-])[a-z0-9][a-z0-9._%+-]{{0,63}}{_AT}"
        rf"{_LABEL}(?:(?:{_DOT}|\s*\.\s*){_LABEL}){{0,8}}(?:{_DOT}|\s*\.\s*)[a-z]{{2,24}}(?![\w-])",
        re.ASCII,
    )
    _SPOKEN = re.compile(
        rf"(?<![\w.%+-])[a-z0-9][a-z0-9._%+-]{{0,63}}(?:(?:{_DOT_SAID}|{_DOT})[a-z0-9_%+-]+){{0,4}}"
        rf"\s+at\s+{_LABEL}(?:(?:{_DOT_SAID}|{_DOT}|\.){_LABEL}){{0,8}}(?:{_DOT_SAID}|{_DOT})"
        # "me at jo dot smith at ...": not "me at jo"; "dot by dot": no domain's end
        rf"{_SPOKEN_TLD}(?![\w-])(?!\s+(?:at|dot)\s)",
        re.ASCII,
    )
    # A word that names the `@` sign alone: the domain's dots may be written as they are.
    _AT_SAID = re.compile(
        r"(?<![\w.%+-])[a-z0-9][a-z0-9._%+-]{0,63}\s+(?:arroba|arobase|chiocciola)\s+"
        rf"{_LABEL}(?:(?:{_DOT_SAID}|{_DOT}|\.){_LABEL}){{0,8}}(?:{_DOT_SAID}|{_DOT}|\.)"
        r"[a-z]{2,24}(?![\w-])",
        re.ASCII,
    )
    # Gates that turn away almost every text: a regex with a literal start is one fast scan,
    # where testing each bracket's form with `in` took a scan each.
    _AT_CLOSED = re.compile(r"(?:at|@|arroba|arobase|chiocciola)\s*[)\]}>]")
    _DOT_WORD = re.compile(r"dot(?:\s|\s*[)\]}>])")
    _AT_WORD = re.compile(r"arroba|arobase|chiocciola")
    # Each written form, read only where its gate finds its sign.
    _GATED = ((_AT_CLOSED, _BRACKETED_AT), (_DOT_WORD, _SPOKEN), (_AT_WORD, _AT_SAID))
    # The gates, as byte patterns that know every space Python's `\s` does: one pattern a
    # sign (an alternation of them cost the whole scan a third more); the words that name
    # `@` are triggers alone, closed or not.
    triggers = Triggers(
        shapes=(b"at%s*[)\\]}>]" % SPACE, b"@%s*[)\\]}>]" % SPACE,
                b"dot(?:%s|%s*[)\\]}>])" % (SPACE, SPACE)),
        words=("arroba", "arobase", "chiocciola"),
    )  # fmt: skip

    def find(self, view: Text) -> Iterator[Span]:
        lower = view.lower
        for gate, written in self._GATED:
            if gate.search(lower):
                yield from matches(written, lower, "EMAIL")
