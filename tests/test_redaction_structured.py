"""Personal data in structured text: a value named by a key written as code (`date_of_birth`,
`dateOfBirth`, `date-of-birth`), by the header of a CSV or markdown table's column, by an SQL
insert's column list or by a vCard's property; a mailbox's display name; and the structured
data and signatures that hold none and stay as they are (sampling/redaction/fields.py, the
fields view in views.py, finders/names.py)."""

# ruff: noqa: E501  (a case reads best on one line)
from __future__ import annotations

import pytest

from sampling.redaction.fields import label_words
from sampling.redaction.views import views
from tests.helpers.redaction import REDACTOR

pytestmark = pytest.mark.unit


def redacted(text: str) -> str:
    return REDACTOR.redact([text]).texts[0]


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("date_of_birth", "date of birth"),
        ("dateOfBirth", "date Of Birth"),
        ("date-of-birth", "date of birth"),
        ("DATE_OF_BIRTH", "DATE OF BIRTH"),
        ("patient.fullName", "patient full Name"),
        ("SSNNumber", "SSN Number"),
    ],
)
def test_a_key_written_as_code_reads_as_its_words(key: str, words: str) -> None:
    assert label_words(key) == words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A key written as code names its value (JSON, YAML, a Python dict).
        ('{"full_name": "Aiyana Whitehorse", "date_of_birth": "1991-11-02"}',
         '{"full_name": "<PERSON_NAME_1>", "date_of_birth": "<BIRTH_DATE_1>"}'),
        ("applicantDob: 1994-07-15", "applicantDob: <BIRTH_DATE_1>"),
        ("patientName: 'Søren Lykke'\nbirthDate: 1976-04-19",
         "patientName: '<PERSON_NAME_1>'\nbirthDate: <BIRTH_DATE_1>"),
        ("{'given-name': 'Oluwaseun', 'family-name': 'Adeyemi', 'date-of-birth': '02/29/1988'}",
         "{'given-name': '<PERSON_NAME_1>', 'family-name': '<PERSON_NAME_2>', 'date-of-birth': '<BIRTH_DATE_1>'}"),
        ('{"medical_record_number": "MR-0048213", "accountNumber": "00123456789"}',
         '{"medical_record_number": "<RECORD_NUMBER_1>", "accountNumber": "<ACCOUNT_NUMBER_1>"}'),
        # A tool call's arguments: JSON inside a JSON string, its quotes escaped.
        ('{"arguments": "{\\"contact_name\\": \\"Marisol Echeverría\\", \\"dob\\": \\"1985-06-17\\"}"}',
         '{"arguments": "{\\"contact_name\\": \\"<PERSON_NAME_1>\\", \\"dob\\": \\"<BIRTH_DATE_1>\\"}"}'),
        # "name" beside a key that names personal data.
        ('[{"name": "Tevita Fifita", "email": "tevita@example.to"}]',
         '[{"name": "<PERSON_NAME_1>", "email": "<EMAIL_1>"}]'),
        # A CSV's cells under their header (commas, semicolons or tabs; in a fenced block).
        ("name,email,dob\nAroha Ngata,aroha.n@example.co.nz,1995-08-30\nPieter de Vries,pieter@example.nl,1971-01-09",
         "name,email,dob\n<PERSON_NAME_1>,<EMAIL_1>,<BIRTH_DATE_1>\n<PERSON_NAME_2>,<EMAIL_2>,<BIRTH_DATE_2>"),
        ('"full_name";"birth_date";"city"\n"Giulia Ferrante";"14.07.1983";"Torino"\n"Tomasz Wiśniewski";"03.11.1990";"Kraków"',
         '"full_name";"birth_date";"city"\n"<PERSON_NAME_1>";"<BIRTH_DATE_1>";"Torino"\n"<PERSON_NAME_2>";"<BIRTH_DATE_2>";"Kraków"'),
        ("name\tphone\tdob\nFatima Zahra Benali\t+212 612 345 678\t1987-12-24",
         "name\tphone\tdob\n<PERSON_NAME_1>\t<PHONE_1>\t<BIRTH_DATE_1>"),
        ("name, email, dob\nYuki Tanaka, yuki@example.jp, 1984-03-08",
         "name, email, dob\n<PERSON_NAME_1>, <EMAIL_1>, <BIRTH_DATE_1>"),
        ("The records:\n```csv\npatient,dob\nKwame Asante,1982-01-17\nLeilani Kahale,1999-05-23\n```",
         "The records:\n```csv\npatient,dob\n<PERSON_NAME_1>,<BIRTH_DATE_1>\n<PERSON_NAME_2>,<BIRTH_DATE_2>\n```"),
    ],
)  # fmt: skip
def test_values_named_by_keys_or_csv_headers_are_found(text: str, expected: str) -> None:
    assert redacted(text) == expected


def test_markdown_table_cells_are_read_under_their_header() -> None:
    text = (
        "| Patient | Date of Birth | MRN |\n|:---|:---:|---|\n"
        "| Amaru Quispe | 1979-10-05 | MRN-2210984 |\n| Ngozi Obi | 10/31/1966 | MRN-0047731 |"
    )
    assert redacted(text) == (
        "| Patient | Date of Birth | MRN |\n|:---|:---:|---|\n"
        "| <PERSON_NAME_1> | <BIRTH_DATE_1> | <RECORD_NUMBER_1> |\n"
        "| <PERSON_NAME_2> | <BIRTH_DATE_2> | <RECORD_NUMBER_2> |"
    )


def test_sql_values_are_read_under_their_columns() -> None:
    text = (
        'INSERT INTO "patients" ("full_name", "dob", "mrn") VALUES '
        "('Nguyen Thi Lan', '1993-02-14', 'MRN-0093321'), ('Rahul Menon', '1968-09-09', 'MRN-0011874');"
    )
    assert redacted(text) == (
        'INSERT INTO "patients" ("full_name", "dob", "mrn") VALUES '
        "('<PERSON_NAME_1>', '<BIRTH_DATE_1>', '<RECORD_NUMBER_1>'), "
        "('<PERSON_NAME_2>', '<BIRTH_DATE_2>', '<RECORD_NUMBER_2>');"
    )


def test_a_vcards_fields_are_read_by_their_property_names() -> None:
    text = (
        "BEGIN:VCARD\nVERSION:3.0\nN:Takahashi;Haruto;;;\nFN:Haruto Takahashi\nBDAY:19890721\n"
        "TEL;TYPE=CELL:+81 90-1234-5678\nADR;TYPE=home:;;1208 Maple Grove Rd;Columbus;OH;43215;USA\n"
        "item1.ADR:;;Kastanienallee 12;Berlin;;10435;Deutschland\nEND:VCARD"
    )
    assert redacted(text) == (
        "BEGIN:VCARD\nVERSION:3.0\nN:<PERSON_NAME_1>;;;\nFN:<PERSON_NAME_2>\nBDAY:<BIRTH_DATE_1>\n"
        "TEL;TYPE=CELL:<PHONE_1>\nADR;TYPE=home:<ADDRESS_1>\nitem1.ADR:<ADDRESS_2>\nEND:VCARD"
    )
    lower = "begin:vcard\nversion:4.0\nfn:Chiamaka Eze\nbday:19900101\nend:vcard"
    assert (
        redacted(lower)
        == "begin:vcard\nversion:4.0\nfn:<PERSON_NAME_1>\nbday:<BIRTH_DATE_1>\nend:vcard"
    )


def test_a_compact_birth_date_must_be_a_real_day() -> None:
    assert redacted("BDAY: 19850314") == "BDAY: <BIRTH_DATE_1>"
    assert redacted("BDAY: 19851314 and bday: 20250230") == "BDAY: 19851314 and bday: 20250230"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('From: "Wanjiru Kamau" <wanjiru.k@example.co.ke>', 'From: "<PERSON_NAME_1>" <<EMAIL_1>>'),
        ("Cc: Иван Петров <ivan.p@example.ru>, \"Lindqvist, Astrid\" <astrid@example.se>",
         'Cc: <PERSON_NAME_1> <<EMAIL_1>>, "<PERSON_NAME_2>" <<EMAIL_2>>'),
        ("commit 3f2a9c1\nAuthor: Mateus Albuquerque <mateus@example.com.br>\n\n    Fix it\n\n    Signed-off-by: Chidi J. Okonkwo <chidi@example.org>",
         "commit 3f2a9c1\nAuthor: <PERSON_NAME_1> <<EMAIL_1>>\n\n    Fix it\n\n    Signed-off-by: <PERSON_NAME_2> <<EMAIL_2>>"),
        ("To: Ana de Souza<ana@example.com.br>", "To: <PERSON_NAME_1><<EMAIL_1>>"),
    ],
)  # fmt: skip
def test_a_mailbox_display_name_is_found(text: str, expected: str) -> None:
    assert redacted(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # Catalogues: a column or key named "name" with nothing personal beside it.
        "name,price,sku\nSteel Bracket,4.99,SB-100\nBrass Hinge Set,12.50,BH-220",
        '[{"name": "widget-3", "price": 9.99}, {"name": "Copper Elbow", "price": 4.99}]',
        "INSERT INTO products (name, price, sku) VALUES ('Steel Bracket', 4.99, 'SB-100'), ('Brass Hinge', 2.5, 'BH-2');",
        "| Name | Version | Released |\n|---|---|---|\n| Harbour Engine | 2.4.1 | 2024-03-14 |\n| Tide Parser | 2.5.0 | 2024-06-01 |",
        # Names of things under a qualifier; configuration written as code.
        '{"product_name": "Ocean Breeze", "displayName": "Summer Sale", "version": "2.4.1"}',
        'config = {"host_name": "Build Server", "max_retries": 3, "timeout_ms": 2000}',
        "model_name: Llama Three\nlearning_rate: 0.0003\nbatch_size: 32",
        "release_date: 2021-04-12\nbuild_number: 20210412",
        "    employee_id = 40021873  # a fixture's id\n    patientDob = None",
        "user_id,created_at,plan\n4821,2023-05-02,Pro Annual\n4822,2023-05-03,Basic Monthly",
        "def load(user_id: int) -> User:\n    first_name = request.args['first_name']\n    return User(first_name=first_name)",
        # Letters signed by a team or a firm, and mailboxes of services.
        "Best regards,\nFinance Operations",
        "Kind regards,\nPayroll Services",
        "Sincerely,\nNorthwind Traders Ltd",
        "Thanks,\nAcme Billing Department",
        'Dear Support Team,\nthe export fails.',
        "From: GitHub <noreply@github.com>",
        "Reply-To: Acme Support Desk <help@acme.example>",
        '"Harbour Office" <office@harbour.example>',
        # A value that refers to one elsewhere, which a fields line would cut at its brace.
        "DB_HOST=db\nDB_USER=orders\nDB_PASSWORD=${DB_PASSWORD}\n",
        'export PGPASSWORD="$(cat /run/secrets/pg_password)"\npg_dump -h db -U app app',
        "api_token: {{ .Values.apiToken }}\nsmtp_password: <your-password>",
    ],
)  # fmt: skip
def test_benign_structured_data_stays(text: str) -> None:
    spans = REDACTOR.find(text)
    assert [s for s in spans if s.kind != "EMAIL"] == [], [text[s.start : s.end] for s in spans]


def test_a_person_under_a_sign_off_is_still_found() -> None:
    assert redacted("Best regards,\nIngrid Halvorsen") == "Best regards,\n<PERSON_NAME_1>"


def test_the_fields_view_reads_each_value_after_its_label_and_maps_back() -> None:
    text = '{"full_name": "Aiyana Whitehorse",\n "date_of_birth": "1991-11-02"}'
    fields = views(text)[-1]
    assert fields.text == "full name: Aiyana Whitehorse\ndate of birth: 1991-11-02"
    start = fields.text.index("1991")
    first, last = fields.origin(start, start + len("1991-11-02"))
    assert text[first:last] == "1991-11-02"


@pytest.mark.parametrize(
    "text",
    [
        "The tide tables are pinned to the door: high water at 06:42, low water at 12:58.",
        "Red, green, blue\nand a little grey, said the painter, mixing them.",
        "Knead it for ten minutes, then leave it; it rises in an hour (or two).",
        "We met at the harbour office, then walked to the pier, talking about boats.\nIt was cold, wet, windy.",
    ],
)
def test_prose_gets_no_fields_view(text: str) -> None:
    """What the fields view costs: prose is turned away before any table or key is parsed."""
    assert len(views(text)) == 1
