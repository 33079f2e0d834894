"""The redactor: finds secrets and personal data in a record's texts and replaces each value by
a typed placeholder, numbered per record so that the same value reads the same everywhere in it
(`<EMAIL_1>` in the prompt and in the response), and counts what it replaced by kind.

Each text is read through its views (views.py); on each view one trigger scan (triggers.py)
picks the finders that can find something there, and only those run.

It never puts a found value into a message: a failure names the redactor and the exception's
type only (the exception's own message may quote the text).
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rl.plugins import PluginPathError, resolve_callable, resolve_path
from sampling.redaction.config import RedactConfig
from sampling.redaction.finders import UnknownFinderError, build, builtin_finders
from sampling.redaction.finders.names import KIND as NAME_KIND
from sampling.redaction.finders.names import name_parts, repeated
from sampling.redaction.finders.secrets import PatternFinder
from sampling.redaction.kinds import BUILTIN_KINDS, KIND_NAME, PERSONAL_KINDS, SECRET_KINDS
from sampling.redaction.spans import (
    ALL_VIEWS,
    DECODED,
    NORMALISED,
    PERSONAL_PRIORITY,
    SECRET_PRIORITY,
    USER_PRIORITY,
    Finder,
    Span,
    Text,
)
from sampling.redaction.triggers import TriggerScan
from sampling.redaction.views import View, cuts_escape, key, views

__all__ = ["Redaction", "RedactionError", "Redactor", "builtin_finders", "redactor_for_run"]

# A user's redactor: the spans it finds in one text, as (start, end, KIND).
SpanFunction = Callable[[str], Iterable[tuple[int, int, str]]]
_BUILTIN_RANK = {kind: rank for rank, kind in enumerate(BUILTIN_KINDS)}
# Texts remembered with their spans: a few steps' prompts, at most this long each.
FIND_CACHE_SIZE = 256
FIND_CACHE_MAX_CHARS = 16_384
# Characters before a value where finders read the words that name it (or name it as
# something else): the most any built-in finder looks back.
_CONTEXT = 32


class RedactionError(RuntimeError):
    """The redactor could not finish a text; the record must not go out. The message names the
    redactor and what went wrong, never the text."""


@dataclass(frozen=True)
class Redaction:
    texts: tuple[str, ...]  # the texts as given, with placeholders in place of found values
    counts: dict[str, int]  # kind -> values replaced (every occurrence counts)


class Redactor:
    def __init__(
        self,
        finders: Sequence[Finder],
        *,
        kinds: Iterable[str] | None = None,
        allow: Iterable[str] = (),
        allow_regex: Iterable[str] = (),
        function: SpanFunction | None = None,
        function_name: str = "",
    ) -> None:
        self.kinds = frozenset(kinds) if kinds is not None else None  # None: what finders find
        self.finders = [f for f in finders if self.kinds is None or f.kinds & self.kinds]
        # Each finder's trigger, for one scan a view; which views it reads; whether its spans
        # need sorting out by kind (a finder of several kinds, some of them not wanted).
        self._scan = TriggerScan(self.finders)
        self._reads = {
            view: sum(1 << i for i, f in enumerate(self.finders) if view in _views_of(f))
            for view in (NORMALISED, DECODED)
        }
        self._filtered = [
            self.kinds is not None and not f.kinds <= self.kinds for f in self.finders
        ]
        self._rank = _kind_ranks(self.finders)
        self.allow = frozenset(allow)
        self.allow_regex = [re.compile(regex) for regex in allow_regex]
        self.function = function
        self.function_name = function_name
        # The samples of a group share their prompt: it is searched once. Spans depend on the
        # text alone (placeholders are numbered per record, in redact()), so they can be reused.
        self._cached_find = functools.lru_cache(maxsize=FIND_CACHE_SIZE)(self._find)

    @classmethod
    def from_config(cls, config: RedactConfig) -> Redactor:
        """The built-in finders of the configured kinds, the finders the config names, the
        user's patterns and redactor. A path that does not resolve raises PluginPathError (one
        line)."""
        user: list[Finder] = [
            PatternFinder(p.kind, (re.compile(p.regex),), (), p.kind) for p in config.patterns
        ]
        named = [_named_finder(name, config) for name in config.finders]
        function = None
        if config.redactor:
            try:
                function = resolve_callable(config.redactor)
            except PluginPathError as error:
                raise PluginPathError(f"sampling.redact.redactor: {error}") from None
        disabled = set(config.disable)
        outside = {kind for finder in named for kind in finder.kinds if kind not in disabled}
        kinds = {*config.builtin_kinds(), *(p.kind for p in config.patterns), *outside}
        return cls(
            [*builtin_finders(config), *named, *user],
            kinds=kinds,
            allow=config.allow,
            allow_regex=config.allow_regex,
            function=function,
            function_name=config.redactor or "",
        )

    def find(self, text: str) -> list[Span]:
        """Where to redact in `text`: allowed values left out, overlapping finds merged into
        one span (of the kind that ranks first), sorted."""
        if len(text) > FIND_CACHE_MAX_CHARS:
            return self._find(text)
        return list(self._cached_find(text))

    def prepare(self, texts: Iterable[str]) -> None:
        """Finds the spans of `texts` ahead of `redact`, which then reads them from what the
        redactor keeps (FIND_CACHE_SIZE texts): a batch's texts redacted in one go, then its
        records built in one go, keep each step's code and tables in the CPU's caches."""
        for text in texts:
            if isinstance(text, str) and len(text) <= FIND_CACHE_MAX_CHARS:
                self._cached_find(text)

    def _find(self, text: str) -> list[Span]:
        # Finders read the normalised views, never the raw text.
        read = views(text)
        found = self._find_in(read[0], NORMALISED)
        if len(read) > 1:
            # Where the text holds escapes, what the normalised view finds across one, or just
            # after one, is read off its spelling (`%2C` glued to a base64 run, `\\n` after a
            # name's value, `\\u53f7` where the words naming a number should be): the decoded
            # view reads those characters, and the words before a value, as they are meant.
            decoded = [s for view in read[1:] for s in self._find_in(view, DECODED)]
            escapes = read[1].escapes
            if escapes:
                decoded = sorted(_through_an_escape(text, escapes, d) for d in decoded)
                starts = [d.start for d in decoded]
                longest = max((d.end - d.start for d in decoded), default=0)
                found = [s for s in found if not cuts_escape(escapes, s.start - _CONTEXT, s.end)
                         or _stands(text, escapes, s,
                                    _near(s, decoded, starts, longest))]  # fmt: skip
            found.extend(decoded)
        if self.function is not None:
            found += self._from_function(text)
        if self.allow or self.allow_regex:
            found = [span for span in found if not self._allowed(text[span.start : span.end])]
        found = _merged(found, self._rank)
        found = self._with_values_again(text, found, _values_in([text], [found]))
        return self._with_names_again(text, found, self._names_in([text], [found]))

    def _find_in(self, view: View, name: str) -> list[Span]:
        """The spans of the finders whose triggers the view holds, mapped back to the original
        text."""
        text, found = Text(view.text), []
        run = self._scan.fired(text) & self._reads[name]
        while run:  # the set bits only, lowest first: a few of dozens of finders
            lowest = run & -run
            run ^= lowest
            index = lowest.bit_length() - 1
            finder = self.finders[index]
            if self._filtered[index]:  # a finder of several kinds, some of them not wanted
                kinds = self.kinds or ()
                found.extend(span for span in finder.find(text) if span.kind in kinds)
            else:
                found.extend(finder.find(text))
        if view.identity:
            return found
        return [Span(*view.origin(span.start, span.end), span.kind) for span in found]

    def redact(self, texts: Sequence[str]) -> Redaction:
        """One record's texts, numbered together: a value gets the same placeholder in each."""
        numbers: dict[tuple[str, str], int] = {}
        per_kind: dict[str, int] = {}
        counts: dict[str, int] = {}
        out = []
        for text in texts:
            if not isinstance(text, str):
                raise RedactionError(f"expected text, got {type(text).__name__}")
        found = [self.find(text) for text in texts]
        names = self._names_in(texts, found)
        values = _values_in(texts, found) if len(texts) > 1 else {}
        for text, spans in zip(texts, found, strict=True):
            if len(texts) > 1:  # (find has the repeats within each text already)
                spans = self._with_values_again(text, spans, values)
                spans = self._with_names_again(text, spans, names)
            if not spans:
                out.append(text)
                continue
            pieces, position = [], 0
            for start, end, kind in spans:
                # A person's name and a word of it alone (`Hannah Okafor`, `Hannah`): one
                # number; `ａ＠ｂ．ｃｏ` and `a@b.co`: one number.
                found_as = text[start:end]
                value = key(names.get(found_as, found_as) if kind == NAME_KIND else found_as)
                number = numbers.get((kind, value))
                if number is None:
                    number = numbers[(kind, value)] = per_kind.get(kind, 0) + 1
                    per_kind[kind] = number
                counts[kind] = counts.get(kind, 0) + 1
                pieces += (text[position:start], f"<{kind}_{number}>")
                position = end
            pieces.append(text[position:])
            out.append("".join(pieces))
        return Redaction(tuple(out), counts)

    @staticmethod
    def _names_in(texts: Sequence[str], found: Sequence[list[Span]]) -> dict[str, str]:
        """What stands for each person a name found in `texts` names (names.name_parts), and
        the name it stands for: the longest found that holds it."""
        values = {text[s.start : s.end] for text, spans in zip(texts, found, strict=True)
                  for s in spans if s.kind == NAME_KIND}  # fmt: skip
        names: dict[str, str] = {}
        for value in sorted(values, key=len, reverse=True):
            for part in name_parts(value):
                names.setdefault(part, value)
        return names

    def _with_names_again(
        self, text: str, spans: list[Span], names: Mapping[str, str]
    ) -> list[Span]:
        """`spans` and each place `text` holds a found name again, or a word of it alone (a
        record names `Hannah Okafor` once and `Hannah` after): a person found once is hidden
        everywhere in the record."""
        if not names:
            return spans
        return self._with(text, spans, repeated(text, set(names)))

    def _with_values_again(
        self, text: str, spans: list[Span], values: Mapping[str, str]
    ) -> list[Span]:
        """`spans` and each other place `text` holds a value found (a login read after
        `Accepted password for`, then in `/home/<it>` where no finder reads one): a value found
        once is hidden everywhere in the record. Names have their own (a word of one alone)."""
        again = []
        for value, kind in values.items():
            at = text.find(value)
            while at >= 0:
                end = at + len(value)
                if not _continues(text[at - 1 : at]) and not _continues(text[end : end + 1]):
                    again.append(Span(at, end, kind))
                at = text.find(value, end)
        return self._with(text, spans, again)

    def _with(self, text: str, spans: list[Span], again: list[Span]) -> list[Span]:
        """`spans` and the places a found value stands again, the allowed ones left out."""
        if again and (self.allow or self.allow_regex):
            again = [span for span in again if not self._allowed(text[span.start : span.end])]
        return _merged(spans + again, self._rank) if again else spans

    def _allowed(self, value: str) -> bool:
        return any(
            form in self.allow or any(p.fullmatch(form) for p in self.allow_regex)
            for form in {value, key(value)}
        )

    def _from_function(self, text: str) -> list[Span]:
        assert self.function is not None
        name = self.function_name or getattr(self.function, "__name__", "redactor")
        try:
            found = list(self.function(text))
        except Exception as error:  # its message may quote the text: name the type only
            raise RedactionError(f"the redactor {name} raised {type(error).__name__}") from None
        spans = []
        for item in found:
            span = _checked_span(item, len(text))
            if span is None:
                raise RedactionError(
                    f"the redactor {name} returned something other than (start, end, KIND) "
                    f"with 0 <= start < end <= {len(text)} (a {type(item).__name__})"
                )
            spans.append(span)
        return spans


def _checked_span(item: Any, length: int) -> Span | None:
    if not isinstance(item, tuple | list) or len(item) != 3:
        return None
    start, end, kind = item
    if not (type(start) is int and type(end) is int and 0 <= start < end <= length):
        return None
    if not isinstance(kind, str) or not KIND_NAME.fullmatch(kind):
        return None
    return Span(start, end, kind)


def _views_of(finder: Finder) -> frozenset[str]:
    return frozenset(getattr(finder, "views", ALL_VIEWS))


def _kind_ranks(finders: Sequence[Finder]) -> dict[str, tuple[int, int]]:
    """Each kind's rank where finds overlap: its finder's priority, then its place in kinds.py.
    A built-in kind keeps the priority of its group (secrets, then personal data) whoever
    finds it; another takes the lowest priority of the finders that declare it."""
    ranks: dict[str, tuple[int, int]] = {}
    for finder in finders:
        priority = getattr(finder, "priority", USER_PRIORITY)
        for kind in finder.kinds:
            if kind in _BUILTIN_RANK:
                group = SECRET_PRIORITY if kind in SECRET_KINDS else PERSONAL_PRIORITY
                ranks[kind] = (group, _BUILTIN_RANK[kind])
            else:
                ranks[kind] = min(ranks.get(kind, (priority, len(_BUILTIN_RANK))),
                                  (priority, len(_BUILTIN_RANK)))  # fmt: skip
    return ranks


def _named_finder(name: str, config: RedactConfig) -> Finder:
    """A finder `sampling.redact.finders` names: a registered name, or the dotted path of a
    finder class or factory (which may register itself on import)."""
    try:
        return build(name, config)
    except UnknownFinderError:
        pass
    try:
        factory = resolve_path(name)
    except PluginPathError as error:
        raise PluginPathError(f"sampling.redact.finders: {error}") from None
    if isinstance(factory, type):
        from_config = getattr(factory, "from_config", None)
        return from_config(config) if from_config is not None else factory()
    return factory(config)


_OUTSIDE_RANK = (USER_PRIORITY, len(_BUILTIN_RANK))


def _merged(spans: list[Span], ranks: dict[str, tuple[int, int]]) -> list[Span]:
    """Overlapping spans become one (every character any finder found stays hidden), of the
    kind that ranks first (_kind_ranks; a user redactor's kinds last)."""
    if len(spans) < 2:
        return spans
    spans.sort()
    merged = [spans[0]]
    for span in spans[1:]:
        last = merged[-1]
        if span.start < last.end:
            kind = min(last.kind, span.kind, key=lambda k: ranks.get(k, _OUTSIDE_RANK))
            merged[-1] = Span(last.start, max(last.end, span.end), kind)
        else:
            merged.append(span)
    return merged


def redactor_for_run(run_config: Mapping[str, Any]) -> Callable[[Sequence[str]], list[str]]:
    """For `logger.redact`: the redactor of the run's `sampling.redact` settings (kinds,
    allowlists, patterns, redactor), as a function of one row's texts. `enabled: false` there
    switches off the review path only; logging asked for redaction, so it gets it."""
    sampling = run_config.get("sampling") or {}
    settings = dict(sampling.get("redact") or {}) if isinstance(sampling, Mapping) else {}
    settings.pop("enabled", None)
    redactor = Redactor.from_config(RedactConfig.model_validate(settings))

    def redact_texts(texts: Sequence[str]) -> list[str]:
        return list(redactor.redact(texts).texts)

    return redact_texts


# The fewest characters of a value looked for again elsewhere in its record: a shorter one (a
# PIN's `4829`) stands for other things too often.
_AGAIN_SHORTEST = 6
# The kinds looked for again: personal data and passwords, whose values are someone's. Not the
# secrets read by a name's shape in code (`SECRET`, `HIGH_ENTROPY`), where a value found by
# mistake (`plural_expr`) would be hidden at each of its uses; not names (read by their words).
_FOUND_AGAIN = (frozenset(PERSONAL_KINDS) | {"PASSWORD"}) - {NAME_KIND}


def _values_in(texts: Sequence[str], found: Sequence[list[Span]]) -> dict[str, str]:
    """Each value of a kind looked for again found in `texts`, with its kind."""
    values = {}
    for text, spans in zip(texts, found, strict=True):
        for span in spans:
            value = text[span.start : span.end]
            if span.kind in _FOUND_AGAIN and len(value) >= _AGAIN_SHORTEST:
                values[value] = span.kind
    return values


def _continues(char: str) -> bool:
    """`char` beside a value makes it part of a longer word or number."""
    return char.isalnum() or char == "_"


# What a value typed on runs with, up to a space or a quote, at most a value's length.
_TO_A_SPACE = re.compile(r"[^\s`'\"]{0,64}")
# An escape that decodes to white space or a control character: `%09`, `%0A`, `%20`.
_WHITE_ESCAPE = re.compile(r"%(?:[01][0-9A-Fa-f]|20|7[Ff])")


def _through_an_escape(text: str, escapes: list[tuple[int, int]], span: Span) -> Span:
    """A secret the decoded view ends where a `%XX` of white space starts, the text going on
    after it with no space (`-p:⏎000%09 prod`: decoded, `000` and a tab): the value as typed
    runs on to the space (a shell does not decode `%09`). Hiding the rest of the run errs on
    the safe side."""
    if span.kind not in SECRET_KINDS or text[span.end : span.end + 1] != "%":
        return span
    if not _WHITE_ESCAPE.match(text, span.end):  # (`%26issuer=` after a key: the URL's `&`)
        return span
    at = bisect_left(escapes, (span.end, 0))
    if at == len(escapes) or escapes[at][0] != span.end:
        return span
    run = _TO_A_SPACE.match(text, span.end)  # (a bounded run: read from each find, not to the end)
    return Span(span.start, run.end(), span.kind)


def _spelt_inside(text: str, escapes: list[tuple[int, int]], span: Span) -> bool:
    """Each escape near `span` is a `%XX` inside it, after a few characters of its own, and no
    URL is on its line: a value as a shell or a form takes it (`-p 000%09`), not a URL's
    encoding nor a string literal's `\\n`."""
    first = bisect_left(escapes, (span.start - _CONTEXT - 16, 0))  # (an escape is short)
    near = []
    for a, b in escapes[first:]:
        if a >= span.end:
            break
        if b > span.start - _CONTEXT:
            near.append((a, b))
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.end)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    return (
        bool(near)
        and all(span.start + 3 <= a and b <= span.end and text[a] == "%" for a, b in near)
        and "://" not in line
        and "?" not in line
    )


def _near(span: Span, decoded: list[Span], starts: list[int], longest: int) -> list[Span]:
    """The spans of `decoded` (sorted; `starts` their starts, `longest` the longest one's
    length) that overlap `span`: only those that can reach it are looked at."""
    first = bisect_left(starts, span.start - longest)
    last = bisect_left(starts, span.end, first)
    return [d for d in decoded[first:last] if span.start < d.end]


def _stands(text: str, escapes: list[tuple[int, int]], span: Span, near: list[Span]) -> bool:
    """A find of the normalised view that holds an escape's spelling stands where the decoded
    view found a value of the same kind there (`-p=000%09`: the spelling is part of the value,
    hidden with the rest, not what made it look like one), or found nothing there at all and
    the escape is one a shell or a form takes as typed (`mysql -p 000%09`: decoded, `000`
    reads as a database's name; `_spelt_inside`)."""
    if near:
        return any(d.kind == span.kind for d in near)
    return _spelt_inside(text, escapes, span)
