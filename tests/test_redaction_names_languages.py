"""People's names after the words that introduce one in many languages: self-introductions,
forms' labels, greetings and titles, letters' sign-offs (on the next line, on the same line
at a text's or a line's end, and the Korean one after the name), and payees; and the same
words where no name follows them."""

from __future__ import annotations

import pytest

from tests.helpers.redaction import grouped, names

pytestmark = pytest.mark.unit

# (text, the name after the words that introduce it), by those words.
INTRODUCED = {
    "self_introduction": [
        ("Здравствуйте! Меня зовут Иван Петров, я из Москвы.", "Иван Петров"),
        ("Привіт, мене звати Олена Коваленко.", "Олена Коваленко"),
        ("Я Иван Петров.", "Иван Петров"),
        ("Bună ziua, mă numesc Andrei Popescu.", "Andrei Popescu"),
        ("Dobrý den, jmenuji se Petr Novák.", "Petr Novák"),
        ("Ahoj, volám sa Jana Kováčová.", "Jana Kováčová"),
        ("Hej! Jag heter Erik Lindqvist och bor i Uppsala.", "Erik Lindqvist"),
        ("Hej, jeg hedder Mette Hansen.", "Mette Hansen"),
        ("Moi, nimeni on Matti Virtanen.", "Matti Virtanen"),
        ("Szia, a nevem Kovács Péter.", "Kovács Péter"),
        ("Kumusta, ako si Juan dela Cruz.", "Juan dela Cruz"),
        ("Selamat pagi, saya bernama Ahmad Faizal.", "Ahmad Faizal"),
        ("안녕하세요, 저는 김민수입니다.", "김민수"),
        ("سلام، اسم من علی رضایی است.", "علی رضایی"),
        ("السلام علیکم، میرا نام احمد خان ہے۔", "احمد خان"),
        ("নমস্কার, আমার নাম রাহুল দাস এবং আমি কলকাতায় থাকি।", "রাহুল দাস"),
        ("שלום, קוראים לי יעל כהן", "יעל כהן"),
    ],
    "form_label": [
        ("ФИО: Иванов Иван Иванович\nДата рождения: 01.02.1980", "Иванов Иван Иванович"),
        ("Имя: Сергей", "Сергей"),
        ("Пацієнт: Шевченко Тарас", "Шевченко Тарас"),
        ("Namn: Anna Svensson", "Anna Svensson"),
        ("Hakijan nimi: Liisa Korhonen", "Liisa Korhonen"),
        ("Jméno a příjmení: Jan Dvořák", "Jan Dvořák"),
        ("Nume: Ion Popescu", "Ion Popescu"),
        ("Pangalan: Maria Santos", "Maria Santos"),
        ("Afiliado: Juan Pérez\nPlan: 210", "Juan Pérez"),
        ("Beneficiário: João Silva", "João Silva"),
        ("Fahrer: Klaus Becker", "Klaus Becker"),
        ("Nom du conducteur : Jean Dupont", "Jean Dupont"),
        ("نام: علی رضایی", "علی رضایی"),
        ("নাম: রাহুল দাস", "রাহুল দাস"),
        ("اسم الطالب: محمد الأحمد", "محمد الأحمد"),
        ("이름: 박지영", "박지영"),
    ],
    "greeting_or_title": [
        ("Kære Mette,\ntak for sidst.", "Mette"),
        ("Kära Anna,", "Anna"),
        ("Ahoj Petře, jak se máš?", "Petře"),
        ("Vážený pane Nováku,", "Nováku"),
        ("Stimate domnule Popescu,", "Popescu"),
        ("عزيزي أحمد، شكرا لك", "أحمد"),
        ("Gentile Dott.ssa Rossi,", "Rossi"),
        ("Sehr geehrter Herr Dr. med. Schmidt,", "Schmidt"),
        ("Geachte heer Jansen,", "Jansen"),
        ("Estimada Dña. María López:", "María López"),
        ("Oi Ana, tudo bem?", "Ana"),
        ("Prezada Sr.ª Costa,", "Costa"),
        ("Merhaba Ayşe,", "Ayşe"),
    ],
    "sign_off": [
        ("Tak for i dag.\nMed venlig hilsen\nLars Jensen", "Lars Jensen"),
        ("Kiitos.\nTerveisin\nMatti", "Matti"),
        ("Díky.\nS pozdravem\nJan Novák", "Jan Novák"),
        ("Bis bald.\nViele Grüße\nJonas Weber", "Jonas Weber"),
        ("Tot morgen.\nGroetjes\nSanne", "Sanne"),
        ("Até logo.\nBeijos\nAna", "Ana"),
        ("Vă mulțumesc.\nCu stimă,\nIon Popescu", "Ion Popescu"),
        ("Teşekkürler.\nSaygılarımla\nAyşe Yılmaz", "Ayşe Yılmaz"),
        ("شكرا لكم.\nمع خالص التحيات،\nمحمد الأحمد", "محمد الأحمد"),
        ("ممنون.\nبا احترام،\nمریم احمدی", "مریم احمدی"),
        ("आपका दिन शुभ हो।\nधन्यवाद\nराहुल शर्मा", "राहुल शर्मा"),
        ("감사합니다.\n김민수 드림", "김민수"),
        ("ご確認ください。\nよろしくお願いいたします。\n山田太郎", "山田太郎"),
        # On the same line, the name at the text's or the line's end.
        ("Le code est le cryptogramme 582. Cordialement, Élodie Marchand", "Élodie Marchand"),
        ("Bis morgen. Gruß, Jonas", "Jonas"),
        ("Passt. Mvh Oskar\n", "Oskar"),
        ("Nos vemos, un abrazo, Fede", "Fede"),
    ],
    "payee": [
        ("Overmaken t.n.v. Jan de Vries", "Jan de Vries"),
        ("Pago a nombre de Laura Martínez", "Laura Martínez"),
        ("transfer atas nama Budi Santoso", "Budi Santoso"),
        ("PIX nome Maria Oliveira", "Maria Oliveira"),
    ],
}


NOT_NAMES = [
    "Gruß an alle",
    "Cordialement, l'équipe",
    "Cordialement, L'équipe Support",
    "Gruß, Jonas und Lea kommen morgen.",
    "Thanks, Everyone",
    "Best regards, Python Team",
    "Hei Maailma, tämä on testi",
    "Ahoj všichni,",
    "Kære kunde,",
    "Saludos a todos",
    "عزيزي العميل، شكرا لك",
    "با احترام به شما",
    "저는 학생입니다.",
    "저는 이사입니다.",
    "Thanks, Google Cloud, for the credits.",
    "Saludos, Buenos Aires está precioso hoy",
    "마케팅팀 드림",
    "Hola a todos, saludos Cordiales y Felices fiestas para Todos.",
]


@pytest.mark.parametrize(("text", "name"), grouped(INTRODUCED))
def test_a_name_after_the_words_that_introduce_one_is_found(text: str, name: str) -> None:
    assert names(text) == [name]


@pytest.mark.parametrize("text", NOT_NAMES)
def test_words_after_those_phrases_that_name_nobody_stay(text: str) -> None:
    assert names(text) == []
