"""Birth dates, account, record and national identity numbers after the words that name them in
the languages people fill forms in, in their own calendars and with their own number signs; and
the order, invoice and tracking numbers after theirs, which stay."""

from __future__ import annotations

import pytest

from tests.helpers.redaction import finds_each_as_its_kind, leaves_each

pytestmark = pytest.mark.unit

# (text, the value after the words that name it), by the value's kind.
NAMED = {
    "BIRTH_DATE": [
        ("Datum narození: 12. 6. 1985", "12. 6. 1985"),
        ("Дата народження: 12.06.1985", "12.06.1985"),
        ("תאריך לידה: 12/06/1985", "12/06/1985"),
        ("تاریخ تولد: ۱۳۷۰/۰۵/۱۸", "۱۳۷۰/۰۵/۱۸"),
        ("জন্ম তারিখ: 12-06-1985", "12-06-1985"),
        ("تاریخ پیدائش: 12/06/1985", "12/06/1985"),
        ("วันเกิด: 15/03/2533", "15/03/2533"),
        ("วันเกิด 15 มีนาคม 2533", "15 มีนาคม 2533"),
        ("Tarikh lahir: 12 Jun 1990", "12 Jun 1990"),
        ("Petsa ng kapanganakan: Hunyo 12, 1992", "Hunyo 12, 1992"),
        ("Nasc.: 12/06/1985", "12/06/1985"),
        ("تاريخ الازدياد: 12/06/1985", "12/06/1985"),
        ("Né(e) le 12/06/1985 à Lyon", "12/06/1985"),
        ("出生日期：民國84年3月15日", "民國84年3月15日"),
        ("生年月日：昭和60年3月14日", "昭和60年3月14日"),
        ("Data urodzenia: 12 czerwca 1985", "12 czerwca 1985"),
        ("Doğum tarihi: 12 Haziran 1985", "12 Haziran 1985"),
        ("Дата рождения: 12 июня 1985 г.", "12 июня 1985"),
        ("Tanggal lahir: 17 Agustus 1990", "17 Agustus 1990"),
        ("Születési dátum: 1985. június 12.", "1985. június 12"),
        ("Ngày sinh: 12 tháng 6 năm 1985", "12 tháng 6 năm 1985"),
        ("Tarehe ya kuzaliwa: 12/06/1985", "12/06/1985"),
    ],
    "ACCOUNT_NUMBER": [
        ("CLABE: 002010077777777771", "002010077777777771"),
        ("CBU 2850590940090418135201", "2850590940090418135201"),
        ("Číslo účtu: 94-9156494474/0800", "94-9156494474/0800"),
        ("Kontonr. 1234 5678901234", "1234 5678901234"),
        ("खाता संख्या: 123456789012", "123456789012"),
        ("계좌 110-123-456789", "110-123-456789"),
        ("Số tài khoản: 0071001234567", "0071001234567"),
        ("מספר חשבון: 12-345-678901", "12-345-678901"),
        ("No akaun: 1234567890", "1234567890"),
        ("transfer ke BCA 1234567890 ya", "1234567890"),
        ("شماره حساب: 0123456789012", "0123456789012"),
        ("nomor rekening 1234567890", "1234567890"),
    ],
    "RECORD_NUMBER": [
        ("Póliza nº 12345678", "12345678"),
        ("Apólice n.º 87654321", "87654321"),
        ("Contrat n° AB123456", "AB123456"),
        ("Versicherungsschein-Nr. 123456789", "123456789"),
        ("Полис ОСАГО ХХХ 0123456789", "0123456789"),
        ("保单号：P12345678", "P12345678"),
        ("Sigorta poliçe numaranız: 98765432", "98765432"),
        ("Permiso de conducir nº 12345678", "12345678"),
        ("Číslo řidičského průkazu: EA123456", "EA123456"),
        ("N° de socio: 004512", "004512"),
        ("Número de utente: 123456789", "123456789"),
        ("Patienten-Nr.: 7700123", "7700123"),
        ("保険者番号 12345678", "12345678"),
        ("Anställningsnummer: 45123", "45123"),
        ("Opiskelijanumero 0123456", "0123456"),
        ("Müşteri numaranız: 12345678", "12345678"),
        ("Numéro allocataire : 1234567", "1234567"),
        ("номер медичної карти 123456", "123456"),
        ("ग्राहक आईडी: 98765432", "98765432"),
        ("رقم مسار: G123456789", "G123456789"),
        ("carta d'identità n. CA12345AA", "CA12345AA"),
    ],
    "NATIONAL_ID": [
        ("NSS: 12345678903", "12345678903"),
        ("O meu NIF é 123456789", "123456789"),
        ("رقم الهوية الوطنية: 1012345672", "1012345672"),
        ("Emirates ID 784-1990-1234567-6", "784-1990-1234567-6"),
        ("کد ملی: 0499370899", "0499370899"),
        ("জাতীয় পরিচয়পত্র নম্বর: 1234567890", "1234567890"),
        ("شناختی کارڈ نمبر: 35202-1234567-1", "35202-1234567-1"),
        ("เลขประจำตัวประชาชน 1-1017-00230-70-8", "1-1017-00230-70-8"),
        ("NPWP: 01.312.166.0-091.000", "01.312.166.0-091.000"),
        ("TIN: 123-456-789-000", "123-456-789-000"),
    ],
}


test_a_value_after_its_name_is_found_as_its_kind = finds_each_as_its_kind(NAMED)


# Named national IDs that fail their check, and numbers that are no person's.
LEFT = [
    "رقم الهوية الوطنية: 1012345675", "Emirates ID 784-1990-1234567-0", "کد ملی: 0499370898",
    "NSS: 12345678904",
    "Número de pedido: 12345678", "Numéro de commande 123456789", "Bestellnummer: 987654321",
    "Sipariş numaranız: 12345678", "Номер заказа 12345678", "订单号：12345678901",
    "注文番号 12345678", "주문번호 12345678", "Mã đơn hàng 12345678", "Nomor pesanan 12345678",
    "Faktura nr 12345678", "Rechnungsnummer 12345678", "Número de factura 12345678",
    "Número de seguimiento 12345678", "Sendungsnummer 123456789012", "Código de reserva 12345678",
    "מספר חשבונית: 12345678", "счет-фактура № 12345678",
    "Kundennummer 1234, Bestellnummer 12345678",
    "Datum: 12. 6. 2020", "Vytvořeno 12. 6. 1985", "شماره سفارش 12345678", "رقم الطلب 12345678",
    "Nº de pedido 12345678", "Bestell-Nr. 12345678", "Datum narození: 31. 2. 1985",
]  # fmt: skip


test_a_failed_check_or_a_number_that_is_no_persons_is_left = leaves_each(LEFT)
