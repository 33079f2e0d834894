"""The redactor: finds secrets and personal data in a record's texts and replaces each value by
a typed placeholder, numbered per record so that the same value reads the same everywhere in it
(`<EMAIL_1>` in the prompt and in the response), and counts what it replaced by kind.

It never puts a found value into a message: a failure names the redactor and the exception's
type only (the exception's own message may quote the text).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rl.plugins import PluginPathError, resolve_callable
from sampling.redaction.config import RedactConfig
from sampling.redaction.kinds import BUILTIN_KINDS, KIND_NAME
from sampling.redaction.personal import personal_finders
from sampling.redaction.phones import DEFAULT_REGIONS
from sampling.redaction.secret_finders import PatternFinder, secret_finders
from sampling.redaction.spans import Finder, Span, Text
from sampling.redaction.views import View, key, views

# A user's redactor: the spans it finds in one text, as (start, end, KIND).
SpanFunction = Callable[[str], Iterable[tuple[int, int, str]]]
_PRIORITY = {kind: rank for rank, kind in enumerate(BUILTIN_KINDS)}
# Texts remembered with their spans: a few steps' prompts, at most this long each.
FIND_CACHE_SIZE = 256
FIND_CACHE_MAX_CHARS = 16_384


class RedactionError(RuntimeError):
    """The redactor could not finish a text; the record must not go out. The message names the
    redactor and what went wrong, never the text."""


@dataclass(frozen=True)
class Redaction:
    texts: tuple[str, ...]  # the texts as given, with placeholders in place of found values
    counts: dict[str, int]  # kind -> values replaced (every occurrence counts)


def builtin_finders(phone_regions: Sequence[str] = DEFAULT_REGIONS) -> list[Finder]:
    return [*secret_finders(), *personal_finders(phone_regions)]  # type: ignore[list-item]


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
        self.allow = frozenset(allow)
        self.allow_regex = [re.compile(regex) for regex in allow_regex]
        self.function = function
        self.function_name = function_name
        # The samples of a group share their prompt: it is searched once. Spans depend on the
        # text alone (placeholders are numbered per record, in redact()), so they can be reused.
        self._cached_find = functools.lru_cache(maxsize=FIND_CACHE_SIZE)(self._find)

    @classmethod
    def from_config(cls, config: RedactConfig) -> Redactor:
        """The built-in finders of the configured kinds, the user's patterns and redactor. A
        redactor path that does not resolve raises PluginPathError (one line)."""
        user = [PatternFinder(p.kind, (re.compile(p.regex),), (), p.kind) for p in config.patterns]
        function = None
        if config.redactor:
            try:
                function = resolve_callable(config.redactor)
            except PluginPathError as error:
                raise PluginPathError(f"sampling.redact.redactor: {error}") from None
        kinds = {*config.builtin_kinds(), *(p.kind for p in config.patterns)}
        return cls(
            [*builtin_finders(config.phone_regions), *user],
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

    def _find(self, text: str) -> list[Span]:
        found: list[Span] = []
        for view in views(text):  # finders read the normalised views, never the raw text
            found.extend(self._find_in(view))
        if self.function is not None:
            found += self._from_function(text)
        if self.allow or self.allow_regex:
            found = [span for span in found if not self._allowed(text[span.start : span.end])]
        return _merged(found)

    def _find_in(self, view: View) -> Iterable[Span]:
        """The finders' spans in one view, mapped back to the original text."""
        text, kinds, found = Text(view.text), self.kinds, []
        for finder in self.finders:
            if kinds is None or finder.kinds <= kinds:
                found.extend(finder.find(text))
            else:  # a finder of several kinds, some of them not wanted
                found.extend(span for span in finder.find(text) if span.kind in kinds)
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
            spans = self.find(text)
            if not spans:
                out.append(text)
                continue
            pieces, position = [], 0
            for start, end, kind in spans:
                value = key(text[start:end])  # `ａ＠ｂ．ｃｏ` and `a@b.co`: one number
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


def _merged(spans: list[Span]) -> list[Span]:
    """Overlapping spans become one (every character any finder found stays hidden), of the
    kind that ranks first (built-in kinds in their order, then the user's)."""
    if len(spans) < 2:
        return spans
    spans.sort()
    merged = [spans[0]]
    for span in spans[1:]:
        last = merged[-1]
        if span.start < last.end:
            kind = min(last.kind, span.kind, key=lambda k: _PRIORITY.get(k, len(_PRIORITY)))
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
