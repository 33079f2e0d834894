"""Phone numbers read with Google's libphonenumber data (`phonenumbers`): a number with `+` is
read as international; one without is read as a national number of each region in
`sampling.redact.phone_regions`, in order, and is a phone number when one of them has it."""

from __future__ import annotations

import re
from collections.abc import Sequence

import phonenumbers
from phonenumbers import CountryCodeSource, NumberParseException, PhoneNumberType

from sampling.redaction.context import NamedBefore
from sampling.redaction.kinds import DEFAULT_PHONE_REGIONS

DEFAULT_REGIONS = DEFAULT_PHONE_REGIONS
_NATIONAL = CountryCodeSource.FROM_DEFAULT_COUNTRY
# Words that name a phone, by language: after one of them (and a few words such as "is" or
# "number"), a run of digits written as people write phone numbers is one, whichever country's
# it is. Only words that name a phone or a call: "number" or "Nummer" alone names as many
# orders and rooms.
PHONE_WORDS = {
    "en": ("phone", "phones", "telephone", "tel", "tel no", "mobile", "mobile no", "cell",
           "cellphone", "cell phone", "fax", "call me", "call us", "text me", "whatsapp", "wa"),
    "es": ("teléfono", "telefono", "tfno", "tlf", "telf", "móvil", "movil", "celular", "cel",
           "llámame",
           "llamame", "llámanos"),
    "pt": ("telefone", "celular", "telemóvel", "telemovel", "tlm", "ligue", "liga-me", "me liga",
           "ligar", "ligue-me"),
    "de": ("telefon", "telefonnummer", "tel.-nr", "handy", "handynummer", "mobil", "mobilnummer",
           "mobiltelefon", "rufnummer", "festnetz", "ruf mich an unter", "ruf an unter"),
    "fr": ("téléphone", "telephone", "tél", "portable", "mobile", "appelez", "appelle-moi"),
    "it": ("telefono", "cellulare", "cell", "chiamami", "chiamare"),
    "nl": ("telefoon", "telefoonnummer", "mobiel", "mobiele nummer", "bel me", "bel mij"),
    "pl": ("telefon", "telefonu", "tel", "tel. kom", "komórka", "komórki", "komórkowy", "zadzwoń",
           "zadzwon"),
    "nordic": ("telefon", "telefonnummer", "mobil", "mobilnummer", "tlf", "tfn", "puhelin",
               "puh", "puhelinnumero"),
    "tr": ("telefon", "telefonu", "cep", "cep no", "gsm"),
    "cs": ("telefon", "mobil", "telefonní", "mobilní"),
    "hu": ("telefon", "telefonszám", "mobil"),
    "id": ("telepon", "telp", "tlp", "no hp", "nomor hp", "no. hp", "hubungi"),
    "el": ("τηλέφωνο", "τηλέφωνό", "τηλ", "κινητό"),
    "ru": ("телефон", "тел", "мобильный", "мобильного", "моб", "сотовый", "звоните",
           "позвоните", "позвони", "мобільний"),
    "ar": ("هاتف", "جوال", "موبايل", "تلفون", "اتصل", "الهاتف"),
    "he": ("טלפון", "נייד", "פלאפון", "התקשר"),
    "fa": ("تلفن", "موبایل"),
    "hi": ("फ़ोन", "फोन", "मोबाइल", "फ़ोन नंबर"),
    "vi": ("điện thoại", "sđt", "sdt"),
    "th": ("โทรศัพท์", "เบอร์โทร", "โทร"),
    "zh": ("电话", "手机", "手机号", "座机", "電話", "手機", "致电", "联系电话"),
    "ja": ("電話", "携帯", "電話番号", "携帯番号"),
    "ko": ("전화", "전화번호", "휴대폰", "핸드폰", "휴대전화"),
}  # fmt: skip
# What may stand between such a word and the number: punctuation, and words that say the
# number follows ("is", "number", "my", "at", "es", "é", "ist", "est", "номер", "是", "は").
_BETWEEN_WORDS = (
    "is", "are", "was", "number", "numbers", "no", "nr", "num", "at", "on", "my", "me", "our",
    "ist", "lautet", "nummer", "unter", "mein", "meine", "est", "au", "numéro", "de", "mon",
    "ma", "es", "é", "número", "numero", "nº", "al", "ao", "para", "mi", "meu", "minha", "do",
    "contacto", "contato", "contact",
    "da", "em", "en", "è", "il", "mio", "op", "mijn", "to", "pod", "numer", "mój", "moj", "är",
    "er", "je", "číslo", "szám", "száma", "numarası", "numaram", "nomor", "adalah", "saya", "di",
    "ke", "είναι", "μου", "αριθμός", "номер", "это", "по", "мой", "رقم", "هو", "מספר", "שלי",
    "הוא", "नंबर", "है", "मेरा", "số", "là", "của", "tôi", "คือ",
)  # fmt: skip
_LETTER = r"[^\W\d_]"
_PUNCTUATION = r"[^\S\n]|[:：.=#№()\-—–,，]"
_CONNECTIVE = "|".join(sorted(_BETWEEN_WORDS, key=len, reverse=True))
# Words of scripts without spaces between words ("号码", "番号", "번호") need no boundary.
_BETWEEN = (
    rf"(?:{_PUNCTUATION}|(?<!{_LETTER})(?:{_CONNECTIVE})(?!{_LETTER})"
    r"|号码|号碼|号|號|是|为|為|番号|は|：|번호|는|은|이|가|เบอร์|หา|ผม|ฉัน|ได้|ที่|ของ){0,12}"
)


def _said(words: list[str]) -> str:
    """The phone words as one regex: whole where their script spaces its words (`tel` is not
    in `hotel`, `móvil` not in `automóvil`), with the endings of words that change theirs
    (`телефона`, `هاتفي`). Words of one kind share their boundaries, so that most places fail
    on one test rather than on each word's."""
    kinds: dict[str, list[str]] = {"ascii": [], "spaced": [], "semitic": [], "other": []}
    for word in sorted(words, key=len, reverse=True):
        if word.isascii():
            kind = "ascii"
        elif word[0] < "\u0530":  # Latin, Greek and Cyrillic
            kind = "spaced"
        elif "\u0590" <= word[0] < "\u0700":  # Hebrew and Arabic
            kind = "semitic"
        else:
            kind = "other"
        kinds[kind].append(re.escape(word))
    ascii_words, spaced, semitic, other = ("|".join(group) for group in kinds.values())
    return (
        rf"(?<![a-z])(?:{ascii_words})(?![a-z])"
        rf"|(?<!{_LETTER})(?:{spaced}){_LETTER}{{0,3}}(?!{_LETTER})"
        rf"|(?:{semitic})[\u0590-\u06ff]{{0,2}}"  # a pronoun's ending (هاتفي)
        rf"|{other}"
    )


_ALL_PHONE_WORDS = tuple(dict.fromkeys(word for words in PHONE_WORDS.values() for word in words))
# A phone word, then at most a few words and punctuation, right before a position.
PHONE_SAID = NamedBefore(
    (_said(list(_ALL_PHONE_WORDS)),),
    gap=24,
    between=_BETWEEN,
    longest=max(map(len, _ALL_PHONE_WORDS)) + 3,  # and an ending
)
# A phone word anywhere on the line shortly before: what makes a number named as an order's or
# an invoice's a phone all the same ("order hotline phone: ..."); "number" alone does not.
PHONE_WORD_NEAR = NamedBefore(tuple(map(re.escape, _ALL_PHONE_WORDS)), gap=20)
# Words that say a bare run of digits is a phone number ("call 4155550134", "电话4155550134"):
# a valid number of one of the regions after one of them is one.
PHONE_NAMED = NamedBefore(
    (*map(re.escape, _ALL_PHONE_WORDS), "call", "mob", "sms", "wechat", "contact", "reach me",
     "dial", "ring", "number", r"no\.", "numéro", "号码", "联系", "热线", "微信", "电話"),
    gap=20,
)  # fmt: skip


class PhoneReader:
    def __init__(self, regions: Sequence[str] = DEFAULT_REGIONS) -> None:
        self.regions = tuple(regions)

    def international(self, candidate: str) -> bool:
        """`+CC ...`: a length some country's numbers have."""
        number = _parse(candidate, None)
        return number is not None and phonenumbers.is_possible_number(number)

    def national(self, candidate: str, *, grouped: bool, before: str) -> bool:
        """A number without `+`: written in groups, a valid number of one of the regions; a bare
        run of digits, a valid mobile number there (an 11-digit Chinese mobile, a UK 07...), or
        any valid number after a word that names a phone ("call", "电话")."""
        named = PHONE_NAMED.ends(before)
        for region in self.regions:
            number = _parse(candidate, region, keep_raw_input=True)
            # Read as the region's own number: libphonenumber also takes leading digits that
            # match a country code (447220624872 as +44), which a number without `+` is not.
            if number is None or number.country_code_source != _NATIONAL:
                continue
            if not phonenumbers.is_valid_number(number):
                continue
            if not (named or _as_written_there(number, candidate, region)):
                continue
            if grouped or named or phonenumbers.number_type(number) == PhoneNumberType.MOBILE:
                return True
        return False


def _as_written_there(number: phonenumbers.PhoneNumber, candidate: str, region: str) -> bool:
    """The digits are the number as its country writes it at home: its national format's, or
    its trunk prefix and the number (US 1-415-...). libphonenumber also reads a number without
    its trunk prefix (7700 900123 as the UK's 07700 900123), which no one there writes: an
    order number or an id, not a phone."""
    digits = "".join(char for char in candidate if char.isdigit())
    national = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)
    if digits == "".join(char for char in national if char.isdigit()):
        return True
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    prefix = metadata.national_prefix if metadata is not None else None
    return bool(prefix) and digits == f"{prefix}{phonenumbers.national_significant_number(number)}"


def _parse(
    candidate: str, region: str | None, keep_raw_input: bool = False
) -> phonenumbers.PhoneNumber | None:
    try:
        return phonenumbers.parse(candidate, region, keep_raw_input=keep_raw_input)
    except NumberParseException:
        return None


def supported_region(code: str) -> bool:
    return code in phonenumbers.SUPPORTED_REGIONS
