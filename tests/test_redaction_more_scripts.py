"""Values as people write them in more languages and places: names after a form's label or a
greeting in Vietnamese, Turkish, Polish, Indonesian, Swahili and Greek; names in scripts
without capitals (Arabic, Hebrew, Devanagari, Thai); names typed in lower case; addresses after
a label whose line holds abbreviations; phones said in chat; numbers that are a whole segment
of a URL's path; and the same words where they name nothing."""

from __future__ import annotations

import pytest

from tests.helpers.redaction import (
    REDACTOR,
    found,
    found_as,
    hidden,
    hides_each,
    leaves_each,
    leaves_each_by_kinds,
)

pytestmark = pytest.mark.unit


NAMES = [
    ("Họ và tên: Trần Thị Mai\nSĐT: 0912 345 678", "Trần Thị Mai"),
    ("Em tên là Phạm Minh Tuấn, số điện thoại của em là 0987654321 ạ.", "Phạm Minh Tuấn"),
    ("Adı Soyadı: Ayşe Yılmaz\nT.C. Kimlik No: 10000000146", "Ayşe Yılmaz"),
    ("Sayın Mehmet Öztürk,\nbaşvurunuz alınmıştır.", "Mehmet Öztürk"),
    ("Imię i nazwisko: Katarzyna Wiśniewska", "Katarzyna Wiśniewska"),
    ("Dziękuję.\nZ poważaniem,\nAnna Nowak", "Anna Nowak"),
    ("Nama: Budi Santoso\nAlamat: Jakarta", "Budi Santoso"),
    ("kirim ke Bandung ya, atas nama Siti Rahmawati", "Siti Rahmawati"),
    ("Jina langu ni Amina Wanjiru, naishi Nairobi.", "Amina Wanjiru"),
    ("Ονοματεπώνυμο: Γιώργος Παπαδόπουλος", "Γιώργος Παπαδόπουλος"),
    ("Αγαπητή κυρία Ελένη Κωνσταντίνου,", "Ελένη Κωνσταντίνου"),
    # Scripts without capitals: the words of the label's script after it.
    ("السيد محمد عبد الله الأحمد المحترم،", "محمد عبد الله الأحمد"),
    ("الاسم: نورة بنت سعد القحطاني\nالمدينة: الرياض", "نورة بنت سعد القحطاني"),
    ("שלום, שמי יעל כהן ואני גרה בחיפה.", "יעל כהן"),
    ("נמען: אבי לוי\nטלפון: 050-1234567", "אבי לוי"),
    ("मेरा नाम राहुल शर्मा है और मैं दिल्ली में रहता हूँ।", "राहुल शर्मा"),
    ("प्रिय अनिल जी, आपका पत्र मिला।", "अनिल"),
    ("ชื่อ: สมชาย ใจดี\nอายุ: 34", "สมชาย ใจดี"),
    ("เรียน คุณวิภาวรรณ ศรีสุข", "วิภาวรรณ ศรีสุข"),
    # Typed in lower case, after the words that can only introduce a name.
    ("my name is priya raghunathan and i live in leeds", "priya raghunathan"),
    ("hi my name is john, nice to meet you", "john"),
    # A form's field naming whom a payment or a record is about, as JSON keys read.
    ('{"result": [{"contact": "Mariana Souza", "cidade": "Campinas"}]}', "Mariana Souza"),
]

# (the label, the address after it on its line).
ADDRESSES = [
    ("पता: ", "मकान नं. 24, गांधी नगर, जयपुर, राजस्थान 302015"),
    ("Địa chỉ: ", "Số 12 Nguyễn Huệ, Quận 1, TP. Hồ Chí Minh"),
    ("Alamat: ", "Jl. Kebon Jeruk Raya No. 27, Jakarta Barat 11530"),
    ("Adresi: ", "Atatürk Cad. No: 45 Daire 7, Kadıköy/İstanbul 34710"),
    ("כתובת: ", "שדרות רוטשילד 22 דירה 5, תל אביב-יפו 6688123"),
    ("ที่อยู่: ", "123/45 ถนนสุขุมวิท เขตคลองเตย กรุงเทพฯ 10110"),
    ("Διεύθυνση: ", "Ερμού 25, 105 63 Αθήνα"),
    # Serbian, Hungarian, Czech, Bengali labels; a few words saying which address first.
    ("Адреса: ", "Његошева 7, стан 3, 11000 Београд"),
    ("Lakcím: ", "Szeged, Kossuth Lajos sugárút 31, 6722"),
    ("Trvalé bydliště: ", "Lidická 41, 602 00 Brno"),
    ("ঠিকানা: ", "বাড়ি ৪২, রোড ৩, গুলশান, ঢাকা-১২১২"),
    ("Địa chỉ giao hàng: ", "27 Hai Bà Trưng, P. Bến Nghé, Q.1"),
    ("Alamat pengiriman: ", "Perum Griya Asri Blok C2 No. 9, Bekasi"),
    # An ordinal or a house's number before a dot, more of the address after it.
    ("Lakcím: ", "1052 Budapest, Váci utca 21. 4. em. 7"),
    ("Adres: ", "Kızılay Mah. 5. Sokak No: 12/3 Çankaya/ANKARA"),
    # Basque, Irish, Azerbaijani, Persian, Maltese labels.
    ("Helbidea: ", "Kale Nagusia 8, 3. esk., 20500 Arrasate"),
    ("Seoladh: ", "22 Bóthar an Chladaigh, Gaillimh, H91 E2K8"),
    ("Ünvan: ", "Bakı şəh., Yasamal r-nu, Şərifzadə küç. 12, m. 7"),
    ("نشانی: ", "اصفهان، خیابان چهارباغ، کوچه ۱۴، پلاک ۹"),
    ("Indirizz: ", "12, Triq il-Kbira, Ħal Balzan BZN 1259"),
]

PHONES = [
    ("το κινητό μου είναι 6971234567", "6971234567"),
    ("โทรหาผมได้ที่ 0891234567 นะครับ", "0891234567"),
    ("WA saya 081398765432 ya", "081398765432"),
]

# Names as forms, mail and chat exports write them.
EXPORTED_NAMES = [
    ("PATIENT: SMITH, JOHN A\nDOB: 03/14/1985", "SMITH, JOHN A"),
    ("Employee: HARGREAVES, EMILY J", "HARGREAVES, EMILY J"),
    ("Pt  name:   DOE,  JANE  M", "DOE,  JANE  M"),
    ("Name:            Jana  Schröder", "Jana  Schröder"),
    ("Member: DANIEL K FOSTER", "DANIEL K FOSTER"),
    ("zwischen Herrn Friedrich Oberländer und", "Friedrich Oberländer"),
    ("[14/03/2024, 21:04:11] Aisha Bello: are you coming?", "Aisha Bello"),
    ("14/03/2024, 21:04 - Brian O'Connell: see you there", "Brian O'Connell"),
    ("09:02 Rahul Iyer: morning all", "Rahul Iyer"),
    ("ORGANIZER;CN=Eleanor Vance:mailto:e.vance@example.org", "Eleanor Vance"),
    ('ATTENDEE;ROLE=REQ-PARTICIPANT;CN="Okafor, Chinedu":mailto:c@example.org', "Okafor, Chinedu"),
    ("From: Chen, Wei <wei.chen@example.com>", "Chen, Wei"),
]

# A table on the line after a colon: the decoded view joins a line that ends in a colon to the
# next one, and the table that line introduces is still read by its header; a chat export after
# a leading colon is still read too.
AFTER_A_COLON = [
    (
        "Tool output:\nid,full_name,email\n1,Fatima Zahra El Amrani,f.elamrani@menara.ma\n",
        "Fatima Zahra El Amrani",
    ),
    (
        "postgres.query result:\n| id | name | email |\n|---|---|---|\n"
        "| 17 | Fatima Zahra El Amrani | tomasz.lew@onet.pl |",
        "Fatima Zahra El Amrani",
    ),
    (":: exported chat\n09:02 Rahul Iyer: morning all", "Rahul Iyer"),
]

# A password after its user, or in a Dockerfile.
PASSWORDS = [
    ("username mwilliams pass Winter#2023", "Winter#2023"),
    ("login is admin / Tr0pic@l-99", "Tr0pic@l-99"),
    ("user ana, pw: x9!kLm", "x9!kLm"),
    ('FROM node:20\nENV DB_PASS "p4ss!word_docker"\nRUN npm ci', "p4ss!word_docker"),
]

# Addresses typed in lower case: (before, the address, after).
LOWER_CASE_ADDRESSES = [
    ("heres my addy: ", "1429 w elm st apt 3b chicago il 60622", ""),
    ("i'm at ", "77 massachusetts ave cambridge ma 02139", " till friday"),
    ("im john, ", "42 oak road, leeds ls6 2ab", ", call me"),
]  # fmt: skip


test_a_value_after_the_words_that_introduce_it_is_hidden = hides_each(
    {
        "name_after_the_words_that_introduce_it": NAMES,
        "address_after_its_label": [
            (f"{label}{address}\nThanks", address) for label, address in ADDRESSES
        ],
        "address_in_lower_case": [
            (before + address + after, address) for before, address, after in LOWER_CASE_ADDRESSES
        ],
        "phone_said_in_chat": PHONES,
        "name_in_a_form_a_mail_or_a_chat_export": EXPORTED_NAMES,
        "after_a_colon": AFTER_A_COLON,
        "password_after_its_user_or_in_a_dockerfile": PASSWORDS,
    }
)


# The words or shapes of a kind's value with none after them: (the kinds, the text).
NONE_OF_THEIR_KIND = {
    # The words that introduce a name, before no name.
    "PERSON_NAME": [
        "मेरा नाम क्या है, यह सवाल बच्चे अक्सर पूछते हैं।", "my name is not important",
        "my name is on the list", "Contact: Support Team", "مرحبا، كيف حالك اليوم؟",
        "my name is really_long_handle_99",
    ],
    # Numbers and street words in a sentence.
    "ADDRESS": [
        "take exit 45 on the highway to denver co 80202 area",
        "we drove 20 miles down the road to the city", "the 3 main st restaurants are great",
    ],
    # A user or a variable without a password.
    "SECRET,PASSWORD": [
        "login is required / please retry", "The user clicks login / signup to continue",
        "login with your username / email address", "ENV DB_PASSWORD_FILE /run/secrets/db",
        "ENV NODE_ENV production", "ENV API_TOKEN $CI_TOKEN",
    ],
}  # fmt: skip


test_the_words_or_shapes_of_a_kinds_value_without_one_stay = leaves_each_by_kinds(
    NONE_OF_THEIR_KIND
)


@pytest.mark.parametrize(
    "text",
    ["मुझे पता है कि 5 लोग आएंगे", "Alamat IP server berubah 2 kali minggu ini",
     "Address: 12 Baker Street. Please ring twice.", "Cím: A tervezés 3 lépése",
     "The адрес field: 12 items"],
)  # fmt: skip
def test_a_label_word_in_a_sentence_is_no_address(text: str) -> None:
    spans = found_as(text, "ADDRESS")
    assert all("ring" not in span and "लोग" not in span for span in spans), spans
    if "Baker" not in text:
        assert spans == []


IN_URL_PATHS = [
    ("https://acme.zendesk.com/agent/users/phone/+14158672319/tickets", "+14158672319", "PHONE"),
    ("PATCH https://crm.northwind.io/contacts/+447843219604/edit", "+447843219604", "PHONE"),
    ("GET https://id.example.gov/citizens/401-62-3519/record", "401-62-3519", "US_SSN"),
    ("https://billing.example-shop.com/cards/4917034236671270/verify", "4917034236671270", "CARD"),
    ("https://api.telegram.org/bot7812453831:AAaxhMgrz2xSts5mIVPf9K9JZ89IlwEAJZv/getMe",
     "7812453831:AAaxhMgrz2xSts5mIVPf9K9JZ89IlwEAJZv", "API_KEY"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "value", "kind"), IN_URL_PATHS)
def test_a_value_that_is_a_url_paths_segment_ishidden(text: str, value: str, kind: str) -> None:
    start = text.index(value)
    assert any(s.start <= start and start + len(value) <= s.end and s.kind == kind
               for s in REDACTOR.find(text)), found(text)  # fmt: skip


TOOL_CALL = """<function_calls>
<invoke name="update_profile">
<parameter name="user_id">88123</parameter>
<parameter name="holder">Jonas Weber</parameter>
<parameter name="password">m4ngoTango#88</parameter>
<parameter name="query">weather in Berlin</parameter>
</invoke>
</function_calls>"""


def test_a_tool_calls_named_parameters_read_as_labelled_values() -> None:
    """`<parameter name="KEY">VALUE</parameter>` reads as `KEY: VALUE`: the name says what
    the value is, as a form's label does."""
    assert hidden(TOOL_CALL, "Jonas Weber") and hidden(TOOL_CALL, "m4ngoTango#88"), found(TOOL_CALL)
    assert found(TOOL_CALL) == ["Jonas Weber", "m4ngoTango#88"]


@pytest.mark.parametrize(
    "text",
    ["Name: Smith, please call back", "10:42:01 Build Started: compiling",
     "To: Boston, Jo Smith <jo@example.com>", "Meeting at 10:30 Room Booked: yes"],
)  # fmt: skip
def test_the_same_shapes_without_a_persons_name_stay(text: str) -> None:
    names = found_as(text, "PERSON_NAME")
    assert names in ([], ["Jo Smith"]), names


# An id in a URL's path; tool output that only looks like values.
IDS_IN_URL_PATHS = [
    "https://twitter.com/user/status/4917034236671270",
    "https://example.com/orders/4111111111111111/items",
    "https://example.com/builds/000-00-0000/log",
]
TOOL_OUTPUT = [
    "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)",
    "DKIM-Signature: v=1; a=rsa-sha256; d=example.com; s=s1;\n\tbh=47DEQpj8HBSa+/TImW+5JCeuQeR"
    "km5NMpJWZG3hSuFU=;", "ImageVersion=20240422.1.0", "Lot 4471 / Batch 20240514-03",
]  # fmt: skip


test_an_id_in_a_url_path_or_tool_output_that_only_looks_like_values_stays = leaves_each(
    {"id_in_a_url_path": IDS_IN_URL_PATHS, "tool_output": TOOL_OUTPUT}
)


@pytest.mark.parametrize(
    ("text", "value"),
    [("NIF: 88644449B", "88644449B"), ('{"個人番号": "181430783160"}', "181430783160"),
     ("steuer_id;wohnort\n36574261809;Berlin", "36574261809")],
)  # fmt: skip
def test_an_identity_number_under_its_short_name_ishidden(text: str, value: str) -> None:
    assert hidden(text, value), found(text)
    invalid = value[:-1] + ("A" if value[-1] == "B" else str((int(value[-1]) + 1) % 10))
    assert REDACTOR.find(text.replace(value, invalid)) == [], found(text.replace(value, invalid))


def test_an_address_label_inside_an_email_address_reads_no_address() -> None:
    """`عنوان` ("address") inside an e-mail address is no label: the words after the address
    stay (a generated address found this; Chinese labels have no word boundary to go by)."""
    text = "write to ا@عنوان.xn--0000 today"
    assert REDACTOR.redact([text]).texts[0] == "write to <EMAIL_1> today"


def test_a_forms_next_line_is_no_answer_joined_to_its_address() -> None:
    """A line that gives a value (`Adres: ... No: 12/3`) asks no question: the next label's
    value (`Cep Tel: 0532 ...`) is not read as its answer, on the address's line."""
    text = "Adres: Kızılay Mah. 5. Sokak No: 12/3 Çankaya/ANKARA\nCep Tel: 0532 417 86 20"
    assert found_as(text, "ADDRESS") == ["Kızılay Mah. 5. Sokak No: 12/3 Çankaya/ANKARA"]
