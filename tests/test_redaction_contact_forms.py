"""E-mail addresses in any script (RFC 6531, IDNA) and phone numbers of any country after a word
that names a phone, in the default configuration, whose phone regions read few of them."""

# ruff: noqa: E501  (a case reads best on one line)
from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sampling.redaction.finders.numbers import _decimals, _is_date
from sampling.redaction.phones import PHONE_WORDS
from tests.helpers.redaction import REDACTOR, hides_each

pytestmark = pytest.mark.unit
PLACEHOLDER = r"<[A-Z][A-Z0-9_]*_[0-9]+>"


def _assert_redacted_whole(before: str, value: str, after: str) -> None:
    """The text comes back with `value` replaced by one placeholder and nothing else changed."""
    result = REDACTOR.redact([f"{before}{value}{after}"]).texts[0]
    assert re.fullmatch(re.escape(before) + PLACEHOLDER + re.escape(after), result), result


@pytest.mark.parametrize(
    ("before", "address", "after"),
    [
        ("Escríbeme a ", "josé.garcía@correo.es", " hoy"),
        ("my email is ", "müller@beispiel.de", "."),
        ("пишите: ", "иван@почта.рф", ", спасибо"),
        ("", "山田@例え.jp", " まで"),
        ("邮箱是", "wang.fang@example.cn", "请回复"),
        ("write to ", "jane@xn--bcher-kva.example", " today"),
        ("कृपया ", "राम@उदाहरण.भारत", " पर लिखें"),
        ("ส่งไปที่ ", "สมชาย@ตัวอย่าง.ไทย", " ครับ"),
        ("γράψτε στο ", "νίκος@παράδειγμα.ελ", " σήμερα"),
    ],
)
def test_an_address_in_any_script_is_hidden_whole(before: str, address: str, after: str) -> None:
    _assert_redacted_whole(before, address, after)


@pytest.mark.parametrize(
    "text",
    [
        "@types/node and @vue/cli are npm scopes",
        "@Override\npublic String toString()",
        "user@host:~$ ls -la",
        "thanks @jane and @müller for the review",
        "x = weights@self.weight_decay",
        "pip install pkg@1.2.3",
        "@дмитрий спасибо, @山田 ありがとう",
    ],
)
def test_at_signs_that_are_no_address_stay(text: str) -> None:
    assert REDACTOR.redact([text]).texts[0] == text


_SCRIPTS = {
    "latin": "abcdefghijklmnopqrstuvwxyzàáâãäåæçèéêëìíîïñòóôõöøùúûüýÿąćęłńśźżőűčďěňřšťžğış0123456789",
    "cyrillic": "абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґ0123456789",
    "greek": "αβγδεζηθικλμνξοπρστυφχψωάέήίόύώ",
    "arabic": "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
    "hebrew": "אבגדהוזחטיכלמנסעפצקרשת",
    "cjk": "山田太郎花子中国例会社电邮件やまだはなこ가나다라마바사0123456789",
}


@st.composite
def _addresses(draw: st.DrawFn) -> str:
    letters = _SCRIPTS[draw(st.sampled_from(sorted(_SCRIPTS)))]
    word = st.text(letters, min_size=1, max_size=8)
    local = ".".join(draw(st.lists(word, min_size=1, max_size=3)))
    labels = draw(st.lists(st.text(letters, min_size=2, max_size=10), min_size=1, max_size=3))
    tld = draw(
        st.one_of(
            st.text("abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=6),
            st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=4, max_size=10).map(
                lambda code: f"xn--{code}"
            ),
            st.text(letters.rstrip("0123456789"), min_size=2, max_size=4),
        )
    )
    return f"{local}@{'.'.join(labels)}.{tld}"


@given(
    _addresses(),
    st.sampled_from([("write to ", " today"), ("邮箱：", "。"), ("(", ")"), ("«", "»")]),
)
@settings(max_examples=150, deadline=None)
def test_no_character_of_an_address_in_any_script_survives(
    address: str, around: tuple[str, str]
) -> None:
    before, after = around
    _assert_redacted_whole(before, address, after)


@pytest.mark.parametrize(
    ("before", "number", "after"),
    [
        ("Meu celular é ", "(11) 98765-4321", ", me liga"),
        ("Mi teléfono es ", "600 12 34 56", "."),
        ("Meine Handynummer: ", "0151/234 567 89", " (abends)"),
        ("Tel. ", "089 / 12 34 56 78", ""),
        ("Zadzwoń pod numer ", "512 345 678", "."),
        ("телефон: ", "8 (912) 345-67-89", ""),
        ("هاتفي ", "0501234567", ""),
        ("טלפון: ", "052-1234567", ""),
        ("Mon portable est le ", "06 12 34 56 78", "."),
        ("Il mio cellulare è ", "347 123 4567", "."),
        ("Mijn mobiel nummer: ", "06-12345678", "."),
        ("電話番号は", "090-1234-5678", "です"),
        ("휴대폰 번호는 ", "010-1234-5678", "입니다"),
        ("मेरा फ़ोन नंबर ", "98765 43210", " है"),
        ("Số điện thoại của tôi là ", "0912 345 678", "."),
        ("โทรศัพท์ ", "081 234 5678", " ครับ"),
        ("Telefon numaram ", "0532 123 45 67", "."),
        ("Τηλέφωνο: ", "210 1234567", ""),
        ("phone: ", "020 - 7946 - 0958", ""),  # spaced hyphens
        ("Tel.: ", "030 – 1234 5678", " (Büro)"),  # an en dash
    ],
)
def test_a_number_after_a_phone_word_is_a_phone_in_any_country(
    before: str, number: str, after: str
) -> None:
    result = REDACTOR.redact([before + number + after])
    assert result.texts[0] == f"{before}<PHONE_1>{after}"


# Numbers after words that name them as something other than a phone.
BENIGN = [
    "Your order number is 600 12 34 56.", "Bestellnummer: 0151 234 567 89", "Order #5123 4567 8 has shipped.",
    "Invoice number 2024-001234 is attached.", "Room number 512 345 678 is not a thing, room 1204 is.",
    "Rechnungsnummer: 089 12 34 56 78", "Número de pedido: 600 123 456", "Numéro de commande : 06 12 34 56 78",
    "Numéro de facture 2023 0045 6789", "Número de factura 98765 4321", "Seite Nummer 123 4567 im Katalog.",
    "Flight number LH 400 departs at 10:45 on 2024-05-12.", "Tracking number: 9400 1000 0000 0000 0000 00",
    "Serial number 0501234567 on the back of the device.", "Seriennummer: 052-1234567",
    "Numer zamówienia 512 345 678", "Numer faktury: 2024/05/123456", "Номер заказа: 8 912 345 67 89",
    "Page number 11 98765 4321 in the index.", "The number 1 234 567 is a large number.",
    "Version number 2.10.3.1234567", "Número de serie 600 12 34 56", "Numéro de série 089 / 12 34 56 78",
    "The price is 1 299 000 € for the house, number 12.", "Nummer 2019-2023 der Jahresberichte.",
    "Numero d'ordine 3456 7890 12", "Bestellnummer 0151/23456789", "Order number 0501234567",
    "Invoice no. 600 12 34 56", "Room 512, building 3, number 1234567 in the registry.",
    "ISBN number 978-3-16-148410-0", "Patent number US 7,654,321 B2 filed 2009-2010.",
    "Ticket number 0151/234 567 89", "Booking reference number 512 345 678", "Flight number 4155550134 is not real.",
    "The phone costs 12 990 000 ₽ now.", "Telefon seit 16.04.2019 defekt.", "Handy vom 01.02.2020 bis 2021",
    "phone model 2024-05-12", "Call of Duty sold 1 234 567 copies.",
    "Pages 120 - 135 and the years 2019 – 2024.",
]  # fmt: skip


def test_numbers_named_as_something_else_are_no_phones() -> None:
    assert len(BENIGN) == 41
    for text in BENIGN:
        assert "PHONE" not in REDACTOR.redact([text]).counts, text


_PHONE_WORDS = sorted({word for words in PHONE_WORDS.values() for word in words})
_GAPS = [": ", " ", " is ", " es ", " é ", " ist ", " est ", " — ", " number: ", "：", " - "]
_SEPARATORS = st.sampled_from([" ", "-", ".", "/", " / ", "  "])


@st.composite
def _numbers(draw: st.DrawFn) -> str:
    digits = draw(st.text("0123456789", min_size=8, max_size=12))
    cuts = sorted(draw(st.sets(st.integers(2, len(digits) - 2), max_size=3)))
    groups = [digits[a:b] for a, b in zip([0, *cuts], [*cuts, len(digits)], strict=True)]
    groups = [group for group in groups if group]
    separators = draw(st.lists(_SEPARATORS, min_size=len(groups), max_size=len(groups)))
    number = groups[0]
    if len(groups) > 1 and draw(st.booleans()):
        number = f"({groups[0]})"
    for separator, group in zip(separators[1:], groups[1:], strict=True):
        number += f"{' ' if number.endswith(')') else separator}{group}"
    return draw(st.sampled_from(["", "+", "0"])) + number


@given(st.sampled_from(_PHONE_WORDS), st.sampled_from(_GAPS), _numbers())
@settings(max_examples=200, deadline=None)
def test_any_grouping_of_digits_after_any_phone_word_is_hidden_whole(
    word: str, gap: str, number: str
) -> None:
    assume(not _is_date(number) and not _decimals(number, ""))  # a date or a decimal is no phone
    before, after = f"Hi, {word}{gap}", " thanks"
    _assert_redacted_whole(before, number, after)


# Numbers of the text's own country that none of the configured regions (US, GB, CN) reads: the
# country read from the script, the words of its language or a country's domain, the number
# named by a word or a verb of calling before or after it, or a mobile number in groups; and
# numbers of the ranges regulators keep for drama and examples, which libphonenumber rejects.
OWN_COUNTRY = [
    ("Llamo al 612 48 93 07 mañana", "612 48 93 07"),
    ("Llamo al 912 345 678 del consultorio mañana", "912 345 678"),
    ("Buenas, te paso mi número: 622 18 47 90 para lo del piso", "622 18 47 90"),
    ("Ana Ruiz · ana.ruiz@correo.es · 655 12 34 89", "655 12 34 89"),
    ("Linha: (21) 99134-5820", "(21) 99134-5820"),
    ("Oi, tudo bem? Meu zap é (11) 97654-3210, me chama lá", "(11) 97654-3210"),
    ("Qualquer coisa liga pra 21 98877-6655 depois das seis", "21 98877-6655"),
    ("Proszę dzwonić pod 601 234 567 jutro rano", "601 234 567"),
    ("Nomor yg bisa dihubungi 0857 1123 4490", "0857 1123 4490"),
    ("Kalau ada apa-apa, hubungi saja 0813 4455 6677 ya", "0813 4455 6677"),
    ("मुझे कॉल करें (96500 71842) शाम को", "96500 71842"),
    ("कल सुबह 99887 76655 पर कॉल करना", "99887 76655"),
    ("Bhai mera number 9876501234 hai, call kar lena", "9876501234"),
    ("Позвоните мне завтра: 8 916 123-45-67", "8 916 123-45-67"),
    ("Мой номер 916 123 45 67, пишите в телеграм", "916 123 45 67"),
    ("رقمي الجديد 0551234567 اتصل بي", "0551234567"),
    ("text Priya 07700900987 when you land", "07700900987"),
    ("Contact: 01632960456", "01632960456"),
    ("ring me on 0491570110", "0491570110"),
    ("call 0491570156 now", "0491570156"),
    ("Freephone 1800 160 401", "1800 160 401"),
    # A sentence ends after the number, and the next starts with one.
    ("if no answer ring Dev 07700 900418. 27 Fennel Close, round the back", "07700 900418"),
    ("Por favor en caso de urgencia llamar al 612 48 93 07", "612 48 93 07"),
]


test_a_number_of_the_texts_own_country_is_a_phone = hides_each(OWN_COUNTRY, spaces=False)


# Runs of digits in the same languages that are no phone: an order's, an article's, an amount, a
# count in thousands, a date, a postcode.
OWN_COUNTRY_BENIGN = [
    "Pedido 612 48 93 confirmado, gracias", "Tu pedido nº 612 48 93 07 ha sido enviado",
    "Factura 655 12 34 89 pendiente de pago, gracias", "El total es 612.489.307 pesos, gracias",
    "Código del producto: 612 489 307, muy bueno", "SKU 655 123 489 agotado en la tienda",
    "Pagamento de R$ 912 345 678 recebido, obrigado", "Seu pedido 9876 5432 1 foi enviado, obrigado",
    "Die Rechnung 0171 5558823 ist bezahlt, danke", "Artikel 4006381 333931 ist nicht auf Lager, danke",
    "La réunion est le 12 05 2024 à 10h, merci", "Il prezzo è 1 234 567 euro, grazie",
    "Numer zamówienia 601 234 567, dziękuję", "Nomor pesanan 0813 4455 6677 sudah dikirim ya",
    "मेरे पास 95,000 रुपये हैं और 1 234 567 लोग", "Ваш заказ 916 123 45 67 отправлен",
    "Tanggal 12 08 2024 jam 10 pagi ya, terima kasih", "Kode pos 12345 678 90 di Jakarta ya",
    "El vuelo sale el 2024 05 12 a las 10:30, gracias", "En 2019 hubo 612 489 307 visitas, muy bien",
    "The company Telefónica reported 612 489 307 subscribers in 2019",
    "Total sold: 1234. 5678 were returned", "Version 2.1. 1234567 downloads so far",
]  # fmt: skip


@pytest.mark.parametrize("text", OWN_COUNTRY_BENIGN)
def test_look_alikes_in_the_texts_own_language_are_no_phones(text: str) -> None:
    assert "PHONE" not in REDACTOR.redact([text]).counts, REDACTOR.redact([text]).texts[0]


@pytest.mark.parametrize(
    "text",
    [
        "sshd[2211]: Accepted password for deploy from 95.165.44.201 port 51822 ssh2",
        "用这个188.241.180.71就可以了",
        "Try 239.20.50.163 and tell me if it works",
    ],
)
def test_a_dotted_quad_is_an_ip_address_not_a_phone(text: str) -> None:
    assert "PHONE" not in REDACTOR.redact([text]).counts, REDACTOR.redact([text]).texts[0]
    assert "IP_ADDRESS" in REDACTOR.redact([text]).counts, REDACTOR.redact([text]).texts[0]


# A drug's code after its name, a release's four numbers in any language.
NAMED_OTHERWISE = [
    "The box says NDC 0573-0164-40, 50 tablets, lot 4KL2291",
    "Liên Quân cập nhật phiên bản 1.54.1.3 tối nay, bảo trì từ 0h đến 6h",
    "Aktualizacja do wersja 2.4.10.3 już jest, a sürüm 5.12.0.1 yarın",
]


@pytest.mark.parametrize("text", NAMED_OTHERWISE)
def test_a_drug_code_and_a_release_are_no_phone_nor_address(text: str) -> None:
    redaction = REDACTOR.redact([text])
    assert not redaction.counts, redaction.texts[0]
