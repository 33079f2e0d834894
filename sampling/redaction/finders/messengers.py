"""Chat-app, social and game IDs after a word that names the app: a WeChat ID (微信号), a QQ
number, a Telegram, WhatsApp, LINE, KakaoTalk, Signal, Threema, Discord or Skype handle, an
Instagram (IG), Snapchat (snap), TikTok or Twitch one, a Steam, PSN, Xbox (gamertag), Epic,
Roblox or Nexon (넥슨) ID, a Riot ID or a BattleTag (`name#tag`). An ID alone is a word like any
other; the app's name before it says whose it is."""

from __future__ import annotations

import re
from collections.abc import Iterator

from sampling.redaction.context import word_ends
from sampling.redaction.finders import register
from sampling.redaction.finders.usernames import a_login
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

# The words for a game account's number or tag, which may be digits alone.
_GAME_ACCOUNTS = ("player id", "player tag", "character id", "account uid", "game id", "гравця",
                  "игрока", "플레이어 id", "계정 uid", "የተጫዋች id")  # fmt: skip
# The app's name (lower case), the words that may follow it, then `:`/`是`/`is` and the ID.
_APPS: dict[str, str] = {
    # A WeChat ID: a letter, then 5-19 letters, digits, `_` or `-`; or a phone number.
    "wechat": r"[a-z][a-z0-9_-]{5,19}|\+?[0-9][0-9 -]{6,16}[0-9]",
    "weixin": r"[a-z][a-z0-9_-]{5,19}|\+?[0-9][0-9 -]{6,16}[0-9]",
    "微信": r"[a-z][a-z0-9_-]{5,19}|\+?[0-9][0-9 -]{6,16}[0-9]",
    "vx": r"[a-z][a-z0-9_-]{5,19}|\+?[0-9][0-9 -]{6,16}[0-9]",  # how people type 微信
    "v信": r"[a-z][a-z0-9_-]{5,19}|\+?[0-9][0-9 -]{6,16}[0-9]",
    "威信": r"[a-z][a-z0-9_-]{5,19}|\+?[0-9][0-9 -]{6,16}[0-9]",
    "qq": r"[1-9][0-9]{4,11}",  # a QQ number: 5 to 12 digits, never from 0
    "扣扣": r"[1-9][0-9]{4,11}",
    "telegram": r"@?[a-z][a-z0-9_]{4,31}",
    "tg": r"@[a-z][a-z0-9_]{4,31}",
    "whatsapp": r"\+?[0-9][0-9 ()-]{6,18}[0-9]",
    # LINE only as `LINE ID` or `LINE:`: "line" alone is a common word (and code's `line: 42`).
    "line id": r"@?[a-z0-9._-]{4,20}",
    "line:": r"@?[a-z0-9._-]{4,20}",
    "lineのid": r"@?[a-z0-9._-]{4,20}",
    "lineid": r"@?[a-z0-9._-]{4,20}",
    "kakaotalk": r"[a-z0-9._-]{4,20}",
    "kakao": r"[a-z0-9._-]{4,20}",
    "카카오톡": r"[a-z0-9._-]{4,20}",
    "카톡": r"[a-z0-9._-]{4,20}",
    # Signal, too, only as a label: "signal" is a common word in technical prose.
    "signal:": r"\+?[0-9][0-9 ()-]{6,18}[0-9]|[a-z][a-z0-9_]{2,31}\.[0-9]{2,}",
    "signal id": r"\+?[0-9][0-9 ()-]{6,18}[0-9]|[a-z][a-z0-9_]{2,31}\.[0-9]{2,}",
    "discord": r"@?[a-z0-9_.]{2,32}(?:#[0-9]{4})?",
    "skype": r"live:[a-z0-9._-]{3,40}|[a-z][a-z0-9._,-]{5,31}",
    "ไลน์ไอดี": r"@?[a-z0-9._-]{4,20}",
    "ไลน์": r"@?[a-z0-9._-]{4,20}",
    # Social apps' handles: with `@`, or holding a digit, `_` or `.` (words of a sentence do not).
    **dict.fromkeys(
        (
            "instagram",
            "insta",
            "ig",
            "snapchat",
            "snap",
            "tiktok",
            "twitter",
            "twitch",
            "steam",
            "roblox",
            "xbox",
            "epic games",
            "psn",
        ),
        r"@[a-z0-9_.]{2,30}|[a-z][a-z0-9_.]*[0-9_.][a-z0-9_.]*",
    ),
    # A game's own ID after the word for it: any handle (`Gamertag: Major Nelson` ends at the
    # space), a Riot ID or a BattleTag with its `#tag`.
    **dict.fromkeys(
        (
            "gamertag",
            "steam id",
            "steamid",
            "psn id",
            "epic id",
            "roblox username",
            "nexon id",
            "nexon",
            "넥슨",
            "넥슨 id",
        ),
        r"@?[a-z][a-z0-9_.-]{2,31}",
    ),
    # A game account's number or tag after the words for it (`player tag is #2QYL8VJ0C`,
    # `ID гравця 901774`): a digit in it, not a type's `PlayerId`.
    **dict.fromkeys(_GAME_ACCOUNTS, r"#?(?=[a-z]*[0-9])[a-z0-9]{6,14}"),
    **dict.fromkeys(
        ("riot id", "riot", "battletag", "battle.net", "battle tag"),
        r"[\w.]{2,16}#[a-z0-9]{2,5}",
    ),
    "threema": r"[a-z0-9*][a-z0-9]{7}",  # a Threema ID: eight letters and digits
    # A code host's username after its name and a colon on its line (`GitHub: aishakamau-dev`;
    # a record's `"github": "meilq"` as the fields view writes it): letters, digits and single
    # hyphens.
    **dict.fromkeys(
        ("github:", "gitlab:", "bitbucket:", "codeberg:"),
        r"@?[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){1,38}",
    ),
}
# The apps whose IDs may be digits alone (a QQ number, a phone number).
_DIGITS_ALONE = {"wechat": True, "weixin": True, "微信": True, "qq": True, "whatsapp": True,
                 "signal:": True, "signal id": True, "vx": True, "v信": True, "威信": True,
                 "扣扣": True, "threema": True, **dict.fromkeys(_GAME_ACCOUNTS, True)}  # fmt: skip
_ID_WORDS = (
    r"(?:\s*(?:id|handle|username|user ?name|gamertag|tag|account|number|no\.?|me|号|號|账号|帳號"
    r"|아이디))?"
)
_JOIN = r"\s*(?:(?:is|:|：|=|是|为|は|는|은)\s*)+"
# After an app's name in another script, a space alone (`加我微信 zhangsan_88`, `카톡 jisoo_k`)
# when the ID holds a digit or `_`, which words of a sentence do not.
_SPACE_JOIN = r"\s+(?=[a-z0-9._@-]*(?:[0-9_]|\.[a-z0-9]))"  # (or a dot inside: `tanapol.w`)
_AFTER = r"(?![a-z0-9_@.-]*[a-z0-9_])"  # the whole ID, not its first letters
_AFTER_COLON = r"[ \t]*"  # (`LINE:` and `Signal:` hold their colon already)
# Words after the app's name that are not an ID ("my WeChat is down", "line: 42").
_NOT_IDS = frozenset({"down", "broken", "blocked", "not", "installed", "working", "open",
                      "closed", "offline", "online", "updated", "number", "the", "here",
                      "below", "actions", "pages", "yes", "no", "none", "see", "private",
                      "link", "https", "http", "repo", "repository", "enterprise", "copilot",
                      "issues", "com", "self-hosted", "cloud", "saas", "free",
                      "premium", "ultimate", "ci"})  # fmt: skip
# Each matched where the app's name starts (found with str.find: "line" is common in prose).
_PATTERNS = {
    app: re.compile(
        # (A label with its colon has its words before it: `me` is no ID word in `: meilq`.)
        rf"{re.escape(app)}{_ID_WORDS if not app.endswith(':') else ''}"
        rf"(?:{_JOIN}|{_SPACE_JOIN if not app.isascii() else '(?!)'}"
        rf"|{_AFTER_COLON if app.endswith(':') else '(?!)'})(?P<id>(?:{shape}){_AFTER})"
    )
    for app, shape in _APPS.items()
}


# A handle with `@` a few words after an app's name, in any language ("add me on telegram
# @kwame_builds", "آیدی تلگرامم هم @reza_k_dev"): the app's name says whose it is.
_HANDLE_APPS = ("telegram", "instagram", "insta", "ig", "snapchat", "snap", "tiktok", "twitter",
                "twitch", "threema", "discord", "skype", "whatsapp", "kakao", "wechat", "тг",
                "телеграм", "телеграмм", "инстаграм", "تلگرام", "تيليجرام", "تلغرام",
                "اینستاگرام", "انستغرام", "טלגרם", "אינסטגרם", "テレグラム", "インスタ",
                "텔레그램", "인스타", "venmo", "cashapp", "cash app", "paypal", "dm",
                "dms", "телега", "телегу", "телеге", "телеги", "телеграме", "телеграму",
                "телеграмі", "ватсап", "вотсап", "вайбер")  # fmt: skip
# Short or common words taken only whole ("snap me @x", not "snapshot @x").
_WHOLE_WORDS = frozenset({"ig", "snap", "insta", "twitch", "dm", "dms"})
# A chat's mentions of everyone, no one's handle.
_MENTIONS = frozenset({"@channel", "@here", "@everyone", "@all"})
# (A word of a script without spaces may stand right before it: `DMは@shota_szk`; the handle
# may come in the next sentence: `pelo Telegram? o meu é @catarina_lx95`.)
_HANDLE_AFTER = re.compile(r"[^\n@]{0,40}?(?<![a-z0-9_.])(@[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?)")
# A Discord tag (a name, `#` and four digits) a few words after the app's name ("Discord works
# too: kaylamoms#4821").
_TAG_AFTER = re.compile(r"[^\n#.!?。]{0,24}?(?<![\w.])([a-z0-9_.]{2,32}#[0-9]{4})(?![\w])")


@register("messenger_id")
class MessengerIdFinder:
    kinds = frozenset({"MESSENGER_ID"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(
        whole_words=tuple(
            {app for app in (*_APPS, *_HANDLE_APPS) if app.isascii() and app.isalpha()}
        ),
        words=tuple(
            {app for app in (*_APPS, *_HANDLE_APPS) if not (app.isascii() and app.isalpha())}
        ),
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        lower = view.lower
        for app, pattern in _PATTERNS.items():
            at = lower.find(app)
            while at >= 0:
                match = None
                if not (at and lower[at - 1].isascii() and lower[at - 1].isalnum()):
                    match = pattern.match(lower, at)
                at = lower.find(app, at + len(app))
                if match is None:
                    continue
                value = match.group("id")
                if app in _WHOLE_WORDS and "=" in lower[match.start() : match.start("id")]:
                    continue  # code: `ig = C.pop()`, `snap = take(...)`
                if value in _NOT_IDS or (value.isdigit() and not _DIGITS_ALONE.get(app, False)):
                    continue  # a number is an ID only where the app's IDs are numbers
                between = lower[match.start() + len(app) : match.start("id")]
                if (
                    value.isalpha()
                    and not any(sign in between for sign in ":=：")
                    and not a_login(value, sentence=True)
                ):
                    continue  # after a verb, a word of the sentence: "Telegram is great"
                if app == "line:" and (
                    view.text[match.start() : match.start() + 4] != "LINE"
                    or lower[match.start() - 1 : match.start()] == "."
                    or value.startswith("0x")
                    or lower[match.end() : match.end() + 1] in ("[", "(")
                ):
                    continue  # the app as it writes itself, not code's `line:`, `x.LINE: y[i]`
                yield Span(*match.span("id"), "MESSENGER_ID")
        if "#" in lower and "discord" in lower:
            for end in word_ends(lower, "discord", whole=True):
                tag = _TAG_AFTER.match(lower, end)
                if tag is not None:
                    yield Span(*tag.span(1), "MESSENGER_ID")
        if "@" in lower:
            for app in _HANDLE_APPS:
                for end in word_ends(lower, app, whole=app in _WHOLE_WORDS):
                    handle = _HANDLE_AFTER.match(lower, end)
                    if (
                        handle is not None
                        and len(handle.group(1)) > 3
                        and handle.group(1) not in _MENTIONS
                    ):
                        yield Span(*handle.span(1), "MESSENGER_ID")
