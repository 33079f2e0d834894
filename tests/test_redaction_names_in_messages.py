"""Names where messages, mail and tool output put them without a phrase before them: who speaks
in a dialogue, who signs a message's last line, a mailbox's display name in any script, who a
mail is from, who to call, a name key's value in a script without capitals; and the texts of the
same shapes that hold no name (a list, an agenda, a route, an office's mailbox)."""

# ruff: noqa: E501  (a case reads best on one line)
from __future__ import annotations

import pytest

from tests.helpers.redaction import REDACTOR, hides_each, leaves_each

pytestmark = pytest.mark.unit

WECHAT = (
    "2024-05-18 21:03 王梓涵：我订好了去大理的机票\n2024-05-18 21:04 王梓涵：@小雨 你的是对吧？\n"
    "2024-05-18 21:06 刘小雨：对的对的\n2024-05-18 21:07 陈静怡：我的也对"
)
NAMES = [
    # A dialogue without time stamps: speakers, one of them again.
    ("Magda: kto ma kod do klatki?\nOla Kowalczyk: 2580 i mieszkanie 14\nMagda: a adres?", "Magda"),
    ("Magda: kto ma kod do klatki?\nOla Kowalczyk: 2580 i mieszkanie 14\nMagda: a adres?", "Ola Kowalczyk"),
    ("2024-05-20 21:33 张磊: 明天聚餐谁定的位?\n2024-05-20 21:35 刘洋: 我订了\n2024-05-20 21:36 张磊: 好", "张磊"),
    ("2024-05-20 21:33 张磊: 明天聚餐谁定的位?\n2024-05-20 21:35 刘洋: 我订了\n2024-05-20 21:36 张磊: 好", "刘洋"),
    ("Maman: tu peux passer demain ?\nLéo: oui\nMaman: merci", "Léo"),
    # A speaker's label: a role or a parent before a first name, an aside of who the role is or
    # of whose parent speaks.
    ("Operatore Matteo: buongiorno\nCliente: il pacco non è arrivato\nOperatore Matteo: verifico", "Matteo"),
    ("Učiteljica Milena: dragi roditelji\nMama od Ivana: hvala\nUčiteljica Milena: molim", "Milena"),
    ("Asistencia (Joaquín): hola, ¿en qué te ayudo?\nCliente: mi pedido no llegó\nAsistencia (Joaquín): lo reviso", "Joaquín"),
    ("Kundenservice (Tobias): Guten Tag\nKunde: mein Paket fehlt seit Tagen\nKundenservice (Tobias): ich prüfe das", "Tobias"),
    ("Kate (Oliver's mum): he is ill today\nMr Hale: thanks\nKate (Oliver's mum): back on Monday", "Kate"),
    ("Kate (Oliver's mum): he is ill today\nMr Hale: thanks\nKate (Oliver's mum): back on Monday", "Oliver"),
    ("Lucía (mamá de Mateo): llevo las galletas\nPaola: genial\nLucía (mamá de Mateo): dale", "Mateo"),
    # Who speaks gives the name the line before asks for (a client, in an Arabic chat).
    ("الموظفة: أهلاً! ممكن الاسم والعنوان؟\nالعميل: هالة منصور، شارع النيل\nالموظفة: شكراً\nالعميل: العفو", "هالة منصور"),
    # A message signed on its last line.
    ("Selling my bike, text me 07384 921 660, no time wasters pls\n- Danny", "Danny"),
    ("Vendo divano, zona Monza.\nScrivetemi su WhatsApp al 333 918 2274\nAlessandro", "Alessandro"),
    ("my account got stolen yesterday, pls help\nTyler Brooks", "Tyler Brooks"),
    ("Room free from June.\nEmail me first at mk.chi@example.com - Mike", "Mike"),
    # A mailbox's display name: after the words before it, in scripts without capitals.
    ("---\nOriginal from Funmilayo Adebayo <funmi.adebayo@example.com>:\nGood day", "Funmilayo Adebayo"),
    ("张伟 <zhangwei@example.cn> 写道：", "张伟"),
    ('"김민준" <minjun@example.kr>', "김민준"),
    ("أحمد الشمري <a.alshammari@example.com>", "أحمد الشمري"),
    # Who a mail is from, without an address, another header beside it.
    ("MyChart message\nFrom: Kevin O'Donnell (MRN 00482913)\nSubject: refill", "Kevin O'Donnell"),
    ("Von: Sabine Krüger\nGesendet: Montag, 3. Juni\nBetreff: neue Bankverbindung", "Sabine Krüger"),
    # A name key's value in a script without capitals.
    ('-d \'{"phone":"010-7723-4581","name":"김민준"}\'', "김민준"),
    ('[{"name": "أحمد الشمري", "phone": "+966 55 123 4567"}]', "أحمد الشمري"),
    ("full_name=佐藤 美咲", "佐藤 美咲"),
    # A first name where the message says how to reach its person.
    ("PM or text 0927 654 3321, look for Kevin. Serious buyers only", "Kevin"),
    ("Ophalen in Utrecht-Oost. Bel of app Marieke: 06-48213977. Geen ruilen!", "Marieke"),
    ("¿alguien tiene el número del fontanero? sí! Paco, 654 321 987, es buenísimo", "Paco"),
    # A chat export's line of who writes and when, alone or in brackets.
    ("Ирина, 18:42\nскинь мне свой номер карты\nИрина Соколова, 18:45\n2202 сбер", "Ирина Соколова"),
    ("Nguyễn Thị Hồng 20:11\nEm gửi chị địa chỉ nhận hàng nhé", "Nguyễn Thị Hồng"),
    ("[김민준] [오후 3:12] 계좌 보내줘 회비 입금할게\n[이서연] [오후 3:13] 카카오뱅크", "이서연"),
    # A passenger's name as airlines write it.
    ("Your trip confirmation: QX7M4P\nPassenger: WILLIAMS/SARAH ANNE MRS\nFlight UA 1187", "WILLIAMS/SARAH ANNE"),
    ("shows raw text?\n\nM1LEBLANC/CAMILLE     EK7Q9ZA CDGDXBEK 0074 187Y", "LEBLANC/CAMILLE"),
    # A family honorific used as a title (Singapore, the Philippines).
    ("Ah boy u reach already? Auntie Lim Siew Hoon say parcel she send", "Lim Siew Hoon"),
    ("salamat! daan ka na lang dito, Ate Joy Manalo", "Joy Manalo"),
    # A name before an emoji.
    ("Hi I'm Aditi 😊 Delhi wali, CA by profession", "Aditi"),
    # Who writes on a chat's header line: Discord's, an IRC log's (a handle too).
    ("Kevin — Today at 10:32 AM\nanyone know why the build fails?", "Kevin"),
    ("marcus_w — Today at 10:35 AM\ntry clearing the cache", "marcus_w"),
    ("Ana Souza — 12/03/2024 21:14\nmandei o contrato", "Ana Souza"),
    ("2024-03-12 10:42 <dkowalski> hey, is prod down?", "dkowalski"),
    # A name written right before an address without a mailbox's brackets.
    ("Please add Sebastian Müller (s.mueller@gmx.de) to the list.", "Sebastian Müller"),
    ("Contacts: Laura Pérez, laura.perez@correo.es", "Laura Pérez"),
    ("cc Tom Becker tom@becker.dev", "Tom Becker"),
    ("Reach out to Juan García at jgarcia@empresa.mx", "Juan García"),
    # A full name in running text: a first name, then a family name.
    ("Forwarding this from Hannah Schmidt, she handles payroll.", "Hannah Schmidt"),
    ("Assigned to Priya Raman yesterday.", "Priya Raman"),
    ("Eric Young's code is in it.", "Eric Young"),
    ("O'Brien said Sean O'Brien left.", "Sean O'Brien"),
    ("87051412985, Katarzyna Wiśniewska. Łukasz Żak też.", "Łukasz Żak"),
    ("Найдено 2 клиента. Дмитрий Соколов тоже.", "Дмитрий Соколов"),
    ("My manager Ludwig van Beethoven approved it.", "Ludwig van Beethoven"),
    # With a patronymic, or family name first as Vietnamese writes it: whatever the first word.
    ("Мои данные:\nКузнецов Андрей Павлович, ИНН 770337211891", "Кузнецов Андрей Павлович"),
    ("Клиент: Павлова Екатерина Игоревна, кодовое слово", "Павлова Екатерина Игоревна"),
    ("Tạo đơn thất bại: khách hàng Nguyễn Thị Thu Hằng đã đặt hàng.", "Nguyễn Thị Thu Hằng"),
    # A name of a script whose vowel signs are marks, after a label: all of it.
    ("Patient name: रमेश चंद्र शर्मा", "रमेश चंद्र शर्मा"),
    ('{"customer_name":"अंजलि वर्मा"}', "अंजलि वर्मा"),
    # A name found once, again alone (its first or its family name).
    ("I recommend Ms. Hannah Okafor for the role. Hannah joined us in 2019.", "Hannah"),
    ("Forwarding this from Daan Visser. Okafor and Visser agreed.", "Visser"),
    # One first name of the table as a form's or a record's whole value under its name.
    ("Name: Priya", "Priya"),
    ('{"id": 7, "name": "Priya", "email": "priya@example.org"}', "Priya"),
    ("Customer name: Lukas", "Lukas"),
    # WeChat's export (the message glued to a full-width colon) and LINE's (tabs around who
    # writes); a Chinese given name alone after its full name (`@小雨` after `刘小雨`).
    (WECHAT, "刘小雨"),
    (WECHAT, "小雨"),
    ("2024/07/01(月)\n19:02\t佐々木 美咲\tエマちゃん、来週空いてる？\n19:05\tEmma Clarke\tYes!", "佐々木 美咲"),
    # A Korean role's word, then a name with the copula glued to it (`예금주 박서연입니다`).
    ("국민은행 512301-01-482917 예금주 박서연입니다", "박서연"),
    ("서울시 마포구 202호 세입자 이지은입니다.", "이지은"),
    # A name beside a phone number in an ad: after a verb of calling (in Swahili, Russian with
    # the name's case ending), after the number in brackets, after `con`, or after a title.
    ("Bei 40,000 Ksh. Piga 0722 614 309 uliza Kamau.", "Kamau"),
    ("Call/WhatsApp Obinna 0805 771 2093 for viewing", "Obinna"),
    ("Звоните Сергею +7 921 448-17-06, торг", "Сергею"),
    ("Écrire au 06 48 17 22 90 (Mathilde) le soir", "Mathilde"),
    ("Informes al 33 1702 4418 con Rodrigo, solo mensajes", "Rodrigo"),
    ("Τηλ. 697 204 8816 κα. Κατερίνα", "Κατερίνα"),
    ("LH chị Hương 0912 448 306 nhé", "Hương"),
    # Who introduces themselves by a first name; a first name ending a message after a
    # sentence, in Greek; a driver's or a child's first name after the words naming them.
    ("Hola, soy Ramiro, te escribo por el depa", "Ramiro"),
    ("Ich bin Greta.\nWann passt es?", "Greta"),
    ("Τα κλειδιά είναι στη ρεσεψιόν.\nΚαλή διαμονή. Σοφία", "Σοφία"),
    ("my driver Emeka will bring the car at 6", "Emeka"),
    # A form's label before a full name on a line of capitalised words (no title's line);
    # two given names and two family names; who answers a call, by a first name.
    ("Donor: Beatrice Anne Holloway\nDate of birth: 02/11/1950", "Beatrice Anne Holloway"),
    ("Gift Aid form\nDonor: Beatrice Anne Holloway\nAmount: 20", "Beatrice Anne Holloway"),
    # More forms' labels: `Full names:`, Italy's `Assistita:`, Austria's `Patient/in:` (the
    # family name first and a comma), Romania's `doamna` before a name in capitals.
    ("Full names: Thabo Sipho Nkosi\nID no: (see attached)", "Thabo Sipho Nkosi"),
    ("Assistita: RUSSO CHIARA\nCodice ritiro: in allegato", "RUSSO CHIARA"),
    ("Patient/in: Gruber, Katharina\nBefund: unauffällig", "Gruber, Katharina"),
    ("se adeverește că doamna IONESCU MARIA-ELENA, angajată", "IONESCU MARIA-ELENA"),
    ("Nome que vai aparecer: Maria Luiza Costa Ramos\nValor: R$ 40", "Maria Luiza Costa Ramos"),
    ("agente: buenas tardes, le atiende Rocío, ¿en qué puedo ayudarle?", "Rocío"),
    ("asesora: buenas tardes habla con Marcela en qué le puedo colaborar", "Marcela"),
    ("agent: you're speaking with Gemma, how can I help", "Gemma"),
    ("オペレーター：担当の佐藤です。", "佐藤"),
    # A handle on a chat export's time-stamped line.
    ("[9:02 PM] n0va_kat: gg\n[9:03 PM] Hex.Runner: again?\n[9:03 PM] n0va_kat: ok", "Hex.Runner"),
    # One first name on an export's dated line, who they are to the chat in brackets or not.
    ("12/01/2025, 21:14 - Mr Haddad (Landlord): engineer Thursday\n12/01/2025, 21:20 - Chloe: ok great", "Chloe"),
    ("[18/06/2024 07:52] Rose (mãe da Lara): Bom dia mamães do 3º ano B!!", "Rose"),
    # A family word or a teacher's title before a first name, as each language writes it.
    ("RSVPs so far\n1. Aunt Linda + Uncle Ray – yes (2)", "Linda"),
    ("Bride's side so far:\nGrandma Rose – 501862003", "Rose"),
    ("✅ Tata Sylvie : 1 pers. (sans gluten !)", "Sylvie"),
    ("✅ Famille Moreau : 4 pers.", "Moreau"),
    ("Hé Google, bel oma Truus", "Truus"),
    ("raccogliamo 5€ per il regalo alla maestra Rossella entro venerdì", "Rossella"),
    ("La tía Carmen viene el sábado", "Carmen"),
    ("a w sobotę przyjdzie babcia Zosia", "Zosia"),
    ("zadzwoń do cioci, ciocią Basią się zajmie", "Basią"),
    ("Позвони тёте Маше вечером", "Маше"),
    ("Yarın Ayşe teyze gelecek", "Ayşe"),
    ("juf Anouk vraagt of iedereen gymkleren meeneemt", "Anouk"),
    # Signed after a slash or a dash where a message of one line ends.
    ("Swisha 150 kr till mig för lagkassan senast fredag! /Annika", "Annika"),
    ("Thanks for the quick fix on the login page, works now - Mike", "Mike"),
    # A form's label with its plural in brackets, the next label on the same line.
    ("Surname: McAllister   Forename(s): Shannon\nMobile: 07517 203 884", "Shannon"),
    ("Surname: McAllister   Forename(s): Shannon\nMobile: 07517 203 884", "McAllister"),
    # Who a support chat or a delivery names by a first name.
    ("Binance Support: Hi, you're chatting with Leo. How can I help today?", "Leo"),
    ("Paket kamu sedang diantar oleh kurir Agus. Pastikan ada orang di rumah ya!", "Agus"),
    ("Your driver Ahmed is 3 minutes away in a white Toyota.", "Ahmed"),
    # A contract's party before the definition of its role.
    ('between Harbor Point LLC ("Landlord") and Jonathan R. Whitfield ("Tenant").', "Jonathan R. Whitfield"),
    ("This Agreement is made between Maria Lopez (the “Buyer”) and Acme Inc.", "Maria Lopez"),
    ('Mietvertrag zwischen Anna Schmidt („Mieterin") und der Wohnbau GmbH', "Anna Schmidt"),
    # A Russian name with its patronymic in another case; after a parent's word.
    ("от Кузнецова Дмитрия Александровича, 14.07.1986 г.р.,", "Кузнецова Дмитрия Александровича"),
    ("Сердечно поздравляем Олену Іванівну з ювілеєм", "Олену Іванівну"),
    ("Добрый вечер! Это мама Миши Петрова из 7 «Б».", "Миши Петрова"),
    # A name as an ID document gives it; Hungarian's labels and honorifics.
    ("Name on document: WONG, Jason Ka-Ho\nPassport no.: on file", "Jason Ka-Ho"),
    ("> Sure. Name as on PAN: KARAN MEHTA.", "KARAN MEHTA"),
    ("Tanuló neve: Tóth Bence\nOktatási azonosító: on file\nAnyja neve: Farkas Judit", "Farkas Judit"),
    ("Receptet szeretnék kiváltani. Neve: Szabó Ilona, TAJ-szám: on file", "Szabó Ilona"),
    ("Kedves Kovács úr!\nA lakást átadtam.", "Kovács"),
    # A child's first name after a parent's words; a chat copied with its times.
    ("sono Martina, la mamma di Edoardo, le scrivo per spostare la lezione", "Edoardo"),
    ("soy la mamá de Lucía y el papá de Mateo.", "Mateo"),
    ("#hr-ops\nHRIS Bot 09:02  Payroll sync failed\nDana 09:05  looking at it now", "Dana"),
    ("#destek\nBurak 14:22: canlıda admin panel 401 dönüyor", "Burak"),
    # A particle inside a name, which a parent's phrase also holds (`papa van`, `mamá de`).
    ("Dear Tomás Van der Berg,\nyour order has shipped.", "Tomás Van der Berg"),
    ("Querida Ana de Souza,\nobrigada!", "Ana de Souza"),
]  # fmt: skip


# An access key's id is hidden though its name ends in `id`.
ACCESS_KEY_IDS = [
    (
        "env:\n  AWS_ACCESS_KEY_ID: AKIAZ7QW3ERT5YUI9OPA\n  AWS_SECRET_ACCESS_KEY: x",
        "AKIAZ7QW3ERT5YUI9OPA",
    ),
    ("aws_access_key_id = AKIAZ7QW3ERT5YUI9OPA", "AKIAZ7QW3ERT5YUI9OPA"),
]


test_a_name_or_a_key_id_where_a_message_puts_it_is_hidden = hides_each(
    {"name": NAMES, "access_key_id": ACCESS_KEY_IDS}
)


UNTOUCHED = [
    "Pros: fast\nCons: slow\nPros: cheap",
    "Red: 1\nBlue: 2\nRed: 3",
    "User: hi\nAssistant: hello\nUser: bye",
    # A label's aside that names no one, a role before a word that is no first name.
    "Step 1 (Optional): install it\nStep 2 (Required): run it\nStep 1 (Optional): again",
    "Customer Service: hello how can I help\nCustomer: my order is late\nCustomer Service: sorry",
    "Support (EU): we are looking\nCustomer: my order is late\nSupport (EU): fixed now",
    # A sign-off that ends a chat's line, the next speaker after it (and `Usuario` says more).
    "Soporte: te escribo mañana, gracias\nUsuario: listo\nSoporte: perfecto gracias\nUsuario: ok pero otra cosa",
    # Roles speaking in scripts without capitals: an assistant and a client, in Arabic.
    "المساعد الذكي: أهلاً بك! كيف أقدر أساعدك؟\nالعميل: كم رسوم التحويل الدولي؟\nالمساعد الذكي: رسوم التحويل 25 درهماً.\nالعميل: وكم يستغرق؟",
    # A card's word before its number (`Karta`, a first name somewhere too).
    "Karta 8600 4912 0377 1256 orqali to'lov qiling",
    # Who asks a question as a login's label would read it.
    "Пользователь: сколько будет 15% от 84 000?\nАссистент: 12 600.",
    "09:00 Registration: hall\n10:30 Keynote: x\n12:00 Lunch: y\n14:00 Keynote: z",
    "host: a\nport: 1\nhost: b",
    "TODO:\n- Refactor\n- Tests",
    "Changelog\n- Fixed bug\n- Mark",
    "Results:\n\nKevin",
    "Regards\nThe Team",
    "回复 <reply@example.cn>",
    "客服部 <kf@example.cn>",
    "마케팅팀 <mk@example.kr>",
    "الدعم <support@example.com>",
    "Support Team <support@example.com>",
    "From: New York\nTo: Boston",
    "From: Acme Billing\nSubject: your invoice",
    '{"name": "北京分公司", "city": "北京"}',
    '{"name": "Москва", "code": "MOW"}',
    "ACM SIGIR Forum 24.3 (1990): 56-61.",
    "Kuya said no, ask Tita later",
    "Mum 🏠\nToday 10:14\nAh boy u reach already?",
    "Departure 10:30\nArrival 12:45",
    "use TCP/IP over I/O bound links",
    "May, 2024 1234 5678",
    "Rut: 10.000.000-8",
    "call Support on 0800 123 456",
    "access_key_id = None",
    "aws_access_key_id: typing.Optional[str] = OMIT",
    "private_key_id: 3f2a9c1b",
    "Meeting — Today at 3:00 PM",
    "Build Bot — Today at 10:36 AM",
    "[10:44] <@root> restart it",
    "10:45 <b> bold </b>",
    "Contact Support (support@acme.com) or Sales Team - sales@acme.com",
    "GitHub Actions noreply@github.com",
    "Getting Started with Grant Management",
    "We moved near Santa Clara and Victoria Station; 51 Franklin Street",
    "Summer Sale ends; Line Comment; Trinidad y Tabago",
    "Ich habe zwei Tage Urlaub und die Daten sind nicht da.",
    "Hà Nội is a city and Mai is a month",
    "Project name: Phoenix",
    "Project name: Phoenix Rising",
    "Company name: Acme Holdings",
    '{"id": 7, "name": "Widget", "price": 9}',
    "时间:下午三点\n地点:会议室\n备注:带电脑\n时间:明天",
    "10:00 host:a\n10:01 host:b\n10:02 port:c\n10:03 host:d",
    "Dom Casmurro é um romance brasileiro.",
    "세입자 보호를 위한 법입니다",
    # A phone's number beside words that name no one; a self-introduction by a word.
    "Office hours: call 0800 555 0199 (Monday to Friday)",
    "Order 4471 shipped, tracking 1Z 999 AA1 01 2345 6784, Support",
    "I'm Happy, thanks for asking",
    "Guide: Getting Started with Grant Management",
    "agent: you're speaking with customer services today",
    # Beside a phone number: a country, an office, a firm, a dish, a virtue in a sentence.
    "Tel. +33 6 12 34 56 78 (France)",
    "Ring 0612345678 (Paris office)",
    "Reservations 020 7946 0958, Darling Harbour",
    "Call 0800 123 4567 with Patience and a pen",
    "Mama Roma, 06 12 34 56 78",
    "0845 123 4567 M Street branch",
    # A release note's last word; a log's time-stamped services (no chat's handles).
    "Release notes\nFixed the crash on start. Prudence",
    "[12:00:01] kernel: boot\n[12:00:02] systemd: up\n[12:00:03] kernel: eth0 up",
    "VG\nVI\nVIAJES",
    # A log's or an agenda's time alone before one word; a ratio; a path; a month after a dash.
    "10:42 Build: started\n10:45 Mark: hi",
    "2024-03-01 10:00:01 Error: disk full\n2024-03-01 10:00:02 Warning: retry",
    "The ratio is 3 / Max",
    "Release notes are in the wiki, see /Home",
    "Meeting moved to the first week of - June",
    # A family word before no name; an interjection before a family word; a thing's driver.
    "Grandma said hi. Tamam teyze, yarın görüşürüz.",
    "install the chrome driver Selenium needs; talk with Legal first",
    # A contract's parties that are firms or roles.
    'between Harbor Point Property Management LLC ("Landlord") and The Customer ("Licensee")',
    # Hungarian's articles before its words for a gentleman and a lady.
    "A neve: fontos. Az úr jött. Egy néni és a bácsi.",
    # A parent's word before no one; an agenda's and a log's lines with their times.
    "the father of modern physics, the mother of invention",
    "Meeting 10:00 in room 4\nBuild 14:22: started\nJune 10:30 kickoff\nLunch 12:00 hall B",
]


test_the_same_shapes_without_a_name_are_left = leaves_each(UNTOUCHED, of=("PERSON_NAME", "SECRET"))


def test_a_name_found_in_one_text_is_hidden_alone_in_the_others() -> None:
    """The prompt names the person; the response calls her by her first name only."""
    prompt = "Write a reference for Hannah Okafor, our analyst."
    response = "Hannah is a careful analyst. I will gladly say more; May works best."
    shown = REDACTOR.redact([prompt, response]).texts
    assert "Hannah" not in shown[1], shown
    assert "I will gladly say more; May works best." in shown[1]  # common words stay


def test_a_name_and_a_word_of_it_alone_read_as_one_person() -> None:
    """The same person has one placeholder, whether named whole or by one name."""
    prompt = "Write a reference for Hannah Okafor, our analyst."
    response = "Hannah is careful; Okafor's work shows it. Ana Souza agrees, and so does Ana."
    shown = REDACTOR.redact([prompt, response]).texts
    assert shown[0] == "Write a reference for <PERSON_NAME_1>, our analyst."
    assert shown[1] == (
        "<PERSON_NAME_1> is careful; <PERSON_NAME_1>'s work shows it. <PERSON_NAME_2> agrees,"
        " and so does <PERSON_NAME_2>."
    )
