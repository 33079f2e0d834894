"""Chinese, Japanese and Korean names where a title, an honorific or a label says it is one:
`尊敬的王伟先生`, `王伟女士您好`, `致李娜：`, `联系人：张三`,
`田中太郎様`, `佐藤さん`, `担当：中村健`, `김민수님`, `이름: 박지성`.
These scripts put no space around a name, so a name is a surname of the table
(`cjk_names.json`) and one or two characters after it (two Hangul syllables), with the title or
honorific right after it, or the label or greeting right before it. A surname alone (`王总`,
`王先生`) is no one in particular and stays; Japanese is the exception, where a family name and
`さん` is how people are named (`佐藤さん`).

Words that start with a surname's character (`高中老师`, `项目经理`, `이사장님`) are the table's
`not_given_names`: a title after such a word is no name's. A name after the words that say
so in a sentence (`我叫张伟`, `氏名：`) is names.py's.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from sampling.redaction.context import either
from sampling.redaction.finders import register, table
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

KIND = "PERSON_NAME"
_TABLE = table("cjk_names.json")
_HAN = "\u3400-\u4dbf\u4e00-\u9fff"
_HANGUL = "\uac00-\ud7a3"


_CN_TITLES = either(_TABLE["cn_titles"])
_CN_SURNAME = rf"(?:{either(_TABLE['cn_compound_surnames'])}|[{_TABLE['cn_surnames']}])"
# Characters that never end or continue a given name: a sentence's small words.
_NOT_GIVEN = "的了是在和我你他她它们这那个说给把被对与及或也都吗呢吧啊"
_GIVEN = rf"(?:[{_HAN}](?<![{_NOT_GIVEN}]))"
_NOT_GIVEN_NAMES = frozenset(_TABLE["not_given_names"])
# A word whose last character is also a surname (`关于王伟老师`, `谢谢李娜老师`): the name
# is the two characters after it when they are a surname and a given name too. A surname
# alone at a sentence's start is the name's (`谢华英先生`).
_LEADING_WORDS = frozenset(
    ["关于", "对于", "由于", "至于", "等于", "谢谢", "感谢", "多谢", "同时", "这时",
     "那时", "当时", "不管", "尽管", "命令", "转向", "面向", "走向", "方向"]
)  # fmt: skip

# Chinese, a title after the name: `王伟先生`, `请转告赵立新经理`. Found from each title, the
# name read back from it: a scan for the name's shape at every surname cost ten times more.
CN_TITLE = re.compile(_CN_TITLES)  # (names.py reads a title after a name with it too)
_CN_NAME = re.compile(rf"{_CN_SURNAME}{_GIVEN}{{1,2}}")
# Chinese, a label or greeting before it; after a greeting the name ends in a mark or a title.
# Each label is found first (one alternation of literals, which the regex engine skips along to),
# then the name read where it ends; `致` only where a line or a clause starts with it.
_CN_LABEL = re.compile(either(_TABLE["cn_labels"]))
_CN_AFTER_LABEL = re.compile(rf"(?:是|为)?[:：]?\s*(?P<name>{_CN_SURNAME}{_GIVEN}{{1,2}})")
_CLAUSE_STARTS = frozenset(" \t\n。，,！!：:；;")
_CN_NAME_ENDS = re.compile(rf"(?:[^{_HAN}]|$|{_CN_TITLES})")
# A child's name before its parent's word, as a class's parents introduce themselves (`我是李明轩
# 的妈妈`): the name that ends there.
_CN_PARENTS = ("的妈妈", "的爸爸", "的家长", "的奶奶", "的爷爷", "的外婆", "的外公", "的媽媽",
               "的家長", "的爺爺")  # fmt: skip
_CN_PARENT = re.compile(either(_CN_PARENTS))
# Labels of a filing's party or of a record's person, a colon after them (`原告：王丽娟，女`,
# `用户：李明华`): without it they are words of a sentence (`用户体验`, `被告知`). Kept with the
# other phrases before a name, in names.py's table.
_PERSON_LABELS = table("person_names.json")
_CN_COLON_LABELS = _PERSON_LABELS["cn_labels_before_a_colon"]
# A bracket between the label and its colon: `上诉人（原审被告）：`.
_CN_COLON_LABEL = re.compile(rf"(?:{either(_CN_COLON_LABELS)})(?:[(（][^)）:：]{{1,8}}[)）])?[:：]")
_CN_AFTER_COLON = re.compile(rf"[ \u3000]?(?P<name>{_CN_SURNAME}{_GIVEN}{{1,2}})")

_JP_SURNAME = rf"(?:{either(_TABLE['jp_surnames'])})"
_JP_NOT_GIVEN = either(_TABLE["jp_not_given"])
# Japanese: a family name, up to three characters of a given name, then the honorific.
_JP_HONORIFIC = re.compile(either(_TABLE["jp_honorifics"]))
_JP_NAME = re.compile(rf"{_JP_SURNAME}(?:\s?(?!{_JP_NOT_GIVEN})[{_HAN}々]{{1,3}})?")
_JP_LABEL = re.compile(either(_TABLE["jp_labels"]))
# A label, then a colon or, as a form sets it, spaces (`氏名　佐々木 美咲`), then the name.
_JP_AFTER_LABEL = re.compile(
    rf"(?:者)?(?:[:：]\s*|[ \t]+)(?P<name>{_JP_SURNAME}(?:\s?[{_HAN}々\u3040-\u309f]{{1,4}})?)"
)

# A name in katakana after a label of a transfer or a form (`振込名義：ヤマダ　ハナコ`): a family
# name and a given name, a space between them, and no more katakana after them.
_JP_KANA_LABELS = _PERSON_LABELS["jp_kana_labels"]
_JP_KANA_LABEL = re.compile(either(_JP_KANA_LABELS))
_KANA = "\u3099\u309a\u30a1-\u30fa\u30fc\uff66-\uff9f"  # half-width ones too (`ﾔﾏﾀﾞ ﾊﾅｺ`)
_JP_KANA_FIRM_WORDS = tuple(_PERSON_LABELS["jp_kana_firm_words"])
_JP_KANA_NAME = re.compile(
    rf"[:：][ \u3000]*(?P<name>[{_KANA}]{{2,10}}[ \u3000][{_KANA}]{{1,10}})(?![{_KANA}])"
)

_KR_SURNAME = rf"(?:{either(_TABLE['kr_surnames'])})"
_KR_NOT_NAMES = frozenset(_TABLE["kr_not_names"])
_KR_TITLE_ENDINGS = _TABLE["kr_title_endings"]
# Korean: a surname and two syllables, then the honorific (`김민수님`, `최수진 씨`).
_KR_HONORIFIC = re.compile(either(_TABLE["kr_honorifics"]))
_KR_NAME = re.compile(rf"(?<![{_HANGUL}]){_KR_SURNAME}[{_HANGUL}]{{2}}")
# A label and a colon, then the name; a label and a space alone, then three syllables that end
# there (`이름 모를 꽃` is no name).
_KR_LABEL = re.compile(either(_TABLE["kr_labels"]))
_KR_PARTICLES = "으로|에게|로|께|의|이|가|은|는|을|를|님|씨"
# (After a space, a particle may end the name: `예금주 박상철로`, to the holder Park Sang-cheol.)
_KR_AFTER_LABEL = re.compile(
    rf"\s*[:：]\s*(?P<named>{_KR_SURNAME}[{_HANGUL}]{{1,3}})"
    rf"|\s+(?P<spaced>{_KR_SURNAME}[{_HANGUL}]{{2}})(?:{_KR_PARTICLES})?(?![{_HANGUL}])"
)


def cjk_name(word: str) -> bool:
    """`word` is shaped as a Chinese, Japanese or Korean person's name: a surname of the table
    and a given name after it (`张伟`, `佐藤美咲`, `김민준`), not a word (`回复`, `文档`)."""
    return (
        any(pattern.fullmatch(word) is not None for pattern in (_CN_NAME, _JP_NAME, _KR_NAME))
        and word not in _KR_NOT_NAMES
        and not said_twice(word)
    )


def said_twice(word: str) -> bool:
    """`谢谢`, `常常`: a word of one character said twice, no name."""
    return len(word) == 2 and word[0] == word[1]


@register("cjk_person_names")
class CjkNameFinder:
    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(
        words=(
            *_TABLE["cn_titles"],
            *_TABLE["cn_labels"],
            *_CN_PARENTS,
            *_CN_COLON_LABELS,
            *_JP_KANA_LABELS,
            *_TABLE["jp_honorifics"],
            *_TABLE["jp_labels"],
            *_TABLE["kr_honorifics"],
            *_TABLE["kr_labels"],
        )
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if text.isascii():
            return
        yield from _chinese(text)
        yield from _japanese(text)
        yield from _korean(text)


def _names_before(
    text: str, marks: re.Pattern[str], name: re.Pattern[str], longest: int
) -> Iterator[tuple[int, int]]:
    """(start, end) of the name right before each of `marks` (a space between them allowed):
    the longest that fits, up to `longest` characters."""
    for mark in marks.finditer(text):
        end = mark.start()
        if end and text[end - 1] == " ":
            end -= 1
        for start in range(max(0, end - longest), end):
            if name.fullmatch(text, start, end):
                yield start, end
                break


def _chinese(text: str) -> Iterator[Span]:
    for start, end in _names_before(text, CN_TITLE, _CN_NAME, 4):
        if text[end : end + 1] == " ":
            continue  # `王伟 先生`: a Chinese title follows the name with no space
        if (
            end - start == 3
            and text[start - 1 : start + 1] in _LEADING_WORDS
            and _is_cn_name(text[start + 1 : end])
        ):
            start += 1  # `关于王伟老师`: 王伟
        if text[start : start + 2] not in _NOT_GIVEN_NAMES:
            yield Span(start, end, KIND)
    for label in _CN_LABEL.finditer(text):
        if (
            label.group() == "致"
            and label.start()
            and text[label.start() - 1] not in _CLAUSE_STARTS
        ):
            continue  # `导致`, `一致`: no letter's address
        match = _CN_AFTER_LABEL.match(text, label.end())
        if match is not None and (span := _cn_name_after_a_label(text, match)) is not None:
            yield span
    for label in _CN_COLON_LABEL.finditer(text):
        match = _CN_AFTER_COLON.match(text, label.end())
        if match is not None and (span := _cn_name_after_a_label(text, match)) is not None:
            yield span
    for start, end in _names_before(text, _CN_PARENT, _CN_NAME, 4):
        if end - start > 1 and text[start : start + 2] not in _NOT_GIVEN_NAMES:
            yield Span(start, end, KIND)


def _cn_name_after_a_label(text: str, match: re.Match[str]) -> Span | None:
    """The name a label's match holds: ending where the longest one does or a character before
    (`致李娜：`: two; `亲爱的陈静，`: one, then a mark), never a surname and a title (`联系人：王
    先生`: no one in particular), a word (`用户：管理员`) nor a character said twice (`谢谢`)."""
    start, longest = match.span("name")
    if CN_TITLE.match(text, start + 1) or text[start : start + 2] in _NOT_GIVEN_NAMES:
        return None
    for end in (longest, longest - 1):
        if end > start + 1 and _CN_NAME_ENDS.match(text, end):
            return None if said_twice(text[start:end]) else Span(start, end, KIND)
    return None


def _is_cn_name(chars: str) -> bool:
    return _CN_NAME.fullmatch(chars) is not None


def _japanese(text: str) -> Iterator[Span]:
    for start, end in _names_before(text, _JP_HONORIFIC, _JP_NAME, 8):
        yield Span(start, end, KIND)
    for label in _JP_LABEL.finditer(text):
        match = _JP_AFTER_LABEL.match(text, label.end())
        if match is not None:
            yield Span(*match.span("name"), KIND)
    for label in _JP_KANA_LABEL.finditer(text):
        match = _JP_KANA_NAME.match(text, label.end())
        # (half-width kana read whole: `ｷﾞﾝｺｳ` is `ギンコウ`, its voicing marks composed)
        name = unicodedata.normalize("NFKC", match["name"]) if match is not None else ""
        if match is not None and not any(word in name for word in _JP_KANA_FIRM_WORDS):
            yield Span(*match.span("name"), KIND)


def _korean(text: str) -> Iterator[Span]:
    for start, end in _names_before(text, _KR_HONORIFIC, _KR_NAME, 4):
        name = text[start:end]
        if name in _KR_NOT_NAMES or name[-1] in _KR_TITLE_ENDINGS:
            continue  # `이사장님`, `변호사님`: a title, not a name
        yield Span(start, end, KIND)
    for label in _KR_LABEL.finditer(text):
        if label.start() and _is_hangul(text[label.start() - 1]):
            continue  # the end of a longer word
        match = _KR_AFTER_LABEL.match(text, label.end())
        if match is not None:
            yield Span(*match.span("named" if match.group("named") else "spaced"), KIND)


def _is_hangul(char: str) -> bool:
    return "\uac00" <= char <= "\ud7a3"
