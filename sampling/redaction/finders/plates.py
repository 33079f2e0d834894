"""Vehicle licence plates after a word that names one ("licence plate AB12 CDE", "车牌号：
京A·12345", "Kennzeichen: B-MW 1234"): a plate alone is a short run of letters and digits
like a product code or a room number; the word before it says whose car it is."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from sampling.redaction.context import COPULAS, matches
from sampling.redaction.finders import register
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

_NAMES = ("license plate", "licence plate", "number plate", "registration plate", "plate number",
          "plate no", "reg no", "kennzeichen", "nummernschild", "plaque",
          "immatriculation", "immatriculé", "immatriculée", "matrícula", "matricula", "placa",
          "targa", "kenteken", "spz", "rejestracja", "numer rejestracyjny", "rejestracyjnym",
          "nr rej", "nr rej.", "plaka", "plakası", "plakasi", "plakam", "rekisteri",
          "rekisterinumero", "rekkari", "registreringsnummer", "regnr", "reg.nr", "nummerplade",
          "nummerskilt", "rendszám", "înmatriculare", "registarska", "госномер", "гос. номер",
          "номерной знак", "номер автомобиля", "номер машины", "رقم اللوحة", "لوحة السيارة",
          "מספר רישוי", "biển số", "ทะเบียนรถ", "nomor polisi", "plat nomor", "no. plat",
          "गाड़ी नंबर", "车牌", "車牌", "车号", "車號", "ナンバー", "번호판", "차량번호", "immat",
          "targhe", "targa", "targato", "targata", "immatriculation", "ทะเบียน",
          "αριθμός κυκλοφορίας", "αρ. κυκλοφορίας", "πινακίδα",
          # English words that name a plate only before what gives it: `my plate is ...`,
          # `Vehicle reg: ...`, `reg is ...` (never a CPU's `reg 0x1f`: see _WEAK).
          "plate", "vehicle reg", "car reg", "vehicle registration", "car registration",
          "rego", "reg", "reg.",
          "رقم السيارة", "رقم المركبة", "plat", "nombor plat", "valstybinis numeris",
          "valst. nr", "numurzīme", "registreerimisnumber", "numbrimärk", "skráningarnúmer",
          "bílnúmer", "registracijska", "регистарска", "plaka no", "nambari ya gari",
          "reg.nr.", "reg. nr.", "reg nr", "rekisteritunnus", "rekisteritunnukset", "rek.nro",
          "no. pendaftaran", "nombor pendaftaran", "no pendaftaran", "namba ya usajili",
          "usajili wa gari", "evidenční číslo", "ečv", "regisztrációs szám",
          "număr de înmatriculare", "nr. înmatriculare", "рег. номер", "регистрационный номер",
          "رجسٹریشن نمبر", "نمبر پلیٹ", "நம்பர் பிளேட்", "வாகன எண்", "नंबर प्लेट",
          "गाड़ी का नंबर", "nummerplaat", "targë", "targa e", "rendszáma", "αρ. κυκλ.",
          "мем. нөмірі", "мемлекеттік нөмірі", "nömrəsi", "dövlət nömrə nişanı",
          "համարանիշ", "համարանիշը", "სანომრე ნიშანი", "მანქანის ნომერი")  # fmt: skip
# Words for a vehicle (`Pojazd sprawcy: PO 5T128`): a plate after them only where a colon or a
# verb gives it, written in capitals and digits (not a model's `BMW 320d`, `RAV4 2019`).
_VEHICLE_WORDS = ("vehicle", "véhicule", "vehículo", "veículo", "veicolo", "fahrzeug", "fzg",
                  "pojazd", "pojazdu", "samochód", "samochodu", "voertuig", "vozidlo", "vozidla",
                  "jármű", "araç", "автомобиль", "транспортное средство", "kjøretøy",
                  "kjøretøyet", "køretøj", "fordon", "fordonet", "ajoneuvo", "bíll", "bíllinn",
                  "bifreið", "transporto priemonė", "transportlīdzeklis", "sõiduk", "vozilo",
                  "возило", "kenderaan", "sasakyan",
                  # A plate's words that name other things too: a course's or a patent's.
                  "registration", "patente")  # fmt: skip
_AS_A_PLATE = re.compile(r"(?=(?:[^0-9]*[0-9]){2})[A-Z0-9А-ЯЁ][A-Z0-9А-ЯЁ -]{3,10}")
_A_MODEL_YEAR = re.compile(r".* (?:19|20)[0-9]{2}")
# Names that are other words too: the plate after them needs five characters or more, and, for
# `reg` and `rego`, a verb or a colon first, or capitals and digits both (`Reg AK16 XWP`).
# (`plat`: also a dish, flat; `rekisteri`: any register in Finnish)
_WEAK = frozenset({"plate", "reg", "reg.", "rego", "plat", "rekisteri"})
# The name, a few words (`number`, `is`, `:`, `号`), then the plate: up to four groups of
# letters, digits and a Chinese province's character, joined by a space, `-` or `·`.
_GIVES = rf"(?:{'|'.join(map(re.escape, COPULAS))})"
# 京A·12345: a province leads; А482ВС 777: Cyrillic letters
# (and Greek and Thai letters: ΙΚΡ-7053, 3กข 5819).
_LETTER = "a-zа-яёіїєґα-ω\u0e01-\u0e2e"
# A dot between digits joins too (Vietnam's 59X3-482.17).
_GROUP = (
    rf"[{_LETTER}0-9\u4e00-\u9fff]"
    rf"(?:[{_LETTER}0-9]|[·・-](?=[{_LETTER}0-9])|(?<=[0-9])\.(?=[0-9])){{0,10}}"
)
_ASCII_NAMES = tuple(name for name in (*_NAMES, *_VEHICLE_WORDS) if name.isascii())
_ALL_NAMES = (*_NAMES, *_VEHICLE_WORDS)
# What follows a name (found with str.find: a long alternation over the text costs tens of µs).
_AFTER_NAME = re.compile(
    r"(?:\s*(?:(?:number|no|nr)(?:\.|(?![a-z0-9]))|号码?|號碼?))?"
    # What the plate is of, in a word to three (abbreviated or not) and a bracket, where a verb
    # or a colon follows ("Matrícula do veículo: ...", "SPZ mého auta je ...", "Kennzeichen
    # eigenes Fzg.: ...", "Kennzeichen (Zulassung): ...").
    rf"(?:(?:[ \t]+[^\W\d_]{{2,16}}\.?(?![^\W\d_])){{0,3}}(?:[ \t]*\([^()\n]{{1,30}}\))?"
    rf"(?=[ \t]*[:：]|[ \t]+{_GIVES}\b))?"
    rf"(?P<given>\s*(?:(?:{_GIVES}\b|[:：是为])\s*)*)"
    rf"(?P<plate>{_GROUP}(?: {_GROUP}){{0,3}})(?![a-z0-9])"
)
# A group after a space belongs to the plate when it holds a digit or is one to three letters
# (`AB12 CDE`), not a word that goes on with the sentence (`B-MW 1234 is parked`).
# (a province only leads)
# (a dot between digits joins, as in the first group: Vietnam's `59-X2 123.45`)
_TAIL_GROUP = re.compile(
    rf"(?=.*[0-9])(?:[{_LETTER}0-9·・-]|(?<=[0-9])\.(?=[0-9]))+|[{_LETTER}]{{1,3}}"
)
_FIRST_GROUP = re.compile(r"[0-9\u4e00-\u9fff·・-]")
_FIRST_LETTERS = re.compile(rf"[{_LETTER}]{{1,3}}")
# A plate of digits alone (Israel's 824-71-303), after a name that can only be a plate's: two
# groups or more.
# Digits alone in groups (Israel's `824-71-303`): not `2024-01`, nor a date (`2024-01-15`).
_DIGIT_GROUPS = re.compile(
    r"(?![12][0-9]{3}-[01][0-9]-[0-3][0-9]\Z)(?=(?:[0-9]-?){7,8}\Z)[0-9]{2,4}(?:-[0-9]{2,4}){1,2}"
)
_A_MEASURE = re.compile(r"[0-9](?:x|×)[0-9]|[0-9](?:mm|cm|m|in|kg|g|lb|ml)\b")
# A plate as written after `Reg` with no verb or colon: capitals and digits, both (`AK16 XWP`).
_CAPITALS_AND_DIGITS = re.compile(r"(?=[^a-z]*[0-9])(?=[^a-z]*[A-Z][^a-z]*[A-Z])[A-Z0-9 -]{5,10}")
_LETTERS_AND_DIGITS = re.compile(r"(?=.*[0-9])(?=.*[a-z])[a-z0-9-]+")
_NOT_TAIL = frozenset({"is", "was", "and", "or", "the", "in", "on", "at", "for", "to", "of"})
# A plate's second group after its letters: at most four characters, a digit first (`417Q`).
_SHORT_TAIL = re.compile(r"[0-9][0-9a-z]{1,3}")


@register("licence_plate")
class LicencePlateFinder:
    kinds = frozenset({"LICENSE_PLATE"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(
        words=tuple(name for name in _NAMES if name not in _WEAK),
        whole_words=(*_WEAK, *_VEHICLE_WORDS),  # `plate`, `reg`: not in "template", "regular"
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        lower = view.lower
        names = _ASCII_NAMES if view.text.isascii() else _ALL_NAMES
        for name in names:
            at = lower.find(name)
            while at >= 0:
                end = at + len(name)
                if lower[end : end + 1] == "s" and name.isascii():
                    end += 1  # `Placas NKR-472-B`, `plates`
                if name == "ナンバー" and lower.endswith("マイ", 0, at):
                    pass  # マイナンバー (My Number, Japan's personal number) names no plate
                elif not (
                    (name in _WEAK or name in _VEHICLE_WORDS)
                    and (lower[at - 1 : at].isalpha() or lower[end : end + 1].isalpha())
                ):
                    yield from self._plate_after(view, name, end)
                at = lower.find(name, end)

    def _plate_after(self, view: Text, name: str, position: int) -> Iterator[Span]:
        match = _AFTER_NAME.match(view.lower, position)
        if match is not None:
            first, *rest = match.group("plate").split(" ")
            groups = [first]
            at = match.start("plate") + len(first)
            for group in rest:
                if group in _NOT_TAIL or _TAIL_GROUP.fullmatch(group) is None:
                    break
                at += 1 + len(group)
                written = view.text[match.start("plate") : match.start("plate") + len(first)]
                if not any(char.isdigit() for char in group) and not _letters_end_a_plate(
                    view.text, at - len(group), at, written
                ):
                    break
                groups.append(group)
            plate = " ".join(groups)
            # A plate holds a digit, and not only digits; its first group a digit, a province's
            # character or a joiner (`B-MW 1234`), not a word ("the licence plate reader v2").
            digits = sum(char.isdigit() for char in plate)
            if not digits:
                return
            if digits == sum(char.isalnum() for char in plate):  # digits alone, joined or not
                if (
                    name not in _WEAK
                    and name not in _VEHICLE_WORDS
                    and _DIGIT_GROUPS.fullmatch(plate)
                ):
                    yield Span(match.start("plate"), match.start("plate") + len(plate),
                               "LICENSE_PLATE")  # fmt: skip
                return
            start = match.start("plate")
            if _FIRST_GROUP.search(first) is None and not (
                _FIRST_LETTERS.fullmatch(first)
                and view.text[start : start + len(first)].isupper()
                and len(groups) > 1
                and any(char.isdigit() for char in groups[1])  # (`AA LM-471`: Hungary's)
            ):
                return  # a word, not a plate; `CA 482-193` (a region's capitals first) is one
            if (
                name in _WEAK
                and (
                    _A_MEASURE.search(plate) is not None  # `steel plate: 200x300mm`
                    or len(plate.replace(" ", "")) < 5
                    or plate.startswith("0x")
                    or (
                        name not in ("plate", "plat")
                        and not match.group("given").strip()
                        # `Reg AK16 XWP`, `reg KDH 417Q`; not a register's `Reg RAX 12345`
                        and not (
                            _CAPITALS_AND_DIGITS.fullmatch(view.text[start : start + len(plate)])
                            and (
                                _LETTERS_AND_DIGITS.fullmatch(first)
                                or (len(groups) == 2 and _SHORT_TAIL.fullmatch(groups[1]))
                            )
                        )
                    )
                )
            ):
                return
            if name in _VEHICLE_WORDS and not _vehicle_plate(
                view.text[start : start + len(plate)], match.group("given")
            ):
                return
            yield Span(start, start + len(plate), "LICENSE_PLATE")


def _vehicle_plate(written: str, given: str) -> bool:
    """A plate after a word for a vehicle: given by a colon or a verb, five characters or more
    in capitals and two digits or more, not a model (`F-150`) and its year, nor a word of five
    letters (`Registration: EVENT2024`: plates' letters come four at most)."""
    return (
        bool(given.strip())
        and sum(char.isalnum() for char in written) >= 5
        and _AS_A_PLATE.fullmatch(written) is not None
        and _A_MODEL_YEAR.fullmatch(written) is None
        and _FIVE_LETTERS.search(written) is None
    )


_FIVE_LETTERS = re.compile(r"[A-ZА-ЯЁ]{5}")


def _letters_end_a_plate(text: str, start: int, end: int, first: str) -> bool:
    """A group of letters alone after a plate's `first` group (as written) belongs to it where
    it is a word of its own (not the start of a Thai word: `3กข 5819 กรุงเทพ`), in capitals
    where the first group is (`NKR-472-B del Edomex`)."""
    after = text[end : end + 1]
    if after and (
        unicodedata.category(after).startswith("M")
        or (after.isalnum() and _script(after) == _script(text[end - 1]))
    ):
        return False
    return text[start:end].isupper() or not first.isupper()


def _script(char: str) -> str:
    """The first word of a character's Unicode name: LATIN, THAI, CJK, CYRILLIC, ..."""
    return unicodedata.name(char, "").split(" ", 1)[0]


# Plates whose shape alone says what they are, with no word before them: a Chinese plate (a
# province's character, the city's letter, five or six letters and digits: 粤B12345, 京A·D12345),
# a Japanese one (the office, a class number, a kana, the serial: 品川 300 あ 12-34) and a Korean
# one (a class number, a syllable of the few that plates use, four digits: 12가 3456).
_PROVINCES = "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼"
_CN_BARE = re.compile(
    rf"[{_PROVINCES}][A-HJ-NP-Z][·・• ]?(?=(?:[A-HJ-NP-Z]*[0-9]){{2}})[A-HJ-NP-Z0-9]{{5,6}}"
    r"(?![A-Za-z0-9])"
)
# Each from its digits (which the regex engine skips along to), the name before them read back.
_JP_BARE = re.compile(
    r"(?<![0-9])[0-9]{2,3} ?[\u3041-\u3093] ?(?:[0-9]{1,2}-[0-9]{2}|[・.]{1,3}[0-9]{1,3})(?![0-9])"
)
_JP_OFFICE = re.compile(r"[\u4e00-\u9fff]{1,4} ?$")  # the registration office: 品川, 横浜
# A particle may follow the plate (`12가 3456입니다`, `12가 3456을`); a unit may not
# (`20주 1000명`).
_KR_PARTICLES = "입이을를은는로의와과도"
_KR_SYLLABLES = "가나다라마거너더러머버서어저고노도로모보소오조구누두루무부수우주바사아자배하허호"
_KR_BARE = re.compile(
    rf"(?<![0-9])[0-9]{{2,3}} ?[{_KR_SYLLABLES}] ?[0-9]{{4}}"
    rf"(?![0-9])(?![가-힣](?<![{_KR_PARTICLES}]))"
)
_KR_REGION = re.compile(
    "(?:서울|부산|대구|인천|광주|대전|울산|세종|경기|강원|충북|충남|전북|전남|경북|경남|제주) ?$"
)
_HANGUL_BYTES = rb"[\xea-\xed][\x80-\xbf]{2}"
# Vietnam's (59X3-482.17, 51F-123.45: the province's number, a series, a serial with its dot),
# Ukraine's (АА 9163 ВК) and Russia's (В472КМ777), of the Cyrillic letters that Latin has too.
_VN_BARE = re.compile(r"(?<![\w.-])[1-9][0-9][A-Z][A-Z0-9]?-[0-9]{3}\.[0-9]{2}(?![\w.])")
_UA_BARE = re.compile(r"(?<!\w)[АВЕІКМНОРСТХ]{2} ?[0-9]{4} ?[АВЕІКМНОРСТХ]{2}(?!\w)")
_RU_BARE = re.compile(r"(?<!\w)[АВЕКМНОРСТУХ][0-9]{3} ?[АВЕКМНОРСТУХ]{2} ?[0-9]{2,3}(?!\w)")
# A word of a vehicle or of a plate before such a shape, within a line or two (`Сіра Skoda,
# номер АА 9163 ВК`, `Honda Vision 2021 ... bstp 59X3-482.17`): an article's or an order's
# number of the same shape (`Артикул К100 ОО 50`, `version 10A1-234.56`) has none.
# Each where a word starts (not `Slovakia`, `labs `), `авто` not an author's (`автор`).
_VEHICLE = re.compile(
    r"(?<![^\W\d_])(?:номер|авто(?!р)|машин|тачк|таксі|такси|водій|водител|skoda|toyota|honda"
    r"|lada|лада|kia|hyundai|xe |xe máy|biển|bstp|bks|bs |ô tô|oto(?![^\W\d_]))"
)
_VEHICLE_REACH = 80
_CYRILLIC_BYTES = rb"(?:\xd0[\xb0-\xbf]|\xd1[\x80-\x8f]|\xd1\x96)"


@register("licence_plate_shapes")
class PlateShapeFinder:
    kinds = frozenset({"LICENSE_PLATE"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(
        shapes=(
            b"(?:" + b"|".join(char.encode() for char in _PROVINCES) + rb")[a-z]",
            rb"[0-9]{2} ?\xe3[\x81\x82][\x80-\xbf] ?[0-9]",
            rb"[0-9]{2} ?" + _HANGUL_BYTES + rb" ?[0-9]{4}",
            rb"[0-9]{2}[a-z][a-z0-9]?-[0-9]{3}\.[0-9]{2}",
            _CYRILLIC_BYTES + rb" ?[0-9]{3}",
        )
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        yield from matches(_CN_BARE, text, "LICENSE_PLATE")
        for match in _JP_BARE.finditer(text):
            office = _JP_OFFICE.search(text, max(0, match.start() - 5), match.start())
            if office is not None:
                yield Span(office.start(), match.end(), "LICENSE_PLATE")
        for match in _KR_BARE.finditer(text):
            # `서울 12가 3456`: a region's name before the plate is part of it, a word is not
            region = _KR_REGION.search(text, max(0, match.start() - 3), match.start())
            start = match.start() if region is None else region.start()
            yield Span(start, match.end(), "LICENSE_PLATE")
        for shape in (_VN_BARE, _UA_BARE, _RU_BARE):
            for match in shape.finditer(text):
                near = view.lower[max(0, match.start() - _VEHICLE_REACH) : match.start()]
                if _VEHICLE.search(near):
                    yield Span(match.start(), match.end(), "LICENSE_PLATE")


# A plate after the car it is on, with no word naming a plate (`silver Astra YR68 KHE`, `Honda
# PCX · YD71 KPE`, `den röda Volvon MLR 48F`): a make or a common model, up to three words
# without a digit (a model, a colour, a nickname in quotes), a separator or none, then two or
# three groups of capitals and digits, two of each at least. A word with a digit before it
# ends the reading: a model's own (`BMW X5 M50d`, `RAV4 2019`, `Bezza 1.3`).
_MAKES = ("toyota", "honda", "nissan", "mazda", "subaru", "suzuki", "mitsubishi", "lexus",
          "hyundai", "kia", "ford", "chevrolet", "chevy", "dodge", "jeep", "tesla", "volkswagen",
          "vw", "audi", "bmw", "mercedes", "opel", "vauxhall", "renault", "peugeot", "citroën",
          "citroen", "fiat", "alfa", "seat", "skoda", "škoda", "dacia", "volvo", "volvon", "saab",
          "mini", "porsche", "lada", "yamaha", "kawasaki", "ducati", "vespa", "piaggio", "perodua",
          "proton", "tata", "mahindra", "maruti", "byd", "geely", "chery", "astra", "corsa",
          "polo", "golf", "fiesta", "focus", "clio", "yaris", "corolla", "civic", "prado",
          "octavia", "qashqai", "passat", "camry", "hilux", "ranger", "sandero",
          "tucson")  # fmt: skip
# Two to four groups of capitals and digits (their counts asked by _a_plate: a pattern that looks
# ahead for them is read again from every capital of a long run of them).
_PLATE_SHAPE = r"(?P<plate>[A-Z0-9]{1,4}(?:[ -][A-Z0-9]{1,4}){1,3})(?![\w-])"
_A_MAKE = rf"(?P<make>(?i:{'|'.join(_MAKES)}))(?![\w-])"
_CAR_THEN_PLATE = re.compile(
    rf"{_A_MAKE}"
    r"(?:[ \t]+(?:[^\W\d][^\s\d·•|–—]{0,15}|\"[^\"\n]{1,16}\"|\([^()\d\n]{1,20}\))){0,3}?"
    r"[ \t]*(?:[·•|,–—-][ \t]*)?" + _PLATE_SHAPE
)
# The plate first, then the car after a comma (`KXHT-52, un Suzuki Swift`, `10-RK-482, ağ
# Hyundai Sonata`, `SMQ 246 P I think, white Toyota Prius`): up to four words between them.
_PLATE_THEN_CAR = re.compile(
    r"(?<![\w-])"
    + _PLATE_SHAPE
    + r"(?:[ \t]+[^\W\d]{1,8}){0,2},[ \t]*(?:[^\W\d]{1,10}[ \t]+){0,2}"
    + _A_MAKE
)
_A_YEAR_GROUP = re.compile(r"(?:^|[ -])(?:19|20)[0-9]{2}(?:$|[ -])")
_MIXED = re.compile(r"(?=.*[0-9])(?=.*[A-Z])[A-Z0-9]+")  # letters and digits in one group


@register("licence_plates_after_a_car")
class CarPlateFinder:
    kinds = frozenset({"LICENSE_PLATE"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(whole_words=_MAKES)
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        for match in (*_CAR_THEN_PLATE.finditer(text), *_PLATE_THEN_CAR.finditer(text)):
            plate, end = match["plate"], match.end("plate")
            if _A_WORD_AFTER.match(text, end) and plate.endswith((" I", " A")):
                plate, end = plate[:-2], end - 2  # `SMQ 246 P I think`: the pronoun is a word
            # (right after the make, letters and digits apart are its model: `Honda CBR 600`)
            beside = (
                match.start("plate") > match.end("make")
                and not text[match.end("make") : match.start("plate")].strip()
            )
            if _a_plate(plate, models=beside):
                yield Span(match.start("plate"), end, "LICENSE_PLATE")


_A_WORD_AFTER = re.compile(r"[ \t]+[a-z]")


def _a_plate(plate: str, *, models: bool = False) -> bool:
    """Capitals and digits shaped as a plate, not as a model's name and trim (`F-150 XLT`,
    `Focus ST 250`) or a year: a group mixing both (`YR68 KHE`, `MLR 48F`), three groups or four
    (`GH-472-KT`, `HJ 42 KL GP`), or letters and digits apart, six or more (`4821 LKM`, `KXHT-52`),
    not where a model's name stands (`models`: right after the make)."""
    groups = re.split(r"[ -]", plate)
    if sum(char.isdigit() for char in plate) < 2 or sum(char.isalpha() for char in plate) < 2:
        return False
    if _A_YEAR_GROUP.search(plate) is not None:
        return False
    if any(_MIXED.fullmatch(group) for group in groups):
        return True
    if len(groups) >= 3:
        return len(groups[0]) > 1
    letters, digits = sorted(groups, key=str.isdigit)
    return (
        not models
        and letters.isalpha()
        and 2 <= len(digits) <= 4
        and len(letters) + len(digits) >= 6
    )
