"""A labelled corpus for redaction: planted values and benign texts, generated from a seed.

- `planted(seed)`: records (prompt, response) each carrying one value of one kind (50 kinds:
  keys and tokens of many services, private keys, JWTs, passwords in sentences of twelve
  languages, after a label and on command lines, PINs and one-time codes, e-mail, phone numbers
  of several countries, national IDs with valid check digits, cards, IBANs, addresses), in
  English and in Chinese sentences (and the other languages where a kind has them), in the
  prompt or in the response. Values are drawn fresh from each
  seed in their format (random bodies, computed check digits), so nothing is tuned to one value.
- `benign(seed)`: texts that hold nothing to redact and look as if they might: code answers with
  hashes, git SHAs, UUIDs and base64 data, identifiers and paths, arithmetic with long numbers,
  dates and amounts, English and Chinese prose, the quickstart prompts, and texts about
  passwords, PINs and codes that give none.

`python bench/redaction/corpus.py OUT_DIR [SEED]` writes planted.jsonl and benign.jsonl there.
"""

# ruff: noqa: E501  (value formats and sentences read best one to a line)
from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stdnum import iban, luhn, verhoeff
from stdnum.au import tfn
from stdnum.br import cpf
from stdnum.cn import ric
from stdnum.es import dni
from stdnum.nl import bsn
from stdnum.pl import pesel

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
UPPER32 = string.ascii_uppercase + "234567"


def _run(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def _mixed(rng: random.Random, alphabet: str, length: int) -> str:
    """A random run holding a lower-case letter, a capital and a digit (what keys have)."""
    while True:
        value = _run(rng, alphabet, length)
        if (
            any(c.islower() for c in value)
            and any(c.isupper() for c in value)
            and any(c.isdigit() for c in value)
        ):
            return value


def _token(
    prefix: str | tuple[str, ...],
    alphabet: str,
    *lengths: int,
    suffix: str = "",
    mixed: bool = True,
) -> Callable[[random.Random], str]:
    """A key's maker: `prefix` (or one of several), a random run of `alphabet` of one of `lengths`
    holding a lower-case letter, a capital and a digit (`mixed=False`: any run), then `suffix`."""

    def make(rng: random.Random) -> str:
        start = prefix if isinstance(prefix, str) else rng.choice(prefix)
        length = rng.choice(lengths) if len(lengths) > 1 else lengths[0]
        run = _mixed(rng, alphabet, length) if mixed else _run(rng, alphabet, length)
        return f"{start}{run}{suffix}"

    return make


def date_parts(rng: random.Random, first_year: int, end_year: int) -> tuple[int, int, int]:
    """(year, month, day) of a day from `first_year` up to `end_year` (not in it)."""
    return rng.randrange(first_year, end_year), rng.randrange(1, 13), rng.randrange(1, 29)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# --- secrets ------------------------------------------------------------------------------


openai_project = _token("sk-proj-", URLSAFE, 48, 64, 120, 156)


openai_service = _token("sk-svcacct-", URLSAFE, 74)


anthropic = _token("sk-ant-api03-", URLSAFE, 93, suffix="AA")


sk_hex = _token("sk-", HEX, 32, mixed=False)  # DeepSeek, DashScope and other `sk-` + 32 hex keys


google = _token("AIza", URLSAFE, 35)


huggingface = _token("hf_", string.ascii_letters, 34, mixed=False)


github_classic = _token(("ghp_", "gho_", "ghs_"), ALNUM, 36)


def github_fine_grained(rng: random.Random) -> str:
    return f"github_pat_11{_run(rng, string.ascii_uppercase + string.digits, 20)}_{_mixed(rng, ALNUM, 59)}"


gitlab = _token("glpat-", URLSAFE, 20)


aws_key_id = _token(("AKIA", "ASIA"), UPPER32, 16, mixed=False)


aws_secret = _token("", B64, 40)


def slack_token(rng: random.Random) -> str:
    digits = string.digits
    return f"xoxb-{_run(rng, digits, 12)}-{_run(rng, digits, 13)}-{_mixed(rng, ALNUM, 24)}"


def slack_webhook(rng: random.Random) -> str:
    caps = string.ascii_uppercase + string.digits
    return (f"https://hooks.slack.com/services/T{_run(rng, caps, 8)}/B{_run(rng, caps, 10)}/"
            f"{_mixed(rng, ALNUM, 24)}")  # fmt: skip


stripe = _token(("sk_live_", "rk_live_"), ALNUM, 24, 99)


def sendgrid(rng: random.Random) -> str:
    return f"SG.{_mixed(rng, URLSAFE, 22)}.{_mixed(rng, URLSAFE, 43)}"


npm = _token("npm_", ALNUM, 36)


def telegram(rng: random.Random) -> str:
    return f"{rng.randrange(10**8, 10**10)}:AA{_mixed(rng, URLSAFE, 33)}"


groq = _token("gsk_", ALNUM, 52)


replicate = _token("r8_", ALNUM, 37)


azure_storage = _token("", B64, 86, suffix="==")


wandb = _token("", HEX, 40, mixed=False)


def jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"}).encode())
    claims = {"sub": str(rng.randrange(10**9)), "name": rng.choice(["Maria", "Li Wei", "Sam"]),
              "iat": rng.randrange(1_600_000_000, 1_800_000_000)}  # fmt: skip
    payload = _b64url(json.dumps(claims).encode())
    return f"{header}.{payload}.{_b64url(rng.randbytes(32))}"


def rsa_key(rng: random.Random) -> str:
    body = base64.b64encode(rng.randbytes(rng.choice([120, 300]))).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    kind = rng.choice(["RSA ", "EC ", "", "OPENSSH ", "ENCRYPTED "])
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{lines}\n-----END {kind}PRIVATE KEY-----"


def password(rng: random.Random) -> str:
    return _mixed(rng, ALNUM, rng.randrange(6, 10)) + rng.choice("!@#$%&*") + str(rng.randrange(10))


def letters_password(rng: random.Random) -> str:
    """A password of letters alone, as people choose them: a word or two, run together."""
    syllables = ["ka", "lo", "mi", "ra", "ten", "su", "bel", "dor", "fi", "nu", "po", "gra", "vel"]
    word = "".join(rng.choice(syllables) for _ in range(rng.randrange(3, 6)))
    return word.capitalize() if rng.random() < 0.3 else word


def unlock_code(rng: random.Random) -> str:
    digits = rng.choice([4, 6])
    return f"{rng.randrange(10**digits):0{digits}d}"


def short_key(rng: random.Random) -> str:
    """A key or secret of 12 to 19 letters and digits: shorter than a bare random token."""
    return _mixed(rng, ALNUM, rng.randrange(12, 20))


bearer = _token("", URLSAFE + ".", 32, 40, 64)


generic_key = _token("", ALNUM, 24, 32, 40)


# --- personal data -----------------------------------------------------------------------------


def email(rng: random.Random) -> str:
    user = rng.choice(["maria.lopez", "li.wei", "j.smith", "wang_fang88", "ana+review"])
    return f"{user}{rng.randrange(100)}@{rng.choice(['example.org', 'mail.example.cn', 'corp.example.co.uk'])}"


def written_email(rng: random.Random) -> str:
    """An address spelled out for people, not scrapers: `li.wei (at) example (dot) org`."""
    first, last = rng.choice([("maria", "lopez"), ("li", "wei"), ("jo", "smith"), ("ana", "k")])
    domain, tld = rng.choice([("example", "org"), ("mail-example", "cn"), ("corp", "io")])
    at, dot = rng.choice([("(at)", "(dot)"), ("[at]", "[dot]"), ("{at}", "."), ("(AT)", "(DOT)")])
    if rng.random() < 0.25:  # all in words
        return f"{first} dot {last} at {domain} dot {tld}"
    space = rng.choice(["", " "])
    return f"{first}.{last}{rng.randrange(100)}{space}{at}{space}{domain}{space}{dot}{space}{tld}"


def person_name(rng: random.Random) -> str:
    first = rng.choice(["Priya", "Tomás", "Aiko", "Oluwaseun", "Margaret", "Dmitri", "Fatima",
                        "Jean-Luc", "Siobhan", "Kwame", "Ingrid", "Mateo"])  # fmt: skip
    last = rng.choice(["Raghunathan", "García", "Okafor", "O'Brien", "Van der Berg", "Nakamura",
                       "Kowalski", "Haddad", "Lindqvist", "Mensah", "Costa", "Whitfield"])  # fmt: skip
    return f"{first} {last}"


def cn_name(rng: random.Random) -> str:
    return rng.choice("王李张刘陈杨黄赵") + "".join(
        rng.choice("伟芳娜敏静丽强磊军洋") for _ in range(2)
    )


def cn_mobile(rng: random.Random) -> str:
    return f"1{rng.choice('3456789')}{rng.randrange(10)}{rng.randrange(10**8):08d}"


def cn_mobile_intl(rng: random.Random) -> str:
    number = cn_mobile(rng)
    return f"+86 {number[:3]} {number[3:7]} {number[7:]}"


def us_phone(rng: random.Random) -> str:
    area, exchange, line = (
        rng.choice([212, 415, 646, 303, 512]),
        rng.randrange(200, 999),
        rng.randrange(10**4),
    )
    return rng.choice([f"({area}) {exchange}-{line:04d}", f"{area}-{exchange}-{line:04d}",
                       f"+1 {area} {exchange} {line:04d}"])  # fmt: skip


def uk_phone(rng: random.Random) -> str:
    return rng.choice([f"07{rng.randrange(100, 999)} {rng.randrange(10**6):06d}",
                       f"+44 20 {rng.randrange(3000, 8999)} {rng.randrange(10**4):04d}"])  # fmt: skip


def other_intl_phone(rng: random.Random) -> str:
    return rng.choice([f"+49 30 {rng.randrange(10**7, 10**8)}", f"+91 98{rng.randrange(10**7, 10**8)}",
                       f"+33 6 {rng.randrange(10, 99)} {rng.randrange(10, 99)} {rng.randrange(10, 99)} {rng.randrange(10, 99)}",
                       f"+81 90-{rng.randrange(1000, 9999)}-{rng.randrange(1000, 9999)}"])  # fmt: skip


def cn_id(rng: random.Random) -> str:
    area = rng.choice(["110105", "310104", "440305", "510107", "330106"])
    birth = f"{rng.randrange(1950, 2005)}{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}"
    body = f"{area}{birth}{rng.randrange(1000):03d}"
    return body + ric.calc_check_digit(body + "0")  # it takes the number with a check digit


def us_ssn(rng: random.Random) -> str:
    area = rng.choice([rng.randrange(1, 666), rng.randrange(667, 900)])
    return f"{area:03d}-{rng.randrange(1, 100):02d}-{rng.randrange(1, 10**4):04d}"


def uk_nino(rng: random.Random) -> str:
    first, second = rng.choice("ABCEHJKLMNPRSTWXYZ"), rng.choice("ABCEHJLMNPRSTWXYZ")
    while first + second in ("GB", "NK", "KN", "TN", "NT", "ZZ", "BG"):  # never issued
        first, second = rng.choice("ABCEHJKLMNPRSTWXYZ"), rng.choice("ABCEHJLMNPRSTWXYZ")
    digits = f"{rng.randrange(10**6):06d}"
    return f"{first}{second} {digits[:2]} {digits[2:4]} {digits[4:]} {rng.choice('ABCD')}"


def aadhaar(rng: random.Random) -> str:
    body = f"{rng.randrange(2, 10)}{rng.randrange(10**10):010d}"
    number = body + verhoeff.calc_check_digit(body)
    return f"{number[:4]} {number[4:8]} {number[8:]}"


def aadhaar_bare(rng: random.Random) -> str:
    return aadhaar(rng).replace(" ", "")


def br_cpf(rng: random.Random) -> str:
    body = f"{rng.randrange(10**9):09d}"
    number = body + cpf._calc_check_digits(body)
    return f"{number[:3]}.{number[3:6]}.{number[6:9]}-{number[9:]}"


def card(rng: random.Random) -> str:
    prefix = rng.choice(["4", "51", "55", "2221", "62", "3528", "6011"])
    length = 19 if prefix == "62" and rng.random() < 0.5 else 16
    body = prefix + _run(rng, string.digits, length - len(prefix) - 1)
    number = body + luhn.calc_check_digit(body)
    if rng.random() < 0.5:
        return " ".join(number[i : i + 4] for i in range(0, len(number), 4))
    return number


def iban_number(rng: random.Random) -> str:
    country, bban = rng.choice([
        ("DE", f"{rng.randrange(10**7, 10**8)}{rng.randrange(10**10):010d}"),
        ("GB", f"{rng.choice(['WEST', 'NWBK', 'BARC'])}{rng.randrange(10**6):06d}{rng.randrange(10**8):08d}"),
        ("FR", f"{rng.randrange(10**10):010d}{rng.randrange(10**11):011d}{rng.randrange(100):02d}"),
        ("NL", f"{rng.choice(['ABNA', 'INGB', 'RABO'])}{rng.randrange(10**10):010d}"),
    ])  # fmt: skip
    number = country + iban.calc_check_digits(f"{country}00{bban}") + bban
    if rng.random() < 0.5:
        return " ".join(number[i : i + 4] for i in range(0, len(number), 4))
    return number


def ipv4(rng: random.Random) -> str:
    """A host's address: not loopback (127.0.0.0/8 names this machine, no one's), which
    redaction leaves."""
    octets = [rng.randrange(1, 255) for _ in range(4)]
    while octets[0] == 127:
        octets[0] = rng.randrange(1, 255)
    return ".".join(map(str, octets))


def ipv6(rng: random.Random) -> str:
    return f"2001:db8:{rng.randrange(16**4):x}::{rng.randrange(16**4):x}:{rng.randrange(16**4):x}"


def _valid(
    rng: random.Random, draw: Callable[[random.Random], str], is_valid: Callable[[str], bool]
) -> str:
    """A number drawn in its format until its country's check passes (one in ten or so)."""
    while True:
        value = draw(rng)
        if is_valid(value):
            return value


def ca_sin(rng: random.Random) -> str:
    body = f"{rng.choice('1234567')}{rng.randrange(10**7):07d}"
    number = body + luhn.calc_check_digit(body)
    return f"{number[:3]} {number[3:6]} {number[6:]}"


def nl_bsn(rng: random.Random) -> str:
    return _valid(rng, lambda r: f"{r.randrange(10**8, 10**9)}", bsn.is_valid)


def pl_pesel(rng: random.Random) -> str:
    def draw(r: random.Random) -> str:
        return f"{r.randrange(40, 99):02d}{r.randrange(1, 13):02d}{r.randrange(1, 29):02d}{r.randrange(10**5):05d}"

    return _valid(rng, draw, pesel.is_valid)


def es_dni(rng: random.Random) -> str:
    digits = f"{rng.randrange(10**7, 10**8)}"
    return digits + dni.calc_check_digit(digits)


def au_tfn(rng: random.Random) -> str:
    number = _valid(rng, lambda r: f"{r.randrange(10**8, 10**9)}", tfn.is_valid)
    return f"{number[:3]} {number[3:6]} {number[6:]}"


def cn_passport(rng: random.Random) -> str:
    return f"{rng.choice('EG')}{rng.randrange(10**8):08d}"


def in_pan(rng: random.Random) -> str:
    letters = string.ascii_uppercase
    return f"{_run(rng, letters, 3)}{rng.choice('PCH')}{rng.choice(letters)}{rng.randrange(10**4):04d}{rng.choice(letters)}"


_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
                "September", "October", "November", "December")  # fmt: skip


def birth_date(rng: random.Random) -> str:
    year, month, day = date_parts(rng, 1940, 2006)
    return rng.choice([
        f"{month:02d}/{day:02d}/{year}", f"{year}-{month:02d}-{day:02d}", f"{day:02d}.{month:02d}.{year}",
        f"{_MONTH_NAMES[month - 1]} {day}, {year}", f"{day} {_MONTH_NAMES[month - 1]} {year}",
    ])  # fmt: skip


def account_number(rng: random.Random) -> str:
    digits = f"{rng.randrange(10**7, 10**12)}"
    return rng.choice([digits, " ".join(digits[i : i + 4] for i in range(0, len(digits), 4))])


def record_number(rng: random.Random) -> str:
    return rng.choice([
        f"{rng.choice(string.ascii_uppercase)}{rng.randrange(10**6, 10**7)}",
        f"{rng.choice(string.ascii_uppercase)}{rng.randrange(10**3, 10**4)}-{rng.randrange(10**3, 10**4)}-{rng.randrange(10**3, 10**4)}",
        f"{rng.randrange(10**7):08d}",
    ])  # fmt: skip


def mac_address(rng: random.Random) -> str:
    pairs = [f"{rng.randrange(256):02x}" for _ in range(6)]
    text = rng.choice(":-").join(pairs)
    return text.upper() if rng.random() < 0.5 else text


_BIP39 = tuple((Path(__file__).resolve().parents[2] / "sampling" / "redaction" / "finders"
                / "bip39_english.txt").read_text().split())  # fmt: skip


def seed_phrase(rng: random.Random) -> str:
    """12, 18 or 24 words of the BIP-39 list with their checksum, as a wallet writes them."""
    count = rng.choice([12, 18, 24])
    entropy = rng.randbytes(count * 4 // 3)
    bits = "".join(f"{byte:08b}" for byte in entropy)
    bits += f"{hashlib.sha256(entropy).digest()[0]:08b}"[: count // 3]
    return " ".join(_BIP39[int(bits[i : i + 11], 2)] for i in range(0, len(bits), 11))


def messenger_id(rng: random.Random) -> str:
    letters = string.ascii_lowercase
    rest = "".join(rng.choices(letters + string.digits + "_", k=rng.randrange(6, 12)))
    return rng.choice(["", "wxid_"]) + rng.choice(letters) + rest


_SURNAMES = ("martinez", "schulze", "dupont", "rossi", "kowalski", "nakamura", "okafor",
             "zielinska", "haddad", "lindqvist", "patel", "nguyen", "delacruz", "wroblewska")  # fmt: skip
_GAMER_WORDS = ("Cool", "Dark", "Shadow", "Pixel", "Dino", "Wolf", "Frost", "Neon", "Turbo")


def username(rng: random.Random) -> str:
    """A person's login: an initial and a surname, with digits or a dot, or a gamer's handle."""
    first = rng.choice(string.ascii_lowercase)
    surname = rng.choice(_SURNAMES)
    return rng.choice([
        f"{first}{surname}{rng.randrange(1, 100)}",
        f"{first}.{surname}",
        f"{surname[:rng.randrange(4, 7)]}_{first}{rng.randrange(10, 100)}",
        f"{first}{surname}",
        f"{rng.choice(_GAMER_WORDS)}{rng.choice(_GAMER_WORDS)}_{rng.randrange(1990, 2016)}",
    ])  # fmt: skip


def licence_plate(rng: random.Random) -> str:
    upper = string.ascii_uppercase
    return rng.choice([
        f"{''.join(rng.choices(upper, k=2))}{rng.randrange(10, 100)} {''.join(rng.choices(upper, k=3))}",
        f"{rng.choice(['京', '沪', '粤', '浙'])}{rng.choice(upper)}·{rng.choice(upper[:8])}{rng.randrange(1000, 10000)}",
        f"{rng.choice(['B', 'M', 'HH'])}-{''.join(rng.choices(upper, k=2))} {rng.randrange(1, 9999)}",
        f"{rng.randrange(1, 10)}{''.join(rng.choices(upper, k=3))}{rng.randrange(100, 1000)}",
    ])  # fmt: skip


def qq_number(rng: random.Random) -> str:
    return str(rng.randrange(10**5, 10**11))


_STREETS = ("Maple", "Oak", "Pine", "Cedar", "Elm", "Washington", "Lakeview", "Hillcrest",
            "Sunset", "Riverside", "Highland", "Park", "Church", "Mill", "Willow")  # fmt: skip
_TYPES = ("Street", "St", "Avenue", "Ave", "Road", "Rd", "Lane", "Drive", "Court", "Boulevard",
          "Way", "Place", "Terrace")  # fmt: skip


def street_address(rng: random.Random) -> str:
    number = rng.randrange(1, 9999)
    street = f"{number} {rng.choice(_STREETS)} {rng.choice(_TYPES)}"
    return rng.choice([
        street,
        f"{street}, Springfield, IL {rng.randrange(10000, 99999)}",
        f"{street}, Apt {rng.randrange(1, 40)}, Austin, TX {rng.randrange(10000, 99999)}",
        f"{rng.randrange(1, 300)} {rng.choice(_STREETS)} {rng.choice(['Road', 'Lane', 'Close'])}, London SW{rng.randrange(1, 20)} {rng.randrange(1, 10)}AB",
        f"{rng.choice(['Haupt', 'Linden', 'Garten', 'Schiller'])}straße {rng.randrange(1, 200)}, {rng.randrange(10000, 99999)} Berlin",
        f"{rng.randrange(1, 200)} rue {rng.choice(['de la Paix', 'Victor Hugo', 'du Moulin'])}, {rng.randrange(10000, 99999)} Paris",
        f"北京市朝阳区{rng.choice(['建国', '光华', '东三环'])}路{rng.randrange(1, 300)}号",
        f"{number} {rng.choice(['Broadway', 'Market', 'Kings Cross'])}, New York, NY {rng.randrange(10000, 99999)}",
    ])  # fmt: skip


@dataclass(frozen=True)
class Kind:
    name: str
    group: str  # private_key | cloud_key | api_token | password | personal
    make: Callable[[random.Random], str]
    english: tuple[str, ...]
    chinese: tuple[str, ...]
    others: tuple[tuple[str, str], ...] = ()  # (language, sentence) in other languages

    def sentences(self) -> dict[str, tuple[str, ...]]:
        """Each language's sentences, English and Chinese first where the kind has them."""
        by_language: dict[str, tuple[str, ...]] = {}
        for language, sentences in (("en", self.english), ("zh", self.chinese)):
            if sentences:
                by_language[language] = sentences
        for language, sentence in self.others:
            by_language[language] = (*by_language.get(language, ()), sentence)
        return by_language


def _kind(name: str, group: str, make: Callable[[random.Random], str], label: str, label_zh: str,
          named_only: bool = False) -> Kind:  # fmt: skip
    """Sentences that name the value (`my {label} is ...`) and, unless the format is only
    recognisable when named, sentences that do not."""
    english = [f"My {label} is {{}}, can you check why it fails?",
               f"Here is the {label}: {{}}. Please keep it safe.",
               f"I set the {label} to {{}} yesterday."]  # fmt: skip
    chinese = [f"我的{label_zh}是{{}}，请帮我看看为什么不行。", f"{label_zh}：{{}}，请妥善保管。",
               f"昨天我把{label_zh}设置成了{{}}。"]  # fmt: skip
    if not named_only:
        english += ["Try {} and tell me if it works.", "Use this one: {}"]
        chinese += ["试试{}，能用吗？", "用这个{}就可以了"]
    return Kind(name, group, make, tuple(english), tuple(chinese))


KINDS: tuple[Kind, ...] = (
    _kind("openai_project_key", "api_token", openai_project, "OpenAI key", "OpenAI密钥"),
    _kind("openai_service_key", "api_token", openai_service, "service account key", "服务账号密钥"),
    _kind("anthropic_key", "api_token", anthropic, "Anthropic API key", "Anthropic 密钥"),
    _kind("sk_hex_key", "api_token", sk_hex, "DeepSeek API key", "DeepSeek的API密钥"),
    _kind("google_api_key", "cloud_key", google, "Google API key", "谷歌API密钥"),
    _kind("huggingface_token", "api_token", huggingface, "Hugging Face token", "Hugging Face令牌"),
    _kind("github_token", "api_token", github_classic, "GitHub token", "GitHub令牌"),
    _kind("github_fine_grained", "api_token", github_fine_grained, "GitHub PAT", "GitHub访问令牌"),
    _kind("gitlab_token", "api_token", gitlab, "GitLab token", "GitLab令牌"),
    _kind("aws_access_key_id", "cloud_key", aws_key_id, "AWS access key id", "AWS访问密钥ID"),
    _kind("aws_secret_in_prose", "cloud_key", aws_secret, "AWS secret", "AWS密钥", named_only=True),
    _kind(
        "azure_storage_key",
        "cloud_key",
        azure_storage,
        "storage account secret",
        "存储账户密钥",
        named_only=True,
    ),
    _kind("slack_token", "api_token", slack_token, "Slack bot token", "Slack机器人令牌"),
    _kind("slack_webhook", "api_token", slack_webhook, "Slack webhook", "Slack webhook地址"),
    _kind("stripe_key", "api_token", stripe, "Stripe key", "Stripe密钥"),
    _kind("sendgrid_key", "api_token", sendgrid, "SendGrid key", "SendGrid密钥"),
    _kind("npm_token", "api_token", npm, "npm token", "npm令牌"),
    _kind("telegram_bot_token", "api_token", telegram, "bot token", "机器人令牌"),
    _kind("groq_key", "api_token", groq, "Groq key", "Groq密钥"),
    _kind("replicate_token", "api_token", replicate, "Replicate token", "Replicate令牌"),
    _kind("wandb_key", "api_token", wandb, "wandb API key", "wandb API密钥", named_only=True),
    _kind("generic_api_key", "api_token", generic_key, "API key", "API密钥", named_only=True),
    _kind("short_named_key", "api_token", short_key, "API secret", "API密钥", named_only=True),
    _kind(
        "bearer_token",
        "api_token",
        lambda r: f"Bearer {bearer(r)}",
        "Authorization header",
        "请求头Authorization",
    ),
    _kind("jwt", "api_token", jwt, "session token", "会话令牌"),
    _kind("private_key", "private_key", rsa_key, "private key", "私钥"),
    _kind("password_in_prose", "password", password, "password", "密码", named_only=True),
    Kind(
        "password_other_languages",
        "password",
        password,
        (),
        (),
        (
            ("fr", "Mon mot de passe est {}, je ne peux plus me connecter."),
            ("de", "Das Passwort für das WLAN ist {}, bitte nicht weitergeben."),
            ("es", "Mi contraseña es {} y no funciona."),
            ("pt", "A senha do roteador é {}, pode verificar?"),
            ("it", "La password del server è {}, non funziona."),
            ("nl", "Het wachtwoord is {} maar ik kan niet inloggen."),
            ("ru", "Мой пароль: {}, помогите войти."),
            ("pl", "Moje hasło to {}, nie działa."),
            ("tr", "Şifrem {} ama giriş yapamıyorum."),
            ("sv", "Lösenordet är {} men det fungerar inte."),
            ("ja", "パスワードは{}です。ログインできません。"),
            ("ko", "제 비밀번호는 {} 입니다. 확인해 주세요."),
        ),
    ),
    Kind(
        "password_letters_after_a_label",
        "password",
        letters_password,
        (
            "Staging box login\nuser: admin\npassword: {}",
            "Wi-Fi network: CafeNet / password: {}",
            "Here are the credentials.\nPassword: {}",
        ),
        ("测试服务器\n账号：admin\n密码：{}", "无线网络：CafeNet，密码：{}"),
    ),
    Kind(
        "unlock_code",
        "password",
        unlock_code,
        (
            "My PIN is {}, why is the card rejected?",
            "Your verification code is {}. It expires in 5 minutes.",
            "The door code is {}#, see you inside.",
            "OTP: {} (do not share it)",
        ),
        ("您的验证码是{}，5分钟内有效。", "我的银行卡密码是{}，为什么总是错误？"),
    ),
    Kind(
        "command_line_password",
        "password",
        password,
        (
            "Connect with `mysql -u app -p{} prod` and run the migration.",
            "Try `curl -u deploy:{} https://ci.example.com/api/jobs` and paste the output.",
            "I log in with sshpass -p '{}' ssh deploy@10.0.0.5 every morning.",
        ),
        (
            "用 `mysql -u app -p{} prod` 连接数据库。",
            "执行 curl -u deploy:{} https://ci.example.com/api 看看返回什么。",
        ),
    ),
    Kind(
        "person_name",
        "personal",
        person_name,
        (
            "My name is {}, can you check my booking?",
            "Name: {}\nRoom: 204, two nights",
            "Dear {},\nyour order has shipped.",
            "Thanks for the help.\n\nBest regards,\n{}",
            "Please ask Dr. {} about the results.",
        ),
        (),
    ),
    Kind(
        "cn_person_name",
        "personal",
        cn_name,
        (),
        ("我叫{}，请帮我查一下订单。", "姓名：{}\n电话请看附件"),
    ),
    Kind(
        "login_payload",
        "password",
        password,
        (
            'The request body is {{"user": "ana", "pass": "{}"}} and it returns 401.',
            "My .env has SMTP_PASS={} and mail still fails.",
            "login({{'username': 'bob', 'pw': '{}'}}) raises an error",
        ),
        ('请求体是 {{"user": "ana", "pass": "{}"}}，返回401。',),
    ),
    Kind(
        "session_cookie",
        "password",
        lambda r: _mixed(r, ALNUM, r.randrange(14, 19)),
        (
            "Cookie: sessionid={}; theme=dark",
            "After login the server sets sid={} and then redirects.",
            "I copied session_id={} from the browser, is that safe?",
        ),
        ("登录后服务器返回 sessionid={}，然后跳转。",),
    ),
    _kind(
        "database_url_password",
        "password",
        lambda r: f"postgres://app:{password(r)}@db.internal:5432/prod",
        "database URL",
        "数据库连接",
    ),
    _kind(
        "redis_url_password",
        "password",
        lambda r: f"redis://:{password(r)}@cache.internal:6379/0",
        "Redis URL",
        "Redis地址",
    ),
    _kind("email", "personal", email, "e-mail", "邮箱"),
    Kind(
        "written_email",
        "personal",
        written_email,
        (
            "Write to {} if the form fails.",
            "Contact: {} (spelled out for the spam bots)",
            "You can reach me at {} after five.",
        ),
        ("请发邮件到{}联系我。", "联系方式：{}"),
    ),
    _kind("cn_mobile", "personal", cn_mobile, "phone number", "手机号"),
    _kind("cn_mobile_intl", "personal", cn_mobile_intl, "phone number", "手机号码"),
    _kind("us_phone", "personal", us_phone, "cell number", "美国电话"),
    _kind("uk_phone", "personal", uk_phone, "mobile", "英国电话"),
    _kind("other_intl_phone", "personal", other_intl_phone, "phone", "电话"),
    _kind("cn_resident_id", "personal", cn_id, "ID card number", "身份证号"),
    _kind("us_ssn", "personal", us_ssn, "SSN", "社会安全号"),
    _kind("uk_nino", "personal", uk_nino, "National Insurance number", "英国国民保险号"),
    _kind("aadhaar", "personal", aadhaar, "Aadhaar", "Aadhaar号码"),
    _kind("aadhaar_bare", "personal", aadhaar_bare, "Aadhaar number", "Aadhaar号", named_only=True),
    _kind("br_cpf", "personal", br_cpf, "CPF", "巴西CPF"),
    _kind("in_pan", "personal", in_pan, "PAN", "PAN号码"),
    _kind("card", "personal", card, "card number", "银行卡号"),
    _kind("iban", "personal", iban_number, "IBAN", "IBAN账号"),
    _kind("ipv4", "personal", ipv4, "server IP", "服务器IP"),
    _kind("ipv6", "personal", ipv6, "IPv6 address", "IPv6地址"),
    _kind("passport", "personal", cn_passport, "passport number", "护照号码", named_only=True),
    _kind("ca_sin", "personal", ca_sin, "SIN", "加拿大SIN", named_only=True),
    _kind("nl_bsn", "personal", nl_bsn, "BSN", "荷兰BSN号", named_only=True),
    _kind("pl_pesel", "personal", pl_pesel, "PESEL", "波兰PESEL号", named_only=True),
    _kind("es_dni", "personal", es_dni, "DNI", "西班牙DNI", named_only=True),
    _kind("au_tfn", "personal", au_tfn, "tax file number", "澳洲TFN", named_only=True),
    Kind(
        "birth_date",
        "personal",
        birth_date,
        (
            "Patient DOB: {}, allergic to penicillin.",
            "My date of birth is {} if you need it.",
            "I was born on {} in Leeds.",
        ),
        ("出生日期：{}，请核对。", "我的生日是{}。"),
        (
            ("de", "Geburtsdatum: {}"),
            ("fr", "Date de naissance : {}"),
            ("es", "Fecha de nacimiento: {}"),
        ),
    ),
    Kind(
        "account_number",
        "personal",
        account_number,
        (
            "My account number is {}, please wire it there.",
            "Bank account: {} (checking)",
            "Pay into acct {} by Friday.",
        ),
        ("我的银行账号是{}，请转账。", "收款账户：{}"),
        (("de", "Kontonummer: {}"), ("es", "Mi número de cuenta es {}")),
    ),
    Kind(
        "record_number",
        "personal",
        record_number,
        (
            "Driver's license: {}",
            "Name: Jo Smith, DL: {}, expires 2027.",
            "MRN {} was admitted overnight.",
            "My member ID is {}.",
            "The policy number is {} for the claim.",
        ),
        ("驾驶证号：{}", "病历号{}的病人已出院。"),
        (("de", "Führerscheinnummer: {}"),),
    ),
    _kind("mac_address", "personal", mac_address, "MAC address", "MAC地址"),
    Kind(
        "seed_phrase",
        "private_key",
        seed_phrase,
        (
            "My seed phrase is {}, is my wallet safe?",
            "Recovery phrase:\n{}",
            "Here is the mnemonic: {}. Please keep it safe.",
        ),
        ("我的钱包助记词是{}，请帮我看看。", "助记词：{}"),
    ),
    Kind(
        "messenger_id",
        "personal",
        messenger_id,
        (
            "Add me on WeChat, my WeChat ID is {}.",
            "Telegram: {} (I reply faster there)",
            "My KakaoTalk ID is {}, message me there.",
        ),
        ("我的微信号是{}，加我一下。", "微信：{}"),
    ),
    Kind(
        "username",
        "personal",
        username,
        (
            "My username is {}, can you reset my password?",
            "Username: {} (the password is in the vault)",
            "login: {}",
            "The login for the staff portal is {} if you need to check my account.",
        ),
        ("我的用户名是{}，帮我看看为什么登录不了。", "用户名：{}，密码忘了。"),
        (
            ("es", "Mi usuario es {}"),
            ("de", "Benutzername: {}"),
            ("fr", "identifiant : {}"),
            ("ko", "아이디: {}"),
        ),
    ),
    Kind(
        "licence_plate",
        "personal",
        licence_plate,
        ("My licence plate is {}, can you check the fine?", "License plate number: {}"),
        ("我的车牌号是{}，帮我查一下违章。", "车牌：{}"),
        (("de", "Mein Kennzeichen ist {}."),),
    ),
    Kind(
        "qq_number",
        "personal",
        qq_number,
        ("My QQ number is {}, message me there.", "QQ: {}"),
        ("我的QQ号是{}，有事联系。", "QQ号：{}，加我。"),
    ),
    Kind(
        "street_address",
        "personal",
        street_address,
        (
            "Please ship it to {} by Friday.",
            "I live at {} and the package never came.",
            "Our office moved to {}.",
        ),
        ("我的地址是{}，请寄到这里。", "收货地址：{}"),
    ),
)
SECRET_GROUPS = ("private_key", "cloud_key", "api_token")  # none of these may be missed

QUESTIONS = ("Why does my deploy fail?", "Can you fix this config?", "帮我看看这个配置哪里错了？",
             "请把下面的信息整理成表格。")  # fmt: skip
ANSWERS = ("Sure, here is the corrected version.", "好的，我来帮你检查一下。",
           "The problem is the missing newline at the end of the file.")  # fmt: skip


def planted(seed: int = 0, per_kind: int = 40) -> list[dict]:
    """Records with one planted value each: `value` must not survive in `prompt` or `response`."""
    rng, records = random.Random(seed), []
    for kind in KINDS:
        sentences = kind.sentences()
        languages = list(sentences)
        for i in range(per_kind):
            value = kind.make(rng)
            language = languages[i % len(languages)]
            template = rng.choice(sentences[language])
            sentence = template.format(value)
            where = "prompt" if (i // 2) % 2 == 0 else "response"
            other = rng.choice(ANSWERS if where == "prompt" else QUESTIONS)
            prompt, response = (sentence, other) if where == "prompt" else (other, sentence)
            records.append({"kind": kind.name, "group": kind.group, "language": language,
                            "where": where, "value": value, "prompt": prompt,
                            "response": response})  # fmt: skip
    return records


# --- benign texts ---------------------------------------------------------------------------------


def _code_with_hashes(rng: random.Random) -> str:
    data = rng.randbytes(16)
    return rng.choice([
        f"```bash\n$ sha256sum model.safetensors\n{hashlib.sha256(data).hexdigest()}  model.safetensors\n```",
        f"Check out the fix with `git checkout {hashlib.sha1(data).hexdigest()}` and rebuild.",
        f"The commit {hashlib.sha1(data).hexdigest()[:12]} introduced the regression.",
        f'```python\nEXPECTED_MD5 = "{hashlib.md5(data).hexdigest()}"\nassert md5(path) == EXPECTED_MD5\n```',
        f"```json\n{{\"id\": \"{uuid.UUID(bytes=data)}\", \"status\": \"ok\"}}\n```",
        f"Request {uuid.UUID(bytes=data)} failed with 502; trace id {data.hex()}.",
        f"```yaml\nimage: ghcr.io/org/app@sha256:{hashlib.sha256(data).hexdigest()}\n```",
    ])  # fmt: skip


def _code_with_base64(rng: random.Random) -> str:
    sentence = rng.choice(
        [
            "Hello, World!",
            '{"user": "demo", "role": "viewer"}',
            "The quick brown fox jumps over the lazy dog",
            "lowtide review config v2",
        ]
    )
    encoded = base64.b64encode(sentence.encode()).decode()
    image = base64.b64encode(b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.randrange(60, 200))).decode()
    return rng.choice([
        f'```python\nimport base64\nprint(base64.b64decode("{encoded}").decode())\n```\nThis prints `{sentence}`.',
        f'<img src="data:image/png;base64,{image}" alt="logo">',
        f"```css\n.icon {{ background: url(data:image/png;base64,{image}); }}\n```",
        f"echo {encoded} | base64 -d",
    ])  # fmt: skip


def _code_with_identifiers(rng: random.Random) -> str:
    return rng.choice([
        "```python\nclass UserAccountSettingsRepository2:\n    def getUserAccountSettingsById(self, id): ...\n```",
        "Edit src/components/UserProfileCardV2.tsx and then run npm run build:production.",
        "The method AbstractSingletonProxyFactoryBean.getObjectType() returns null here.",
        "Install torch==2.13.0+cpu and transformers==5.2.1, then set CUDA_VISIBLE_DEVICES=0,1.",
        "See https://github.com/huggingface/transformers/blob/main/src/transformers/modeling_utils.py#L1024",
        "Use the model Qwen/Qwen2.5-7B-Instruct with max_new_tokens=512 and top_p=0.95.",
        "The bucket s3://ml-datasets-prod/rlhf/2024-05-01/shard-00042-of-00128.parquet is missing.",
        "Set `export PYTHONPATH=$HOME/projects/lowtide:$PYTHONPATH` in your shell profile.",
        "The video id is dQw4w9WgXcQ and the playlist is PLFgquLnL59alCl_2TQvOiD5Vgm1hCaGSI.",
    ])  # fmt: skip


def _arithmetic(rng: random.Random) -> str:
    a, b = rng.randrange(10**5, 10**9), rng.randrange(10**5, 10**9)
    big = rng.randrange(10**12, 10**18)
    return rng.choice([
        f"{a} × {b} = {a * b}",
        f"The sum of {a} and {b} is {a + b}.",
        f"{big} is divisible by {rng.randrange(3, 97)} with remainder {big % 7}.",
        f"The population grew from {a:,} to {b:,} between 1990 and 2020.",
        f"Order #{rng.randrange(10**7, 10**9)} shipped on 2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d} for ${rng.randrange(10, 9999)}.{rng.randrange(100):02d}.",
        f"计算结果：{a} + {b} = {a + b}，误差小于0.{rng.randrange(10**5):05d}。",
        f"Timestamp {rng.randrange(1_600_000_000, 1_800_000_000)} is in seconds; {rng.randrange(1_600_000_000_000, 1_800_000_000_000)} in ms.",
        f"2^{rng.randrange(30, 60)} = {2 ** rng.randrange(30, 60)}",
        f"版本 {rng.randrange(1, 9)}.{rng.randrange(20)}.{rng.randrange(100)} 于 2024年{rng.randrange(1, 13)}月{rng.randrange(1, 29)}日发布，共修复 {rng.randrange(10, 500)} 个问题。",
    ])  # fmt: skip


def _about_passwords_and_codes(rng: random.Random) -> str:
    """Texts that talk about passwords, PINs and codes without giving one."""
    n = rng.randrange(8, 17)
    return rng.choice([
        f"The password is incorrect. Passwords must be at least {n} characters and are case-sensitive.",
        "Your password is stored hashed with bcrypt; the password reset link expires in 3600 seconds.",
        "Run `mysql -u root -p mydb` and type the password when it asks for it.",
        f"Connect the LED to pin {rng.randrange(2, 14)} and the button to pin {rng.randrange(2, 14)}, then set GPIO pin {rng.randrange(2, 28)} high.",
        f"Error code {rng.randrange(1000, 9999)} means the disk is full; HTTP status code 503 means try later.",
        "The verification code expires after 300 seconds, and a new code is sent on request.",
        f"Set the PIN length to {rng.choice([4, 6])} digits and the OTP window to 30 seconds in settings.yaml.",
        "Das Passwort ist falsch. Bitte versuchen Sie es erneut.",
        "Le mot de passe est trop court : il faut au moins 12 caractères.",
        "密码错误，请重新输入。验证码已发送到您的手机，有效期5分钟。",
        f"```python\nclass Login(BaseModel):\n    user: str\n    password: str\n    otp_digits: int = {rng.choice([6, 8])}\n```",
        '```python\npassword = os.environ["DB_PASSWORD"]\napi_key = os.getenv("OPENAI_API_KEY")\nconn = connect(host=host, password=password)\n```',
        "```python\nparser.add_argument('--token')\ntoken = args.token or getpass.getpass('token: ')\nif token == expected: ...\n```",
    ])  # fmt: skip


def _dates_and_places(rng: random.Random) -> str:
    """Dates, amounts, numbers and streets that belong to nobody."""
    year, month, day = date_parts(rng, 2000, 2030)
    return rng.choice([
        f"The meeting is on {month:02d}/{day:02d}/{year} at 10:00 in room {rng.randrange(100, 999)}.",
        f"Version 2.{rng.randrange(20)} was released on {_MONTH_NAMES[month - 1]} {day}, {year}.",
        f"The account was created in {year}; the balance is ${rng.randrange(1000, 99999)}.{rng.randrange(100):02d}.",
        f"Walk {rng.randrange(2, 9)} blocks down Main Street and turn left at the {rng.randrange(2, 9)}th light.",
        f"Chapter {rng.randrange(2, 20)}: why the road to {year} was paved with good intentions.",
        "Born in 1985, she studied in Leeds and moved to Paris; her birthday is in March.",
        f"Take line {rng.randrange(1, 12)} to the station; {rng.randrange(1, 12)}号线在早高峰很挤。",
        f"```python\nstudent_id = {rng.randrange(10000, 99999)}\nbirth_year = {year}\n```",
        f"Section {rng.randrange(2, 9)} Road Safety Rules apply to all {rng.randrange(2, 9)} lanes.",
    ])  # fmt: skip


CHINESE_PROSE = (
    "潮水退去以后，港口变成了一片泥滩，孩子们穿着大两号的雨靴在石头下面找螃蟹。",
    "做面包主要靠水和耐心：五百克高筋面粉，三百五十毫升温水，十克盐和七克酵母。",
    "强化学习的奖励模型可能会被策略利用，所以需要定期抽查高奖励的样本。",
    "这份报告总结了第三季度的销售情况，同比增长百分之十二点五，环比持平。",
    "请在周五之前提交代码审查，并在合并之前确认所有测试都已通过。",
    "他每天早上六点起床，先跑步五公里，然后在七点半之前到达办公室。",
)


def benign(seed: int = 0, count: int = 3000) -> list[str]:
    rng = random.Random(seed)
    prose = [p.strip() for p in (HERE / "prose.txt").read_text().split("\n\n") if p.strip()]
    import yaml

    quickstart = yaml.safe_load((REPO / "configs" / "prompts" / "quickstart.yaml").read_text())
    makers = [
        _code_with_hashes, _code_with_base64, _code_with_identifiers, _arithmetic,
        lambda r: r.choice(prose), lambda r: "".join(r.sample(CHINESE_PROSE, 3)),
        lambda r: str(r.choice(quickstart["prompts"])), _about_passwords_and_codes,
        _dates_and_places,
    ]  # fmt: skip
    return [makers[i % len(makers)](rng) for i in range(count)]


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print("usage: corpus.py OUT_DIR [SEED]", file=sys.stderr)
        return 2
    out, seed = Path(argv[0]), int(argv[1]) if len(argv) > 1 else 0
    out.mkdir(parents=True, exist_ok=True)
    with (out / "planted.jsonl").open("w", encoding="utf-8") as file:
        for record in planted(seed):
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
    with (out / "benign.jsonl").open("w", encoding="utf-8") as file:
        for text in benign(seed):
            file.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
    print(f"wrote {out / 'planted.jsonl'} and {out / 'benign.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
