"""Personal data in the documents people paste into a chat (a CV, a discharge letter, an HR
record, a shipping label, a visa form, a school record) and in how they introduce themselves,
in several languages; and the look-alikes of the same documents that must stay."""

from __future__ import annotations

import pytest

from tests.helpers.redaction import REDACTOR, hides_each, leaves_each

pytestmark = pytest.mark.unit


FOUND = [
    # A form's label for the person a record is about, in the languages forms are written in.
    ("Applicant: Dana Whitcombe\nIncome: $5,400", "Dana Whitcombe"),
    ("Student: Owen Castellano\nGrade 7", "Owen Castellano"),
    ("Paciente: María Teresa Núñez Blanco\nAlergias: ninguna", "María Teresa Núñez Blanco"),
    ("Locataire : Bastien Roux\nLoyer : 840 €", "Bastien Roux"),
    ("Mitarbeiter: Henrik Vogel, Abteilung Einkauf", "Henrik Vogel"),
    ("Nome completo: Thiago Mendes Rocha", "Thiago Mendes Rocha"),
    ("Naam: Femke Smit\nAfdeling: Inkoop", "Femke Smit"),
    ("Patiënt: dhr. Ruud Mulder", "Ruud Mulder"),
    ("Ship to: Nora Lindqvist\n88 Pine Road", "Nora Lindqvist"),
    # Introducing oneself: two capitalised words and the end of the clause.
    ("Hi! I'm Valeria Quintero, I need help with a cover letter", "Valeria Quintero"),
    ("hey this is Marcus Bell. can you check my essay", "Marcus Bell"),
    # A Japanese name after a form's label, family and given name apart.
    ("氏名：中村 直樹\n年齢：41", "中村 直樹"),
    # Record numbers named in other languages and scripts.
    ("Personalnummer 48213, Eintritt 2019", "48213"),
    ("住院号：20230517，床号 12", "20230517"),
    ("Prontuário: 778899", "778899"),
    ("Matricule : 009871", "009871"),
    ("N.º historia clínica: 3049581", "3049581"),
    ("カルテ番号：000456789", "000456789"),
    ("رقم الملف الطبي: 661203", "661203"),
    # A date of birth in Korean and in Arabic.
    ("생년월일: 1988년 11월 3일", "1988년 11월 3일"),
    ("تاريخ الميلاد: 21/07/1979", "21/07/1979"),
    # A routing number and an account after their short names.
    ("wire it: routing 026009593 acc 00417723", "026009593"),
    ("wire it: routing 026009593 acc 00417723", "00417723"),
    # Passport numbers after the word in more languages, in more countries' forms.
    ("N° de passeport : 18CD54321", "18CD54321"),
    ("旅券番号：TR7654321", "TR7654321"),
    ("Numero passaporto: YB7654321", "YB7654321"),
    ("Número de pasaporte: PXC654321", "PXC654321"),
    ("رقم جواز السفر: B87654321", "B87654321"),
    # An address after the word that names it, in any form and case.
    (
        "Address: Flat 12, Lotus Residency, Sector 21, Gurugram 122016",
        "Flat 12, Lotus Residency, Sector 21, Gurugram 122016",
    ),
    ("i live at 17 kangaroo crescent perth", "17 kangaroo crescent perth"),
    (
        "my address is 90 little collins st melbourne vic 3000. thanks",
        "90 little collins st melbourne vic 3000",
    ),
    ("地址：广东省广州市天河区体育西道103号\n电话：略", "广东省广州市天河区体育西道103号"),
    ("Endereço: Rua das Flores, 220, Centro, Curitiba", "Rua das Flores, 220, Centro, Curitiba"),
    # Addresses by their shape: a label's lines, a flat before the number, a locality before
    # the town, a comma before the number, Italian articles, a Spanish floor and door.
    (
        "SHIP TO:\nJo Park\n1420 N Halsted St\nChicago, IL 60642",
        "1420 N Halsted St\nChicago, IL 60642",
    ),
    ("Empfänger:\nTim Lang\nGoethestr. 9\n04109 Leipzig", "Goethestr. 9\n04109 Leipzig"),
    ("Destinataire :\nM. Paul Henry\n3 rue Nationale\n59000 Lille", "3 rue Nationale\n59000 Lille"),
    ("Flat 7, 19 Rosewood Avenue, Leeds LS8 2QR", "Flat 7, 19 Rosewood Avenue, Leeds LS8 2QR"),
    (
        "4 Church Lane, Grantchester, Cambridge CB3 9NQ",
        "4 Church Lane, Grantchester, Cambridge CB3 9NQ",
    ),
    ("Rua Oscar Freire, 379, São Paulo", "Rua Oscar Freire, 379"),
    ("Via dell'Orso 12, 20121 Milano", "Via dell'Orso 12, 20121 Milano"),
    ("Calle de Serrano 41, 2º A, 28001 Madrid", "Calle de Serrano 41, 2º A, 28001 Madrid"),
    ("Bergerstraße 120, 60316 Frankfurt am Main", "Bergerstraße 120, 60316 Frankfurt am Main"),
]


test_a_value_in_a_pasted_document_is_hidden = hides_each(FOUND)


LEFT = [
    # Saying what one is, not who.
    "I'm New York based and looking for a data job",
    "I'm Microsoft Certified and want to move to AWS",
    "I'm Feeling Lucky today, give me a riddle",
    "ich bin Student und suche eine Wohnung",
    # A machine's address, a mailbox's, or none after the word.
    "address: localhost:8080",
    "the address space is 48 bits wide",
    "E-Mail-Adresse: siehe Formular 2",
    "address = 0x7ffd12345678",
    "The address is in the email I sent on the 3rd",
    # A value that says there is none; a number in brackets counts something else.
    "Billing address: same as shipping (2 items)",
    "Address: N/A (see ticket 4521)",
    "shipping address: TBD, will send 2 days before",
    # An ISBN-10, and a day that does not exist after a birth date's name.
    "ISBN-10 0-306-40615-2 is the paperback.",
    "생년월일: 1988년 2월 30일",
    # Routing of a network, accuracy of a model.
    "routing table 192 entries; acc 0.9731 after 12 epochs",
]


test_a_look_alike_in_a_pasted_document_is_left = leaves_each(LEFT)


# A machine's address after the word is no home; the passport word names only what follows it
# (the passport number is found; the date of issue beside it is not read as one).
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("IP address: 10.1.2.3 (gateway)", "IP_ADDRESS"),
        ("Adresse IP : 192.168.0.14", "IP_ADDRESS"),
        ("Numero passaporto: YB7654321, rilasciato il 12/04/2019", "PASSPORT"),
    ],
)
def test_a_word_names_only_the_value_of_its_kind(text: str, kind: str) -> None:
    assert [s.kind for s in REDACTOR.find(text)] == [kind]
