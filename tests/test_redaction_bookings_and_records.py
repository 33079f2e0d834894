"""Numbers that open a person's records to whoever holds them, after the word that names them:
the booking reference of a trip or a stay, a frequent-flyer, loyalty or customer number, a
student's or a pupil's number, a transit or library card, Nigeria's BVN and NIN, India's UPI id,
a driving licence with its state before it, a passport named in Arabic, and a UK account after
its sort code. The numbers of a shop's order, invoice or ticket, a flight and a seat, a fee, a
year, stay as they are."""

from __future__ import annotations

import pytest

from tests.helpers.redaction import hides_each, kinds, leaves_each

pytestmark = pytest.mark.unit

HIDDEN = [
    # An immigrant's A-number, a driver's id at a ride app, Vietnam's health insurance card.
    ("USCIS case status (copied):\nA-Number: A873587383\nCase Was Approved", "A873587383"),
    (
        "Support chat transcript – Driver account\nDriver ID: DRV-571891\nVehicle: 2017 Civic",
        "DRV-571891",
    ),
    ("Ngày sinh: 22/07/1968\nMã thẻ BHYT: HC4949460542284\nSĐT: liên hệ sau", "HC4949460542284"),
    # Booking references of a flight, a train, a hotel.
    ("Localizador: K8PZ2R. Presente este código en el mostrador.", "K8PZ2R"),
    ("Your booking reference: QX7T4M (2 passengers)", "QX7T4M"),
    ("PNR: 6HQ3VK, LHR-JFK, 14 May", "6HQ3VK"),
    ("Record locator 7TQW2P — please keep it for check-in.", "7TQW2P"),
    ("Ihr Buchungscode: ZX4K9P für die Reise nach Wien", "ZX4K9P"),
    ("Référence de réservation : 8HJK2L, hôtel du Parc", "8HJK2L"),
    ("Codice prenotazione: MK29XP - Trenitalia", "MK29XP"),
    ("ご予約ありがとうございます。予約番号: 8834912", "8834912"),
    ("您的预订号：A7K29Q，入住日期 5月3日", "A7K29Q"),
    ("예약번호: 5520193 (체크인 15:00)", "5520193"),
    ("رقم الحجز: 7KQ2PX", "7KQ2PX"),
    ("Confirmation code: HX92KD for your stay at the Marriott", "HX92KD"),
    ("Booking ref. 4RT8WZ", "4RT8WZ"),
    ("Buchungsnummer 5501-2231-8", "5501-2231-8"),
    ("Numéro de réservation : 2K8J4P", "2K8J4P"),
    ("Localizador de reserva: Y7HB3N", "Y7HB3N"),
    ("Reservation number: 83920174", "83920174"),
    ("Boekingsnummer: 7729311", "7729311"),
    ("订单确认，预订编号 8830122", "8830122"),
    # Frequent-flyer, loyalty and customer numbers.
    ("Skywards: EK 512883401", "EK 512883401"),
    ("Miles & More: 992004471234567", "992004471234567"),
    ("Frequent flyer no. 44182273", "44182273"),
    ("AAdvantage # 7XK4R92", "7XK4R92"),
    ("Flying Blue number 2045817733", "2045817733"),
    ("Your loyalty number is 6034 8812 77", "6034 8812 77"),
    ("Payback-Nummer: 3081 4522 901", "3081 4522 901"),
    ("Avios membership: 33412098", "33412098"),
    ("member no. 008812734", "008812734"),
    ("Kundennummer: 1084 2291 77", "1084 2291 77"),
    ("Customer number: 40 2291 7781", "40 2291 7781"),
    ("Numéro client : 1102 4478 93", "1102 4478 93"),
    ("Número de cliente: 7000 1234 55", "7000 1234 55"),
    ("客户编号：3301 2290 18", "3301 2290 18"),
    # Student and admission numbers.
    ("Matric No: 190401087", "190401087"),
    ("Adm. No. 2019/0458", "2019/0458"),
    ("Student ID: 16284417", "16284417"),
    ("Roll No. 21CS1043", "21CS1043"),
    ("Enrolment number: A2204518", "A2204518"),
    ("Enrollment no. 20211187", "20211187"),
    ("Admission number 45821", "45821"),
    ("学籍番号: 21T4402", "21T4402"),
    ("学号：2019112233", "2019112233"),
    ("학번: 20191234", "20191234"),
    ("Matrícula: 2021-04417", "2021-04417"),
    ("numéro étudiant : 21804417", "21804417"),
    ("Matrikelnummer 4512876", "4512876"),
    # Transit and library cards.
    ("OV-chipkaart (kaartnummer 3528 0100 4412 7789)", "3528 0100 4412 7789"),
    ("Oyster card number 0612 4471 8890", "0612 4471 8890"),
    ("Suica: JE81 2240 5531 1209", "JE81 2240 5531 1209"),
    ("Library card no. 21982001234567", "21982001234567"),
    # Nigeria's BVN and NIN.
    ("BVN: 22184739561", "22184739561"),
    ("My NIN is 70123456789", "70123456789"),
    ("Bank Verification Number 22290011873", "22290011873"),
    # India's UPI id.
    ("UPI ID: mehta.ritesh@okicici", "mehta.ritesh@okicici"),
    ("Received ₹1,200 via UPI from mehta.ritesh@okicici", "mehta.ritesh@okicici"),
    ("pay to VPA 9876543210@ybl", "9876543210@ybl"),
    # A driving licence with its state before it.
    ("Licence: NSW 14829573", "NSW 14829573"),
    ("DL: CA D1234567", "CA D1234567"),
    ("Driver's license: TX 40218833", "TX 40218833"),
    # A passport named in Arabic.
    ("رقم الجواز: A12345678", "A12345678"),
    ("جواز السفر رقم N7743120", "N7743120"),
    # A UK account after its sort code.
    ("Pay into 40-11-62 / 81726354 (HSBC)", "81726354"),
    ("sort code 40-11-62, account 81726354", "81726354"),
    ("Sort code: 20-00-00 Account no: 55779911", "55779911"),
]

LEFT = [
    "postgres connection failed for host db.internal:5432 (A#5 retry), driver id unknown",
    "Order number: 4471123",
    "Flight VY1284, seat 14C, gate B32",
    "Invoice INV-2024-0091",
    "Ticket #88213",
    "Booking fee: 12.50",
    "Matric year 2023",
    "Your booking reference: CONFIRMED",
    "Booking reference will be sent by e-mail.",
    "PNR status: waitlisted",
    "UPI from the app store",
    "License: Apache-2.0",
    "Licensed under the MIT License 2024",
    "roll no. of students: 42",
    "Customer number of complaints fell by 1200",
    "Suica and Pasmo are accepted at gate 3",
    "Flying Blue miles earned: 2400",
    "Frequent flyer miles this year: 25000",
    "License: GPL-3.0",
    "Apache License, Version 2.0 (January 2004)",
    "Código de reserva 12345678",
    "Read chapter 3 of the student handbook (2019/2020)",
]


test_a_booking_or_record_number_is_hidden = hides_each(HIDDEN)


test_a_shop_number_or_a_word_after_such_a_label_is_left = leaves_each(LEFT)


def test_an_email_address_keeps_its_own_kind() -> None:
    text = "UPI ID: none yet, write to mehta.ritesh@icici.co.in or priya.shah@gmail.com"
    assert kinds(text) == {"mehta.ritesh@icici.co.in": "EMAIL", "priya.shah@gmail.com": "EMAIL"}
