"""A first name alone where the words around it say a person is meant (addressed, after a verb or
a role that takes a person, before a verb of saying, in a possessive, before an age, beside
another name, signing a message); who writes each line of a copied chat with its time in
brackets; a message to a `@first.last` handle that starts its line; a street and its number
before a postcode and a town; a booking reference and an airline ticket after a word naming
them; and an answer read after its question in a time-stamped chat. Beside each, the look-alikes
that stay: names of things and places, assistants, eponyms, calls, logs, decorators, years."""

# ruff: noqa: E501  (a case reads best on one line)
from __future__ import annotations

import pytest

from tests.helpers.redaction import (
    REDACTOR,
    found_as,
    hides_each,
    leaves_each,
    leaves_each_by_kinds,
    names,
)

pytestmark = pytest.mark.unit

FIRST_NAMES = [
    # Addressed: after a thanks or a greeting, in the languages people chat in.
    ("Thanks Maria! See you tomorrow.", "Maria"),
    ("Danke Jonas, bis morgen.", "Jonas"),
    ("Merci Camille ! À demain", "Camille"),
    ("Gracias Lucía!", "Lucía"),
    ("Agent (Chloe): Thanks Ravi, I've reissued it - it'll work now", "Ravi"),
    # After a verb or a role that takes a person.
    ("Can you ask Priya to call back?", "Priya"),
    ("I'll send Dave round tmrw am, he has the key", "Dave"),
    ("Spoke to Aisha this morning, she confirmed.", "Aisha"),
    ("my colleague Priya will send it.", "Priya"),
    ("kurier Bartek: dzień dobry, paczkomat pełny", "Bartek"),
    ("СДЭК: курьер Руслан привезёт заказ сегодня", "Руслан"),
    # Before a verb of saying, or another verb inside a sentence.
    ("Maria said the boiler broke again.", "Maria"),
    ("I think Maria will call you back.", "Maria"),
    ("ok so Jenny and I will pick up the kids at 5", "Jenny"),
    # A possessive.
    ("Your W-2 is fine but Dana's SSN is missing from the intake form", "Dana"),
    ("ask about the invoice for Noah's filling", "Noah"),
    ("Also still missing Harvey's blue water bottle", "Harvey"),
    # Before an age, or with it in brackets.
    ("Present: Leanne Doyle (mother), Kayden (8), Mia (4).", "Kayden"),
    ("Anwesend: Kindsmutter, Kinder Can (5) und Melek (2).", "Can"),
    ("acompañada de su hija menor (Nour, 6 años). Refiere retraso", "Nour"),
    # Beside another first name.
    ("Lena and Micah are already with me so room for one more", "Micah"),
    ("Supervision notes 3/12 (Jasmine / Pete)", "Jasmine"),
    ("Murat: erledigt, für Elif und Deniz", "Deniz"),
    # Signing a message after a comma or an emoji.
    ("Happy to pay thru the app, tracked postage pls 🙏 xx Megan", "Megan"),
]

NOT_FIRST_NAMES = [
    "Bertrand's postulate assures that there is a prime between n and 2n.",
    "Victoria's Secret and Trader Joe's are open late.",
    "Claude's answer was right. Thanks Claude!",
    "moved to Paris; the Grace period ends in June.",
    "# Ties will be broken by choosing the pair with the lowest index",
    ">>> Pauli(1)*Pauli(2)\nI*sigma3",
    "callbacks: Dict[str, Cal",
    "Ruby's syntax and Julia's speed",
]

CHAT_WRITERS = [
    ("[9:40 PM] Zed: here's the bot token lol\n[9:42 PM] Kaz: BRO delete that rn", "Kaz"),
    (
        "[Yesterday at 11:02 PM] ghostpepper: lol i grabbed his ip\n[Yesterday at 11:03 PM] Mod | Ren: sharing IPs is a ban",
        "ghostpepper",
    ),
    (
        "[Yesterday at 11:02 PM] ghostpepper: lol i grabbed his ip\n[Yesterday at 11:03 PM] Mod | Ren: sharing IPs is a ban",
        "Ren",
    ),
    ("[21:03] Lou: ok\n[21:04] KryptoNyx: id riot nyx.kryp je change le mail", "KryptoNyx"),
    (
        "[오후 11:20] 헬창고양이: 누가 내 배그 계정 빌려갈 사람\n[오후 11:21] bbangbbang99: 야 그거 여기 올리면 안돼",
        "bbangbbang99",
    ),
]

CHAT_WRITERS += [
    # A date before or after the time, a dot in it, an emoji after the name.
    ("[14/03/2024, 19:10] Ann: lost my keys\n[14/03/2024, 19:12] Raj: will keep an eye out", "Raj"),
    ("[09:31, 02/06/2024] Jess 🌻: Morning all!\n[09:33, 02/06/2024] Tom: morning", "Jess"),
    ("[25.5.2024 klo 19.22] Jussi: Moi kaikki!\n[25.5.2024 klo 19.25] Aino: Kiitos!", "Jussi"),
    (
        "[03/06/2024، 9:15 م] أم خالد: السلام عليكم\n[03/06/2024، 9:25 م] أبو فهد: اللي يحتاج سباك",
        "أبو فهد",
    ),
]

NOT_CHAT_WRITERS = [
    # Who writes, not their name: a parent, `me`, a group.
    "[06/06/2024 19:20] Maman: Le train est à 8h47\n[06/06/2024 19:22] Moi: ok super",
    "[3/9/24, 19:02] Mãe: amanhã há reunião\n[3/9/24, 19:05] Eu: ok, vou depois do trabalho",
    "[12/11/2024, 18:02] PTA: Christmas jumper day is Fri 13 Dec\n[12/11/2024, 18:05] PTA: Year 4 trip",
    "[12:00:01] kernel: started\n[12:00:02] worker: failed to bind",
    "[12:00:01] INFO: started\n[12:00:02] ERROR: failed to bind\n[12:00:03] Agent: hello",
]

CHAT_WRITERS += [
    # Slack's header line copied as markdown: a handle or a name in bold, then the time.
    (
        "#general\n\n**maria.g**  9:14 AM\nreminder: signups close friday\n\n**tk_runs**  9:20 AM\ndone",
        "tk_runs",
    ),
    ("**Tom Becker**  10:02\non it", "Tom Becker"),
]

CHAT_WRITERS += [
    # The day's name before the time (Signal, WhatsApp); Slack's own bold in a copy.
    ("Choir\nTue 08:51 - Aoife: Morning!\nTue 09:03 - Pádraig Keane: rehearsal moved", "Aoife"),
    ("*Ben T*  3:12 PM\nis this the key for prod\n*Laura M*  3:14 PM\nBen pls delete", "Laura M"),
]

FIRST_NAMES += [
    # Two names after one greeting.
    ("Hi Claire & Ravi,\n\nThanks for a great call!", "Ravi"),
    ("Hi Jamal and Priya,\n\nThis is a reminder that rent is due.", "Priya"),
]

PLATES = [
    # After a word naming a plate, in more languages and spellings.
    ("Vehicle: Toyota Land Cruiser Prado (or similar), reg KDH 417Q\nPick-up: JKIA", "KDH 417Q"),
    ("Autó: VW e-Up! (kék) · rendszám: AA LM-471", "AA LM-471"),
    ("Oman ajoneuvon rekisteritunnus: KZT-482", "KZT-482"),
    ("Reg.nr. (egen bil): CX 48 217", "CX 48 217"),
    ("Bil: Volkswagen ID.4 (elektrisk) · reg.nr. EV 48213", "EV 48213"),
    ("Kereta: Perodua Bezza 1.3 AV (auto) · No. pendaftaran VHK 4821", "VHK 4821"),
    ("Namba ya Usajili wa Gari: KCZ 228M", "KCZ 228M"),
    # After the car it is on.
    ("Lifts: one car going (silver Astra YR68 KHE) from the club car park", "YR68 KHE"),
    ("Your courier is on the way\nSilver Honda PCX · YD71 KPE\n3 min away.", "YD71 KPE"),
    ("Någon som vet vem som äger den röda Volvon MLR 48F som står på gästplatsen", "MLR 48F"),
    ("Scooter Yamaha NMAX – GH-472-KT", "GH-472-KT"),
]

PLATES += [
    # After the car, letters and digits apart, four groups; before the car, a comma between.
    ("Vehículo asignado: Seat Arona 4821 LKM", "4821 LKM"),
    ("I can see the last driver (Toyota Corolla Quest HJ 42 KL GP) cancelled", "HJ 42 KL GP"),
    ("Patente del auto KXHT-52, un Suzuki Swift gris.", "KXHT-52"),
    ("Maşının nömrəsi 10-RK-482, ağ Hyundai Sonata.", "10-RK-482"),
    ("me: SMQ 246 P I think, white Toyota Prius", "SMQ 246 P"),
    # Plate words of more languages.
    ("een zwarte BMW 320d met nummerplaat 2-ABC-371. Bij fouillering", "2-ABC-371"),
    ("automjetin me targë AA 482 BK me shpejtësi 112 km/h", "AA 482 BK"),
    ("Όχημα: Fiat Panda – Αρ. κυκλ. ΗΡΖ 4821", "ΗΡΖ 4821"),
]

NOT_PLATES = [
    "Version 2.1, Toyota GT 86 in 2019, XT 500, Honda CBR 600",
    "mov reg RAX 12345 then",
    "BMW X5 M50d for sale, Toyota RAV4 2019, Perodua Bezza 1.3 AV, Ford F-150 XLT 2021",
    "Toyota Camry LE 2020 and a Ford Focus ST 250",
]

MENTIONS = [
    ("@dmitri.v the payments pod is using the old key", "@dmitri.v"),
    ("@sanne.dejong de callback van de betaalprovider faalt", "@sanne.dejong"),
]

NOT_MENTIONS = [
    '@app.route("/")\ndef index(): pass',
    "    @functools.cache\n    def f(): ...",
]

LISTED = [
    # A list's items, a person each: its mark or none, a first name, a colon or a dash.
    (
        "Notes\n- Kayla R.: quick feet, needs to talk more\n- Priya S.: EpiPen in blue bag\n- Mackenzie: missed 3 practices",
        "Kayla R.",
    ),
    (
        "Notes\n- Kayla R.: quick feet, needs to talk more\n- Priya S.: EpiPen in blue bag\n- Mackenzie: missed 3 practices",
        "Mackenzie",
    ),
    ("Oliwer – po kontuzji kostki\nSzymon – zaległa składka za maj", "Szymon"),
    # A list of names on a line.
    (
        "Team sheet (starting): Sam, Leo, Kai, Tomasz, Ben H, Ben W, Arlo, Jayden, Musa, Finn, Rory",
        "Tomasz",
    ),
    (
        "Team sheet (starting): Sam, Leo, Kai, Tomasz, Ben H, Ben W, Arlo, Jayden, Musa, Finn, Rory",
        "Ben H",
    ),
    # Three names with one comma, then `and` (or the language's word for it).
    ("Vi har utvecklingssamtal vecka 46. Alva, Hugo och Saga har ännu inte bokat tid.", "Alva"),
    ("Reminder for Friday: Mateo, Aisha and Jonas still owe their permission slips", "Mateo"),
]

NOT_LISTED = [
    "We visited Paris, London and Rome last year, then Apple, Google and Microsoft offices.",
    "Benjamín: lunes y miércoles 17:30-18:45\nAlevín: martes y jueves 18:00-19:30\nInfantil: lunes y viernes",
    "Flowers: Rose, Lily, Daisy and Iris. Cities: Paris, London, Rome.",
    "Note: this is fine.\nTotal: 12",
]

ADDRESSES = [
    (
        "Die Abnahmestelle ist weiterhin Brüsseler Str. 61, 50674 Köln. Bei Rückfragen",
        "Brüsseler Str. 61, 50674 Köln",
    ),
    ("Lieferadresse: Am Lindenhof 7, 30926 Seelze", "Am Lindenhof 7, 30926 Seelze"),
    ("Sme na Mlynskej 27, 040 01 Košice, 4. poschodie", "Mlynskej 27, 040 01 Košice"),
    ("Estic al carrer de Verdi 87, 08012 Barcelona.", "carrer de Verdi 87, 08012 Barcelona"),
    ("Adres werk: Oudegracht 212 bis, 3511 NS Utrecht", "Oudegracht 212 bis, 3511 NS Utrecht"),
    ("Odběrné místo: Štefánikova 1034/18, 150 00 Praha 5", "Štefánikova 1034/18, 150 00 Praha 5"),
]

ADDRESSES += [
    # A unit's number and a slash before the house number; a postcode after a space.
    (
        "RE: Claim — water damage, Unit 7/33 Glebe Point Rd, Glebe NSW 2037",
        "Unit 7/33 Glebe Point Rd, Glebe NSW 2037",
    ),
    (
        "Board game night is at mine this Friday 🎲 2/47 Roslyn St, Brunswick VIC 3056, buzz 2.",
        "2/47 Roslyn St, Brunswick VIC 3056",
    ),
    (
        "Ship to:\n58 Wellington Crescent, Winnipeg, MB R3M 0A7\n\nItems:",
        "58 Wellington Crescent, Winnipeg, MB R3M 0A7",
    ),
    (
        "Emma Rossiter, 58 Gardner Rd, Portland ME 04103, USA 🙏",
        "58 Gardner Rd, Portland ME 04103, USA",
    ),
    # A unit without a dot, a floor's ordinal and side, then the postcode and the town.
    (
        "Avda. Blasco Ibáñez 112, pta 9, 46022 València",
        "Avda. Blasco Ibáñez 112, pta 9, 46022 València",
    ),
    (
        "visita ao T2 na Rua Morais Soares, 87, 3.º Esq., 1900-343 Lisboa, envio",
        "Rua Morais Soares, 87, 3.º Esq., 1900-343 Lisboa",
    ),
    # A street's type after its name as a word of its own; Greek and Cyrillic streets.
    (
        "Adresse for leieobjektet: Thorvald Meyers gate 61B, 0552 Oslo",
        "Thorvald Meyers gate 61B, 0552 Oslo",
    ),
    (
        "Σχετικά με το διαμέρισμα στην οδό Ιπποκράτους 42, 10680 Αθήνα",
        "οδό Ιπποκράτους 42, 10680 Αθήνα",
    ),
]

ADDRESSES += [
    # A number with a flat's after a dash, a street's type after its name, a Belgian letterbox,
    # Portugal's postcode, an Italian town's province, a street's particle (`dei`).
    (
        "Gyvenamoji vieta: Savanorių pr. 176-45, LT-03154 Vilnius",
        "Savanorių pr. 176-45, LT-03154 Vilnius",
    ),
    ("Elukoht: Tartu mnt 52-14, 10115 Tallinn", "Tartu mnt 52-14, 10115 Tallinn"),
    ("Naslov: Celovška cesta 150, 1000 Ljubljana", "Celovška cesta 150, 1000 Ljubljana"),
    (
        "A morada atual é Av. Fernão de Magalhães 1740, 4350-158 Porto. Quando",
        "Av. Fernão de Magalhães 1740, 4350-158 Porto",
    ),
    ("Via Giuseppe Verdi 22, 20831 Seregno (MB)", "Via Giuseppe Verdi 22, 20831 Seregno (MB)"),
    (
        "l'appartamento di Via dei Mille 12, int. 5, 80121 Napoli. Come",
        "Via dei Mille 12, int. 5, 80121 Napoli",
    ),
]

NOT_ADDRESSES = [
    "Windows 10, 2019 Edition is out of support.",
    "Chapter 12, 1984 Orwell",
]

CODES = [
    ("Subject: Name correction on booking K7XQ2M", "K7XQ2M"),
    ("conf code HQ4RZT, 2 pax. can you rebook us", "HQ4RZT"),
    ("your file reference is JFKDL58214.", "JFKDL58214"),
    ("Прошу внести изменения в бронирование YQ7K3N (рейс SU 2130)", "YQ7K3N"),
    ("أرغب في تعديل الحجز رقم EK8M4T على رحلة دبي", "EK8M4T"),
    ("E-ticket: 1252148839021\nFlight BA0851", "1252148839021"),
    ("N° de billet : 0572309914832", "0572309914832"),
]

CODES += [
    # A claim's, a policy's, a case's number after its name, in the languages claims are made in.
    ("Claim #: CLM-24-0617733\nPolicy #: PAU 4471902-03", "CLM-24-0617733"),
    ("Claim number: 2024060318847", "2024060318847"),
    ("Polizzennummer: HH-5517-209483\nSchadensnummer: 24-0091-77312", "HH-5517-209483"),
    ("Polizzennummer: HH-5517-209483\nSchadensnummer: 24-0091-77312", "24-0091-77312"),
    ("No. de siniestro: AU-2406-118734", "AU-2406-118734"),
    ("Fall-Nr.: 2024-0038471", "2024-0038471"),
    ("Record #: PVC-118273", "PVC-118273"),
    ("Nr. dosar daună: CJ-RCA-2024-044179", "CJ-RCA-2024-044179"),
]

NOT_CODES = [
    "In case 2 fails, claim 3 is the file no longer used.",
    "Booking reference will be sent. Booking is CONFIRMED.",
    "Ref: JR-20418\nRequirements: a counterbalance licence",
    "Your ticket number is 4821; we will reply within 2 days.",
]

REPLIES = [
    # A number asked for by its name in a chat, given in the reply (a yes before it or none).
    (
        "[22.06.2024, 09:12] Mama: îmi cere CNP-ul bunicului, tu îl ai?\n[22.06.2024, 09:20] Eu: da, 1790109082617",
        "1790109082617",
    ),
    (
        "[14/05/24 20:05] Μαμά: το ΑΜΚΑ του μπαμπά το έχεις;\n[14/05/24 20:11] Εγώ: ναι 25077213061",
        "25077213061",
    ),
    (
        "[10/5/24 9:02 PM] Mak: Adik, hantar nombor IC kau\n[10/5/24 9:10 PM] Aku: 880612-14-5537",
        "880612-14-5537",
    ),
]

NOT_REPLIES = [
    # Who writes in a family's chat is no name; a number in a reply to no number's name stays.
    "[10/5/24 9:02 PM] Mak: Adik, dah sampai?\n[10/5/24 9:10 PM] Aku: dah, 20 minit lagi",
    "[22.06.2024, 09:12] Mama: cât costă biletul?\n[22.06.2024, 09:20] Eu: 1790109082617 lei, glumesc",
]

ANSWERS = [
    (
        "[14:01] Agent: Can I take your account number please?\n[14:02] You: its 7730 4418 2906\n[14:03] Agent: Thank you.",
        "7730 4418 2906",
    ),
    (
        "[02/09/2024, 18:41] Agent: What's your date of birth?\n[02/09/2024, 18:43] Priya: 12.03.1987",
        "12.03.1987",
    ),
]

test_each_value_is_hidden = hides_each(
    {
        "first names": FIRST_NAMES,
        "chat writers": CHAT_WRITERS,
        "lists": LISTED,
        "plates": PLATES,
        "mentions": MENTIONS,
        "addresses": ADDRESSES,
        "codes": CODES,
        "answers": ANSWERS,
        "replies": REPLIES,
    }
)
test_each_look_alike_stays = leaves_each_by_kinds(
    {
        "PERSON_NAME": NOT_FIRST_NAMES + NOT_LISTED,
        "LICENSE_PLATE": NOT_PLATES,
        "ADDRESS": NOT_ADDRESSES,
        "RECORD_NUMBER": NOT_CODES,
    }
)
test_nothing_is_found = leaves_each(NOT_CHAT_WRITERS + NOT_MENTIONS + NOT_REPLIES)


def test_names_after_a_sign_off_and_a_comma_are_each_a_name_not_a_signature() -> None:
    """`Gruß,` then a sentence on its line signs nothing; the two names in it are each found."""
    assert names("Gruß, Jonas und Lea kommen morgen.") == ["Jonas", "Lea"]


def test_a_device_named_after_its_owner_is_no_possessive_of_a_person() -> None:
    assert found_as("Hi this is John's laptop, not mine", "PERSON_NAME") == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("[9:40 PM] Zed: here's the bot token lol\n[9:42 PM] Kaz: BRO delete that", "PERSON_NAME"),
        ("[21:03] Lou: ok\n[21:04] KryptoNyx: id riot nyx.kryp", "USERNAME"),
    ],
)
def test_chat_writers_kind(text: str, kind: str) -> None:
    """A capitalised word is a person's name, a handle a username."""
    assert found_as(text, kind), found_as(text, "PERSON_NAME", "USERNAME")


def test_a_bracket_before_digits_that_open_an_address_is_the_texts() -> None:
    """`(00000.00000@00.aa)`: the digits read as a phone too, but the bracket before them is
    the text's (no `)` inside them), and stays with the one after the address."""
    assert REDACTOR.redact(["(00000.00000@00.aa)"]).texts[0] == "(<EMAIL_1>)"
