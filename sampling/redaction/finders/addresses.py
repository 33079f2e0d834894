"""Street addresses, found by their shape: a house number beside a street's name and type, as
English (`742 Evergreen Terrace`, `221B Baker Street, London NW1 6XE`), German and Dutch
(`Hauptstraße 5, 10115 Berlin`), French (`14 rue de la Paix, 75002 Paris`), Spanish, Italian
and Portuguese (`Calle Mayor 5`, `Via Roma 12`) write them, and Chinese and Japanese addresses
by their units (`北京市朝阳区建国路88号`, `東京都千代田区丸の内1-9-1`). A city, state and postal
code that follow on the same line are part of the address.

Each shape needs a house number and a street type, so that prose about streets stays. A shape
is tried only where a number meets a capitalised word (`742 Evergreen`, `Mayor 5`, and a
French address from its postcode and city, `75002 Paris`: one without them is not found), found
at the byte level in an ASCII text: a regex of every shape over every text costs more than all
the other finders.

The shapes of other countries have words of their own (Colombia's `Calle 45 # 13-27`, Hebrew
`רחוב`, Persian `پلاک`, Urdu and Bengali house numbers, Thai `ซอย`, Malaysia's `Jalan`, the
Philippines' `Blk 12 Lot 8`, traditional Chinese `號`): each is a finder of its own, which the
one scan of every text runs only where its words are. Czech and Slovak streets (`Korunní
1206/54`) are read where a capitalised word meets a number, as the shapes above.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from sampling.redaction.context import either, matches, word_ends
from sampling.redaction.finders import register
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers, WordEnds, number

_EN_TYPES = (
    "Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|"
    "Terrace|Ter|Parkway|Pkwy|Highway|Hwy|Circle|Cir|Square|Sq|Trail|Close|Crescent|Cres|"
    "Grove|Gardens|Mews|Row|Walk|Hill|Loop|Alley|Path|Pike|Plaza|Crossing|Heights|Expressway|"
    "Freeway"
)
# What may follow an English or French street on its line: a unit, then a city with its state
# and ZIP code, its UK postcode, or its French postcode before it.
_EN_TAIL = (
    r"(?:\s+(?:NW|NE|SW|SE|N|S|E|W)\b\.?)?"
    r"(?:,?\s+(?:Apt|Apartment|Suite|Ste|Unit|Flat|Floor|Fl|#)\.?\s*#?[A-Za-z0-9-]{1,6}\b)?"
    r"(?:(?:,\s+|[ \t]*\n[ \t]*)[A-Z][A-Za-z.' -]{1,30}?(?:,\s+[A-Z][A-Za-z.' -]{1,30}?)?"
    r"(?:,\s+[A-Z]{2}\s+\d{5}(?:-\d{4})?|,?\s+[A-Z]{1,2}\d[A-Z\d]?\s+\d[A-Z]{2}|,\s+[A-Z]{2}\b)"
    r"(?![A-Za-z0-9]))?"
)
# A street without a type (`1585 Broadway`, `1 Hacker Way` is typed) is one only before its city
# with a state and ZIP code, or with a UK postcode.
_EN_CITY_AND_CODE = (
    r",\s+[A-Z][A-Za-z.' -]{1,30}?"
    r"(?:,\s+[A-Z]{2}\s+\d{5}(?:-\d{4})?|,?\s+[A-Z]{1,2}\d[A-Z\d]?\s+\d[A-Z]{2})(?![A-Za-z0-9])"
)
# Starting at a house number (221B, 12-14): English, a name of one to four capitalised words (or
# an ordinal, 5th) and the type, or no type and its city and code; French, the type and the name.
_NUMBER_FIRST = re.compile(
    r"\d(?<![0-9A-Za-z_]\d)\d{0,5}[A-Za-z]?(?:-\d{1,4})?,?\s+(?:"
    rf"(?:(?:[NSEW]|North|South|East|West)\.?\s+)?"
    rf"(?:(?:[A-Z][A-Za-z'.-]+|\d{{1,3}}(?:st|nd|rd|th))\s+){{1,4}}(?:{_EN_TYPES})\b\.?{_EN_TAIL}"
    rf"|[A-Z][A-Za-z'.-]+(?:\s+[A-Z][A-Za-z'.-]+){{0,3}}{_EN_CITY_AND_CODE}"
    r"|(?:bis\s+|ter\s+)?(?:rue|avenue|av\.|boulevard|bd|place|chemin|allée|impasse|quai|route|"
    r"cours)\s+(?:(?:de|du|des|la|le|l'|d')\s*)*[A-ZÉÈÀ][\w'-]+(?:\s+[A-ZÉÈÀ][\w'-]+){0,3}"
    r"(?:(?:,\s+|[ \t]*\n[ \t]*)\d{5}\s+[A-ZÉÈ][\w-]+)?)"
)
# German, Dutch, Nordic, Finnish: the type ends the street's word; the number and postcode
# follow. Dutch names may start with a lower-case word (`Van Baerlestraat`, `de Clercqstraat`).
_GERMANIC_TYPES = ("straße", "strasse", "str.", "weg", "platz", "allee", "gasse", "damm",
                   "straat", "laan", "plein", "gracht", "kade", "singel", "gatan", "vägen",
                   "gränd", "vej", "gade", "torv", "plads", "stræde", "veien", "katu",
                   "tie")  # fmt: skip
_GERMANIC = re.compile(
    r"(?:(?<![\w-])(?:[Vv]an|[Dd]e|[Dd]en|[Dd]er|[Tt]er|[Ss]int)\s+){0,2}"
    rf"[A-ZÄÖÜÅÆØ][a-zäöüßåæøé-]*(?:{'|'.join(map(re.escape, _GERMANIC_TYPES))})"
    r"\s+\d{1,4}[ \t]?[a-zA-Z]?\b"
)
# Spanish, Italian, Portuguese: the type first, the number after the name.
# And French as Belgium and Switzerland write it (`Rue de la Loi 16`).
_ROMANCE = re.compile(
    r"(?<![\w/])(?:Calle|C/|Avenida|Avda\.|Av\.|Paseo|Plaza|Carrera|Via|Viale|Piazza|Corso|Rua|"
    r"Travessa|Largo|Rue|Avenue|Boulevard|Chaussée|Place|Chemin|Quai|Route|Allée|Impasse|ul\.|al\."
    r"|pl\.|ulica|aleja|Str\.|Strada|Bd\.|Bulevardul|Calea|Aleea|Șos\.|Șoseaua|Sos\.)"
    r"\s*(?:(?:de|del|la|las|los|do|da|dos|das|di|della|dei|degli|delle|dello|du|des|le)\s+"
    r"|(?:l'|d'|dell'|dall'|nell'|sull')\s*)*[A-ZÁÉÍÓÚÈÊÂÎÔŁŚŻŹĆŃ][\w'-]+(?:\s+[A-ZÁÉÍÓÚÈÊÂÎÔŁŚŻŹĆŃ][\w'-]+){0,3},?\s+"
    r"(?:n\.?[º°o]\.?\s*|nr\.?\s*)?"  # `nº 5`, `n.º 88` (`n.o` normalised), `nr. 28`
    r"\d{1,4}[A-Za-z]?\b"
)
_CJK = r"\u3040-\u30ff\u4e00-\u9fff"
# A character of a place's name: not one of the words that lead into an address (我住在, 寄到).
_PLACE = rf"(?:(?![我你他她们住在于到往寄送至是的了从为请])[{_CJK}])"
# Chinese: the units before the street are optional, the street and its number are not (a lane,
# 弄, may come between them; a section, 北段, after the street); a building, unit and room may
# follow. `3号线` is a metro line.
_CN_UNITS = (
    rf"(?:{_PLACE}{{2,6}}?(?:省|自治区))?(?:{_PLACE}{{2,6}}?市)?(?:{_PLACE}{{1,6}}?(?:区|县))?"
)
_CHINESE = re.compile(
    rf"{_CN_UNITS}{_PLACE}{{1,8}}?(?:路|街|大道|巷|胡同)(?:[东南西北中]段)?(?:\d{{1,5}}弄)?"
    rf"\d{{1,5}}号(?!线)(?:院)?"
    rf"(?:{_PLACE}{{0,10}}?[A-Z]?(?:号楼|栋|幢|座)|\d{{1,4}}(?:号楼|栋|幢|座))?"
    r"(?:\d{1,3}单元)?(?:\d{1,5}(?:室|房)?)?"
)
# An office tower on a street, without a house number: the city or district before it, the
# building's letter after it (`北京市海淀区中关村大街B座1203`), and a postcode.
_CHINESE_TOWER = re.compile(
    rf"(?:{_PLACE}{{2,6}}?(?:省|自治区))?(?:{_PLACE}{{2,6}}?(?:市|区|县)){{1,3}}"
    rf"{_PLACE}{{1,8}}?(?:路|街|大道){_PLACE}{{0,10}}?[A-Za-z]座(?:\d{{1,5}}室?)?"
    r"(?: ?\d{6}(?!\d))?"
)
# A housing estate without a street: its district, its name, then a building and a unit or a room
# (`朝阳区望京西园四区412号楼2单元801`).
_CHINESE_ESTATE = re.compile(
    rf"{_CN_UNITS}{_PLACE}{{2,12}}?\d{{1,4}}(?:号楼|栋|幢|座)"
    r"(?:\d{1,3}单元\d{0,5}(?:室|房)?|\d{1,5}(?:室|房))"
)
# Japanese: a prefecture, a city or ward, then block numbers (1丁目2番3号, 1-9-1); without the
# prefecture, a city or ward and a 丁目 or three numbers (`福岡市中央区天神1丁目8-1`).
_JAPANESE = re.compile(
    rf"(?:(?:東京都|北海道|京都府|大阪府|[{_CJK}]{{2,3}}県)[{_CJK}]{{1,10}}?[市区町村郡]"
    rf"[{_CJK}]{{0,10}}?\d{{1,4}}(?:丁目|[-−ー])"
    rf"|[{_CJK}]{{1,5}}?[市区](?:[{_CJK}]{{1,5}}?区)?[{_CJK}]{{0,10}}?\d{{1,4}}(?:丁目|[-−ー](?=\d{{1,4}}[-−ー]\d)))"
    r"\d{1,4}(?:番地?|[-−ー])?(?:\d{1,4}号?)?"
    # a building and its room after a space (`1-9-1 丸の内JPタワー249`, `...号 グランハイツ302号室`)
    rf"(?: [{_CJK}A-Za-z・ー]{{1,20}}?\d{{1,4}}(?:号室)?(?![0-9]))?"
)
# Korean: a province or metropolitan city, a city, county or district, then a road and its
# number (`테헤란로 152`, `판교역로 235`) or a neighbourhood and its lot (`우동 1408-5`).
_KOREAN = re.compile(
    r"(?:[가-힣]{2,8}(?:특별시|광역시|특별자치시|특별자치도|도|시)\s+)?"
    r"[가-힣]{1,6}(?:시|군|구)\s+(?:[가-힣]{1,6}구\s+)?(?:[가-힣]{1,6}(?:읍|면)\s+)?"
    r"(?:[가-힣0-9]{1,12}(?:로|길)(?:\s?\d{1,4}번?길)?|[가-힣0-9]{1,6}(?:동|리|가))"
    r"\s?\d{1,5}(?:-\d{1,4})?(?![0-9])"
)

# Russian and Ukrainian: an optional city (`г. Москва,`), a street's type and name (`ул.
# Тверская`, `проспект Мира`, `вул. Хрещатик`), its house number (`д. 7`, `7/2`), and the
# building and flat that follow (`корп. 2`, `кв. 15`).
_CYRILLIC_TYPES = ("ул.", "улица", "улице", "улицу", "улицы", "пр-т", "проспект", "проспекте",
                   "пер.", "переулок", "переулке", "наб.", "набережная", "шоссе", "б-р",
                   "бульвар", "бульваре", "пл.", "площадь", "вул.", "вулиця", "вулиці",
                   "просп.", "провулок")  # fmt: skip
# A type that may follow its name (`Невский проспект, д. 28`, `Можайское шоссе 5`).
_CYRILLIC_AFTER = ("проспект", "шоссе", "бульвар", "переулок", "проезд")
_CYRILLIC = re.compile(
    r"(?:(?<![^\W\d_])(?i:г\.|город|м\.|місто)\s*[А-ЯЁІЇЄ][а-яёіїє'-]+,?\s*)?"
    # the type, then the name: capitalised words or a number (`ул. 8 Марта`), never a
    # lower-case word; or the name, then a type that follows it
    rf"(?:(?<![^\W\d_])(?i:{'|'.join(map(re.escape, _CYRILLIC_TYPES))})\s*"
    r"(?:[А-ЯЁІЇЄ][\w.'-]{0,24}|\d{1,2}(?:-?[а-я]{1,3})?\s+[А-ЯЁІЇЄ][\w'-]{0,24})"
    r"(?:\s+[А-ЯЁІЇЄ0-9][\w'-]{0,24}){0,2},?\s*(?:(?:д\.|дом|буд\.|будинок)\s*)?"
    # after a name then its type, the number only after a comma or `д.` (`Широкий проспект 12
    # метров` is a width)
    rf"|(?<![^\W\d_])[А-ЯЁІЇЄ][а-яёіїє-]{{2,24}}\s+(?:{'|'.join(_CYRILLIC_AFTER)})"
    r"(?:,\s*(?:(?:д\.|дом|буд\.|будинок)\s*)?|\s+(?:д\.|дом|буд\.|будинок)\s*))"
    r"\d{1,4}[а-яіїє]?(?:/\d{1,4})?(?![0-9])"
    r"(?:,?\s*(?:корп\.|корпус|к\.|стр\.|строение)\s*\d{1,3})?"
    r"(?:,?\s*(?:кв\.|квартира|оф\.|офис)\s*\d{1,4})?"
)

# Indonesian and Malay: the street's type, its name and the house's number after `No.` (`Jl.
# Kemang Raya No. 27B`, `Jalan Sudirman No. 5`, `Jl. Gatot Subroto Kav. 52-53`, an alley's `Gg.
# Mawar No. 3`), then the neighbourhood's RT/RW; in any case, as chat types it.
_INDONESIAN = re.compile(
    r"(?<![\w.])(?i:jl\.?|jln\.?|jalan|gg\.|lorong|lrg\.?)[ \t]+"
    r"(?:[A-Za-z0-9][\w'.-]{0,24}[ \t]+){0,5}?[A-Za-z0-9][\w'.-]{0,24},?[ \t]+"
    r"(?i:no\.?|nomor|nomer|kav\.?|blok)[ \t]*:?[ \t]*\d{1,4}[A-Za-z]?(?:[-/]\d{1,4}[A-Za-z]?)?"
    r"(?![\w])(?:,?[ \t]*(?i:rt)\.?[ \t]*\d{1,3}[ \t]*/[ \t]*(?i:rw)\.?[ \t]*\d{1,3})?"
)
_INDONESIAN_TYPES = ("jl", "jalan", "gg.", "lorong", "lrg")
# Turkish: a neighbourhood, the street's name and type (`Gül Sok.`, `Atatürk Cad.`, `1453.
# Sokak`), then `No:` and the number, its door after a slash, its floor and flat (`Kat:3 D:9`).
# A name's word is capitalised or a number, and no label (`Adres: ...`).
_TR_NAME = r"(?!Adres)(?:[A-ZÇĞİÖŞÜ][\wçğıöşü'-]{0,24}|\d{1,5}\.?)"
_TURKISH_TYPES = (
    r"Sok\.|Sokak|Sokağı|Sk\.|Cad\.|Caddesi|Cd\.|Bulvarı|Blv\.|Bulv\.|Yolu|Meydanı|Çıkmazı"
)
_TURKISH = re.compile(
    rf"(?:(?<![\w]){_TR_NAME}(?:[ \t]+{_TR_NAME}){{0,2}}[ \t]+(?:Mah\.|Mahallesi|Mh\.),?[ \t]*)?"
    rf"(?<![\w]){_TR_NAME}(?:[ \t]+{_TR_NAME}){{0,2}}[ \t]+(?:{_TURKISH_TYPES}),?[ \t]*"
    r"(?i:no)[ \t]*[:.]?[ \t]*\d{1,5}[A-Za-z]?(?:[ \t]*/[ \t]*\d{1,4}[A-Za-z]?)?(?![\w])"
    r"(?:[ \t]*,?[ \t]*(?i:kat|k|daire|d)[ \t]*[:.][ \t]*\d{1,3}(?![\w])){0,2}"
)
_TURKISH_TYPE_WORDS = ("Sok", "Sk.", "Cad", "Cd.", "Bulv", "Blv.", "Yolu", "Meydanı", "Çıkmazı")
# Arabic: a house number before or after the street's type and its name (`15 شارع النزهة`,
# `شارع الملك فهد 22`, `طريق الملك عبدالله، رقم 7`), then a building and a flat. The type is a
# word of its own (`15 شارعاً` counts streets).
_AR_WORD = r"[\u0621-\u064a\u066e-\u06d3]+(?![\u064b-\u065f])"
_AR_STREET = r"(?:(?:شارع|طريق|جادة|زقاق)[ \t]+|ش\.[ \t]*)"
_ARABIC_TYPES = ("شارع", "ش.", "طريق", "جادة", "زقاق")
_ARABIC = re.compile(
    rf"(?:(?<![\w])\d{{1,5}}[ \t]*،?[ \t]*{_AR_STREET}{_AR_WORD}(?:[ \t]+{_AR_WORD}){{0,2}}"
    rf"|{_AR_STREET}{_AR_WORD}(?:[ \t]+{_AR_WORD}){{0,3}}?[ \t]*،?[ \t]*(?:رقم[ \t]*)?"
    r"\d{1,5}(?![\w]))"
    r"(?:[ \t]*،?[ \t]*(?:عمارة|مبنى|بناية|شقة|الدور|الطابق|طابق)[ \t]*(?:رقم[ \t]*)?\d{1,4}"
    r"(?![\w])){0,3}"
)
# Hindi: a house's or a flat's number, then a lane's, a block's or a sector's (`मकान नं. 221,
# गली नं. 4`, `फ्लैट नंबर 12, ब्लॉक 3`). A house's number is signed (`नं.`) or followed by a
# unit: `घर 2 बजे` is a time at home.
_HI_SIGN = r"(?:नं\.?|नंबर|नम्बर|न\.|संख्या|क्रमांक)"
_HI_NUMBER = r"[ \t]*[:-]?[ \t]*\d{1,5}(?:[-/]\d{1,4})?(?![\d])"
_HI_HOUSES = ("मकान", "घर", "फ्लैट", "फ़्लैट", "प्लॉट", "हाउस", "कोठी", "क्वार्टर")
_HI_UNITS = ("गली", "ब्लॉक", "सेक्टर", "मोहल्ला", "वार्ड", "फेज़", "फेज", "मंज़िल", "मंजिल", "मार्ग")
_HI_HOUSE = f"(?:{'|'.join(_HI_HOUSES)})"
_HI_UNIT = rf"(?:{'|'.join(_HI_UNITS)})[ \t]*{_HI_SIGN}?{_HI_NUMBER}"
_HI_THEN = r"[ \t]*,?[ \t]*"
_HINDI = re.compile(
    rf"{_HI_HOUSE}[ \t]*(?:{_HI_SIGN}{_HI_NUMBER}(?:{_HI_THEN}{_HI_UNIT}){{0,3}}"
    rf"|{_HI_NUMBER}(?:{_HI_THEN}{_HI_UNIT}){{1,3}})"
    rf"|{_HI_UNIT}(?:{_HI_THEN}(?:{_HI_HOUSE}[ \t]*{_HI_SIGN}?{_HI_NUMBER}|{_HI_UNIT})){{1,3}}"
)
_HINDI_UNITS = (*_HI_HOUSES, *_HI_UNITS)  # what the shape starts with, one of them
# The same as India writes it in Latin letters: a house's number, then a lane's, a block's or a
# sector's (`H.No. 221, Gali No. 4`, `House No 12, Sector 15`).
_IN_HOUSE = r"(?:H\.?[ \t]?No|House[ \t]+No|Flat[ \t]+No|Plot[ \t]+No|Quarter[ \t]+No)\.?"
_IN_UNIT = r"(?:Gali|Lane|Block|Sector|Phase|Ward|Street|Road|Marg)(?:[ \t]+No\.?)?"
_INDIAN = re.compile(
    rf"(?<![\w])(?i:{_IN_HOUSE})[ \t]*[:-]?[ \t]*\d{{1,5}}[A-Za-z]?(?:[-/]\d{{1,4}}[A-Za-z]?)?"
    rf"(?:[ \t]*,[ \t]*(?i:{_IN_UNIT})[ \t]*[:-]?[ \t]*\d{{1,4}}[A-Za-z]?(?![\w])){{1,3}}"
)
# Each way _IN_HOUSE starts, lower case (`H.No.`, `H. No`, `H No`, `HNo`, `House No`).
_INDIAN_HOUSES = ("h.no", "h. no", "h no", "hno", "house no", "flat no", "plot no", "quarter no")


def _viewed(word: str) -> str:
    """A word as the normalised view spells it (views.py): NFKC, format characters dropped.
    Thai `ำ` reads `ํา` there, Bengali `\u09dc` two characters (`ড` and its nukta), and the
    ZWJ that may stand in `ফ্ল্যাট` is gone."""
    folded = unicodedata.normalize("NFKC", word)
    return "".join(char for char in folded if unicodedata.category(char) != "Cf")


def _either(words: tuple[str, ...]) -> str:
    """An alternation of `words` as the view spells them, the longest first."""
    return either(map(_viewed, words))


# Colombia's grid: the street's type and its number or name (`Calle 45`, `Cra. 7`, `Diagonal
# 40A Bis`, `Av. Boyacá`), then `#` or `No.` and the crossing street's number, a dash and the
# distance from the corner (`# 13-27`, `No. 12-40`), a quadrant (`Sur`), then the flat. The
# sign and its dashed pair are what make it one: `Calle 45 minutos` has none.
_CO_TYPES = (
    r"(?i:avenida\s+(?:calle|carrera|cra\.?|kra\.?)|calle|carrera|cra\.?|kra\.?|cll\.?|avenida"
    r"|avda\.?|diagonal|diag\.?|transversal|transv\.?|circular|autopista)"
    r"|Cl\.?|Kr\.?|Cr\.?|Av\.?|Ak\.?|Ac\.?|Dg\.?|Tv\.?|Tr\.?|AK\.?|AC\.?|CL\.?|KR\.?|DG\.?|TV\.?"
)
_CO_QUADRANT = r"(?:\s+(?i:sur|este|norte|oeste|occidente)(?![\w]))?"
_CO_WORD = r"[A-ZÁÉÍÓÚÑ][\wáéíóúñ'.-]*"
_COLOMBIAN = re.compile(
    rf"(?<![\w])(?:{_CO_TYPES})\s*"
    rf"(?:\d{{1,3}}[A-Za-z]?(?:\s?(?i:bis))?(?:\s?[A-Za-z](?![\w]))?|{_CO_WORD}(?:\s+{_CO_WORD}){{0,2}})"
    rf"{_CO_QUADRANT}\s*(?:#|(?i:no|nro|n°|n\.o)\.?)\s*"
    r"\d{1,3}[A-Za-z]?(?:\s?(?i:bis))?(?:\s(?i:sur|este))?\s?-\s?\d{1,3}[A-Za-z]?(?![\w])"
    rf"{_CO_QUADRANT}"
    r"(?:,?\s*(?i:apto|apartamento|apt|int|interior|oficina|of|piso|torre|bloque|casa|local"
    r"|consultorio|bodega)\.?\s*[0-9][0-9A-Za-z-]{0,4}(?![\w])){0,3}"
)
# What the one scan looks for: a `#` and its dashed pair (`# 13-27`, `#72-41`), whatever the
# street, and the types as literals (`cra.`, `cl `) for an address signed `No.`: a `no` before
# a pair is too common a shape (it cost the scan 0.7 µs a record, the `#` next to nothing).
_CO_HASHED_PAIR = rb"# ?[0-9]{1,3}[a-z]? ?(?:bis ?)?(?:sur ?|este ?)?- ?[0-9]"
_CO_TYPE_WORDS = ("calle", "carrera", "avenida", "diagonal", "transversal", "autopista",
                  "circular", "cra ", "cra.", "kra ", "kra.", "cll ", "cll.", "cl ", "cl.",
                  "kr ", "kr.", "cr ", "cr.", "av ", "av.", "avda", "ak ", "ak.", "ac ", "ac.",
                  "dg ", "dg.", "diag.", "tv ", "tv.", "tr ", "tr.", "transv")  # fmt: skip
# Where a pair's dash stands before its digit (a literal first character, which the regex
# engine skips along to): each address is read from there, in a window, never the whole text
# from every place.
_CO_DASH = re.compile(r"-[ \t]?\d")
_CO_BEFORE = 72  # characters before the dash where a street's type may start

# Hebrew: the street's type (a prefix letter may be glued to it: `ברחוב`, `לרחוב`), its name of
# one to three words, the house's number, then the flat and floor (`רחוב הרצל 45, דירה 4`,
# `שד' רוטשילד 12`). A name is no word of a sentence (`רחוב ללא מוצא`) and the number counts
# no minutes or metres.
_HE_TYPES = ("רחוב", "רח'", "רח׳", "רח’", "שדרות", "שד'", "שד׳", "שד’", "סמטת", "כיכר", "ככר")
_HE_NOT_NAMES = ("ללא", "בלי", "עם", "של", "זה", "הזה", "זו", "אחד", "אחת", "כל", "לא",
                 "אין", "יש", "הוא", "היא", "שלי", "שלו", "שלנו", "ראשי", "צדדי", "סגור",
                 "חד")  # fmt: skip
_HE_MEASURES = ("דקות", "דקה", "שעות", "שעה", "מטר", "מטרים", 'ק"מ', "קמ", "פעמים", "פעם",
                "שנים", "שנה", "ימים", "יום", "אחוז", "%", 'ש"ח', "שקל", "שקלים", "אנשים",
                "בתים", "רחובות", "מכוניות")  # fmt: skip
_HE_WORD = rf"(?!(?:{_either(_HE_NOT_NAMES)})(?![א-ת]))[א-ת][א-ת'’׳\"״-]*"
_HE_WORD_NEXT = re.compile(r"[ \t]*[א-ת]")
_HEBREW = re.compile(
    rf"(?<![א-ת])[ובלמהשכ]{{0,2}}(?P<street>(?:{_either(_HE_TYPES)})[ \t]+"
    rf"{_HE_WORD}(?:[ \t]+{_HE_WORD}){{0,2}}[ \t]+\d{{1,4}}(?:[א-ת](?![א-ת]))?(?![\d/])"
    rf"(?![ \t]*(?:{_either(_HE_MEASURES)}))"
    r"(?:[ \t]*,?[ \t]*(?:דירה|דירת|קומה|כניסה|בניין|מיקוד)[ \t]*\d{1,7}(?![\d])){0,3})"
)

# Persian: streets and alleys from the largest (`خیابان ولیعصر، کوچه نیلوفر`), then the house's
# plaque number (`پلاک ۱۲`), its unit and floor. The plaque makes it one; alone it may be a
# car's, and a street without it is a place named in passing.
_FA_TYPES = ("خیابان", "خ.", "بلوار", "کوچه", "كوچه", "میدان", "ميدان", "بزرگراه", "جاده",
             "کوی", "بنبست", "بن بست", "شهرک", "محله", "نبش", "خیابون")  # fmt: skip
# A name is no word of a sentence (`در خیابان با پلاک ۱۲`: a car's plate, "on the street with").
_FA_NOT_NAMES = ("با", "در", "از", "به", "که", "این", "آن", "را", "و", "یا", "هم", "تا", "بی")
_FA_WORD = rf"(?!(?:{_either(_FA_NOT_NAMES)})(?![\u0621-\u06d3])){_AR_WORD}"
_FA_PART = rf"(?:{_either(_FA_TYPES)})[ \t]*(?:\d{{1,4}}|{_FA_WORD}(?:[ \t]+{_FA_WORD}){{0,2}}?)"
_FA_THEN = r"[ \t]*[،,]?[ \t]*"
_PERSIAN = re.compile(
    rf"{_FA_PART}(?:{_FA_THEN}{_FA_PART}){{0,3}}{_FA_THEN}(?:پلاک|پلاك|پ\.)[ \t]*:?[ \t]*"
    r"\d{1,5}(?:/\d{1,3})?(?![\d])"
    rf"(?:{_FA_THEN}(?:واحد|طبقه|زنگ|کد[ \t]?پستی)[ \t]*:?[ \t]*\d{{1,10}}(?![\d])){{0,3}}"
)
_PERSIAN_PLAQUES = ("پلاک", "پلاك", "پ.")


def _houses_and_units(houses: str, units: str, sign: str, letter: str) -> re.Pattern[str]:
    """A house's or a flat's number, then a lane's, a road's or a block's, as South Asia writes
    them (the Hindi shape above, in Urdu and Bengali): a house's number is signed (`نمبر`,
    `নং`) or followed by another part, so that `home at 12` stays a time."""
    number = rf"[ \t]*[:.#-]?[ \t]*\d{{1,5}}(?:[-/]\d{{1,4}})?(?:{letter})?(?![\d])"
    house = rf"(?:{houses})[ \t]*"
    part = rf"(?:{houses}|{units})[ \t]*(?:{sign})?{number}"
    then = r"[ \t]*[،,]?[ \t]*"
    return re.compile(
        rf"{house}(?:(?:{sign}){number}(?:{then}{part}){{0,3}}|{number}(?:{then}{part}){{1,3}})"
        rf"|(?:{units})[ \t]*(?:{sign})?{number}(?:{then}{part}){{1,3}}"
    )


# Urdu: `مکان نمبر 27، گلی نمبر 4`, `فلیٹ نمبر 12، بلاک 3`.
_UR_HOUSES = ("مکان", "گھر", "فلیٹ", "پلاٹ", "ہاؤس", "ہاوس", "کوٹھی", "دکان")
_UR_UNITS = ("گلی", "بلاک", "سیکٹر", "فیز", "محلہ", "وارڈ", "روڈ", "سٹریٹ", "اسٹریٹ", "منزل")
_URDU = _houses_and_units(
    _either(_UR_HOUSES), _either(_UR_UNITS), r"نمبر|#", r"[A-Za-z](?![A-Za-z])"
)
# Bengali: `বাড়ি ১২, রোড ৭`, `বাসা নং ৪৫`, `ফ্ল্যাট ৪বি` (a flat's letter after its number).
_BN_HOUSES = ("বাড়ি", "বাড়ী", "বাসা", "ফ্ল্যাট", "ফ্লাট", "হোল্ডিং", "প্লট", "হাউস")
_BN_UNITS = ("রোড", "সড়ক", "লেন", "ব্লক", "সেক্টর", "গলি", "সেকশন", "ওয়ার্ড", "তলা", "এভিনিউ")
_BENGALI = _houses_and_units(
    _either(_BN_HOUSES),
    _either(_BN_UNITS),
    r"নং|নম্বর|নাম্বার|#",
    r"[A-Za-z](?![A-Za-z])|[\u0995-\u09b9\u09dc-\u09df][\u09be-\u09cc]?(?![\u0980-\u09ff])",
)

# Thai: the house's number with its slash (`55/12`) or after `บ้านเลขที่`, then its village
# (`หมู่ 3`), lane and sub-lane (`ซอยลาดพร้าว 101 แยก 7`), road (`ถนนสุขุมวิท`), sub-district and
# district. Without spaces between words, a name runs on to the next space: a district glued
# after it is taken too. `55/12 บาท` is a price: no road's word follows.
_TH_NAME = r"(?:[\u0e01-\u0e3a\u0e40-\u0e4e]{1,24}(?:[ \t]\d{1,3}(?![\d/]))?|\d{1,3}(?![\d/]))"
_TH_ROADS = ("ซอย", "ซ.", "ถนน", "ถ.", "ตรอก")
_TH_VILLAGES = ("หมู่ที่", "หมู่", "ม.")
# The sub-district, district and province follow a road or a village, never start: `อ.` is a
# teacher's title too.
_TH_DISTRICTS = ("ตำบล", "ต.", "แขวง", "อำเภอ", "อ.", "เขต", "จังหวัด", "จ.")
_TH_ROAD = (
    rf"(?:(?:{_either(_TH_VILLAGES)})[ \t]*\d{{1,2}}(?![\d])"
    rf"|(?:{_either(_TH_ROADS)})[ \t]*{_TH_NAME}(?:[ \t]*แยก[ \t]*\d{{1,3}}(?![\d]))?)"
)
_TH_PART = rf"(?:{_TH_ROAD}|(?:{_either(_TH_DISTRICTS)})[ \t]*{_TH_NAME})"
_THAI = re.compile(
    rf"(?:(?:{_either(('บ้านเลขที่', 'เลขที่'))})[ \t]*\d{{1,5}}(?:/\d{{1,4}})?"
    r"|(?<![\d/.])(?<!วันที่)(?<!วันที่ )\d{1,5}/\d{1,4})(?![\d/])"
    rf"[ \t]*,?[ \t]*{_TH_ROAD}(?:[ \t]*,?[ \t]*{_TH_PART}){{0,6}}"
)

# Malaysia: the house's, lot's or unit's number before the street's type (`No. 23, Jalan SS
# 2/64`, `Lot 5, Jalan Bukit Bintang`, `3-2, Jalan PJU 1A/3`). Its name is capitalised words or
# a township's code and its number; in lower case (`no 8 jalan usj 9/5`) only a code counts,
# since `no. 5 jalan terus` is a song going on.
_MY_NAME = r"(?:[A-Z][\w'-]*|[a-z]+(?=[ \t]*\d)|\d{1,3}[A-Za-z]?(?:/\d{1,3}[A-Za-z]?)?(?![\w/]))"
_MALAYSIAN = re.compile(
    r"(?<![\w/])(?P<sign>(?i:no|lot|unit|blok|block|plot)\.?[ \t]*:?[ \t]*)?"
    r"(?P<number>\d{1,5}[A-Za-z]?(?:-\d{1,3}[A-Za-z]?){0,2})(?![\w/]),?[ \t]+"
    r"(?P<type>(?i:jalan|jln\.?|lorong|lrg\.?|persiaran|lebuh|lingkaran|lengkok|solok))[ \t]+"
    rf"(?P<name>{_MY_NAME}(?:[ \t]+{_MY_NAME}){{0,3}})"
)
_MALAYSIAN_TYPES = ("jalan", "jln", "lorong", "lrg", "persiaran", "lebuh", "lingkaran", "lengkok",
                    "solok")  # fmt: skip

# The Philippines: a subdivision's block and lot (`Blk 12 Lot 8`, `Lot 16 Block 5`, `B12 L8`)
# and its phase, then a street and the barangay (`Mabini St., Brgy. San Isidro`). A block
# without its lot is code's, a phase alone a project's; the short letters pair only with each
# other (`Block 2 L1 cache` is a processor's).
_PH_BLOCK = r"(?i:blk|block)\.?[ \t]*\d{1,4}[A-Za-z]?(?![\w])"
_PH_LOT = r"(?i:lot)\.?[ \t]*\d{1,4}[A-Za-z]?(?![\w])"
_PH_PHASE = r"(?i:phase|ph)\.?[ \t]*(?:\d{1,2}[A-Za-z]?|[IVX]{1,4})(?![\w])"
_PH_THEN = r"[ \t]*,?[ \t]*"
_PHILIPPINE = re.compile(
    rf"(?<![\w])(?:{_PH_PHASE}{_PH_THEN})?"
    rf"(?:{_PH_BLOCK}{_PH_THEN}{_PH_LOT}|{_PH_LOT}{_PH_THEN}{_PH_BLOCK}"
    r"|B\d{1,4}[A-Za-z]?[ \t]*,?[ \t]*L\d{1,4}[A-Za-z]?(?![\w])"
    r"|L\d{1,4}[A-Za-z]?[ \t]*,?[ \t]*B\d{1,4}[A-Za-z]?(?![\w]))"
    rf"(?:{_PH_THEN}{_PH_PHASE})?"
    rf"(?:{_PH_THEN}(?:[A-Z][\w'.-]*[ \t]+){{1,3}}(?:{_EN_TYPES}|Ext)\b\.?)?"
    r"(?:,?[ \t]*(?i:brgy|bgy|barangay)\.?[ \t]+"
    r"(?:\d{1,4}|[A-Z][\w'.-]*(?:[ \t]+[A-Z][\w'.-]*){0,2}))?"
)
# The words of the long forms, and a barangay's, after which a short form is read too (a
# shape for `b12 l8` cost the one scan 2 µs a record).
_PH_WORDS = ("blk", "block", "brgy", "bgy", "barangay")
_PH_LOT_NUMBER = re.compile(r"l(?:ot\.?[ \t]*)?\d")  # a literal first letter: skipped along to

# Taiwan and Hong Kong, in traditional characters: the city and district, the road (`路`,
# `街`, `大道`, Hong Kong's `道`) and its section (`一段`), the lane and alley (`巷`, `弄`), the
# number (`號`, `之1` after it), the floor (`樓`) and the room (`A 室`). Hong Kong spaces them
# (`彌敦道 300 號 5 樓 A 室`); full-width digits read as ASCII ones. `知道`, `頻道` and the
# national highway `國道3號` are no streets.
_TW_PLACE = rf"(?:(?![我你他她們们住在於于到往寄送至是的了從从為为請请和與及])[{_CJK}])"
_TW_NUMERAL = r"(?:\d{1,3}|[一二三四五六七八九十]{1,3})"
_TAIWANESE = re.compile(
    rf"(?:{_TW_PLACE}{{2,6}}?[市縣])?(?:{_TW_PLACE}{{1,6}}?[區鄉鎮市])?"
    rf"{_TW_PLACE}{{1,8}}?(?:路|街|大道|(?<![知難味頻報軌跑賽通管國省])道)[東南西北中]?"
    rf"(?: ?{_TW_NUMERAL} ?段)?(?: ?\d{{1,4}} ?巷)?(?: ?\d{{1,4}} ?弄)?"
    r" ?\d{1,5}(?: ?之 ?\d{1,3})? ?號(?![線碼])(?: ?之 ?\d{1,3})?"
    rf"(?: ?{_TW_NUMERAL} ?(?:樓|F)(?: ?之 ?\d{{1,3}})?)?(?: ?[A-Z0-9]{{1,4}} ?室)?"
)

# Czech and Slovak: the street's name and its two numbers, the building's across the town and
# the door's along the street (`Korunní 1206/54`, `Na Příkopě 859/22`), or one after `ul.`,
# `ulice` or `náměstí` (`ul. Štefánikova 12`, `na ulici Hlavní 45`).
_CZ_CAPITAL = "A-ZÁČĎÉĚÍŇÓŘŠŤÚŮÝŽĽĹŔÄÔ"
_CZ_WORD = rf"[{_CZ_CAPITAL}][\w-]*"
_CZ_NAME = (
    r"(?:(?:Na|U|V|Ve|K|Ke|Pod|Nad|Za|Před|Pred|Při|Pri|Mezi)[ \t]+)?"
    rf"{_CZ_WORD}(?:[ \t]+(?:{_CZ_WORD}|\d{{1,2}}\.)){{0,2}}"
)
_CZECH_TYPES = r"(?i:ul\.|ulice|ulici|ulica|ulicu|třída|tř\.|nám\.|náměstí|námestie|nábřeží)"
_CZECH = re.compile(
    rf"{_CZECH_TYPES}[ \t]*{_CZ_NAME}[ \t]+\d{{1,5}}[a-z]?(?:/\d{{1,4}}[a-z]?)?(?![\w/])"
    rf"|(?P<name>{_CZ_NAME})[ \t]+(?P<building>\d{{1,5}})/(?P<door>\d{{1,4}})[a-z]?(?![\w/])"
)
_CZECH_SLASH = re.compile(r"\d{1,5}/\d")
# A name of Czech or Slovak letters, or one of their street names' endings (`Husova`): an
# English word before a ratio (`Model 1206/54`) has neither.
# (`-ho` only after a Czech letter's word: `Echo 1206/54` is English.)
_CZECH_LETTER = re.compile(r"[áčďéěíňóřšťúůýžľĺŕäô]|ova\b", re.IGNORECASE)

# Where a house number meets its street's name: a number before a capitalised word (221B Baker,
# 75002 Paris), or a capitalised word before a number (Hauptstrasse 5, Calle Mayor 5). Over
# Text.number_class (digits "0", capitals "A", other letters "a") in ASCII texts, with literal
# first bytes that the regex engine skips along to; over the characters in the others.
_NUMBER_THEN_NAME = re.compile(rb"0[Aa]?a? A")
# A French street's type in lower case between its number and its name (`8 rue Paul Bert`):
# the shape of a number, a word in lower case and a capital, then the word itself.
_NUMBER_THEN_WORD = re.compile(rb"0,? a{2,9} A")
_FRENCH_TYPES = (" rue ", " avenue ", " boulevard ", " bd ", " chemin ", " allée ", " impasse ",
                 " quai ")  # fmt: skip
_FRENCH_TYPE = re.compile(rf"[0-9],? (?:{'|'.join(kind.strip() for kind in _FRENCH_TYPES)}) ")
_NAME_THEN_NUMBER = re.compile(rb"Aa+[.,]? 0")  # `Rua Augusta, 1508` too
# A number's sign between them: `Rua Augusta, n.º 88` (`n.o` as the normalised view has it),
# `Str. Memorandumului nr. 28`; the shape first, then the sign where it stands.
_NAME_THEN_SIGNED_NUMBER = re.compile(rb"Aa+[.,]? aa?\.?a?\.? ?0")
_SIGN = re.compile(r"(?:n\.?[ºo°]|nr|no)\.? ?[0-9]")
_NUMBER_THEN_NAME_IN_TEXT = re.compile(r"[0-9][A-Za-z]?,? [A-ZÀ-Ý]")
# From a Latin word's start only (`是Gartenstraße 53` starts one), the word taken whole: a long
# run of letters is read once, not again from each of its letters.
# The word's letters are Latin's: a capital glued after another script's letters (`A中A中...`)
# is not read on through them to the text's end. Its first letter may be one of Latin
# Extended-A (`Štefánikova 12`, `Łódzka 5`), whose small letters come along in the range.
_LATIN_WORD = "[A-ZÀ-ÝĀ-ɏ][A-Za-zÀ-ÖØ-öø-ÿĀ-ɏḀ-ỿ]++"
_NAME_THEN_NUMBER_IN_TEXT = re.compile(rf"(?<![A-Za-zÀ-ÿĀ-ɏ]){_LATIN_WORD}[.,]? [0-9]")
_SIGNED_NUMBER_IN_TEXT = re.compile(
    rf"(?<![A-Za-zÀ-ÿĀ-ɏ]){_LATIN_WORD}[.,]? (?:n\.?[ºo°]\.? ?|nr\.? ?)[0-9]"
)
_NAME_BEFORE = 48  # characters before its number where a street's name and type may start
_FRENCH_BEFORE = 64  # characters before its postcode where a French street may start
# The types alone: a literal first letter each, which the regex engine skips along to.
_ROMANCE_TYPE = re.compile(
    r"(?:Calle|C/|Avenida|Avda\.|Av\.|Paseo|Plaza|Carrera|Via|Viale|Piazza|Corso|Rua|Travessa|"
    r"Largo|Rue|Avenue|Boulevard|Chaussée|Place|Chemin|Quai|Route|Allée|Impasse|ul\.|al\.|pl\."
    r"|ulica|aleja|Str\.|Strada|Bd\.|Bulevardul|Calea|Aleea|Șos\.|Șoseaua|Sos\."
    r"|ulice|ulici|ulicu|Ul\.|třída|tř\.|nám\.|náměstí|námestie|nábřeží)\s"  # Czech, Slovak
)
# What may follow a street found by the shapes above, on its line: a unit after its number
# (`112-2`, `4-H`, `12/3`), then a postcode and city as the country writes them: `1071 BB
# Amsterdam`, `8001 Zürich`, `D-10115 Berlin`, `1050 København K`, `00-950 Warszawa`, `114 55
# Stockholm`, `00184 Roma RM`, or the city before it (`Wellington 6011`, `Sydney NSW 2000`). It
# only lengthens an address already found: never a reason to find one.
_POSTAL_TAIL = re.compile(
    r"(?:[-/][0-9A-Za-z]{1,3}(?![\w-]))?"
    r"(?:,\s*\d{1,2}\s?[º°ªo]\s?[A-Za-z0-9]{0,4}(?![\w]))?"  # `º` reads `o` normalised
    # The flat or unit after the number, as each country writes it: `apt 4`, `int. 304`,
    # `m. 15`, `lgh 1102`, `ap. 5`, `kv. 12`, `#12`; a Danish floor and side (`2. th`).
    r"(?:,?[ \t]*(?<=[ \t])(?i:apt|apartment|unit|suite|ste|flat|fl|floor|int|interior|depto|dpto"
    r"|dto|piso|m|lok|lgh|ap|apto|apart|bl|sc|et|kv|кв|ж|app|appt|wohnung|whg|#)\.?[ \t]*"
    r"#?[0-9][0-9A-Za-z-]{0,5}(?![\w]))?"
    r"(?:,[ \t]*\d{1,2}\.[ \t]?(?:th|tv|mf|sal)\b\.?)?"
    r"(?:(?:,\s*|[ \t]*\n[ \t]*)(?:"
    r"(?:[A-Z]{1,2}-)?\d{4,5}(?:\s?[A-Z]{2})?\s+[A-ZÀ-Þ][\w'’-]+(?:[ -][A-ZÀ-Þ][\w'’-]+)?"
    r"(?: (?:am|an der|im|sur|upon|on) [A-ZÀ-Þ][\w'’-]+)?"
    r"(?:\s+[A-Z]{1,2}(?![\w]))?"
    r"|\d{2}-\d{3}\s+[A-ZÀ-ÞŁŚŻŹ][\w-]+"
    r"|\d{3}\s\d{2}\s+[A-ZÀ-Þ][\w-]+"
    r"|(?:[A-ZÀ-Þ][\w'’.-]+,\s*)?[A-ZÀ-Þ][\w'’.-]+(?:\s+[A-ZÀ-Þ][\w'’.-]+){0,2}(?:\s+[A-Z]{2,3})?"
    r"\s+\d{4}"  # `Westville, Durban 3629`: a suburb before its city
    # A Canadian city, its province and its postcode (`Victoria BC V8V 3R1`).
    r"|[A-ZÀ-Þ][\w'’.-]+(?:\s+[A-ZÀ-Þ][\w'’.-]+){0,2},?\s+(?:AB|BC|MB|NB|NL|NS|NT|NU|ON|PE|QC|SK"
    r"|YT)\s+[A-Z][0-9][A-Z]\s?[0-9][A-Z][0-9]"
    r")(?![\w]))?"
)

# A flat, an apartment or a unit before the house number, as UK and Australian addresses start.
_UNIT_BEFORE = re.compile(
    r"(?<![\w])(?:Flat|Apartment|Apt\.?|Unit|Suite)\s+[0-9][0-9A-Za-z]{0,4},\s*$"
)


# What a street's shape leaves after it on its line: its district, city, state and postcode,
# each after a comma (`, Drumcondra, Dublin 9, D09 X2R8`, `, Col. San Ángel, CDMX`, `, ধানমন্ডি,
# ঢাকা-১২০৫`): capitalised words (or words of a script without capitals) with a number among
# them, a postcode with its city, or a unit's abbreviation and number (`ap. 14`); each ends
# where its clause does, so that a sentence going on after a comma (`, and then we`) stays.
# (A word's letters, marks and signs up to a space or a clause's mark: Bengali's vowel signs
# are no `\w`. Not Chinese, Japanese or Korean, whose addresses have shapes of their own and no
# commas between their parts: what follows a comma there is the sentence.)
_LOCALITY_WORD = r"(?![\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])[^\W\d_][^\s,،、;:?!()]*"
_LOCALITY_PART = re.compile(
    r"\.?[ \t]*[,،、][ \t]*"
    r"(?:(?P<unit>(?:[A-Za-z]{1,5}\.[ \t]?|(?i:pta|puerta|piso|esc|apto|apt|ap|kv|kat|bl|flat|unit"
    r"|suite)[ \t])\d{1,4}[A-Za-z]?(?=[ \t]*(?:[,،、;)?!\n]|\.(?:\s|$)|$))"
    # a floor's ordinal and side (`3.º Esq.`, `2º dcha`)
    r"|\d{1,2}\.?[ºª°o]\.?(?:[ \t]?(?i:esq|dto|dt|drt|izq|izda|dcha|dch|fte|frente|e|d)\.?)?)"
    rf"|{_LOCALITY_WORD}(?:[ \t](?:{_LOCALITY_WORD}|\d{{1,5}}|[A-Z0-9]{{3}})){{0,4}}"
    rf"|\d[\w-]{{1,7}}(?:[ \t][A-Z0-9]{{2,4}})?(?:[ \t](?:{_LOCALITY_WORD}|\d{{1,3}})){{0,3}})"
    # (then a clause's end, or a symbol after a space: `..., USA 🙏`)
    r"(?=[ \t]*(?:[,،、;)?!\n]|\.(?:\s|$)|$)|[ \t]+[^\w\s.,'\"-])"
)
_LOCALITY_PARTS = 5  # the most parts read after a street (a part: five words at most)
# A postcode after the last part, a space before it (`Winnipeg, MB R3M 0A7`, `Leeds LS6 2QT`,
# `Portland, ME 04103-1234`): Canada's, the UK's, a US ZIP code.
_SPACED_POSTCODE = re.compile(
    r"[ \t]+(?:[A-Z][0-9][A-Z][ \t]?[0-9][A-Z][0-9]|[A-Z]{1,2}[0-9][A-Z0-9]?[ \t][0-9][A-Z]{2}"
    r"|[0-9]{5}(?:-[0-9]{4})?)(?![\w-])"
)
# A unit's number and a slash right before a house number, as Australia and New Zealand write a
# flat's (`7/33 Glebe Point Rd`), its word before it or none.
_UNIT_SLASH = re.compile(
    r"(?<![\w/.-])(?:(?i:unit|apt|apartment|flat|shop|suite|lot|u)\.?[ \t]*)?\d{1,4}[A-Za-z]?/\Z"
)


def with_locality(text: str, start: int, end: int) -> tuple[int, int]:
    """An address found at text[start:end], with the locality after it on its line."""
    for _ in range(_LOCALITY_PARTS):
        part = _LOCALITY_PART.match(text, end)
        if part is None:
            break
        words = part.group().lstrip(".,،、 \t").split()
        if part["unit"] is None and any(word[0].islower() for word in words):
            break  # a word of the sentence (`, пожалуйста`, `, and then`), no place's
        end = part.end()
        if text[end - 1] == "." and text[end : end + 1] in ("", " ", "\t", "\n"):
            end -= 1  # the sentence's full stop (`..., United Kingdom.`)
    code = _SPACED_POSTCODE.match(text, end)
    return start, end if code is None else code.end()


class _AddressFinder:
    """What every address finder declares: its one kind, its priority and both views; and what
    it finds, each address with its locality after it (`with_locality`)."""

    kinds = frozenset({"ADDRESS"})
    priority = PERSONAL_PRIORITY
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        for span in self._found(view):
            start = span.start
            if text[start : start + 1].isdigit() and (
                unit := _UNIT_SLASH.search(text, max(0, start - 16), start)
            ):
                start = unit.start()  # `Unit 7/33 Glebe Point Rd`, `14/52 Victoria St`
            yield Span(*with_locality(text, start, span.end), span.kind)

    def _found(self, view: Text) -> Iterator[Span]:
        raise NotImplementedError


@register("addresses")
class AddressFinder(_AddressFinder):
    triggers = Triggers(facts=(number(1),))  # every shape has a house or block number

    def _found(self, view: Text) -> Iterator[Span]:
        """Every Latin shape holds a house number beside a capitalised word (the street's name,
        or a French address's city after its postcode): only those places are tried, never a
        search of every shape over the whole text."""
        if not view.has_number(1):
            return
        text = view.text
        if text.isascii():  # number_class's bytes are characters
            shape = view.number_class
            afters = [hit.start() for hit in _NUMBER_THEN_NAME.finditer(shape)]
            befores = [hit.end() - 1 for hit in _NAME_THEN_NUMBER.finditer(shape)]
        else:
            afters = [hit.start() for hit in _NUMBER_THEN_NAME_IN_TEXT.finditer(text)]
            befores = [hit.end() - 1 for hit in _NAME_THEN_NUMBER_IN_TEXT.finditer(text)]
        yield from _addresses_at(view, afters, befores)
        if not text.isascii():
            if "号" in text:
                yield from matches(_CHINESE, text, "ADDRESS")
            if any(building in text for building in "栋幢座楼"):
                yield from matches(_CHINESE_ESTATE, text, "ADDRESS")
            if "座" in text:
                yield from matches(_CHINESE_TOWER, text, "ADDRESS")
            if any(unit in text for unit in "都道府県市区"):
                yield from matches(_JAPANESE, text, "ADDRESS")
            if any(unit in text for unit in "시군구"):
                yield from matches(_KOREAN, text, "ADDRESS")
            if any(kind in view.lower for kind in (*_CYRILLIC_TYPES, *_CYRILLIC_AFTER)):
                yield from matches(_CYRILLIC, text, "ADDRESS")


@register("addresses_by_street_words")
class StreetWordAddressFinder(_AddressFinder):
    """The Indonesian, Turkish, Indian and Arabic shapes, each where its street's or house's
    words are: a finder of its own, so that the one scan of every text looks for the words
    (twenty `in` tests of each text cost more than the shapes)."""

    triggers = Triggers(
        words=(*_INDONESIAN_TYPES, *(word.lower() for word in _TURKISH_TYPE_WORDS),
               *_ARABIC_TYPES, *_HINDI_UNITS),
        word_starts=_INDIAN_HOUSES,  # (`h no` in "with no" is none)
    )  # fmt: skip

    def _found(self, view: Text) -> Iterator[Span]:
        if view.has_number(1):
            yield from _other_countries(view)


def _other_countries(view: Text) -> Iterator[Span]:
    text, lower = view.text, view.lower
    if any(kind in lower for kind in _INDONESIAN_TYPES):
        yield from matches(_INDONESIAN, text, "ADDRESS")
    if any(kind in text for kind in _TURKISH_TYPE_WORDS):
        yield from matches(_TURKISH, text, "ADDRESS")
    if any(next(word_ends(lower, house), None) is not None for house in _INDIAN_HOUSES):
        yield from matches(_INDIAN, text, "ADDRESS")
    if text.isascii():
        return
    if any(kind in text for kind in _ARABIC_TYPES):
        yield from matches(_ARABIC, text, "ADDRESS")
    if any(unit in text for unit in _HINDI_UNITS):
        yield from matches(_HINDI, text, "ADDRESS")


class _WordedShapeFinder(_AddressFinder):
    """An address of one country's shape, its own finder so that the one scan of every text
    looks for its words and runs it only where they are."""

    shape: re.Pattern[str]

    def _found(self, view: Text) -> Iterator[Span]:
        if view.has_number(1):
            yield from self.addresses(view.text)

    def addresses(self, text: str) -> Iterator[Span]:
        yield from matches(self.shape, text, "ADDRESS")


@register("addresses_in_colombia")
class ColombianAddressFinder(_WordedShapeFinder):
    triggers = Triggers(words=_CO_TYPE_WORDS, shapes=(_CO_HASHED_PAIR,))
    shape = _COLOMBIAN

    def addresses(self, text: str) -> Iterator[Span]:
        done = 0
        for dash in _CO_DASH.finditer(text):
            at = dash.start()
            if at < done:
                continue
            for match in _COLOMBIAN.finditer(text, max(0, at - _CO_BEFORE), at + 64):
                if match.start() <= at < match.end():
                    done = match.end()
                    yield Span(match.start(), match.end(), "ADDRESS")
                    break


@register("addresses_in_hebrew")
class HebrewAddressFinder(_WordedShapeFinder):
    triggers = Triggers(words=tuple(map(_viewed, _HE_TYPES)))
    shape = _HEBREW

    def addresses(self, text: str) -> Iterator[Span]:
        for match in _HEBREW.finditer(text):  # without the prefix letter (`ב` of `ברחוב`)
            if match["street"].startswith("שדרות") and _HE_WORD_NEXT.match(text, match.end()):
                continue  # Sderot is a town too: `בשדרות נפלו 3 רקטות` counts rockets
            yield Span(match.start("street"), match.end(), "ADDRESS")


@register("addresses_in_persian")
class PersianAddressFinder(_WordedShapeFinder):
    triggers = Triggers(words=tuple(map(_viewed, _PERSIAN_PLAQUES)))
    shape = _PERSIAN


@register("addresses_in_urdu")
class UrduAddressFinder(_WordedShapeFinder):
    triggers = Triggers(words=tuple(map(_viewed, (*_UR_HOUSES, *_UR_UNITS))))
    shape = _URDU


@register("addresses_in_bengali")
class BengaliAddressFinder(_WordedShapeFinder):
    triggers = Triggers(words=tuple(map(_viewed, (*_BN_HOUSES, *_BN_UNITS))))
    shape = _BENGALI


@register("addresses_in_thai")
class ThaiAddressFinder(_WordedShapeFinder):
    triggers = Triggers(words=tuple(map(_viewed, (*_TH_ROADS, *_TH_VILLAGES))))
    shape = _THAI


@register("addresses_in_malaysia")
class MalaysianAddressFinder(_WordedShapeFinder):
    triggers = Triggers(word_starts=_MALAYSIAN_TYPES)
    shape = _MALAYSIAN

    def addresses(self, text: str) -> Iterator[Span]:
        for match in _MALAYSIAN.finditer(text):
            # A bare number before the street (`Track 3, Jalan Jalan`) is one only with a unit's
            # dash (`3-2`) or a township's code in the name (`SS 2/64`).
            if match["sign"] or "-" in match["number"] or any(map(str.isdigit, match["name"])):
                yield Span(match.start(), match.end(), "ADDRESS")


@register("addresses_in_the_philippines")
class PhilippineAddressFinder(_WordedShapeFinder):
    triggers = Triggers(word_starts=_PH_WORDS)
    shape = _PHILIPPINE

    def _found(self, view: Text) -> Iterator[Span]:
        if _PH_LOT_NUMBER.search(view.lower):  # `block` is in much code: a lot's number first
            yield from matches(_PHILIPPINE, view.text, "ADDRESS")


@register("addresses_in_traditional_chinese")
class TraditionalChineseAddressFinder(_WordedShapeFinder):
    triggers = Triggers(words=("號",))
    shape = _TAIWANESE


@register("addresses_with_a_sign_or_a_french_type")
class SignedAddressFinder(_AddressFinder):
    """The shapes AddressFinder leaves to the words that make them worth a look: a number's
    sign between a street and its number (`Rua Augusta, n.º 88`, `Str. Memorandumului nr. 28`)
    and a French street's type in lower case (`8 rue Paul Bert`). Their own finder, so that
    the one scan runs them only on a text with such a word (in every text the two shapes cost
    7 µs a record)."""

    triggers = Triggers(words=("nr.", "nr ", "n.o", "nº", "n°", *_FRENCH_TYPES))

    def _found(self, view: Text) -> Iterator[Span]:
        if not view.has_number(1):
            return
        text, afters, befores = view.text, [], []
        if text.isascii():
            shape = view.number_class
            befores = [
                hit.end() - 1
                for hit in _NAME_THEN_SIGNED_NUMBER.finditer(shape)
                if _SIGN.match(text, shape.rfind(b" ", 0, hit.end() - 2) + 1)
            ]
            afters = [
                hit.start()
                for hit in _NUMBER_THEN_WORD.finditer(shape)
                if _FRENCH_TYPE.match(text, hit.start())
            ]
        else:
            befores = [hit.end() - 1 for hit in _SIGNED_NUMBER_IN_TEXT.finditer(text)]
            afters = [hit.start() for hit in _FRENCH_TYPE.finditer(text)]
        yield from _addresses_at(view, afters, befores)


def _addresses_at(view: Text, afters: list[int], befores: list[int]) -> Iterator[Span]:
    """The addresses whose house number ends at one of `afters` (its name after it) or starts
    at one of `befores` (its name before it), each with its unit and postal tail."""
    text = view.text
    found = [match for last in afters if (match := _number_first(text, last))]
    found += [match for first in befores if (match := _name_first(view, first))]
    done = 0  # one span for an address found from two places
    for match in sorted(found, key=lambda match: match.start()):
        if match.start() >= done:
            tail = _POSTAL_TAIL.match(text, match.end())
            done = max(match.end(), tail.end() if tail else 0)
            unit = _UNIT_BEFORE.search(text, max(0, match.start() - 24), match.start())
            yield Span(unit.start() if unit else match.start(), done, "ADDRESS")


def _number_first(text: str, last: int) -> re.Match[str] | None:
    """An English address whose house number's last digit is at `last`, or a French one
    before the postcode there."""
    start = last
    while start and text[start - 1].isdigit():
        start -= 1
    if start and text[start - 1].isascii() and text[start - 1].isalnum():
        return None  # inside a word or a hash (`地址是742 ...` is not)
    match = _NUMBER_FIRST.match(text, start)
    if match is None and last - start == 4:  # a French postcode: its street before it
        match = _NUMBER_FIRST.search(text, max(0, start - _FRENCH_BEFORE), last + 40)
    return match


def _name_first(view: Text, first: int) -> re.Match[str] | None:
    """A Germanic or Romance address whose house number starts at `first`, after its name."""
    text, space = view.text, first - 1
    if view.lower.endswith(_GERMANIC_TYPES, 0, space):  # Hauptstrasse 5, Bahnhofstr. 12
        return _GERMANIC.search(text, max(0, space - _NAME_BEFORE), first + 40)
    before = max(0, first - _NAME_BEFORE)
    typed = _ROMANCE_TYPE.search(text, before, first) is not None  # Calle Mayor 5
    if typed and (match := _ROMANCE.search(text, before, first + 40)) is not None:
        return match
    if typed or _CZECH_SLASH.match(text, first):  # ul. Štefánikova 12, Korunní 1206/54
        return _czech_or_slovak(text, first)
    return None


def _czech_or_slovak(text: str, first: int) -> re.Match[str] | None:
    """A Czech or Slovak street whose number starts at `first`: after its type, or with the
    building's and the door's numbers (`Korunní 1206/54`) under a name of the languages'
    letters. The building's number is the larger, which leaves a fraction (`1/2`), a date
    (`15/3`) and a season (`2024/25`)."""
    for match in _CZECH.finditer(text, max(0, first - _NAME_BEFORE), first + 16):
        if match.end() <= first:
            continue
        if match.start() >= first:
            return None
        if match["building"] is None:
            return match
        building, door = int(match["building"]), int(match["door"])
        season = len(match["building"]) == 4 and (building + 1) % 100 == door
        date = building <= 31 and door <= 12
        if building > door and not season and not date and _CZECH_LETTER.search(match["name"]):
            return match
        return None
    return None


# A home address after a word that names it, in any country's form and in any case: the rest of
# its line or sentence (`Address: Flat 302, Shanti Apartments, Sector 15, Noida 201301`, `i live
# at 42 wallaby way sydney`, `Endereço: Rua Augusta, 1508, apto 72`, `地址：广东省深圳市...`).
# Words that end in a preposition or a verb need nothing more; a label needs a colon, a dash or
# "is" after it, so that `address space` and `Adresse des Servers` stay prose.
_LABELS_SAID = ("i live at", "i live on", "we live at", "lives at", "wohne in der",
                "j'habite au", "moro na", "moro em", "vivo en", "abito in")  # fmt: skip
# A contract's or a record's words for where a party lives: a street or a town must follow.
_LABELS_RESIDING = ("resided at", "residing at", "resident at", "wunnhaft",
                    "domicilio en", "domiciliado en", "domiciliada en", "domiciliado na",
                    "domiciliada na", "residente en", "residente em", "residente na",
                    "wohnhaft", "wohnhaft in", "demeurant au", "demeurant à", "domicilié au",
                    "domiciliée au", "residente in", "domiciliato in", "domiciliata in",
                    "indirizzo")  # fmt: skip
_LABELS = ("address", "home address", "dirección", "direccion", "domicilio", "adresse",
           "anschrift", "endereço", "endereco", "morada", "indirizzo", "residenza", "adres",
           "woonadres", "地址", "住址", "住所", "現住所", "주소", "العنوان", "عنوان")  # fmt: skip
# The kinds of address that are a machine's or a mailbox's, before or after the label.
_NOT_HOMES_BEFORE = re.compile(
    r"(?:ip|ipv4|ipv6|mac|e[- ]?mail|memory|web|server|wallet|contract|bitcoin|eth|base|hardware"
    r"|network|bind|listen|host|remote|local|broadcast|gateway|proxy|url|website|return|physical"
    r"|virtual|hex|multicast|loopback|link|bus|start|end|load|target|source|destination)"
    r"[ _-]?$"
)
_NOT_HOMES_AFTER = re.compile(
    r"\s*(?:ip|mac|e-?mail|mail|web|électronique|electronique|eletrônico|eletronico|de correo"
    r"|de e-?mail|elettronica|del server|des servers|du serveur|space|bar|book|line|field|column"
    r"|format|type|lookup|validation|parser)(?![\w])",
    re.IGNORECASE,
)
# Labels that are other words too in a sentence (`पता` is "known", `adresi` "its address"):
# an address only after their colon, as forms write them.
_COLON_LABELS = ("alamat", "adresi", "adresa", "anwani", "osoite", "διεύθυνση",
                 "địa chỉ", "כתובת", "पता", "ที่อยู่", "адрес", "адреса", "lakcím",
                 "heimilisfang", "adrese", "adresas", "aadress", "ঠিকানা", "bydliště",
                 "bydlisko", "makazi", "helbidea", "seoladh", "indirizz", "հասցե", "ünvan",
                 "мекенжай", "ලිපිනය", "àdírẹ́sì", "enderezo", "adreça", "ठेगाना", "လိပ်စာ",
                 "អាសយដ្ឋាន", "ທີ່ຢູ່", "хаяг", "முகவரி", "አድራሻ", "نشانی", "آدرس")  # fmt: skip
_CJK_CHARACTER = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")
# A form's colon, a record's `=`; a few words saying which address before it (`Địa chỉ thường
# trú:`, `Alamat pengiriman:`, `Адреса становања:`).
_COLON_JOINT = re.compile(r"(?:[ \t]+[^\W\d_]{2,}){0,3}?[ \t]*[:：=][ \t]*")
_LABEL_JOINT = re.compile(r"[ \t]*(?:[:：=]|[-–][ \t]|(?:is|es|est|ist|é|è|lautet)[ \t:])[ \t]*")
_SAID_JOINT = re.compile(r"[ \t]+")
_CJK_JOINT = re.compile(r"[ \t]*(?:[:：=]|是|为|為|は|는|은)?[ \t]*")
# The value: up to the line's end, a sentence's end, or a clause a CJK text closes.
_VALUE = re.compile(r"[^\n;|·，。；]{4,120}")
_NEXT_VALUE = re.compile(r"(?<=[0-9]): ")
_A_DIGIT = re.compile(r"[0-9]")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")
# A short word before a dot: an abbreviation in an address (a street's type, "number", a city's
# kind), not a sentence's end.
_ABBREVIATION = re.compile(r"(?<![^\W\d_])[^\W\d_][^\W\d_\u0900-\u097f]{0,3}[\u0900-\u097f]?$")
_CJK_CLAUSE = re.compile(r",(?=[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af])")
_CJK_ENDINGS = ("です", "입니다", "이에요", "예요")
# A postcode and its town's capitalised words, then a comma or the end: where an address ends.
# (Each word's letters possessive, a hyphen only between words: `Saint-Étienne`, read one way.)
_POSTCODE_AND_CITY = re.compile(
    r"(?<![\w-])(?:[0-9]{4}-[0-9]{3}|[0-9]{4,5})[ \t]+"
    r"[A-ZÀ-ÞĀ-ɏ][\w'’.]*+(?:[ \t/-][A-ZÀ-ÞĀ-ɏ][\w'’.]*+)*+(?=,[ \t]|\Z)"
)
# A house number or a postcode: a number that is not a day's (`on the 3rd`).
_HOUSE_OR_CODE = re.compile(r"\d(?!\d|st\b|nd\b|rd\b|th\b)")
# (`No:214 D:9 Kat:3`: a Turkish address's number, door and floor; a host's port otherwise.)
_NOT_A_HOME = re.compile(
    r"@|://|www\.|0x|\d+\.\d+\.\d+|[<>{}$\[\]`]|(?<!\b[Nn]o)(?<!\b[Dd])(?<!\b[Kk]at):\d"
)
# A value that says there is none (`same as shipping (2 items)`, `N/A (see ticket 4521)`,
# `TBD, will send 2 days before`): its number counts something else.
_NO_ADDRESS = re.compile(
    r"(?i)(?:same\b|n/?a\b|tb[ad]\b|none\b|unknown\b|see\b|pending\b|not\b|required\b"
    r"|optional\b|idem\b|siehe\b|voir\b|ver\b|vide\b)"
)
_IN_BRACKETS = re.compile(r"\([^()]*\)")


# An English address typed in lower case, as chat has it ("1429 w elm st apt 3b chicago il
# 60622", "42 oak road, leeds ls6 2ab"): whole, up to its state and ZIP code or its UK postcode,
# since a number and a street's words alone are everywhere in lower-case prose.
_LOWER_CASE_TYPES = ("st", "street", "ave", "avenue", "rd", "road", "ln", "lane", "dr", "drive",
                     "blvd", "boulevard", "hwy", "highway", "pkwy", "parkway")  # fmt: skip
# A street's or a city's words are no words of a sentence ("exit 45 on the highway to ...").
_NOT_A_FUNCTION_WORD = (
    r"(?!(?:on|the|to|in|at|of|a|an|and|or|for|from|by|with|down|up|into|onto|off|my|your|our"
    r"|this|that|is|was|are|near|past|via|then)\b)"
)
# Read from each street type's word (rarer than digits in prose): a house number and the
# street's words before it, then a unit, a city and the code after it.
_LOWER_CASE_TYPE_ENDS = WordEnds(_LOWER_CASE_TYPES)  # one scan: a regex tries every place
_LOWER_CASE_STREET = re.compile(
    r"(?<![\w])\d{1,6}[a-z]?\s+(?:(?:[nsew]|north|south|east|west)\.?\s+)?"
    rf"(?:{_NOT_A_FUNCTION_WORD}[a-z][a-z'.-]+\s+){{1,3}}$"
)
_LOWER_CASE_TAIL = re.compile(
    r"(?:,?\s+(?:apt|apartment|suite|ste|unit|flat|#)\.?\s*#?[a-z0-9-]{1,6}\b)?"
    rf",?\s+(?:{_NOT_A_FUNCTION_WORD}[a-z][a-z.'-]+\s+){{0,2}}{_NOT_A_FUNCTION_WORD}[a-z][a-z.'-]+,?\s+"
    r"(?:[a-z]{2}\s+\d{5}(?:-\d{4})?|[a-z]{1,2}\d[a-z\d]?\s*\d[a-z]{2})(?![a-z0-9])"
)
_LOWER_CASE_REACH = 64  # characters before a street's type where its house number may start


@register("addresses_typed_in_lower_case")
class LowerCaseAddressFinder(_AddressFinder):
    # Each type after a space, as literals (a class around a two-letter word costs the scan
    # more than the finder costs where it fires); the shortest also with what follows them.
    triggers = Triggers(
        words=tuple(
            f" {kind}{after}"
            for kind in _LOWER_CASE_TYPES
            for after in ((" ", ".", ",", "\n") if len(kind) == 2 else ("",))
        )
    )

    def _found(self, view: Text) -> Iterator[Span]:
        if not view.has_number(1):
            return
        lower = view.lower
        data = lower.encode("utf-8", "surrogatepass")
        if len(data) != len(lower):
            return  # typed in lower case, in English: an ASCII text (bytes are characters)
        for end in _LOWER_CASE_TYPE_ENDS.ends(data):
            following = lower[end : end + 1]
            if following.isalpha():
                continue  # `stone`, `avenues`: another word
            start = end - 1
            while start > 0 and lower[start - 1].isalpha():
                start -= 1
            if lower[start - 1 : start] != " " or (end - start == 2 and following not in " .,\n"):
                continue  # what the triggers hold: a space before, and after `st` a space, a mark
                # or the line's end (a shipping label's `88 WILLOW CREEK RD`, its city below)
            end += following == "."
            tail = _LOWER_CASE_TAIL.match(lower, end)
            if tail is None:
                continue
            street = _LOWER_CASE_STREET.search(lower, max(0, start - _LOWER_CASE_REACH), start)
            if street is not None:
                yield Span(street.start(), tail.end(), "ADDRESS")


@register("addresses_after_a_label")
class LabelledAddressFinder(_AddressFinder):
    triggers = Triggers(
        word_starts=tuple(
            w for w in (*_LABELS, *_LABELS_SAID, *_LABELS_RESIDING, *_COLON_LABELS) if w.isascii()
        ),
        words=tuple(w for w in (*_LABELS, *_LABELS_RESIDING, *_COLON_LABELS) if not w.isascii()),
    )

    def _found(self, view: Text) -> Iterator[Span]:
        if not view.has_number(1):
            return
        text, lower = view.text, view.lower
        for words, joint, street in (
            (_LABELS, _LABEL_JOINT, False),
            (_LABELS_SAID, _SAID_JOINT, False),
            (_LABELS_RESIDING, _SAID_JOINT, True),
            (_COLON_LABELS, _COLON_JOINT, False),
        ):
            for word in words:
                for end in word_ends(lower, word):
                    if word.isascii() and lower[end : end + 1].isalpha():
                        continue  # `addresses`, `adressen`
                    start = end - len(word)
                    before = lower[start - 1 : start] if start else " "
                    if not _CJK_CHARACTER.match(word) and (before.isalnum() or before in "@."):
                        continue  # inside a word or an e-mail address (`x@عنوان.com`): spaced
                        # scripts have a word's boundary; Chinese, Japanese and Korean have none
                    span = _labelled(text, lower, end - len(word), end, joint, street)
                    if span is not None:
                        yield span


def _labelled(
    text: str, lower: str, start: int, end: int, joint: re.Pattern[str], street: bool = False
) -> Span | None:
    """The address after the label at lower[start:end], or None; `street`: only one that holds
    a street or a postcode and its town (_a_street_or_town)."""
    if _NOT_HOMES_BEFORE.search(lower, max(0, start - 12), start) or _NOT_HOMES_AFTER.match(
        lower, end
    ):
        return None
    cjk = joint is not _COLON_JOINT and not text[start:end].isascii()
    said = (_CJK_JOINT if cjk else joint).match(text, end)
    if said is None and not cjk:
        return None
    value_start = said.end() if said is not None else end
    value = _VALUE.match(text, value_start)
    if value is None:
        return None
    stop = value.end()
    for sentence in _SENTENCE_END.finditer(text, value_start, stop):
        if sentence.group()[0] == "." and _ABBREVIATION.search(text, value_start, sentence.start()):
            continue  # `Jl. Sudirman`, `Cad. No: 45`, `TP. Hồ Chí Minh`, `नं. 24`: a short word
        if (
            sentence.group()[0] == "."
            and text[sentence.start() - 1 : sentence.start()].isdigit()
            and _A_DIGIT.search(text, sentence.end(), stop) is not None
        ):
            continue  # an ordinal or a house's number, more of the address after it (`Pozsonyi
            # út 38. 3. em. 12.`, `Mah. 3. Cadde No: 17/5`, `utca 9. 2/4`)
        stop = sentence.start()
        break
    clause = _CJK_CLAUSE.search(text, value_start, stop) if cjk else None
    if clause is not None:  # `，` reads `,` normalised: a comma before more CJK text ends it
        stop = clause.start()
    # (A number's colon and a space start the next label's value, a fields view's line joined
    # on: `ঢাকা-1205: 5,000 টাকা`; `No: 45` is the address's.)
    found = _NEXT_VALUE.split(text[value_start:stop], 1)[0].rstrip(" \t,.")
    city = _POSTCODE_AND_CITY.search(found, 1)  # (not a house's number at the start)
    if city is not None:  # the address ends with its town (`41004 Sevilla, en adelante`)
        found = found[: city.end()]
    for ending in _CJK_ENDINGS:  # `住所は...です`
        if found.endswith(ending):
            found = found[: -len(ending)]
    if (
        _HOUSE_OR_CODE.search(_IN_BRACKETS.sub("", found)) is None  # `(2 items)`: a count
        or _NO_ADDRESS.match(found) is not None
        or sum(char.isalpha() for char in found) < 3
        or (not cjk and " " not in found)
        or _NOT_A_HOME.search(found)
        or (street and not _a_street_or_town(found))
    ):
        return None
    return Span(value_start, value_start + len(found), "ADDRESS")


_ROMANCE_ANY_CASE = re.compile(_ROMANCE.pattern, re.IGNORECASE)


def _a_street_or_town(found: str) -> bool:
    """After words said in a sentence (`residente en`, `wohnhaft`), an address holds a street
    (`calle Betis 17`, `Landstraße 104`) or a postcode and its town, unlike a country and a
    time (`residente en España desde 2019`, `wohnhaft seit 2010 in Berlin`)."""
    return bool(
        _ROMANCE_ANY_CASE.search(found)
        or _GERMANIC.search(found)
        or _POSTCODE_AND_CITY.search(found, 1)
    )


# A street's name and its house number, then a postcode and its town, as most of Europe writes
# an address (`Brüsseler Str. 61, 50674 Köln`, `Am Lindenhof 7, 30926 Seelze`, `Mlynskej 27, 040
# 01 Košice`, `carrer de Verdi 87, 08012 Barcelona`, `Oudegracht 212 bis, 3511 NS Utrecht`):
# with no street's type to go by, the postcode and the town after the house number say it. The
# street: one to four capitalised words (particles between them), a street's type in lower case
# before them; the postcode: five digits, four (not a year's: `Windows 10, 2019 Edition`; a
# Dutch one's letters after it), `123 45` or `12-345`; the town capitalised, a district's
# number after it (`Praha 5`).
_EU_PARTICLE = (
    r"(?:de|del|dels|de la|dei|degli|delle|della|di|da|do|das|dos|van|von|der|den|la|le|les|des"
    r"|du|am|an|im|auf|zum|zur)"
)
_EU_TYPE = (
    r"(?:carrer|calle|avinguda|passeig|via|viale|vicolo|piazza|corso|rue|avenue|rua|avenida"
    r"|travessa|ulica|ul\.|ulice|ul|utca|út|strada|calea|bulevar|bul\.|ulitsa|οδός|οδό|οδού"
    r"|λεωφ\.|λεωφόρος|ул\.|улица|бул\.|пр\.)"
)
# A street's type written after its name as a word of its own, in lower case (`Thorvald Meyers
# gate 61B`, `Kongens gade 12`).
_EU_TYPE_AFTER = (
    r"(?:gate|gata|gatan|vei|veien|vej|vegen|väg|vägen|tie|katu|utca|út|gade|sokak|cesta|ulica"
    r"|mnt|tn|pst|iela|gatvė|pr\.)"
)
_EU_WORD = r"[A-ZÀ-ÞĀ-ɏΆ-ΫА-ЯЁ][\w'’.-]*"  # (Greek and Cyrillic capitals too)
_EU_TOWN = r"[A-ZÀ-ÞĀ-ɏΆ-ΫА-ЯЁ][\w'’-]*"
_CAPITALISED_WORD = re.compile(_EU_WORD)
# The postcode and the town, found first (a comma is their literal first character), then the
# street and its number read back from the comma: a pattern of the street first, tried at every
# capital of a page, cost ~150 µs a 2 KB record.
_EU_POSTCODE_AND_TOWN = re.compile(
    r",[ \t]*(?P<code>(?:[A-Z]{1,2}-)?(?:\d{5}|\d{4}-\d{3}|\d{4}(?:[ \t]?[A-Z]{2}(?![\w]))?"
    r"|\d{3}[ \t]\d{2}|\d{2}-\d{3}))"
    rf"[ \t]+{_EU_TOWN}(?:[ -]{_EU_TOWN})?(?:[ \t]+\d{{1,2}}(?![\w.,]\d))?(?![\w])"
    r"(?:[ \t]+\([A-Z]{2}\))?"  # an Italian town's province (`Seregno (MB)`)
)
_EU_STREET_AND_NUMBER = re.compile(
    rf"(?<![\w'’.-])(?P<street>(?:(?i:{_EU_TYPE})[ \t]+)?(?:{_EU_PARTICLE}[ \t]+)?{_EU_WORD}"
    rf"(?:[ \t]+(?:{_EU_PARTICLE}[ \t]+)?{_EU_WORD}){{0,3}}(?:[ \t]+{_EU_TYPE_AFTER})?)"
    r"[ \t]+\d{1,4}[a-zA-Z]?(?:[/-]\d{1,4}[a-zA-Z]?)?(?:[ \t]+(?:bis|ter|[A-Z](?![\w])))?"
    r"(?:[ \t]+(?:bus|bte|boîte|box)[ \t]+\d{1,4})?\Z"  # a Belgian letterbox (`88 bus 3`)
)
_EU_STREET_REACH = 80  # characters before the comma where the street may start
_BEFORE_A_CODE = re.compile(r"[ \t]*(?:[A-Z]{1,2}-)?")  # between the comma and the postcode


@register("addresses_before_a_postcode")
class PostcodeAddressFinder(_AddressFinder):
    triggers = Triggers(facts=(number(4),))  # a postcode has four digits or more

    def _found(self, view: Text) -> Iterator[Span]:
        text = view.text
        for run, _ in view.number_runs:  # (the runs the finders share: no search of every comma)
            comma = text.rfind(",", max(0, run - 5), run)
            if comma < 0 or not _BEFORE_A_CODE.fullmatch(text, comma + 1, run):
                continue
            town = _EU_POSTCODE_AND_TOWN.match(text, comma)
            if town is None:
                continue
            code = town["code"]
            if len(code) == 4 and 1900 <= int(code) <= 2099:
                continue  # a year, not a postcode (`Windows 10, 2019 Edition`)
            comma = town.start()
            line = text.rfind("\n", 0, comma) + 1
            street = _EU_STREET_AND_NUMBER.search(text, max(line, comma - _EU_STREET_REACH), comma)
            if street is not None:
                yield Span(_street_start(street), town.end(), "ADDRESS")


def _street_start(match: re.Match[str]) -> int:
    """Where the street's name starts: at a word that is a whole street's name, its type its
    ending (`Wohnhaft Seestrasse 18`: a German noun capitalised before it is none of it)."""
    start = match.start("street")
    for word in _CAPITALISED_WORD.finditer(match["street"]):
        lower = word.group().lower()
        if word.start() > 0 and any(
            lower.endswith(kind) and len(lower) > len(kind) + 2 for kind in _GERMANIC_TYPES
        ):
            return start + word.start()
    return start
