"""The kinds found after a word that names them (seed phrases, chat-app IDs, identity numbers of
stdnum's table), read through every view, and the benign shapes the views must not turn into
values (a run cut from its escape, an order number, a date, a number without its trunk prefix)."""

# ruff: noqa: E501  (a case reads best on one line)
from __future__ import annotations

import hashlib
import json
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sampling.redaction import Redactor
from sampling.redaction.config import RedactConfig
from sampling.redaction.finders import table
from sampling.redaction.finders.seed_phrases import LANGUAGES, WORDS, checksum_valid, word_list
from sampling.redaction.kinds import BUILTIN_KINDS
from sampling.redaction.views import query_values, views
from tests.helpers.redaction import REDACTOR, leaves_each
from tests.test_redaction_properties import PLACEHOLDER, SEPARATORS, TRANSFORMS

pytestmark = pytest.mark.unit


def _phrase(entropy: bytes, words: tuple[str, ...] = WORDS, joint: str = " ") -> str:
    count = len(entropy) * 3 // 4
    bits = "".join(f"{byte:08b}" for byte in entropy)
    bits += f"{hashlib.sha256(entropy).digest()[0]:08b}"[: count // 3]
    return joint.join(words[int(bits[i : i + 11], 2)] for i in range(0, len(bits), 11))


PHRASES = st.builds(
    _phrase, st.sampled_from([16, 24, 32]).flatmap(lambda n: st.binary(min_size=n, max_size=n))
)
HANDLES = st.builds(lambda a, b: a + b, st.sampled_from("abcdefghkmnpqrstuvwxyz"),
                    st.text("abcdefghijkmnopqrstuvwxyz0123456789_", min_size=6, max_size=14))  # fmt: skip
QQ = st.integers(10**5, 10**11 - 1).map(str)
_UPPER = st.text("ABCDEFGHJKLMNPRSTUVWXYZ", min_size=2, max_size=3)
PLATES = st.one_of(
    st.builds(lambda a, n, b: f"{a}{n} {b}", _UPPER, st.integers(10, 99), _UPPER),
    st.builds(
        lambda p, a, n: f"{p}{a[0]}·{n}",
        st.sampled_from("京沪粤浙"),
        _UPPER,
        st.integers(10000, 99999),
    ),
    st.builds(lambda a, b, n: f"{a[0]}-{b} {n}", _UPPER, _UPPER, st.integers(1, 9999)),
)
NEW_VALUES = st.one_of(
    st.tuples(st.just("my seed phrase is "), PHRASES), st.tuples(st.just("助记词："), PHRASES),
    st.tuples(st.just("recovery phrase: "), PHRASES), st.tuples(st.just("my WeChat ID is "), HANDLES),
    st.tuples(st.just("微信号："), HANDLES), st.tuples(st.just("Telegram: "), HANDLES),
    st.tuples(st.just("KakaoTalk ID: "), HANDLES), st.tuples(st.just("my QQ number is "), QQ),
    st.tuples(st.just("QQ号："), QQ), st.tuples(st.just("licence plate "), PLATES),
    st.tuples(st.just("车牌号："), PLATES),
)  # fmt: skip


@given(NEW_VALUES, st.sampled_from(sorted(TRANSFORMS)), SEPARATORS, SEPARATORS)
@settings(max_examples=200, deadline=None)
def test_a_new_kind_never_survives_and_the_rest_of_the_text_is_unchanged(
    named: tuple[str, str], transform: str, before: str, after: str
) -> None:
    name, value = named
    text = f"好的{before}{name}{TRANSFORMS[transform](value)}{after}谢谢 and ok."
    (out,) = REDACTOR.redact([text]).texts
    head, tail = f"好的{before}{name}", f"{after}谢谢 and ok."
    # An invisible character at the value's edge may stay: nothing of the value is seen.
    expected = re.escape(head) + PLACEHOLDER + "\u200b?" + re.escape(tail)
    assert re.fullmatch(expected, out), (text, out)


def test_a_seed_phrase_is_found_whole_and_its_checksum_picks_its_length() -> None:
    phrase = _phrase(bytes(range(32)))  # 24 words
    assert checksum_valid(phrase.split())
    (out,) = REDACTOR.redact([f"My seed phrase is {phrase} able about above, thanks"]).texts
    assert out == "My seed phrase is <SEED_PHRASE_1> able about above, thanks"
    numbered = " ".join(f"{i}. {w}" for i, w in enumerate(phrase.split(), 1))
    assert REDACTOR.redact([f"recovery phrase:\n{numbered}"]).texts == (
        "recovery phrase:\n1. <SEED_PHRASE_1>",
    )


# Each list's phrase as its language writes it down, after words of that language (a name, a
# count of words, or a wallet's name somewhere in the text).
_IN_LANGUAGE = {
    "english": ("Backup of my 24 words: ", " ", ". Thanks"),
    "spanish": ("anoté mis 12 palabras en español así: ", " ", ", ¿siguen sirviendo?"),
    "french": ("Ma phrase de récupération : ", " ", ". Merci"),
    "italian": ("Il mio portafoglio non si apre. Parole: ", ", ", ". Grazie"),
    "portuguese": ("A minha carteira sumiu, as palavras eram ", " ", ". Ajuda"),
    "czech": ("Mám zálohu slov v češtině: ", " ", ". Můžete mi ji obnovit?"),
    "japanese": ("ウォレットを復元したい。単語はこれです→ ", "\u3000", "\n登録メール"),
    "korean": ("지갑 복구 구문: ", " ", " 입니다"),
    "chinese_simplified": ("我的钱包助记词是", " ", "，请帮我看看。"),
    "chinese_traditional": ("我之前把助記詞存在手機備忘錄：", " ", "，是不是被駭客看到了？"),
}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("size", [16, 32])
def test_a_seed_phrase_of_each_bip39_list_is_found_whole(language: str, size: int) -> None:
    before, joint, after = _IN_LANGUAGE[language]
    phrase = _phrase(bytes(range(7, 7 + size)), word_list(language), joint)
    assert checksum_valid(phrase.split(joint), language)
    (out,) = REDACTOR.redact([f"{before}{phrase}{after}"]).texts
    assert out == f"{before}<SEED_PHRASE_1>{after}"


_KEY = "a7765bca964e1026440ef9d07967e0bb661a83014e878bd873358666e3fef450"


@pytest.mark.parametrize("before", [
    'wallet_pk = "0x', "DEPLOYER_PK=", '{"pk": "', "my private key: ", "私钥：0x",
    "Mình gửi luôn private key để bên bạn kiểm tra nhé: ", "Export your private key:\n\n0x",
    "Моя приватный ключ от кошелька, вот он: ",
])  # fmt: skip
def test_a_wallets_raw_private_key_is_hidden(before: str) -> None:
    (out,) = REDACTOR.redact([f"{before}{_KEY} thanks"]).texts
    assert _KEY not in out and out.startswith(before.removesuffix("0x")), out


@pytest.mark.parametrize("text", [
    f"tx hash 0x{_KEY}", f"sha256sum: {_KEY}  pkg.tar.gz", f"commit {_KEY[:40]}",
    f"the checksum below was signed with our private key\nsha256 {_KEY}",
    f"pkg_digest = {_KEY}",
])  # fmt: skip
def test_sixty_four_hex_digits_of_a_digest_stay(text: str) -> None:
    assert REDACTOR.redact([text]).texts == (text,)


@pytest.mark.parametrize("text", [
    "the seed is 42 and we move about above the able abandon",  # list words, no phrase
    # Chinese prose is the lists' commonest characters, one after another, not set apart.
    "我的钱包里有的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年",
    "Answer in 12 words: the cat sat on the mat because it was warm there today.",
    "Perdí mi cartera: tenía el carnet, dos tarjetas y una foto de mi abuela en la playa.",
    "my WeChat is down again", "line 42 is broken", "Telegram: not installed", "line: 1234",
    "Error at line: 4521 in parser.py", "the api key is UserProfileCardV2 in the docs",
    "we set the random seed to 1234 for the ability to abandon runs",
    "the licence plate reader v2 is out", "the plate was 350 degrees",
    "The answer is\nthat we wait: it is\n42 days away.",  # hard-wrapped prose stays one line each
])  # fmt: skip
def test_words_that_name_an_app_or_a_seed_give_no_value(text: str) -> None:
    assert REDACTOR.redact([text]).texts == (text,)


def test_every_new_kind_is_a_builtin_kind() -> None:
    assert {"SEED_PHRASE", "MESSENGER_ID", "LICENSE_PLATE"} <= BUILTIN_KINDS.keys()
    only = Redactor.from_config(RedactConfig.model_validate({"disable": ["MESSENGER_ID"]}))
    assert only.redact(["QQ: 123456789"]).texts == ("QQ: 123456789",)


def test_the_identity_table_covers_stdnum_countries_and_keeps_the_names_kept_by_hand() -> None:
    generated = table("identity_numbers.json")
    by_hand = table("national_ids.json")["names"]
    assert len(generated["modules"]) >= 60
    for name, modules in by_hand.items():
        assert set(modules) - set(generated["left_out_no_check"]) <= set(generated["names"][name])
    assert "ar.dni" in generated["left_out_no_check"]  # any 7 or 8 digits: no check to go by


@pytest.mark.parametrize(("text", "value"), [
    ("Isikukood: 37605030299", "37605030299"),
    ("OIB 94577403194, hvala", "94577403194"),
    ("Mispar Zehut: 039337423", "039337423"),
    ("My PPS number is 6433435F.", "6433435F"),
    ("Rodné číslo: 710319/2745", "710319/2745"),
    ("CNIC number and EGN: 7523169263", "7523169263"),
])  # fmt: skip
def test_identity_numbers_of_the_table_are_found_after_their_name(text: str, value: str) -> None:
    (out,) = REDACTOR.redact([text]).texts
    assert value not in out and "<NATIONAL_ID_1>" in out, out


@pytest.mark.parametrize("text", [
    "Mispar Zehut: 039337424",  # the check digit is wrong
    "DNI 12345678 de Argentina",  # no check digit: a number after a bare name is left
    "Isikukood: 37605030291",
])  # fmt: skip
def test_identity_numbers_that_fail_their_check_are_left(text: str) -> None:
    assert REDACTOR.redact([text]).texts == (text,)


test_benign_shapes_in_every_encoding_are_left_alone = leaves_each(
    [
        "订单号：4713396096739471，已于2018-08-15发货。",  # Luhn-valid, named an order number
        "注文番号 7199657182 は11月6日にお届け予定です。",  # a UK mobile without its trunk 0
        "Rechnung Nr. 1963445 vom 10.10.2024: 607,83 €.",  # a date, not a phone
        "Order #7227114997 has shipped.",
        "https://example.com/search?q=%3Cimg%20src%3D%22data%3Aimage%2Fpng%3Bbase64%2CiVBORw0KGgr6tCj3YubiguXBZXx4w6lns2cR6zkGp8hgPXHUCeelTYe9wfcEQgJ6rx%2BpW3",
        'print(base64.b64decode(\\"SGVsbG8sIFdvcmxkIQ==\\").decode())',
        "https://example.com/search?q=connect%28host%3Dhost%2C%20password%3D&page=2",
        '{"output": "class Login(BaseModel):\\n    user: str\\n    password: str\\n"}',
        json.dumps({"output": "注文番号 2844419890 は11月7日にお届け予定です。"}),
    ]
)


@pytest.mark.parametrize(("text", "kind"), [
    ("邮箱：maria.lopez11@example.org，请妥善保管。", "EMAIL"),
    ("IPv6地址：2001:db8:a973::e673:5dd5，请妥善保管。", "IP_ADDRESS"),
    ("MAC地址：96:0D:17:89:99:76，请妥善保管。", "MAC_ADDRESS"),
    ("<p>My GitLab token is glpat&#x2d;z&#x5f;BSxj44GsiMl&hyphen;AnxVKR, ok?</p>", "API_KEY"),
    ("<p>Try 971&#x2e;221&#46;960&hyphen;70 and tell me.</p>", "BR_CPF"),
    ("<p>Here are the credentials.\nPassword: velnunuvel</p>", "SECRET"),
    ("执行 curl -u deploy:\u202f42iUyt9Kp*0\u202f https://ci.example.com/api", "PASSWORD"),
    ("我叫\u00a0陈芳强\u3000，请帮我查一下订单。", "PERSON_NAME"),
    ("My SIN is https://go.test/share?u=351%20933%20072&lang=en, why?", "NATIONAL_ID"),
    ("Dear https://go.test/share?u=Fatima%20Nakamura&lang=en,\nyour order", "PERSON_NAME"),
    ("Use this one: https://go.test/share?u=16107146355&lang=en", "PHONE"),
    ("call 07700 900123 or 1-415-555-0134", "PHONE"),
    ("您的验证码是\n842887，5分钟内有效。", "SECRET"),
    ("My tax file number is\n904 153 382, can you check?", "NATIONAL_ID"),
    ("我叫：\n  陈伟娜，请帮我查一下订单。", "PERSON_NAME"),
    ("LINE ID: ana.k88 (add me)", "MESSENGER_ID"),
    ("我的API密钥是9pfi2Cn61IMyos4，请帮我看看为什么不行。", "SECRET"),  # syllables, but 4 digit runs
    ("My licence plate is AB12 CDE, thanks", "LICENSE_PLATE"),
    ("车牌号：京A·12345，谢谢", "LICENSE_PLATE"),
    ("Mein Kennzeichen ist B-MW 1234.", "LICENSE_PLATE"),
])  # fmt: skip
def test_values_the_views_bring_within_reach_are_found(text: str, kind: str) -> None:
    assert kind in REDACTOR.redact([text]).counts, REDACTOR.redact([text]).texts


def test_the_query_values_view_reads_a_urls_values_where_its_name_stood() -> None:
    text = "My SIN is https://go.test/share?u=351%20933%20072&lang=en, why?"
    last = views(text)[-1]
    assert last.text == "My SIN is 351 933 072, en, why?"
    start = last.text.index("351")
    assert text[slice(*last.origin(start, start + 11))] == "351%20933%20072"
    assert query_values(views("no url here?a=b")[0]) is None
    assert query_values(views("see https://x.io/a, then ask?")[0]) is None  # no query


def test_a_planted_seed_phrase_is_valid_as_the_bench_makes_it() -> None:
    rng = random.Random(0)
    for _ in range(50):
        assert checksum_valid(_phrase(rng.randbytes(rng.choice([16, 24, 32]))).split())
