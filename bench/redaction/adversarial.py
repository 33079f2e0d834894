"""The corpus of corpus.py as people's text brings it: each planted value and each benign text
also in every transformation below, generated from a seed.

- `fullwidth`: the value typed with a Chinese or Japanese input method (`１３８…`, `＠`, `－`).
- `invisible`: zero-width spaces and joiners, soft hyphens, bidi marks, BOMs inside the value.
- `spaces`: the spaces in and around the value no-break, narrow or ideographic.
- `url`: the value %-encoded (`ada%40example.com`), in a query string (of a host that shares
  no 8 characters with a planted value, which would read as a piece of it surviving).
- `json`: the sentence in a tool call's JSON output, the value's symbols as `\\u00XX`.
- `html`: the sentence in HTML, the value's symbols as character references (`&#64;`, `&commat;`).
- `wrapped`: the value on the line after its name ("The root password is:\\n  hunter2").
- `ja`, `ko`, `de`, `fr`: the sentence set in Japanese, Korean, German and French text, the
  value against CJK characters and full-width punctuation.

Benign texts go through the same transformations, with more of the kinds they are made of:
full-width prices, dates and order numbers, encoded URLs that name no one, timestamps.
"""

# ruff: noqa: E501  (sentences read best one to a line)
from __future__ import annotations

import html
import json
import random
from collections.abc import Callable
from urllib.parse import quote

from corpus import ANSWERS, KINDS, QUESTIONS, benign, date_parts

INVISIBLES = ("\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\ufeff", "\u200e", "\u200f")
SPACES = ("\u00a0", "\u202f", "\u3000", "\u2007")
HTML_NAMES = {"@": "&commat;", ".": "&period;", "-": "&hyphen;", "+": "&plus;", ":": "&colon;",
              "/": "&sol;", "_": "&lowbar;", "&": "&amp;"}  # fmt: skip
NAMING_LINES = ("The root password is:\n  {}", "Here is the value you asked for:\n{}",
                "以下是你要的信息：\n    {}", "Der Wert ist:\n\t{}", "Value =\n  {}")  # fmt: skip
FRAMES = {
    "ja": ("すみません、{}", "よろしくお願いします。", ("。", "です", "」", "）")),
    "ko": ("안녕하세요, {}", " 감사합니다.", ("입니다", "。", "）")),
    "de": ("Hallo zusammen, {}", " Vielen Dank im Voraus!", (".", ";", ")")),
    "fr": ("Bonjour, {}", " Merci d'avance.", (" !", " ;", "»")),
}


def fullwidth(text: str) -> str:
    """ASCII as a Chinese or Japanese input method types it."""
    return "".join(
        chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in text
    )


def _invisible(rng: random.Random, value: str) -> str:
    chars = list(value)
    for _ in range(rng.randrange(1, 4)):
        chars.insert(rng.randrange(1, len(chars)), rng.choice(INVISIBLES))
    return "".join(chars)


def _symbols(value: str, escape: Callable[[str], str]) -> str:
    return "".join(c if c.isalnum() and c.isascii() else escape(c) for c in value)


def _json_escape(c: str) -> str:
    return "".join(f"\\u{ord(u):04x}" for u in c.encode("utf-16-be").decode("utf-16-be"))


def _html_escape(rng: random.Random) -> Callable[[str], str]:
    def escape(c: str) -> str:
        choice = rng.randrange(3)
        if choice == 0 and c in HTML_NAMES:
            return HTML_NAMES[c]
        return f"&#{ord(c)};" if choice < 2 else f"&#x{ord(c):x};"

    return escape


def _wrapped(rng: random.Random, value: str, template: str) -> str:
    """The value on the line after the words that name it, or after a line of its own."""
    before, _, after = template.partition("{}")
    before = before.rstrip()
    if not before:
        return rng.choice(NAMING_LINES).format(value) + after
    if not before.endswith((":", "：", "=", "is", "是", "为")):  # `sid=` names its value
        before += rng.choice([":", "："])
    return f"{before}\n{rng.choice(['  ', '    ', '', chr(9)])}{value}{after}"


# A transformation: (rng, value, sentence template with `{}`) -> the text the value is set in.
Transform = Callable[[random.Random, str, str], str]


def _frame(language: str) -> Transform:
    before, after, stops = FRAMES[language]

    def transform(rng: random.Random, value: str, template: str) -> str:
        sentence = template.format(value + rng.choice(stops))
        return before.format(sentence) + after

    return transform


TRANSFORMS: dict[str, Transform] = {
    "fullwidth": lambda rng, value, template: template.format(fullwidth(value)),
    "invisible": lambda rng, value, template: template.format(_invisible(rng, value)),
    "spaces": lambda rng, value, template: template.replace(" {}", "{}").format(
        rng.choice(SPACES) + value.replace(" ", rng.choice(SPACES)) + rng.choice(SPACES)
    ),
    "url": lambda rng, value, template: template.format(
        f"https://go.test/share?u={quote(value, safe='')}&lang=en"
    ),
    "json": lambda rng, value, template: json.dumps(
        {"tool": "lookup", "output": template}, ensure_ascii=rng.random() < 0.5
    ).replace("{}", _symbols(value, _json_escape)),
    "html": lambda rng, value, template: (
        "<p>" + html.escape(template).replace("{}", _symbols(value, _html_escape(rng))) + "</p>"
    ),
    "wrapped": lambda rng, value, template: _wrapped(rng, value, template),
    **{language: _frame(language) for language in FRAMES},
}


def planted(seed: int, per_kind: int) -> list[dict]:
    """Records with one planted value each, `per_kind` per kind and transformation."""
    rng, records = random.Random(seed), []
    for name, transform in TRANSFORMS.items():
        for kind in KINDS:
            sentences = [s for group in kind.sentences().values() for s in group]
            for i in range(per_kind):
                value = kind.make(rng)
                text = transform(rng, value, rng.choice(sentences))
                where = "prompt" if i % 2 == 0 else "response"
                other = rng.choice(ANSWERS if where == "prompt" else QUESTIONS)
                prompt, response = (text, other) if where == "prompt" else (other, text)
                records.append({"transform": name, "kind": kind.name, "group": kind.group,
                                "where": where, "value": value, "prompt": prompt,
                                "response": response})  # fmt: skip
    return records


def _everyday(rng: random.Random) -> str:
    """Numbers that belong to no one, as shops, logs and chat write them."""
    year, month, day = date_parts(rng, 2015, 2030)
    return rng.choice([
        f"价格：¥{rng.randrange(10, 9999)}.{rng.randrange(100):02d}，{year}年{month}月{day}日前有效。",
        f"订单号：{rng.randrange(10**15, 10**16)}，已于{year}-{month:02d}-{day:02d}发货。",
        f"注文番号 {rng.randrange(10**9, 10**10)} は{month}月{day}日にお届け予定です。合計 {rng.randrange(500, 50000):,} 円。",
        f"주문 번호 {rng.randrange(10**8, 10**9)}, 결제 금액 {rng.randrange(1000, 900000):,}원, {year}.{month:02d}.{day:02d}.",
        f"Rechnung Nr. {rng.randrange(10**5, 10**7)} vom {day:02d}.{month:02d}.{year}: {rng.randrange(10, 999)},{rng.randrange(100):02d} €.",
        f"[{year}-{month:02d}-{day:02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}.{rng.randrange(1000):03d}Z] GET /api/v2/items?page={rng.randrange(1, 99)}&sort=price%2Cdesc 200 {rng.randrange(1, 900)}ms",
        f"Search: https://www.example.com/search?q=best%20hiking%20boots%202024&hl=en&start={rng.randrange(0, 90, 10)}",
        f'{{"event": "checkout", "amount": {rng.randrange(100, 99999)}, "currency": "EUR", "note": "caf\\u00e9 \\u0026 cr\\u00eape"}}',
        f"<p>Price: &euro;{rng.randrange(5, 500)}.{rng.randrange(100):02d} &ndash; free shipping &amp; returns</p>",
        f"The answer is:\n  {rng.randrange(2, 10**6)}",
        f"Total:\n  ${rng.randrange(10, 99999):,}.{rng.randrange(100):02d}",
        f"第{rng.randrange(1, 40)}章：潮汐与港口（{year}年版），共{rng.randrange(100, 900)}页。",
    ])  # fmt: skip


def _benign_transform(rng: random.Random, name: str, text: str) -> str:
    if name == "fullwidth":
        return fullwidth(text)
    if name == "invisible":
        return _invisible(rng, text) if len(text) > 1 else text
    if name == "spaces":
        return text.replace(" ", rng.choice(SPACES))
    if name == "url":
        return f"https://example.com/search?q={quote(text[:120], safe='')}&page=2"
    if name == "json":
        return json.dumps({"tool": "search", "output": text}, ensure_ascii=rng.random() < 0.5)
    if name == "html":
        return f'<div class="answer">{html.escape(text)}</div>'
    if name == "wrapped":
        head, _, tail = text.partition(" ")
        return f"{head} is:\n  {tail}" if tail else text
    before, after, _ = FRAMES[name]
    return before.format(text) + after


def benign_transformed(seed: int, per_transform: int) -> list[tuple[str, str]]:
    """(transformation, text): benign texts of corpus.py and everyday numbers, transformed."""
    rng = random.Random(seed + 1000)
    plain = benign(seed, per_transform)
    found = []
    for name in TRANSFORMS:
        for i, text in enumerate(plain):
            source = _everyday(rng) if i % 3 == 0 else text
            found.append((name, _benign_transform(rng, name, source)))
    return found
