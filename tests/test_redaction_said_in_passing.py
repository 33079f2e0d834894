"""Values people give in passing, as chat and mail carry them: a password further on in its
sentence ("la contraseña que tengo es ...", "mật khẩu wifi quán là ..."), a code that unlocks
something named in another language ("Kod odbioru", "MitID-kode", "cryptogramme"), a licence
plate after everyday words ("my plate is", "Vehicle reg:", "SPZ mého auta je"), a handle with
`@` after an app's name; and the sentences that only look like them."""

from __future__ import annotations

import pytest

from tests.helpers.redaction import REDACTOR, growth, hides_each, leaves_each

pytestmark = pytest.mark.unit

# (text, the secret in it): the password past the words that say what it is for.
PASSWORDS_LATER_IN_THE_CLAUSE = [
    ("Mi usuario es jmartinez y la contraseña que tengo es Girasol.Verde2024! pero no va",
     "Girasol.Verde2024!"),
    ("j'ai changé mon mot de passe Outlook ce matin, le nouveau c'est Chouquette!78 mais bon",
     "Chouquette!78"),
    ("Das WLAN-Passwort für die Ferienwohnung ist Sonnenblume_1987 und mehr", "Sonnenblume_1987"),
    ("Ahoj, heslo k fakturačnímu systému je Pivo&Knedlik9, uživatel je ucetni2.", "Pivo&Knedlik9"),
    ("anh ơi mật khẩu wifi quán là caphesuada2024 nha", "caphesuada2024"),
    ("היי, הסיסמה לראוטר היא Shalom2023#, ואם זה לא עובד תתקשר", "Shalom2023#"),
    ("كلمة المرور الجديدة لحساب البريد هي Riyadh#2025 شكرا", "Riyadh#2025"),
    ("رقمي مش مهم وكلمة السر بتاعة الواي فاي اللي بعتها مش شغالة: Nile@2024", "Nile@2024"),
    ("سلام، رمز عبور سرور جدید: Tehran!9876 هست.", "Tehran!9876"),
    ("DB 비밀번호 바꿨어요: Hangang!2025 / 확인 부탁", "Hangang!2025"),
    ("เรียนคุณลูกค้า\nรหัสผ่านชั่วคราวของท่านคือ Siam2025!x กรุณาเปลี่ยน", "Siam2025!x"),
    ("รหัสผ่านเน็ตบ้าน ploy@5566 ค่ะ", "ploy@5566"),
    ("kata sandi akun tokonya Jakarta#123 kalau mau cek", "Jakarta#123"),
    ("padahal password nya udah bener: Bandung2024! tetap gagal", "Bandung2024!"),
    ("the password for the holiday flat on the coast is Sonnenblume_1987 and", "Sonnenblume_1987"),
    # A login's mailbox, then its password.
    ("the login for the supplier portal is accounts@bakery.example / Croissant42 - thanks",
     "Croissant42"),
    ("[14/06/24, 21:14] Arjun: arjun.s1992@example.com pass chennai@123", "chennai@123"),
    ("PASS: hunter2x", "hunter2x"),  # a label in capitals, no test's result
    # French's `mot de passe` abridged after a determiner.
    ("pourtant mon mdp c'est Soleil2023! je l'ai changé hier", "Soleil2023"),
    # A Kubernetes Secret's password decoded: the line the command prints.
    ("$ kubectl get secret pg -o jsonpath='{.data.password}' | base64 -d\nq8#Vn2!pLw9zR4x\n$ ls",
     "q8#Vn2!pLw9zR4x"),
]  # fmt: skip

# Codes that unlock something, named in the words of other languages.
CODES = [
    ("Le code de la boîte à clés est bien 4719 ?", "4719"),
    ("moi, avainlaatikon koodi 2604", "2604"),
    ("mijn wachtwoord werkt maar de sms-code (573190) komt niet binnen", "573190"),
    ("Paczka czeka w Paczkomacie. Kod odbioru: 482915.", "482915"),
    ("Din MitID-kode er 482 915. Del aldrig koden.", "482 915"),
    ("voici ma carte, exp. 11/26, cryptogramme 582. Cordialement", "582"),
    ("カード番号は別送します。セキュリティコード：４８２１", "４８２１"),
    ("আপনার bKash ভেরিফিকেশন কোড 583017। কাউকে জানাবেন না", "583017"),
    ("Ang OTP ko ay 628401, wag mo ipapakita", "628401"),
    ("공유폴더는 내일 열어요. 관리자 PIN은 9021입니다.", "9021"),
    ("hey the courier needs the gate code, its 2580#\nthanks", "2580#"),
    # What makes it a code said earlier in the sentence; a word between; a code in brackets.
    ("I already did the 2FA, the code was 448213", "448213"),
    ("Falls Sie nicht da sind: Schlüsselbox am Fahrradkeller, Code 3927", "3927"),
    ("Посилка чекає у відділенні №12. Код для отримання: 4821. Отримувач: на пошті", "4821"),
    ("Ma OTP cua Quy khach la 839201, dung de xac thuc giao dich", "839201"),
    ("[카카오] 인증번호 [493021]를 입력해주세요. 타인 노출 금지", "493021"),
    # A card's security code of three digits, given in answer to its question.
    ("Assistant: And the three-digit security code?\nUser: 719", "719"),
]

PLATES = [
    ("and my plate is 7KDL392 if they wanna find my car", "7KDL392"),
    ("Reported by: H. L.\nVehicle reg: LK19 XZT\nAsset tag: BW-LT-00931", "LK19 XZT"),
    ("Vehicle registration: CA68 PWR\nDriving licence no.: on file", "CA68 PWR"),
    ("reg is YR21 KLM it was towed from outside", "YR21 KLM"),
    ("my drivers license is on file and plate 8MNV271", "8MNV271"),
    ("Sahibinden temiz Egea, plaka 34 ABK 482, 2019 model", "34 ABK 482"),
    ("tamam abla, motorun plakası 34 KLR 581 onlara söyledim", "34 KLR 581"),
    ("auto on kadulla hätävilkuilla, rekisteri KLM-482 jos joku kysyy", "KLM-482"),
    ("dạ, xe em biển số 59-X2 123.45 em để đầu hẻm nha", "59-X2 123.45"),
    ("Matrícula do veículo: 48-TR-27. Dúvidas: ligue", "48-TR-27"),
    ("SPZ mého auta je 1AB 4827, kdyby něco tak volejte", "1AB 4827"),
    ("гос. номер автомобиля: А482ВС 777, водительское", "А482ВС 777"),
    ("Véhicule B immatriculé GH-482-TK, conducteur", "GH-482-TK"),
    ("Driver plate: CA 482-193, phone on file", "CA 482-193"),
]

HANDLES = [
    ("add me on telegram @kwame_builds its easier", "@kwame_builds"),
    ("my snapchat is sophiee.rose and insta is @sophiee.rose.x", "sophiee.rose"),
    ("my snapchat is sophiee.rose and insta is @sophiee.rose.x", "@sophiee.rose.x"),
    ("skype me: live:.cid.7f3a29b1c04e", "live:.cid.7f3a29b1c04e"),
    ("ไลน์ไอดี: noo_ploy22 นะคะ", "noo_ploy22"),
    ("آیدی تلگرامم هم @reza_k_dev، ممنون", "@reza_k_dev"),
]

# Italy's codice fiscale, by its shape, check letter and birth date, wherever it stands.
CODICI_FISCALI = [
    ("nell'interesse del sig. Luca Romano, C.F. RMNLCU79S04L219F, elettivamente",
     "RMNLCU79S04L219F"),
    ("Marco: eccolo FRRMRC72C15H501O\nChiara: grazie", "FRRMRC72C15H501O"),
    ("il mio codice è frrmrc72c15h501o ok?", "frrmrc72c15h501o"),
    ("omocodia: RMNLCU79S04L2MVF", "RMNLCU79S04L2MVF"),
]  # fmt: skip

# Labels: the longest before a value names it (`Tgl Lahir`, date of birth, is a label whose
# value may come after the place of birth; `lahir` alone, "born", needs its date at once), one
# with a space before its colon names a person, registration forms' labels name their values,
# and so does a label spaced out by a scan.
LABELS = [
    ("Tempat/Tgl Lahir : Jakarta, 12-08-1993\nNo. HP : on file", "12-08-1993"),
    ("Nama Lengkap : Dewi Lestari Wibowo\nNIK : on file", "Dewi Lestari Wibowo"),
    ("Nom complet : Gabrielle Tremblay\nNAS : on file", "Gabrielle Tremblay"),
    ("Prénom : Gabrielle\nNom : Tremblay", "Gabrielle"),
    ("Registered owner: KEVIN NGUYEN\nDriver license no.: on file", "KEVIN NGUYEN"),
    ("797229 has been linked.\nName on record: IBRAHIM MUSA DANJUMA", "IBRAHIM MUSA DANJUMA"),
    ("Objet : titre de séjour\nJe soussignée Salma Bennani, née à Fès", "Salma Bennani"),
    ("Aluno(a): Lucas Gabriel Ferreira Santos\nData de nascimento: on file", "Lucas Gabriel"),
    ("Chủ xe: Lê Hoàng Phúc\nBiển số xe: on file", "Lê Hoàng Phúc"),
    ("Surname: O'Sullivan    First names: Niamh Bridget\nDate", "Niamh Bridget"),
    ("Passport No.: P1448079N\nSIN: on file", "P1448079N"),
    ("mitt passnummer 91482736. Min e-post", "91482736"),
    ("Name  :  on file\nDate  of  Birth  :  14/10/1982\nPAN  :  on file", "14/10/1982"),
    ("Bank  Account  Number  :  404376045702\nBranch  :  Pune", "404376045702"),
    ("Policy   number   AB-12345678 valid", "AB-12345678"),
    # A record's number after the words of more forms and languages.
    ("Re: Mr A Pritchard   DOB: on file\nHosp No: RX3-0091827", "RX3-0091827"),
    ("die Schadenmeldung zum Versicherungsschein Nr. KH-44871203. Der Unfallgegner", "KH-44871203"),
    ("ขอแจ้งเคลม กรมธรรม์เลขที่ VMI-6602-118734 รถคู่กรณี", "VMI-6602-118734"),
    ("رقم بطاقة التأمين: DHA-22-0913377", "DHA-22-0913377"),
    ("ABHA नंबर: 91-4827-3310-6652", "91-4827-3310-6652"),
    # A table's column after the words that name an employee's number, under a question.
    ("EmpCode,Name,PAN,Aadhaar\nTCX0412,Meenakshi Iyer,on file,on file", "TCX0412"),
    ("Personalnr;Name;Steuerklasse\n10057;Vogel, Kerstin;IV", "10057"),
    ("fix the columns?\n\nemp_id,full_name,tax_code\nE10442,Sandra Kowalczyk,1257L", "E10442"),
    # A shipping label's street in capitals, its city on the next line; more labels' values.
    ("SHIP TO:\nDANIELLE FORTIER\n88 WILLOW CREEK RD\nBOZEMAN MT 59715-2210", "88 WILLOW CREEK RD"),
    ("SHIP TO:\nDANIELLE FORTIER\n88 WILLOW CREEK RD\nBOZEMAN MT 59715-2210", "59715-2210"),
    ("Ημ/νία γέννησης: 14/03/1989", "14/03/1989"),
    ("Rachunek nadawcy: 95 1090 8091 6046 8518 8678 9661", "95 1090 8091 6046 8518 8678 9661"),
    ("להעביר לבנק הפועלים, סניף 612, חשבון 428190, תודה!", "428190"),
    ("Telefon kontaktowy: 512 483 927", "512 483 927"),
    # An address's district, city and postcode after its street, on its line.
    ("Lease: 41 Griffith Avenue, Drumcondra, Dublin 9, D09 X2R8\nRent: 1,850", "D09 X2R8"),
    ("mandar a Av. Revolución 1425, int. 8, Col. San Ángel, CDMX? Cualquier cosa", "San Ángel"),
    ("ঠিকানা: বাড়ি ১৮, রোড ৭, ধানমন্ডি, ঢাকা-১২০৫\nপরিমাণ: ৫,০০০ টাকা", "ঢাকা-১২০৫"),
    ("pošlete to na ul. Štefánikova 12, Bratislava", "Bratislava"),
    ("Adresă: Str. Lizeanu nr. 17, bl. 2, ap. 14, Sector 2, București\nTelefon:", "ap. 14"),
    # A plate after `reg.` or Arabic's word for a car's number; a passport as a travel document
    # or in Persian; a password said in Swiss German; French's temporary `mdp`.
    ("I returned the VW Golf (reg. FY21 KHD) to the bay at 19:55.", "FY21 KHD"),
    ("رقم السيارة R 48219 دبي، والكابتن اسمه عمران.", "R 48219"),
    ("Resident ID: on file | Travel document: EH4821937", "EH4821937"),
    ("شماره گذرنامه: K48219375", "K48219375"),
    ("Mis Passwort isch Zueri2024! – cha öpper luege", "Zueri2024"),
    ('"note_agent": "compte débloqué, mdp provisoire : Lyon#4821ab", "statut"', "Lyon#4821ab"),
]

# A birth date with or without a month's name.
BIRTH_DATES = [
    ("我的生日是August 25, 1981。", "August 25, 1981"),
    ("วันเกิด 15 มีนาคม 2533", "15 มีนาคม 2533"),
    ("Date of birth: 14.03.1985", "14.03.1985"),
]


test_a_value_said_in_passing_is_hidden = hides_each(
    {
        "password_later_in_the_clause": PASSWORDS_LATER_IN_THE_CLAUSE,
        "code": CODES,
        "plate": PLATES,
        "handle": HANDLES,
        "codice_fiscale": CODICI_FISCALI,
        "label": LABELS,
        "birth_date": BIRTH_DATES,
    }
)


# The flat or unit after a street's number, as each country writes it: hidden with the street.
ADDRESS_UNITS = [
    ("el paquete déjalo en Av. Insurgentes Sur 1602 int. 304, gracias", "int. 304"),
    ("Adres zamieszkania: ul. Marszałkowska 84/92 m. 15, 00-514 Warszawa", "m. 15"),
    ("Adress: Götgatan 48 lgh 1102, 118 26 Stockholm", "lgh 1102"),
    ("Adressen er Jægersborggade 31, 2. th, 2200 København N.", "2. th"),
    ("ship to 2207 W 38th St Apt 4, Austin, TX 78705", "Apt 4"),
    ("Lieferung an Hauptstraße 5 Whg. 12, 10115 Berlin", "Whg. 12"),
]

# Forms of forms and chats: a French street typed in lower case, a Portuguese or Romanian number's
# sign, titles of other languages, labels with `(n)`, a record with dots or slashes or in groups,
# a 26-digit account, a lockbox's code, a mailbox and its password, a Snapchat handle.
IN_FORMS_AND_CHATS = [
    ("150€ à récupérer sur place au 8 rue Paul Bert à Nantes", "8 rue Paul Bert"),
    ("residente na Rua Augusta, n.º 88, 2.º Esq., 1100-053 Lisboa", "Rua Augusta, n.º 88"),
    ("domiciliat în Cluj, Str. Memorandumului nr. 28, ap. 5, vă rog", "Memorandumului nr. 28"),
    ("AL JUZGADO\n\nDON Alejandro Ruiz Ortega, mayor de edad", "Alejandro Ruiz Ortega"),
    ("kontrola RR 165/95 mmHg.\nlek. Tomasz Nowicki, nr PWZ 2718345", "Tomasz Nowicki"),
    ("Mentor: mw. Hoekstra", "Hoekstra"),
    ("nell'interesse del sig. Luca Romano, nato a Torino", "Luca Romano"),
    ("Familienname(n): Haddad | Vorname(n): Yasmin", "Yasmin"),
    ("and full name as on passport: Oliver James Whitfield\nty!!", "Oliver James Whitfield"),
    ("Cognome e nome: Rossi Anna        Matricola: 004417", "004417"),
    ("Versicherungsscheinnummer: KH-77.481.0092\namtliches Kennzeichen", "KH-77.481.0092"),
    ("Policy No.: 0239871455/2024\nProposer: on file", "0239871455/2024"),
    ("numer konta: 46 1090 3685 7509 0999 1832 3271, w tytule",
     "46 1090 3685 7509 0999 1832 3271"),
    ("The lockbox is next to the blue door, lockbox code 2580.", "2580"),
    ("Dad: whats the login again\nSofia: family.ortega@example.com / Ortega2019!Tacos\nDad: ok",
     "Ortega2019!Tacos"),
    ("Lena: or add me on snapchat: lena.xo97", "lena.xo97"),
]  # fmt: skip


test_a_value_in_a_form_or_a_chat_is_hidden_but_its_spaces = hides_each(
    {"address_unit": ADDRESS_UNITS, "form_or_chat": IN_FORMS_AND_CHATS}, spaces=False
)


# Sentences that hold the words and something value-shaped, and no value.
LEFT_AS_THEY_ARE = [
    # A register's year and number in Finnish; a pan in English.
    "kaupparekisteri 2024 ja rekisteri 12345 tiedot, päivitetty",
    "I burned the pan Sunday, then Pan Am's old terminal.",
    "The password must be at least 8 characters and include 1 digit.",
    "Our password policy is SHA-256 hashing with 12 rounds of salt.",
    "The password hash is AES256 encrypted at rest.",
    "DATABASE_URL=postgres://USER:PASSWORD@localhost:5432/app",
    "Reset your password: open https://example.com/reset2024 and follow it.",
    "So setzen Sie Ihr Passwort zurück: Link in der E-Mail öffnen (gültig 24 h).",
    "le code postal est 75001 et la ville Paris",
    "Kod pocztowy: 00-514 Warszawa",
    "kode pos 12730, Jakarta Selatan",
    "código de producto: 4821-B",
    "see plate 12 in the atlas",
    "mov reg 0x1F2A3B",
    "registration plate reader v2",
    "see the line @decorator below",
    "line 42: x = @property",
    "my insta is great",
    "I will pass the ball to the keeper and pass it on",
    # A test runner's results, a fetch option, a file's name before its test, a role greeted.
    "=== RUN   TestRateLimiter\n--- PASS: TestRateLimiter/burst_of_20 (0.02s)\nok",
    "PASS: tests/test_login.py::test_ok\nPASS: build_cache (1.2s)",
    "the API allows it but I'm sending credentials: 'include'. also",
    "FAILED tests/test_tokens.py::test_token_budget_exceeded - AssertionError",
    "Dear Patient,\nThis is a reminder of your appointment.",
    "Dear Tenant,\nthe water is off on Monday.",
    # Found by a read-through: code, a commit hash after a mailbox, a plate's size, a month.
    "threads = os.cpu_count()\nthreads: max_workers_per_node",
    "The password field on login_v2024 page is broken",
    "steel plate: 200x300mm, thickness 5mm; the plate is 12x8cm",
    "Account 03/2024 statement attached",
    "Grind code 20481",
    # A code's words in another sentence; an error's and a promotion's code; a table after a
    # blank line whose columns name nothing personal.
    "The error code was 4031 and the zip code is 90210",
    "Use promo code 4455 at checkout, the SMS said.",
    "I did the 2FA yesterday. Then the build code was 4455.",
    "Totals below.\n\nregion,units,revenue\nNorth,1200,34000\nSouth,980,27100",
    # A bill's word that also names an account; a street's type word ending a line of prose.
    "Rachunek za prąd: 240,00 PLN do 20.03",
    "החשבון שלך עודכן ב-2024",
    "Numer kontaktowy do biura: 2024",
    "Turn left at exit 45 on the st\nthen 5 more miles to the rd",
    # A Markov decision process, abridged as French abridges `mot de passe`.
    "The MDP is M=(S,A,P,R). Solve the mdp: value_iteration(env)",
    "mdp: FrozenLake8x8; the MDP is Gridworld42 with 5 states",
    "le mdp est incorrect, réessayez",
    # A label's word inside a longer word of its language (`účet`, account, in `účetní`,
    # accountant).
    "účetní 12345678 je hotové",
    # An access code of three digits (a code's kind that is no card's).
    "access code 123 is wrong",
    # A regulation's and a register's abbreviation before a number.
    "see reg. 4 of the act; mov reg. 0x1F2A",
    # A placeholder in angle brackets, files' names, a letter to parents from a principal.
    "# .env.example\nJWT_SECRET=<random-32-byte-string>\nSTRIPE_KEY=<your-stripe-key>",
    "Attachments: 1099-DIV_template.pdf, Schedule_C_worksheet.xlsx, IRS_Pub_17_2023.pdf.",
    "प्रिय अभिभावक, 2 अक्टूबर को अवकाश रहेगा। धन्यवाद, प्रधानाचार्य",
    # A client asked to prompt for the password (`-p` at the command's end).
    "psql -U postgres -d app; mysql -u root -p; echo done",
    "the login for users is required / please retry",
]

# The same in forms and chats; a codice fiscale's shape whose check fails; a team after an owner's
# label.
LOOK_ALIKES_IN_FORMS_AND_CHATS = [
    "Don Quixote is a novel. Officer training starts Monday.",
    "I have 3 rue ideas and we need 5 place Settings",
    "The Chapter no. 5 of Book and Section nr. 12 says",
    "see the notes / docs for more, cc: ana / bob",
    "I snap: at 5 pm",
    "ref RMNLCU79S04L219A and build ABCDEF12G34H567I",
    "Owner: Platform Team\nStatus: open",
]


test_words_about_a_value_without_one_stay = leaves_each(
    {"sentence": LEFT_AS_THEY_ARE, "form_or_chat": LOOK_ALIKES_IN_FORMS_AND_CHATS}
)


def test_words_after_an_address_that_name_no_unit_stay() -> None:
    text = "meet at 221 Baker Street at 5 pm, then 12 Baker Street m and more"
    assert "at 5 pm" in REDACTOR.redact([text]).texts[0]
    assert "> m and more" in REDACTOR.redact([text]).texts[0]


def test_a_record_number_leaves_the_count_after_it() -> None:
    assert "55 days" in REDACTOR.redact(["MRN 12345678 55 days"]).texts[0]


def test_a_long_text_of_names_in_another_script_is_read_in_linear_time() -> None:
    """Each name's place in a text that is not ASCII is counted on from the one before (it was
    decoded from the text's start each time: 1.3 s for 210 KB, growing with the square). Four
    times the text takes about four times as long (4.1-4.4 measured; 10-12 with the old count)."""
    assert growth(lambda count: "Привет мир name: Ана " * count, 2000) < 7


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("git commit --author ana@example.com / a1b2c3d4e5", "a1b2c3d4e5"),
        ("Contact: support@example.com / sales2024team", "sales2024team"),
    ],
)
def test_a_word_after_a_mailbox_and_a_slash_is_no_password_unless_shaped_as_one(
    text: str, value: str
) -> None:
    assert value in REDACTOR.redact([text]).texts[0]


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (
            "I moved to 12 Main Street, Springfield, and then we went to the park.",
            "I moved to <ADDRESS_1>, and then we went to the park.",
        ),
        (
            "Доставьте на проспект Мира 12, кв. 4, пожалуйста.",
            "Доставьте на <ADDRESS_1>, пожалуйста.",
        ),
        ("Ship to 221B Baker Street, London NW1 6XE, United Kingdom.", "Ship to <ADDRESS_1>."),
        # A Chinese sentence after a full-width comma (a comma once normalised) is no locality.
        ("我的地址是4684 Pine Street，请寄到这里。", "我的地址是<ADDRESS_1>，请寄到这里。"),
    ],
)
def test_an_address_takes_its_locality_and_not_the_sentence_after_it(
    text: str, redacted: str
) -> None:
    assert REDACTOR.redact([text]).texts[0] == redacted
