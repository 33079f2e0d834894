"""Values as people in other countries type them: IBANs all in lower case, with their spaces."""

from __future__ import annotations

import pytest
from stdnum import iban

from tests.helpers.redaction import found_as, found_with_kinds, grouped, hides_each, leaves_each

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "value",
    ["de89 3704 0044 0532 0130 00", "es91 2100 0418 4502 0005 1332", "gb82west12345698765432",
     "fr14 2004 1010 0505 0001 3m02 606", "nl91abna0417164300"],
)  # fmt: skip
def test_an_iban_in_lower_case_is_found(value: str) -> None:
    assert iban.is_valid(value.upper())
    text = f"Bitte überweisen Sie an {value} bis Freitag."
    assert found_with_kinds(text) == [(value, "IBAN")]


test_lower_case_runs_that_fail_the_check_are_left = leaves_each(
    ["commit de89370400440532013001 merged", "xde89 3704 0044 0532 0130 00",
     "build de89 3704 0044 0532 0130 01 failed"],
    of=("IBAN",),
)  # fmt: skip


test_cyrillic_words_for_streets_beside_other_numbers_stay = leaves_each(
    ["Встреча на ул. Ленина в 5 часов.", "Улица была длинной, 3 км.",
     "Этот проспект 5 лет строили.", "Широкий проспект 12 метров в ширину.",
     "На площади 2 тысячи человек."],
)  # fmt: skip


# (text, the address in it): Russian and Ukrainian addresses, and the others hidden with their
# unit, postcode and city (before: the postcode and city after a street stayed, `<ADDRESS_1>,
# Wellington 6011`, and so did a Dutch name's first word, a unit after the number, Belgian,
# Polish, Danish and Finnish streets).
ADDRESSES = {
    "russian_or_ukrainian": [
        ("Я живу по адресу: г. Москва, ул. Тверская, д. 7, кв. 15, звоните.",
         "г. Москва, ул. Тверская, д. 7, кв. 15"),
        ("Мой адрес: Санкт-Петербург, Невский проспект, д. 28",
         "Санкт-Петербург, Невский проспект, д. 28"),
        ("Он живёт на улице Пушкина, дом 10.", "улице Пушкина, дом 10"),
        ("Доставьте на проспект Мира 12, кв. 4, пожалуйста.", "проспект Мира 12, кв. 4"),
        ("Адреса: м. Київ, вул. Хрещатик, 22, кв. 5.", "м. Київ, вул. Хрещатик, 22, кв. 5"),
        ("Пишите: ул. 8 Марта, д. 10, корп. 2, кв. 3", "ул. 8 Марта, д. 10, корп. 2, кв. 3"),
    ],
    "with_unit_postcode_and_city": [
        ("Send it to 14 Kauri Road, Auckland 1010 please.", "14 Kauri Road, Auckland 1010"),
        ("Office: 9 Collins Street, Melbourne VIC 3000.", "9 Collins Street, Melbourne VIC 3000"),
        ("Ons adres is Van Woustraat 45-3, 1074 AD Amsterdam.",
         "Van Woustraat 45-3, 1074 AD Amsterdam"),
        ("Post naar de Lairessestraat 12-H, 1071 PB Amsterdam",
         "de Lairessestraat 12-H, 1071 PB Amsterdam"),
        ("Adresse: Rue Neuve 21, 1000 Bruxelles.", "Rue Neuve 21, 1000 Bruxelles"),
        ("Wohnhaft Seestrasse 8, CH-8002 Zürich.", "Seestrasse 8, CH-8002 Zürich"),
        ("Bor på Vesterbrogade 31, 1620 København V nu.", "Vesterbrogade 31, 1620 København V"),
        ("Osoite: Hämeentie 12, 00530 Helsinki", "Hämeentie 12, 00530 Helsinki"),
        ("Bor på Sveavägen 44, 113 59 Stockholm.", "Sveavägen 44, 113 59 Stockholm"),
        ("Adres: ul. Długa 7, 80-827 Gdańsk.", "ul. Długa 7, 80-827 Gdańsk"),
        ("my address is 1127 Pandora Ave, Victoria BC V8V 3R1.",
         "1127 Pandora Ave, Victoria BC V8V 3R1"),
        ("Service : 2145 rue Beaubien Est, app. 3, Montréal QC H2G 1M5",
         "2145 rue Beaubien Est, app. 3, Montréal QC H2G 1M5"),
        ("Deliver to 17 Oribi Rd, Westville, Durban 3629 please",
         "17 Oribi Rd, Westville, Durban 3629"),
    ],
}  # fmt: skip


@pytest.mark.parametrize(("text", "address"), grouped(ADDRESSES))
def test_an_address_is_hidden_whole(text: str, address: str) -> None:
    assert found_with_kinds(text) == [(address, "ADDRESS")]


# A phone after a label people write (`Cel:`, `Tel contacto:`), a passport's number after its
# word in Vietnamese, Indonesian and Russian (a series of two pairs, a `№`, six digits), an
# address after a record's `alamat=`: each without a country's prefix or a form's colon.
@pytest.mark.parametrize(
    "value",
    ["AO30 0006 0000 0148 2739 1018 4", "SN34 SN01 0015 2000 0482 7191 6573",
     "MA29 0117 8000 0012 1000 0182 7364"],
)  # fmt: skip
def test_an_iban_of_a_country_outside_the_libraries_registry_is_found(value: str) -> None:
    """SWIFT's partial list (Angola, Senegal, Morocco, ...): their length and mod 97."""
    assert not iban.is_valid(value.replace(" ", ""))  # the library does not know them
    text = f"Virement sur le compte {value} avant vendredi."
    assert found_with_kinds(text) == [(value, "IBAN")]
    wrong = value[:-1] + str((int(value[-1]) + 1) % 10)
    assert found_as(f"Virement sur le compte {wrong} avant vendredi.", "IBAN") == []


LABELLED = {
    "PHONE": [
        ("Cel: (11) 98472-3316", "(11) 98472-3316"),
        ("Tel contacto: 654 21 88 30", "654 21 88 30"),
        ("Teléfono de contacto: 654 21 88 30", "654 21 88 30"),
    ],
    "PASSPORT": [
        ("Số hộ chiếu: C8372914", "C8372914"),
        ("Paspor lama saya nomor C4827193", "C4827193"),
        ("Паспорт: серия 45 19 № 618203", "45 19 № 618203"),
        ("ИНН 770337211891, паспорт 45 10 482917", "45 10 482917"),
        # Russia's passport for travel abroad; letters and digits apart after `Passport / ID`.
        ("Загранпаспорт: 71 0938417, выдан в 2022", "71 0938417"),
        ("Passport / ID no.: KR 2204718", "KR 2204718"),
        # Urdu's, Hungarian's and Czech's words for a passport.
        ("شکریہ، پاسپورٹ نمبر KD5194823 ہے", "KD5194823"),
        ("Utas: útlevél: HU7730182, érvényes 2031-ig", "HU7730182"),
        ("Cestovní pas č. 41937582 platný do 2030", "41937582"),
    ],
    "UK_NINO": [("NI no: tm204418b (no caps lock)", "tm204418b")],
    "NATIONAL_ID": [
        # Iceland's kennitala, Latvia's personal code, France's tax number by other names.
        ("Nafn: Jón Jónsson\nKennitala: 170477-3910\nSími: 555 1234", "170477-3910"),
        ("Līgumam vajadzēja manu personas kodu: 121068-55217", "121068-55217"),
        ("– numéro fiscal : 3373251726201", "3373251726201"),
        # South Africa's ID after `Identity Number`, Ireland's PPS in Irish, Spain's DNI in
        # Basque (NAN).
        ("the late Pieter Botha, Identity Number 8001015009087, who resided", "8001015009087"),
        ("Uimhir PSP: 1234567TW", "1234567TW"),
        ("Aita: Jon Etxeberria — NAN: 12345678Z", "12345678Z"),
        # Vietnam's CCCD (no check digit: its form, after its name); Mexico's CURP and
        # France's printed NIR with no name before them (their shape and check say so).
        ("Số CCCD của em: 001203004417 nhé", "001203004417"),
        ("ya mandé la de Paola: GOPA150312MDFNRL04", "GOPA150312MDFNRL04"),
        ("moi c'est 1 85 05 78 006 084 91 si besoin", "1 85 05 78 006 084 91"),
        # In a table's column whose header names it.
        ("| Nome | RG | Cidade |\n|---|---|---|\n| Ana Lima | 38.417.922-6 | Recife |",
         "38.417.922-6"),
        ("| Name | SV-Nr |\n|---|---|\n| Jonas Huber | 4522 150389 |", "4522 150389"),
        # With no name before them: Switzerland's AHV number as printed, a Czech birth number
        # with its slash, Pakistan's CNIC in its dashed groups; a cédula after a form's `CC:`.
        ("Versicherte: Anna Meier, 756.5285.6779.25, Zürich", "756.5285.6779.25"),
        ("Jan Novák, 910504/8568, bytem Praha 4", "910504/8568"),
        ("Ali Raza s/o Ahmed, 31533-6369016-4, Lahore", "31533-6369016-4"),
        ("Nombre: Laura Gómez, CC: 43.876.201", "43.876.201"),
    ],
    # A Czech account after `účet` (its prefix, number and bank's code), a Thai or Taiwanese
    # account after its bank's name (a bank's code in brackets), a Malaysian or Indonesian one
    # with the bank's and the holder's names between its word and itself.
    "ACCOUNT_NUMBER": [
        ("Pošlete to na účet 7859400922/0800 do pátku.", "7859400922/0800"),
        ("účet 35-5576440159/2010", "35-5576440159/2010"),
        ("na účet č. 19-8457762159/2010", "19-8457762159/2010"),
        ("โอนเข้ากสิกร 073-8-41592-6 ครับ", "073-8-41592-6"),
        ("ธนาคารกรุงเทพ 127-4-30918-2", "127-4-30918-2"),
        ("KBank 073-8-41592-6", "073-8-41592-6"),
        ("中國信託(822) 401855273961", "401855273961"),
        ("玉山銀行(808) 0901-979-118822", "0901-979-118822"),
        ("akaun Maybank saya 1642 3391 0228", "1642 3391 0228"),
        ("Rekening BNI a/n Siti Aminah 0123456789", "0123456789"),
        ("sila bank in ke akaun RHB 2-14052-0012345-3", "2-14052-0012345-3"),
    ],
    "LICENSE_PLATE": [
        # A plate after Malay's `Plat`, a vehicle's word in Lithuanian.
        ("Penjual: RM 28k nego. Plat WXT 7312, 2018, servis penuh", "WXT 7312"),
        ("Transporto priemonė: LMN 208, Škoda Octavia", "LMN 208"),
        # Australia's `Registration:`, Chile's and Argentina's `Patente:`, Italy's `targato`,
        # France's whole `immatriculation`.
        ("Vehicle: Mazda 3   Registration: BKT29Q (NSW)", "BKT29Q"),
        ("Citación por infracción\nPatente: KDRT-41\nPropietario: ...", "KDRT-41"),
        ("Veicolo targato GH 517 TZ — art. 142 c. 8 C.d.S.", "GH 517 TZ"),
        ("Véhicule : Renault Clio, immatriculation GK-418-RT", "GK-418-RT"),
        ("Samochód o numerze rejestracyjnym KR 4T219", "KR 4T219"),
        ("nr rej. KR 4T219, tel 601 228 947", "KR 4T219"),
        # Plurals and abbreviations of a plate's word; Greek, Thai and Israel's plates (digits
        # alone); `Reg` with no colon before capitals and digits; a plate's shape alone where
        # it says whose country it is (Vietnam, Ukraine, Russia).
        ("Vendo Jetta 2016, placas PRT-318-C del Edomex", "PRT-318-C"),
        ("Immat GH-207-LM, contrôle technique ok", "GH-207-LM"),
        ("Αρ. κυκλοφορίας: ΝΒΡ-4418", "ΝΒΡ-4418"),
        ("ทะเบียน 2กท 4471 เชียงใหม่", "2กท 4471"),
        ("מספר רישוי 512-38-701", "512-38-701"),
        ("Reg KX19 PLD, 2 owners", "KX19 PLD"),
        ("車號 ＡＢＣ－１２３４，請移車", "ＡＢＣ－１２３４"),
        ("Xe Wave đời 2019 bstp 43C1-226.85 còn mới", "43C1-226.85"),
        ("Біла Skoda, номер КА 4412 ВТ, біля під'їзду", "КА 4412 ВТ"),
        # A label with words (abbreviated, bracketed) before its colon, or a word for the
        # vehicle and a colon; Austrian shapes.
        ("Kennzeichen eigenes Kfz.: L 7714 AB", "L 7714 AB"),
        ("Amtliches Kennzeichen (Zulassung): GU-7714B", "GU-7714B"),
        ("Pojazd poszkodowanego: WE 4K219, kierowca ranny", "WE 4K219"),
        ("Fahrzeug: W-123AB, Farbe rot", "W-123AB"),
    ],
    # A date of birth before a mark that says so; in a clause with the place before it; under
    # a key that names it in another language.
    "BIRTH_DATE": [
        # The label in more languages: Kazakh, Georgian, Amharic, Tamil, Armenian, Uzbek.
        ("Туған күні: 03.11.1991", "03.11.1991"),
        ("დაბადების თარიღი: 21.06.1985", "21.06.1985"),
        ("የትውልድ ቀን: 08/02/1994", "08/02/1994"),
        ("பிறந்த தேதி: 29-01-2003", "29-01-2003"),
        ("Ծննդյան ամսաթիվ: 11.09.1979", "11.09.1979"),
        ("Tug'ilgan sana: 05.04.1996", "05.04.1996"),
        ("Свидетель: Кравцов Олег Ильич, 14.02.1971 г.р., проживает в Туле", "14.02.1971"),
        ("Петренко Олена, 03.11.1992 р.н., вчителька", "03.11.1992"),
        ("王芳，1987年6月23日出生，汉族", "1987年6月23日"),
        ("山本 健太（1979年10月8日生まれ）", "1979年10月8日"),
        ("김서연 1995년 7월 19일생", "1995년 7월 19일"),
        ("Il sottoscritto, nato a Reggio nell'Emilia il 14/02/1979, dichiara", "14/02/1979"),
        ("nacido en Buenos Aires el 3 de mayo de 1968", "3 de mayo de 1968"),
        ("née à Lyon le 3 mars 1980, demeurant à Paris", "3 mars 1980"),
        ("she was born in Stoke-on-Trent on 9 July 1986", "9 July 1986"),
        ("urodzona w Krakowie dnia 3.05.1981", "3.05.1981"),
        ('{"nome": "Ana", "nascimento": "2005-11-21"}', "2005-11-21"),
        ('{"dt_nasc":"1983-07-04","sexo":"F"}', "1983-07-04"),
        ('{"fechaNac": "04/07/1983"}', "04/07/1983"),
        ('{"gebDatum": "12.08.1969"}', "12.08.1969"),
    ],
    # A name under a key that names a given or a family name in another language, or beside
    # one (a bare `nome`, `nom`); a log's or a query string's `key=value` after another.
    "PERSON_NAME": [
        ('{"nome":"Tendai","sobrenome":"Moyo"}', "Tendai"),
        ('{"prenom":"Amélie","nom":"Durand"}', "Durand"),
        ('{"prenom":"Amélie","nom":"Durand"}', "Amélie"),
        ('{"nombre":"Lucía","apellido":"Pérez"}', "Lucía"),
        ('{"fname":"Trevor","lname":"Banda"}', "Trevor"),
        ('{"forename":"Ifeoma","surname":"Okafor"}', "Ifeoma"),
        ("INFO created user first_name=Trevor last_name=Banda", "Banda"),
        ("GET /signup?first_name=Kofi&last_name=Mensah&plan=pro", "Mensah"),
    ],
    "USERNAME": [
        ("Teie konto (kasutajanimi: liis.tamm) parooli lähtestamiseks", "liis.tamm"),
        ("Korisničko ime: marko.babic77", "marko.babic77"),
        ("Account name: driftwood_77\nEmail on it: x", "driftwood_77"),
        ("IGN: Kestrel9, squad at 8", "Kestrel9"),
        ("ник в игре Ледокол_99, пиши", "Ледокол_99"),
    ],
    "MESSENGER_ID": [
        ("請加 LINE：chen_yu0815 謝謝", "chen_yu0815"),
        ("still owe you, is your venmo @Tori-Blake-3?", "@Tori-Blake-3"),
        ("連絡はDMで@koharu_mmまで", "@koharu_mm"),
    ],
    "ADDRESS": [
        ("Driver(nama=Agus, alamat=Jl. Kebon Jeruk Raya No. 27, Jakarta Barat)",
         "Jl. Kebon Jeruk Raya No. 27, Jakarta Barat"),
        # A contract's words for where a party lives, with no colon; the address ends with
        # its town; a Turkish address's `No:` and `D:`.
        ("Mieter: Jonas Pfeiffer, wohnhaft Am Lindenhof 3, 04103 Leipzig.",
         "Am Lindenhof 3, 04103 Leipzig"),
        ("con domicilio en calle Betis 17, 41010 Sevilla, en adelante el ARRENDATARIO",
         "calle Betis 17, 41010 Sevilla"),
        ("indirizzo via Carlo Poerio 12 scala A, 80121 Napoli",
         "via Carlo Poerio 12 scala A, 80121 Napoli"),
        ("Adres: Moda Cad. No:88 D:4 Kadıköy/İstanbul", "Moda Cad. No:88 D:4 Kadıköy/İstanbul"),
    ],
}  # fmt: skip


test_a_value_after_a_label_people_write_is_hidden = hides_each(LABELLED)


WITHOUT_THEIR_LABELS = [
    "Order 45 10 482917 shipped; invoice 12 34 567890",
    "adresa=0x7ffe1234",
    # Code's `line:`, a class's `LINE` constant, a register's name, a plate's word
    # before prose.
    "for line in lines:\n    if not line: continue",
    "if obj is stringPict.LINE: objects[i] = x",
    "reg r12 is zero; reg 0x1f; Reg 2016",
    "Placas de circuito del proveedor",
    "ref tm204418b in the ticket",
    "server address: db:5432 in the config",
    "Au demeurant, 3 personnes sont venues",
    "residente en España desde 2019 con 2 hijos",
    "wohnhaft seit 2010 in Berlin mit 3 Kindern",
    # A plate's shape with no vehicle near it; a register; a month; a mention of everyone.
    "Артикул К100 ОО 50",
    "version 10A1-234.56 released",
    "Reg RAX 12345",
    "immat 2024-01",
    "IGN is down again",
    "dm @channel please",
    "LINE: 0x1f",
]
test_the_same_shapes_without_their_labels_stay = leaves_each(
    WITHOUT_THEIR_LABELS, of=("PASSPORT", "ADDRESS", "LICENSE_PLATE", "MESSENGER_ID", "USERNAME")
)


OF_OTHER_THINGS = [
    # Dates of other things: a founding, a project's year, a move, a rule's or a product's
    # date (`生效`, `生产`), a release; a course's dates after `matrícula`.
    "founded on 12/03/1981",
    "nato nel 1975 come progetto open source",
    # A plate's words that name other things: an event's registration, a patent.
    "Registration: EVENT2024 closes on Friday",
    "Registration: 2024-01-15",
    "Fahrzeug: 123-45-678 ist das Modell",
    "photo: АА 9163 ВК",
    "Slovakia order 51F-123.45",
    "Registration: open until 30 June",
    # `plat` is a dish and a flat thing too; a postcode, a product's number after `kod`.
    "le plat du jour 12 euros",
    "un plat de 24 cm",
    "plat A4 200x300mm",
    "kod pocztowy 00-950 Warszawa",
    "kod produktu 55512345 w katalogu",
    "la patente de invención 2019 fue otorgada",
    "He was born in Leeds, moved to York on 2 March 2001",
    "本规定自2024年3月1日生效",
    "2023年5月1日生产，保质期12个月",
    "Release date: 12/03/2021",
    "matrícula de 27/01 a 31/01",
    "Matrícula abierta del 3/02 al 14/02",
    # Keys that name no person's name, or a bare name beside no personal key.
    '{"name": "build", "version": "1.0"}',
    '{"first_name_label": "First name"}',
    '{"nome": "Vendas", "codigo": "A12"}',
    # An order's number; a court's docket; a car's model after a word for the vehicle.
    "Pedido 2024100432",
    "RG n° 23/04417",
    "Vehicle: BMW 320d",
    "Vehicle: RAV4 2019",
    "Vehicle: F-150",
]
test_dates_names_and_numbers_of_other_things_stay = leaves_each(
    OF_OTHER_THINGS,
    of=("BIRTH_DATE", "RECORD_NUMBER", "PERSON_NAME", "NATIONAL_ID", "LICENSE_PLATE"),
)


ACCOUNT_AND_ID_LOOK_ALIKES = [
    # A bill (`účet` is one too), an accountant's year, a range of years, a fraction, a
    # ratio, a path; a Czech account whose checks fail; a bank's name before a year, a
    # phone, a quarter's revenue, its customer line; an IP address after `NAS`.
    "Zaplatil jsem účet za elektřinu 125 000 Kč",
    "účetní období 2023/2024, obrat 1 250 000 Kč",
    "účet 2024/2025",
    "účet 1/3 nákladů",
    "účet /usr/lib/2024/2025",
    "účet 1234567890/0800",
    "Ratio 120000/1000 = 120",
    "Rekening 2024/2025 laporan",
    "Rekening BCA sedang gangguan sejak 2024",
    "akaun Maybank saya dah tutup tahun 2019",
    "KBank call center 02-888-8888",
    "กสิกร โทร 02-888-8888",
    "中國信託客服專線 0800-024-365",
    "玉山銀行 2024年第3季 營收 12,345,678",
    "帳號 2024/2025 年度",
    "中國信託(822) 2024/2025",
    "NAS at 10.0.0.15 port 5000",
]
test_accounts_and_identity_numbers_look_alikes_stay = leaves_each(
    ACCOUNT_AND_ID_LOOK_ALIKES, of=("ACCOUNT_NUMBER", "NATIONAL_ID")
)
