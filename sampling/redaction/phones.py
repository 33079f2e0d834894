"""Phone numbers read with Google's libphonenumber data (`phonenumbers`): a number with `+` is
read as international; one without is read as a national number of each region in
`sampling.redact.phone_regions`, in order, and is a phone number when one of them has it. A
number none of them has may be one of the text's own country, read from the text itself
(`regions_of_text`: its script, its language, a country named in it)."""

from __future__ import annotations

import bisect
import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence

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
           "cellphone", "cell phone", "fax", "call me", "call us", "text me", "whatsapp", "wa",
           "ring me"),
    "es": ("teléfono", "telefono", "tfno", "tlf", "telf", "móvil", "movil", "celular", "cel",
           "llámame", "llamame", "llámanos", "llámeme", "llamo al", "llama al", "llamar al",
           "márcame", "marcar al", "marca al"),
    "pt": ("telefone", "celular", "telemóvel", "telemovel", "tlm", "ligue", "liga-me", "me liga",
           "ligar", "ligue-me", "liga pra", "liga para", "wpp"),
    "de": ("telefon", "telefonnummer", "tel.-nr", "handy", "handynummer", "mobil", "mobilnummer",
           "mobiltelefon", "rufnummer", "festnetz", "ruf mich an unter", "ruf an unter",
           "erreichbar unter"),
    "fr": ("téléphone", "telephone", "tél", "portable", "mobile", "appelez", "appelle-moi",
           "appeler", "joignable au", "joindre au"),
    "it": ("telefono", "cellulare", "cell", "chiamami", "chiamare"),
    "nl": ("telefoon", "telefoonnummer", "mobiel", "mobiele nummer", "bel me", "bel mij", "bellen",
           "bereikbaar op"),
    "pl": ("telefon", "telefonu", "tel", "tel. kom", "komórka", "komórki", "komórkowy", "zadzwoń",
           "dzwoń", "dzwonić",
           "zadzwon"),
    "nordic": ("telefon", "telefonnummer", "mobil", "mobilnummer", "tlf", "tfn", "puhelin",
               "puh", "puhelinnumero"),
    "tr": ("telefon", "telefonu", "cep", "cep no", "gsm", "arayın", "arayabilirsiniz"),
    "cs": ("telefon", "mobil", "telefonní", "mobilní"),
    "hu": ("telefon", "telefonszám", "mobil"),
    "id": ("telepon", "telp", "tlp", "no hp", "nomor hp", "no. hp", "hubungi", "dihubungi",
           "telpon", "nelpon", "no wa", "nomor wa"),
    "el": ("τηλέφωνο", "τηλέφωνό", "τηλ", "κινητό"),
    "ru": ("телефон", "тел", "мобильный", "мобильного", "моб", "сотовый", "звоните",
           "позвоните", "позвони", "мобільний", "дзвоніть", "телефонуйте"),
    "ar": ("هاتف", "جوال", "موبايل", "تلفون", "اتصل", "الهاتف", "واتساب", "واتس", "للتواصل"),
    "he": ("טלפון", "נייד", "פלאפון", "התקשר"),
    "fa": ("تلفن", "موبایل"),
    "hi": ("फ़ोन", "फोन", "मोबाइल", "फ़ोन नंबर", "कॉल", "व्हाट्सएप", "phone pe", "call karo",
           "call kar"),
    "vi": ("điện thoại", "sđt", "sdt", "gọi cho", "gọi số", "zalo"),
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
    "contacto", "contato", "contact", "contatto", "kontakt", "kontaktowy", "kontaktní",
    "iletişim", "контактный", "контактний",
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


# Words after a number that say it is called or messaged (`0176 23498817 anrufen`, `96500 71842
# पर कॉल करें`, `9810447263 pe call karo`), besides the phone words themselves.
_CALLED_AFTER_WORDS = (
    "anrufen", "call", "ring", "llámame", "llamar", "ligar", "liga", "ligue", "chiamami",
    "chiamare", "appeler", "appelle", "bellen", "zadzwoń", "arayın", "hubungi", "gọi",
    "звоните", "позвоните", "звонить", "اتصل", "اتصلوا", "התקשרו", "पर कॉल", "पर फोन",
    "पर फ़ोन", "电话", "に電話", "로 전화", "โทร",
)  # fmt: skip
_CALLED_AFTER = re.compile(
    rf"[^\n]{{0,12}}?(?:{_said([*_ALL_PHONE_WORDS, *_CALLED_AFTER_WORDS])})", re.IGNORECASE
)
# A number written as a count's or an amount's thousands (`612 489 307 visitas`, `612.489.307`,
# `1,234,567`): read as a phone of the text's country only where a phone is named.
_THOUSANDS = re.compile(r"\d{1,3}(?:([ .,])\d{3})(?:\1\d{3})+")
_MOBILE_TYPES = (PhoneNumberType.MOBILE, PhoneNumberType.FIXED_LINE_OR_MOBILE)

# The ranges regulators keep for drama and examples, no one's line: what test data and
# documentation are written with. libphonenumber calls some of them invalid (the UK's 07700
# 900xxx, 01632 960xxx) and reads Australia's only with AU among the regions. Over the national
# digits, from the trunk prefix; a mobile's range, and a landline's (or a free call's).
_FICTIONAL_MOBILE = re.compile(
    r"07700900\d{3}"  # Ofcom
    r"|049157\d{4}"  # ACMA: 0491 570 000 to 0491 579 999
)
_FICTIONAL_LINE = re.compile(
    r"01632960\d{3}|02079460\d{3}|01(?:1[3-8]|[2-6]1)4960\d{3}|01914980\d{3}|02896496\d{3}"
    r"|02920180\d{3}|08081570\d{3}|09098790\d{3}|03069990\d{3}"  # Ofcom
    r"|0[2378](?:5550|7010)\d{4}|1[38]0097570[7-9]|1[38]009757(?:10|11)|1800160401"
    r"|1900654321"  # ACMA
)
# The same written after the country's code as a call from abroad dials it (`0044 7700 ...`).
_ABROAD = {"0044": "0", "0061": "0"}


def fictional(digits: str) -> str | None:
    """ "mobile" or "line" for a number in a range kept for fiction and examples (the digits
    as written at home, or after `00` and the country's code), None for any other."""
    abroad = _ABROAD.get(digits[:4])
    if abroad is not None:
        digits = abroad + digits[4:]
    if _FICTIONAL_MOBILE.fullmatch(digits):
        return "mobile"
    return "line" if _FICTIONAL_LINE.fullmatch(digits) else None


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
        any valid number after a word that names a phone ("call", "电话"). A number of a range
        kept for fiction (07700 900123) reads as valid."""
        named = PHONE_NAMED.ends(before)
        kind = fictional("".join(char for char in candidate if char.isdigit()))
        if kind is not None:
            return grouped or named or kind == "mobile"
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

    @staticmethod
    def of_the_text(candidate: str, regions: Iterable[str], *, grouped: bool, named: bool) -> bool:
        """A number of one of `regions`, read from the text itself rather than configured: valid
        there and written as that country writes it, and named as a phone (`named`) or a mobile
        number written in groups (not as an amount's thousands)."""
        if not named and (not grouped or _THOUSANDS.fullmatch(candidate.strip("()"))):
            return False
        digits = "".join(char for char in candidate if char.isdigit())
        for region in regions:
            if not _may_be_of(digits, region):
                continue  # a regex, where a parse costs ten of them
            number = _parse(candidate, region, keep_raw_input=True)
            if number is None or number.country_code_source != _NATIONAL:
                continue
            if not phonenumbers.is_valid_number(number):
                continue
            if not _as_written_there(number, candidate, region, prefix_optional=True):
                continue
            if named or phonenumbers.number_type(number) in _MOBILE_TYPES:
                return True
        return False


@functools.cache
def _numbers_of(region: str) -> tuple[str, re.Pattern[str] | None]:
    """The region's trunk prefix and the pattern of all its national numbers."""
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    if metadata is None or metadata.general_desc is None:
        return "", None
    pattern = metadata.general_desc.national_number_pattern
    return metadata.national_prefix or "", re.compile(pattern) if pattern else None


def _may_be_of(digits: str, region: str) -> bool:
    """The digits, with or without the region's trunk prefix, have the shape of its numbers."""
    prefix, pattern = _numbers_of(region)
    if pattern is None:
        return True
    if prefix and digits.startswith(prefix) and pattern.fullmatch(digits, len(prefix)):
        return True
    return pattern.fullmatch(digits) is not None


def called_after(text: str, end: int) -> bool:
    """A phone word or a verb of calling follows the number that ends at `end`, on its line."""
    return _CALLED_AFTER.match(text, end, end + 40) is not None


def _as_written_there(
    number: phonenumbers.PhoneNumber, candidate: str, region: str, prefix_optional: bool = False
) -> bool:
    """The digits are the number as its country writes it at home: its national format's, or
    its trunk prefix and the number (US 1-415-...). libphonenumber also reads a number without
    its trunk prefix (7700 900123 as the UK's 07700 900123), which no one there writes: an
    order number or an id, not a phone. With `prefix_optional`, also without the prefix where
    the country's own format leaves it out (India's and Russia's mobiles: 98104 47263)."""
    digits = "".join(char for char in candidate if char.isdigit())
    national = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)
    if digits == "".join(char for char in national if char.isdigit()):
        return True
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    prefix = metadata.national_prefix if metadata is not None else None
    significant = phonenumbers.national_significant_number(number)
    if bool(prefix) and digits == f"{prefix}{significant}":
        return True
    return prefix_optional and digits == significant and _prefix_left_out(metadata, significant)


def _prefix_left_out(metadata: phonenumbers.PhoneMetadata, significant: str) -> bool:
    """The country's format for this number says its trunk prefix may be left out."""
    for form in metadata.number_format:
        leading = form.leading_digits_pattern
        if leading and re.match(leading[-1], significant) is None:
            continue
        if re.fullmatch(form.pattern, significant):
            return bool(form.national_prefix_optional_when_formatting)
    return False


def _parse(
    candidate: str, region: str | None, keep_raw_input: bool = False
) -> phonenumbers.PhoneNumber | None:
    try:
        return phonenumbers.parse(candidate, region, keep_raw_input=keep_raw_input)
    except NumberParseException:
        return None


def supported_region(code: str) -> bool:
    return code in phonenumbers.SUPPORTED_REGIONS


# What tells the country of a text's own numbers, read only for a number no configured region
# has (`regions_of_text`). The scripts of one country or a few (the first code point of each
# block, its regions; Latin, Han and the rest: None).
_SCRIPTS = (
    (0x0370, ("GR", "CY")), (0x0400, ("RU", "UA", "BY", "KZ")), (0x0530, ("AM",)),
    (0x0590, ("IL",)), (0x0600, ("SA", "AE", "EG", "JO", "KW", "QA", "MA")), (0x0700, None),
    (0x0900, ("IN", "NP")), (0x0980, ("BD", "IN")), (0x0A00, ("IN",)), (0x0D80, ("LK",)),
    (0x0E00, ("TH",)), (0x0E80, None), (0x1000, ("MM",)), (0x10A0, ("GE",)), (0x1100, ("KR",)),
    (0x1200, ("ET",)), (0x1380, None), (0x1780, ("KH",)), (0x1800, None), (0x3040, ("JP",)),
    (0x3100, None), (0x3130, ("KR",)), (0x3190, None), (0xAC00, ("KR",)), (0xD7B0, None),
)  # fmt: skip
_SCRIPT_STARTS = [start for start, _ in _SCRIPTS]
# Letters of one country's variant of a shared script, which put it first.
_LETTERS_OF = {"UA": "іїєґ", "BY": "ў", "KZ": "әғқңөұүһ", "IR": "پچژگ", "PK": "ٹڈڑںےھ"}
# Latin-script languages by a handful of their commonest words and their own letters, and the
# countries that speak them. Words shared by several count for each a share; words of English
# and of code (`no`, `do`, `per`, `con`, `mit`, `min`, `van`, `pod`) are none of them, English
# texts being the configured regions'.
_LANGUAGES = {
    "es": (("ES", "MX", "AR", "CO", "CL", "PE"),
           "el los las que y del por para una pero muy está estoy gracias hola llamo mañana "
           "también favor puedes dónde cuando tengo mi tu su al es en un se lo como más de la "
           "usted teléfono móvil celular llamar", "ñ¿¡"),
    "pt": (("BR", "PT"),
           "não você com uma para mas muito obrigado obrigada olá oi meu minha é da ao depois "
           "na pra seu sua também está amanhã aqui isso de se ele ela linha contato telefone "
           "celular ligar", "ãõ"),
    "it": (("IT",), "il che sono è della grazie ciao mio mia anche domani lo gli dei sei di un "
           "al la se", ""),
    "fr": (("FR", "BE", "CH", "CA"),
           "le les des est je vous pas une pour avec merci bonjour au sur ce qui dans mais "
           "nous demain de la un en tu", "çœ"),
    "de": (("DE", "AT", "CH"),
           "der das und ist ich nicht sie ein eine auf bitte danke mich unter oder mein meine "
           "dich wir auch noch bei zu von erreichbar morgen", "ß"),
    "nl": (("NL", "BE"), "het een en ik niet je mijn dat voor maar wij ons morgen de "
           "bereikbaar", ""),
    "pl": (("PL",), "nie jest się na że mój moja proszę dzięki jak czy jutro numer",
           "łąężźśćń"),
    "tr": (("TR",), "ve bir bu için ile beni numaram numarası lütfen teşekkürler merhaba "
           "yarın bana değil", "ığş"),
    "id": (("ID", "MY"), "yang di ke saya ini itu dengan untuk tidak bisa yg aku nomor dari "
           "kamu nanti besok terima kasih tolong atau ada saja aja kalau kalo sudah udah mau "
           "juga sama lagi tapi gak nggak", ""),
    "vi": (("VN",), "của và là tôi không có được cho số anh chị", "đơưạảấầẩậắằặẹẻẽếềểễệ"
           "ịọỏốồổộớờởợụủứừửựỳỵỷỹ"),
    "sv": (("SE",), "och är att jag det inte på för mitt mig", "å"),
    "no": (("NO", "DK"), "og jeg ikke på til det", "øæå"),
    "fi": (("FI",), "ja ei minun soita numero", ""),
    "cs": (("CZ", "SK"), "je se na že není můj volejte zavolejte", "řůě"),
    "ro": (("RO",), "și este nu pe la cu meu sună", "șță"),
    "hu": (("HU",), "és egy nem hogy", "őű"),
    "tl": (("PH",), "ang ng mga sa ko ako", ""),
    "sw": (("KE", "TZ"), "na wa kwa ni nipigie", ""),
    "hi": (("IN",), "hai pe ko kar karo bhej de mera meri aap kya nahi se bhai ji ka ki hain "
           "raha", ""),
}  # fmt: skip
_WORD_LANGUAGES: dict[str, list[str]] = {}
for _language, (_, _words, _) in _LANGUAGES.items():
    for _word in _words.split():
        _WORD_LANGUAGES.setdefault(_word, []).append(_language)
# A word in lower-case Latin letters, and the `.`, `@` or `/` of a domain's or a path's word
# (`example.com`) that is none.
_LATIN_WORD = re.compile(r"[.@/]?[a-zß-öø-ÿā-ɏḁ-ỿ]+")
# The share of a text's words that its language's commonest are at the least: an English
# text's `de facto`, `El Paso` or `La Jolla` names no language.
_LANGUAGE_SHARE = 0.08
# A country named in the text, in English or its own words, or a big city of it.
_COUNTRY_NAMES = {
    "ES": "españa spain madrid barcelona", "MX": "méxico mexico cdmx guadalajara monterrey",
    "AR": "argentina", "CO": "colombia bogotá bogota medellín", "CL": "chile santiago",
    "PE": "perú peru lima", "BR": "brasil brazil paulo rio", "PT": "portugal lisboa porto",
    "DE": "deutschland germany berlin münchen hamburg", "AT": "österreich austria wien",
    "CH": "schweiz suisse switzerland zürich", "FR": "france paris", "BE": "belgique belgië",
    "IT": "italia italy roma milano", "NL": "nederland netherlands amsterdam",
    "PL": "polska poland warszawa", "TR": "türkiye turkey istanbul ankara",
    "ID": "indonesia jakarta", "VN": "vietnam hanoi", "SE": "sverige sweden stockholm",
    "IN": "india bharat mumbai delhi bangalore bengaluru", "JP": "japan tokyo",
    "KR": "korea seoul", "TH": "thailand bangkok", "IL": "israel", "SA": "saudi riyadh",
    "AE": "uae dubai emirates", "EG": "egypt cairo", "NG": "nigeria lagos", "KE": "kenya nairobi",
    "ZA": "johannesburg", "PH": "philippines manila", "MY": "malaysia", "PK": "pakistan karachi",
    "RU": "russia moscow", "UA": "ukraine kyiv", "AU": "australia sydney melbourne",
}  # fmt: skip
_COUNTRY_OF_NAME = {name: region for region, names in _COUNTRY_NAMES.items()
                    for name in names.split()}  # fmt: skip
# A country's code before a number (`+34 ...`) and a country's domain in an address or a URL.
_COUNTRY_CODE = re.compile(r"(?<![\w+])\+\d[\d ().-]{6,18}\d")
_DOMAIN = re.compile(r"(?:@|://|www\.)[\w.-]{0,60}\.([a-z]{2})(?![\w-])")
# Two-letter domains that name no country in use: a start-up's (`.io`, `.ai`), a word's (`.me`).
_NOT_A_COUNTRY = frozenset((
    "ac", "ad", "ai", "as", "bz", "cc", "cd", "co", "fm", "gg", "gl", "im", "io", "je", "la",
    "ly", "me", "ms", "mu", "nu", "sh", "so", "st", "tk", "to", "tv", "vc", "ws",
))  # fmt: skip
_MOST_REGIONS = 8  # what a number is tried in: each is a parse
_WINDOW = 400  # characters each side of a number where its language is read


def regions_of_text(
    text: str, lower: str, configured: Sequence[str] = (), near: int = 0
) -> tuple[str, ...]:
    """The countries whose numbers a text's own are likely to be, the configured left out: a
    country's code or domain written in it, or its name near `near` (where the number is), then
    its script's countries (Devanagari: India), then the countries of the Latin language of its
    words near `near` (Spanish: Spain, Mexico, ...). The words are read within a window around
    the number, so that a long text costs what a short one does."""
    start = max(0, near - _WINDOW)
    window = lower[start : start + 2 * _WINDOW]
    words = Counter(word for word in _LATIN_WORD.findall(window) if word[0] not in ".@/")
    found = _named_countries(text, lower, words)
    if not text.isascii():
        found += _script_countries(text[start : start + 2 * _WINDOW])
    found += _language_countries(window, words)
    skip = set(configured)
    return tuple(region for region in dict.fromkeys(found) if region not in skip)[:_MOST_REGIONS]


def _named_countries(text: str, lower: str, words: Counter[str]) -> list[str]:
    found = []
    if "+" in text:
        for written in set(_COUNTRY_CODE.findall(text)[:_MOST_REGIONS]):
            number = _parse(written, None)
            if number is not None:
                found.append(phonenumbers.region_code_for_country_code(number.country_code))
    if "@" in lower or "://" in lower or "www." in lower:
        for match in _DOMAIN.finditer(lower):
            code = match.group(1)
            region = "GB" if code == "uk" else code.upper()
            if code not in _NOT_A_COUNTRY and supported_region(region):
                found.append(region)
    found += [_COUNTRY_OF_NAME[word] for word in words if word in _COUNTRY_OF_NAME]
    return [region for region in found if region and region != "001"]


def _script_countries(text: str) -> list[str]:
    found: list[str] = []
    letters = {char for char in set(text) if char >= "\u0370"}
    for char in sorted(letters):
        regions = _SCRIPTS[bisect.bisect_right(_SCRIPT_STARTS, ord(char)) - 1][1]
        if regions is not None and regions[0] not in found:
            found += regions
    for region, own in _LETTERS_OF.items():
        if any(letter in letters for letter in own):
            found.insert(0, region)
    return found


def _language_countries(lower: str, words: Counter[str]) -> list[str]:
    """The countries of the Latin-script language the text's commonest words are (one, or two
    as likely), none when no language's words are a share of it."""
    scores = dict.fromkeys(_LANGUAGES, 0.0)
    for word, count in words.items():
        languages = _WORD_LANGUAGES.get(word)
        if languages:
            for language in languages:
                scores[language] += count / len(languages)
    if not lower.isascii():
        for language, (_, _, letters) in _LANGUAGES.items():
            if letters and any(letter in lower for letter in letters):
                scores[language] += 1
    best = max(scores.values())
    if best < max(1.0, _LANGUAGE_SHARE * sum(words.values())):
        return []
    ranked = sorted((language for language in scores if scores[language] >= 0.75 * best),
                    key=scores.__getitem__, reverse=True)[:2]  # fmt: skip
    return [region for language in ranked for region in _LANGUAGES[language][0]]
