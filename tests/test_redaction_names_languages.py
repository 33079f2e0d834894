"""People's names after the words that introduce one in many languages: self-introductions,
forms' labels, greetings and titles, letters' sign-offs (on the next line, on the same line
at a text's or a line's end, and the Korean one after the name), and payees; and before the
words that say whose name it is: a party's role in a filing, an honorific, a relation in
brackets. And the same words where no name follows them."""

from __future__ import annotations

import pytest

from tests.helpers.redaction import finds_one_name_in_each, leaves_each

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
        # Labels of a customer, a user or a transfer (Arabic names with `بن`, `عبد`; Japanese
        # katakana); a family name first, in capitals; a particle that starts a family name; a
        # family name alone, the line going on with another label of the record.
        ("العميل: عبدالرحمن بن سعيد الغامدي\nرقم الطلب: 5521", "عبدالرحمن بن سعيد الغامدي"),
        ("العميل: عبد الرحمن بن سعيد الغامدي", "عبد الرحمن بن سعيد الغامدي"),
        ("الزبون: فاطمة بنت علي الزهراني", "فاطمة بنت علي الزهراني"),
        ("用户：李明华 已登录", "李明华"),
        ("用户：周杰，注册于2020年", "周杰"),
        ("联系人：王丽娟先生", "王丽娟"),
        ("振込名義：ヤマダ　ハナコ", "ヤマダ　ハナコ"),
        ("口座名義：サトウ　ミサキ", "サトウ　ミサキ"),
        ("フリガナ：タナカ　タロウ", "タナカ　タロウ"),
        ("振込名義：ﾔﾏﾀﾞ ﾊﾅｺ", "ﾔﾏﾀﾞ ﾊﾅｺ"),
        ("Apellidos y nombre: ORTEGA VIDAL, MARTA", "ORTEGA VIDAL, MARTA"),
        ("Apellidos y nombre: GARCÍA LÓPEZ, JUAN CARLOS", "GARCÍA LÓPEZ, JUAN CARLOS"),
        ("Nom : Le Bihan", "Le Bihan"),
        ("Nom : Le Goff\nVille : Brest", "Le Goff"),
        ("Name: Kowalczyk      Geburtsdatum: 12.03.1984", "Kowalczyk"),
        ("Name: Brzęczyszczykiewicz    Date of birth: 03.04.1981", "Brzęczyszczykiewicz"),
        ("Last name: Abernathy   DOB: 1990-02-11", "Abernathy"),
        ("Apellido(s): Etxeberria", "Etxeberria"),
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
    "party_of_a_filing": [
        # A party of a filing: after its role's label, before its role or a petition's description
        # of it, a married name joined by `épouse` or `veuve`.
        ("IN RE THE MARRIAGE OF: DANA L. WHITMORE, Petitioner, and", "DANA L. WHITMORE"),
        ("STATE OF OHIO, Plaintiff,\nv.\nKEVIN J. ORTIZ, Defendant.", "KEVIN J. ORTIZ"),
        (
            "PEOPLE OF THE STATE OF CALIFORNIA, Plaintiff, v. TERRENCE W. BOYD, Defendant.",
            "TERRENCE W. BOYD",
        ),
        (
            "JULIANA ALVES DUARTE, brasileira, casada, professora, portadora do CPF",
            "JULIANA ALVES DUARTE",
        ),
        (
            "FRANCISCO PEREIRA DA SILVA, brasileiro, solteiro, motorista, residente",
            "FRANCISCO PEREIRA DA SILVA",
        ),
        ("Madame Claire Dubois épouse Martin, née le 3 mars 1970", "Claire Dubois épouse Martin"),
        ("Madame Sophie Laurent veuve Girard, demeurant à Nantes", "Sophie Laurent veuve Girard"),
        ("原告：王丽娟，女，1985年3月出生", "王丽娟"),
        ("被告：赵志强，男，汉族", "赵志强"),
        ("上诉人（原审被告）：孙海燕，女", "孙海燕"),
        ("المدعية: سارة محمود حسن، الجنسية مصرية", "سارة محمود حسن"),
        ("المدعى عليه: خالد عمر يوسف", "خالد عمر يوسف"),
        ("Beklagter: Brenner, Thomas", "Brenner, Thomas"),
        ("Ricorrente: Ferraresi Gianluca", "Ferraresi Gianluca"),
        ("Davacı: Yılmaz Kaya", "Yılmaz Kaya"),
        ("Demandada: Etxeberria Goikoetxea", "Etxeberria Goikoetxea"),
    ],
    "honorific_or_title": [
        # A first name before an honorific (Turkish, Hindi), or after an Arabic title.
        ("Paket Elif Hanım'a teslim edildi.", "Elif"),
        ("Bunu Mehmet Bey'e sor.", "Mehmet"),
        ("Kerem Bey'in telefonu kapalı.", "Kerem"),
        ("Fatma hanım geldi mi?", "Fatma"),
        ("Sayın Ahmet Bey,", "Ahmet"),
        ("यह पत्र सुरेश जी को दे दो।", "सुरेश"),
        ("हमें अनीता जी से बात करनी है।", "अनीता"),
        ("شكرا أستاذ سامي على المساعدة", "سامي"),
        ("تحدثت مع الدكتور خالد أمس", "خالد"),
        ("اتصل بـ د. منى غدا", "منى"),
        ("أرسل التقرير إلى المهندس طارق اليوم", "طارق"),
        ("رافقت الشيخ حمد إلى المجلس", "حمد"),
    ],
    "relation_in_brackets": [
        # A first name, then a relation or a role in brackets.
        ("Recebido por: Cleiton (porteiro)", "Cleiton"),
        ("Contatto di emergenza: Paolo (cognato) 347 123 4567", "Paolo"),
        ("Emergency contact: Derek (brother) 555-201-3344", "Derek"),
        ("Notfallkontakt: Jens (Bruder)", "Jens"),
        ("Personne à prévenir : Amandine (sœur)", "Amandine"),
        ("Ritirato da: Gino (portinaio)", "Gino"),
    ],
    "payee": [
        ("Overmaken t.n.v. Jan de Vries", "Jan de Vries"),
        ("Pago a nombre de Laura Martínez", "Laura Martínez"),
        ("transfer atas nama Budi Santoso", "Budi Santoso"),
        ("PIX nome Maria Oliveira", "Maria Oliveira"),
        # An account's holder after the word that names it (Thai, a title left out; Chinese in
        # traditional characters and Taiwan's surnames).
        ("ชื่อบัญชี ณัฐวุฒิ แสงทอง", "ณัฐวุฒิ แสงทอง"),
        ("ตรวจสอบ ชื่อบัญชี: นาย ณัฐวุฒิ แสงทอง", "ณัฐวุฒิ แสงทอง"),
        ("戶名 陳怡君", "陳怡君"),
        ("戶名：賴雅琪", "賴雅琪"),
    ],
    "passenger": [
        ("/boot ok\nPassenger: KIM/SEOYEON, seat 14C", "KIM/SEOYEON"),  # a slash first
        # `SURNAME/GIVEN` without a title: a passenger's or a flight's word near it, or the
        # name it spells right before it in another script.
        ("Passenger: KIM/SEOYEON", "KIM/SEOYEON"),
        ("Pasajero GARCIA/LUIS, asiento 14C", "GARCIA/LUIS"),
        ("Passagier: MUELLER/ANNA MARIA\nFlug LH 441", "MUELLER/ANNA MARIA"),
        ("王小明 (WANG/XIAOMING)", "WANG/XIAOMING"),
    ],
    "family_name_in_capitals": [
        # A report's or a deed's person: a birth's word after the name, a title word before a
        # name in capitals, Romanian "the named".
        ("si presenta BIANCHI Marco, nato a Torino", "BIANCHI Marco"),
        ("È comparso VERDI Luca, nato a Napoli", "VERDI Luca"),
        ("Luca VERDI, născut la Iași", "Luca VERDI"),
        ("el señor HERNÁN DARÍO OSPINA, identificado con cédula", "HERNÁN DARÍO OSPINA"),
        ("la señora MARÍA FERNANDA LÓPEZ, identificada con", "MARÍA FERNANDA LÓPEZ"),
        ("o senhor JOÃO CARLOS PEREIRA, portador do RG", "JOÃO CARLOS PEREIRA"),
        ("il signor ROSSI Giovanni", "ROSSI Giovanni"),
        ("a fost condus de numitul Popa Cristian la sediu", "Popa Cristian"),
        ("la numita Ionescu Maria a declarat", "Ionescu Maria"),
    ],
    "sole_traders_form": [
        ("Maria Silva MEI 12345678000190", "Maria Silva"),
        ("Furnizor: Ionescu Vlad-Mihai PFA", "Ionescu Vlad-Mihai"),
        ("Factura emisa de Ionescu Vlad-Mihai PFA, CUI 123", "Ionescu Vlad-Mihai"),
        ("Jan Novák OSVČ", "Jan Novák"),
        ("Kovács Péter e.v.", "Kovács Péter"),
        ("Ahmet Yılmaz Şahıs Şirketi", "Ahmet Yılmaz"),
    ],
    "uncased_script": [
        # Hebrew and Persian greetings, a thanks before a name alone on the last line, Persian
        # titles, Bengali and Urdu applicants' labels.
        ("שלום מיכל, מה שלומך?", "מיכל"),
        ("שלום דני!", "דני"),
        ("תודה רבה,\nמיכל", "מיכל"),
        ("סבבה, נדבר מחר. תודה על הכל\nדנה", "דנה"),
        ("سلام علی، فردا میای؟", "علی"),
        ("ممنون از کمکتون\nمریم", "مریم"),
        ("با خانم مریم احمدی تماس بگیرید", "مریم احمدی"),
        ("আবেদনকারী: মোঃ রফিকুল ইসলাম", "মোঃ রফিকুল ইসলাম"),
        ("درخواست دہندہ: محمد اسلم", "محمد اسلم"),
    ],
    "traditional_chinese_label": [
        ("賣家：陳建宏", "陳建宏"),
        ("買家：張雅婷", "張雅婷"),
        ("請聯絡黃志偉經理", "黃志偉"),
    ],
}


NOT_NAMES = [
    "联系人：谢谢",
    "名義：ﾔﾏﾀﾞ ｷﾞﾝｺｳ",
    "Gruß an alle",
    "Cordialement, l'équipe",
    "Cordialement, L'équipe Support",
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
    # A firm, a state or a court as a party or a label's value, a title alone, a word after a
    # title or a label, a product, a relation with no name before it.
    "Defendant: ACME Logistics LLC",
    "La SAS LOGIPRO, représentée par son gérant",
    "Ответчик: ООО «СтройИнвест»",
    "TRIBUNAL JUDICIAIRE DE LYON",
    "IN THE CIRCUIT COURT OF COOK COUNTY, ILLINOIS",
    "UNITED STATES OF AMERICA, Plaintiff, v. $24,000 IN U.S. CURRENCY, Defendant.",
    "WELLS FARGO BANK, N.A., Plaintiff,",
    "CITY OF CHICAGO, Respondent.",
    "MARY KAY COSMETICS, Plaintiff",
    "SÃO PAULO, brasileira, casada",
    "Sayın Bey, merhaba",
    "Bu Bey'e söyle.",
    "हाँ जी, ठीक है।",
    "माता जी को प्रणाम",
    "هو أستاذ الرياضيات في المدرسة",
    "السيد الرئيس قال",
    "المدعى عليه: شركة النور للتجارة",
    "原告：北京华信科技有限公司",
    "用户：管理员",
    "被告知：明天开会",
    "联系人：王先生",
    "名義：カブシキガイシャ　ヤマダショウジ",
    "Name: Default",
    "Name: nginx-7d9f",
    "Nom : Dupont & Fils SARL",
    "Name: Default      Type: string",
    "Name: UltraWidget Pro 3000\nWeight: 2 kg",
    "Emergency Contact (spouse): 555-201-3344",
    "Plan B (backup)",
    '{"AED": "\\u002e\\u062f\\u002e\\u0625", "SAR": "ر.س"}',  # the dirham's sign, escaped
    # Slashed capitals with no passenger's word near them, or codes and words (a route, a
    # protocol); `KIM/LEE` alone is two surnames or a list, a passenger's only with context.
    "Flight FRA/MUC at 10:40",
    "Boarding LHR/JFK gate 22",
    "AND/OR logic",
    "TCP/IP stack",
    "KIM/LEE",
    "Passenger count: AND/OR filter",
    # A firm's form, a state's code, a regnal number; a title word before an office.
    "Portland ME 04101",
    "Mount Vernon ME 04352",
    "Queen Elizabeth II",
    "BIANCHI SRL",
    "Mario Rossi SRL",
    "BIANCHI Costruzioni SRL",
    "la señora presidenta",
    "el señor PRESIDENTE DE LA REPÚBLICA",
    "il signor Sindaco",
    "NATO summit, born in 1949",
    "la SOCIETÀ Alfa, nata nel 2001",
    # An account's label before no name; greetings to everyone, titles before an office.
    "戶名不符",
    "戶名：請填寫",
    "שלום לכולם",
    "שלום לכולם,",
    "שלום רב,",
    "آقای رئیس",
    "سلام وقت بخیر،",
    "سلام دوستان،",
    "مرحبا بكم!",
    "ممنون از کمکتون\nخداحافظ",
    "ממש תודה\nלהתראות",
]


test_a_name_after_the_words_that_introduce_one_is_found = finds_one_name_in_each(INTRODUCED)


test_words_after_those_phrases_that_name_nobody_stay = leaves_each(NOT_NAMES, of=("PERSON_NAME",))
