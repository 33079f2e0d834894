"""Each token rule of token_rules.yaml, each national ID with a valid and an invalid check digit,
values inside CJK text, unquoted secrets in prose, phone numbers read by region, and the values
that look like secrets but are not (hashes, UUIDs, git SHAs, base64 of text, identifiers)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sampling.redaction import Redactor
from sampling.redaction.config import RedactConfig
from sampling.redaction.finders.tokens import token_rules
from tests.helpers.redaction import REDACTOR, grouped, leaves_each

pytestmark = pytest.mark.unit

RULES = token_rules()


def _hidden(text: str, value: str) -> tuple[str, dict[str, int]]:
    result = REDACTOR.redact([text])
    assert value not in result.texts[0], result.texts[0]
    return result.texts[0], result.counts


def test_every_rule_has_a_unique_id_and_an_example() -> None:
    ids = [rule.id for rule in RULES]
    assert len(ids) == len(set(ids)) and len(ids) >= 60
    assert all(rule.example and rule.keywords for rule in RULES)


@pytest.mark.parametrize("rule", RULES, ids=[rule.id for rule in RULES])
@pytest.mark.parametrize(
    "sentence",
    ["Here it is: {} - please keep it safe.", "我的密钥是{}，请帮我检查一下。", "{}"],
    ids=["english", "chinese", "alone"],
)
def test_each_rule_finds_its_format(rule, sentence: str) -> None:
    found = list(rule.scan(rule.example, rule.example.lower()))
    assert found, f"{rule.id}: its own example does not match"
    start, end, _ = found[0]
    secret = rule.example[start:end]
    _, counts = _hidden(sentence.format(rule.example), secret)
    assert sum(counts.values()) >= 1


@pytest.mark.parametrize("rule", RULES, ids=[rule.id for rule in RULES])
def test_a_rule_does_not_match_inside_a_longer_word(rule) -> None:
    glued = f"x{rule.example}" if rule.example[0].isalnum() else f"{rule.example}"
    if not rule.example[0].isalnum():
        pytest.skip("starts with a separator")
    assert not any(span.start == 0 for span in rule.scan(glued, glued.lower())), rule.id


# kind -> (valid, the same with a wrong check digit or an impossible part)
IDS = {
    "CN_ID": ("11010519491231002X", "110105194912310021"),
    "CN_ID ": ("440305197502139291", "440305197502139292"),  # a district stdnum's table lacks
    "IN_AADHAAR": ("2345 6789 0124", "2345 6789 0125"),
    "BR_CPF": ("123.456.789-09", "123.456.789-08"),
    "US_SSN": ("219-09-9999", "666-09-9999"),
    "UK_NINO": ("AB 12 34 56 C", "BG 12 34 56 C"),
    "IN_PAN": ("ABCPE1234F", "ABCQE1234F"),
    "CARD": ("4111 1111 1111 1111", "4111 1111 1111 1112"),
    "IBAN": ("GB82 WEST 1234 5698 7654 32", "GB82 WEST 1234 5698 7654 33"),
}


@pytest.mark.parametrize("kind", sorted(IDS))
@pytest.mark.parametrize("sentence", ["my number is {} ok", "号码是{}，谢谢"])
def test_national_ids_by_their_check_digits(kind: str, sentence: str) -> None:
    valid, invalid = IDS[kind]
    text, counts = _hidden(sentence.format(valid), valid)
    assert counts == {kind.strip(): 1}, text
    assert REDACTOR.redact([sentence.format(invalid)]).counts == {}


# Numbers of more countries, valid and with the last character changed, after their name.
NAMED_IDS = [
    ("Canada SIN {}", "130 692 544", "130 692 545"),
    ("My SIN is {}.", "130-692-544", "130-692-545"),
    ("주민등록번호 {}", "971013-9019902", "971013-9019903"),
    ("マイナンバーは{}です", "6214 9832 0257", "6214 9832 0258"),
    ("DNI: {}", "54362315-K", "54362315-L"),
    ("mi NIE es {}", "X2482300W", "X2482300X"),
    ("numéro de sécurité sociale : {}", "2 95 10 99 126 111 93", "2 95 10 99 126 111 94"),
    ("Steuer-ID {}", "36 574 261 809", "36 574 261 808"),
    ("BSN {}", "111222333", "111222334"),
    ("PESEL {} w formularzu", "44051401359", "44051401358"),
    ("CURP {}", "BOXW310820HNERXN09", "BOXW310820HNERXN08"),
    ("personnummer {}", "880320-0016", "880320-0017"),
    ("my tax file number is {}", "123 456 782", "123 456 783"),
    ("TC kimlik no {}", "17291716060", "17291716061"),
    ("加拿大SIN号：{}，请保管", "130 692 544", "130 692 545"),
    ("ΑΦΜ {} – ΔΟΥ Πατρών", "944117715", "944117716"),
    ("UTR {} for the return", "78698 19846", "78698 19847"),
    ("СНИЛС: {}", "346-484-850 13", "346-484-850 14"),
    # Argentina's CUIL, Malaysia's K/P and MyKid, Turkey's `tc'si`, South Africa's `ID no`.
    ("CUIL: {}", "20-31843927-4", "20-31843927-5"),
    ("No. K/P: {}", "880512-14-5523", "881332-14-5523"),  # (no check digit: its birth date)
    ("annemin tc'si {}, benim numaram", "10000000146", "10000000147"),
    ("ID no: {}", "800101 5009 087", "800101 5009 088"),
]


@pytest.mark.parametrize(("sentence", "valid", "invalid"), NAMED_IDS)
def test_more_countries_numbers_after_their_name_by_their_check(
    sentence: str, valid: str, invalid: str
) -> None:
    text, counts = _hidden(sentence.format(valid), valid)
    assert counts == {"NATIONAL_ID": 1}, text
    assert "NATIONAL_ID" not in REDACTOR.redact([sentence.format(invalid)]).counts
    unnamed = f"row {valid} of the table"  # the same number, no word naming it
    found_unnamed = "NATIONAL_ID" in REDACTOR.redact([unnamed]).counts
    assert found_unnamed == (valid in BY_SHAPE_ALONE)
    assert "NATIONAL_ID" not in REDACTOR.redact([f"row {invalid} of the table"]).counts


# Numbers whose shape and check say what they are: found with no word naming them.
BY_SHAPE_ALONE = {"BOXW310820HNERXN09", "2 95 10 99 126 111 93"}


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("my Aadhaar is 234567890124", "234567890124", "IN_AADHAAR"),
        ("CPF 12345678909 do cliente", "12345678909", "BR_CPF"),
        ("SSN 219099999 on the form", "219099999", "US_SSN"),
        ("passport no. E12345678 expires in 2030", "E12345678", "PASSPORT"),
        ("我的护照号码是G87654321，明天到期", "G87654321", "PASSPORT"),
    ],
)
def test_bare_numbers_are_ids_after_a_word_that_names_them(
    text: str, value: str, kind: str
) -> None:
    _, counts = _hidden(text, value)
    assert counts == {kind: 1}
    assert REDACTOR.redact([text.replace(text[: text.index(value)], "value ")]).counts == {}


# Values inside CJK text.
IN_CJK_TEXT = [
    ("我的手机号是13812345678，请联系我", "13812345678", "PHONE"),
    ("请拨打+86 139 1234 5678联系", "+86 139 1234 5678", "PHONE"),
    ("邮箱是wang.fang@example.cn请回复", "wang.fang@example.cn", "EMAIL"),
    ("身份证号11010519491231002X。", "11010519491231002X", "CN_ID"),
    ("账号GB82WEST12345698765432已开通", "GB82WEST12345698765432", "IBAN"),
    ("服务器地址203.0.113.42无法访问", "203.0.113.42", "IP_ADDRESS"),
    ("卡号6222021234567890128到期", "6222021234567890128", "CARD"),
]

# Cards of national networks and Maestro, grouped or not: Uzcard, Humo, a Maestro card.
NATIONAL_CARDS = [
    ("Karta 8600 4912 0377 1256 orqali to'lov", "8600 4912 0377 1256", "CARD"),
    ("Humo: 9860012345678903", "9860012345678903", "CARD"),
    ("Քարտին փոխանցեք՝ 5035123456789013 (Արմեն Պ.)", "5035123456789013", "CARD"),
]


AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
WANDB = "4f9a2b7c1d8e4f6a0b5c9d2e7f1a3b8c9d0e1f2a"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f"my key is AKIAIOSFODNN7EXAMPLE and secret {AWS_SECRET}", AWS_SECRET),
        (f"the wandb key is {WANDB}", WANDB),
        ("令牌：q8Zr2vN6xK4mT1pW9bY3cF7h，别外传", "q8Zr2vN6xK4mT1pW9bY3cF7h"),
        ("my password is Tr0ub4dor&3.", "Tr0ub4dor&3"),
        ("我把密码设置成了UXTsQ8B3X%5。", "UXTsQ8B3X%5"),
        ("Paste this token: Xk3vP9qLm2Rt7Ws4Yz8Ab1Cd", "Xk3vP9qLm2Rt7Ws4Yz8Ab1Cd"),
        ("password = hunter22  # not from the environment", "hunter22"),
        # named tokens of 12 to 19 characters: shorter than a bare random token may be
        ("my key is Xk3vP9qLm2Rt7", "Xk3vP9qLm2Rt7"),
        ("the secret is 8f3a9c2e7b1d4f6a", "8f3a9c2e7b1d4f6a"),
        ("密钥是Xk3vP9qLm2Rt7，别外传", "Xk3vP9qLm2Rt7"),
        ('DB_PASSWORD=s3cr3t! python app.py', "s3cr3t!"),
    ],
)  # fmt: skip
def test_unquoted_secrets_next_to_a_word_that_names_them(text: str, value: str) -> None:
    _, counts = _hidden(text, value)
    assert set(counts) <= {"SECRET", "API_KEY", "HIGH_ENTROPY", "PASSWORD"} and counts


# Passwords a sentence gives, in many languages (SECRET).
PASSWORDS_IN_SENTENCES = [
    ("The wifi password for the router is Tr0ub4dor&3.", "Tr0ub4dor&3"),
    ("The passwords in the file are hunter22 and more", "hunter22"),
    ("Password: letmein", "letmein"),  # letters alone, after a label's colon
    ("Your new password is: Autumn\nLog in now.", "Autumn"),
    ("pwd is MonkeyBusiness", "MonkeyBusiness"),  # letters alone, a capital inside
    ('the passphrase is "correct horse battery staple"', "correct horse battery staple"),
    ("my password 1234 never worked", "1234"),
    ("le mot de passe est soleil123", "soleil123"),
    ("Das Passwort für das WLAN ist Sommer2024", "Sommer2024"),
    ("Das Kennwort lautet Geheim123", "Geheim123"),
    ("mi contraseña es perro1234", "perro1234"),
    ("la clave es Gato_77", "Gato_77"),
    ("a senha é Banana#12", "Banana#12"),
    ("la password è Pizza2024", "Pizza2024"),
    ("het wachtwoord is Fiets99", "Fiets99"),
    ("мой пароль qwerty123", "qwerty123"),
    ("пароль: Медведь2024", "Медведь2024"),
    ("hasło to Kotek123", "Kotek123"),
    ("şifrem Kedi1234", "Kedi1234"),
    ("lösenordet är Sommar2024", "Sommar2024"),
    ("パスワードはNeko2024です", "Neko2024"),
    ("我的password是Tr0ub4dor&3，谢谢", "Tr0ub4dor&3"),  # an English word in Chinese text
    ("the admin pw is Hx55&zz9", "Hx55&zz9"),
    ("pass: Xk!20wq", "Xk!20wq"),  # "pass" names one before a colon only
    ("Ich habe mein Passwort auf Blau!2023 geändert", "Blau!2023"),
    ("mera password hai kamal8812", "kamal8812"),  # Hindi's `is`, Latin letters or not
    ("पासवर्ड है सूरज4471", "सूरज4471"),
]  # fmt: skip

# Codes that unlock something, after their name (SECRET).
UNLOCK_CODES = [
    ("my PIN is 4829.", "4829"),
    ("PIN-Code: 1234", "1234"),
    ("my bank PIN number is 0420", "0420"),
    ("the CVV is 123", "123"),
    ("CVC 987", "987"),
    ("OTP: 551203", "551203"),
    ("Your verification code is 123-456.", "123-456"),
    ("security code: 8841", "8841"),
    ("the door code is 1234#", "1234#"),
    ("2FA backup code 8812 0931", "8812 0931"),
    ("您的验证码是882211，五分钟内有效", "882211"),
    ("银行卡pin是4829。", "4829"),
    ("Mon code PIN est 8812", "8812"),
    ("Meine PIN lautet 9031", "9031"),
    ("El PIN de la tarjeta es 7702", "7702"),
    ("The CVV code on the back is 812", "812"),
    # SMS codes in Turkish, Malay, Hungarian, Lithuanian, Polish; a SIM card's PUK.
    ("Doğrulama kodunuz: 604 118\nKod 3 dakika geçerlidir.", "604 118"),
    ("TokoKita: Kod pengesahan anda 713920. Jangan kongsi kod ini.", "713920"),
    ("A belépési kód: 225 907. Ne adja ki senkinek!", "225 907"),
    ("Patvirtinimo kodas: 481 336. Daugiau info", "481 336"),
    ("ktoś prosi o kod BLIK 905 271, to oszustwo", "905 271"),
    ("Kod PUK lama: 27419305, sila simpan.", "27419305"),
    ("BANK: Il-kodiċi OTP tiegħek huwa 418 206 għal tranżazzjoni", "418 206"),
    ("Sizning tasdiqlash kodingiz: 603118. Kodni hech kimga bermang!", "603118"),
    ("[-EVC Plus-] Koodhkaaga xaqiijinta waa 5204. Ha u sheegin qofna", "5204"),
    ("Qapının kodu 8416. Gecikərsə zəng edin", "8416"),
    ("les di el NIP 7315, qué hago", "7315"),
    ('NUBANCO: Seu codigo de acesso e 472-190. Nao compartilhe.', "472-190"),
    # A door's code with a letter; the kind after `code`; Polish's intercom.
    ("Přístupový kód do budovy: 5190C", "5190C"),
    ("the code for the front door is 6083", "6083"),
    ("Kurier: jestem pod blokiem, jaki kod do domofonu?\nKlient: 3917, 4 piętro", "3917"),
]  # fmt: skip

# Passwords on command lines and in Wi-Fi QR codes (PASSWORD).
COMMAND_LINE_PASSWORDS = [
    ("mysql -u root -pSup3rS3cret prod", "Sup3rS3cret"),
    ("mysqldump -uroot -p'S3cret!' db > dump.sql", "S3cret!"),
    ("curl -u alice:Wonderland1 https://api.example.com", "Wonderland1"),
    ("curl https://x.example.com -H 'Accept: json' --user admin:secret123", "secret123"),
    ("sshpass -p 'Hunter22' ssh deploy@host", "Hunter22"),
    ("WIFI:T:WPA;S:HomeNet;P:s3cretWifiPass;;", "s3cretWifiPass"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    grouped(
        {
            "in_cjk_text": IN_CJK_TEXT,
            "national_card": NATIONAL_CARDS,
            "password_in_a_sentence": [(t, v, "SECRET") for t, v in PASSWORDS_IN_SENTENCES],
            "unlock_code": [(t, v, "SECRET") for t, v in UNLOCK_CODES],
            "command_line_password": [(t, v, "PASSWORD") for t, v in COMMAND_LINE_PASSWORDS],
            # A bare random token is high entropy.
            "bare_random_token": [
                ("run it with q8Zr2vN6xK4mT1pW9bY3cF7hJ5dL0sAe then", "q8Zr2v", "HIGH_ENTROPY")
            ],
            # A person at a code host is still an address.
            "person_at_a_code_host": [
                ("mail gitta.berg@github.com today", "gitta.berg@github.com", "EMAIL")
            ],
        }
    ),
)
def test_a_value_is_hidden_as_its_kind(text: str, value: str, kind: str) -> None:
    _, counts = _hidden(text, value)
    assert counts == {kind: 1}


# Words about passwords and codes that give none.
ABOUT_PASSWORDS_AND_CODES = [
    "The password is incorrect.",
    "The password must be 8 characters",
    "Password: required",
    "password: string",
    "Enter your password: ",
    "passwords are hashed with bcrypt",
    "password length = 12345",
    "password reset link expires in 3600 seconds",
    "mysql -u root -p mydb",  # -p alone asks for the password; mydb is the database
    "Connect pin 13 and pin 2 to GND, then set GPIO pin 4 high.",
    "the code is 404; error code 1234; zip code 94107",
    "He spins 1200 rpm and paid 4500 for the footprint 2024.",
    "Das Passwort ist falsch.",
    "def check_password(password: str) -> bool:",
    'window.pwned = "script"; pwa_manifest = "manifest.json"',
    "using 130692544 rows; the sin of 1234567 radians; nieuw 44051401359; DNI 12345678",
    "the key is UserProfileCardV2; set the key to max_new_tokens_2 at 2024-05-01T12:00",
    "the token is gpt-4o-2024-08-06, the secret is internationalization",
    "you can pass --no-cache to docker build; Pass: 3 of 4 tests",
    "pin 1 is VCC and pin 8 is GND on the 555 timer; the pin on the board is 3.3V tolerant",
    "la clave es la paciencia",
]


# (text, value, kind): personal values a word names, and street addresses by their shape.
NAMED_PERSONAL_VALUES = [
    ("Patient DOB: 03/14/1985, seen today.", "03/14/1985", "BIRTH_DATE"),
    ("My date of birth is March 14, 1985 and I need a refund.", "March 14, 1985", "BIRTH_DATE"),
    ("I was born on 14 March 1985 in Leeds.", "14 March 1985", "BIRTH_DATE"),
    ("Date of Birth (MM/DD/YYYY): 07/04/1976", "07/04/1976", "BIRTH_DATE"),
    ("Geburtsdatum: 14.03.1985", "14.03.1985", "BIRTH_DATE"),
    ("né le 14 mars 1985 à Lyon", "14 mars 1985", "BIRTH_DATE"),
    ("fecha de nacimiento: 14 de marzo de 1985", "14 de marzo de 1985", "BIRTH_DATE"),
    ("出生日期：1985年3月14日", "1985年3月14日", "BIRTH_DATE"),
    ("生年月日は1985-03-14です", "1985-03-14", "BIRTH_DATE"),
    ("My account number is 0012 3456 789, thanks.", "0012 3456 789", "ACCOUNT_NUMBER"),
    ("the sort code is 12-34-56.", "12-34-56", "ACCOUNT_NUMBER"),
    ("routing number 021000021 for the wire", "021000021", "ACCOUNT_NUMBER"),
    ("Kontonummer 1234567890 bei der Sparkasse", "1234567890", "ACCOUNT_NUMBER"),
    ("我的账号是6222021234567890123，请转账", "6222021234567890123", "ACCOUNT_NUMBER"),
    ("IFSC: SBIN0001234", "SBIN0001234", "ACCOUNT_NUMBER"),
    ("Driver's license: D1234-5678-9012", "D1234-5678-9012", "RECORD_NUMBER"),
    ("MRN 00482913 admitted overnight", "00482913", "RECORD_NUMBER"),
    ("Holder J. Smith, DL: D1234-5678-9012, exp 2027", "D1234-5678-9012", "RECORD_NUMBER"),
    ("member ID: XK4821937", "XK4821937", "RECORD_NUMBER"),
    ("驾驶证号：110101199003071234", "110101199003071234", "RECORD_NUMBER"),
    ("The device MAC is 00:1A:2B:3C:4D:5E on eth0.", "00:1A:2B:3C:4D:5E", "MAC_ADDRESS"),
    ("Send it to 742 Evergreen Terrace, Springfield, IL 62704 please.",
     "742 Evergreen Terrace, Springfield, IL 62704", "ADDRESS"),
    ("I live at 221B Baker Street, London NW1 6XE.", "221B Baker Street, London NW1 6XE",
     "ADDRESS"),
    ("Ship to 12 Oak St. Apt 4B, Boston, MA 02118", "12 Oak St. Apt 4B, Boston, MA 02118",
     "ADDRESS"),
    ("Meine Adresse: Hauptstraße 5, 10115 Berlin", "Hauptstraße 5, 10115 Berlin", "ADDRESS"),
    ("J'habite au 14 rue de la Paix, 75002 Paris", "14 rue de la Paix, 75002 Paris", "ADDRESS"),
    ("Vivo en Calle Mayor 5, 28013 Madrid", "Calle Mayor 5, 28013 Madrid", "ADDRESS"),
    ("我住在北京市朝阳区建国路88号2号楼3单元501室，快递请送这里。",
     "北京市朝阳区建国路88号2号楼3单元501室", "ADDRESS"),
    ("住所は東京都千代田区丸の内1-9-1です。", "東京都千代田区丸の内1-9-1", "ADDRESS"),
    ("The package goes to 1 Infinite Loop, Cupertino, CA 95014",
     "1 Infinite Loop, Cupertino, CA 95014", "ADDRESS"),
    ("Meine Adresse ist Bahnhofstr. 12, 8001 Zürich", "Bahnhofstr. 12, 8001 Zürich", "ADDRESS"),
    ("我的地址是4772 Lakeview Avenue，请寄到这里。", "4772 Lakeview Avenue", "ADDRESS"),
    ("Our office: 1585 Broadway, New York, NY 10019.", "1585 Broadway, New York, NY 10019",
     "ADDRESS"),
    ("Post it to 10 Downing St, London SW1A 2AA", "10 Downing St, London SW1A 2AA", "ADDRESS"),
    ("Return to 3 Kings Cross, Leeds LS1 4AP.", "3 Kings Cross, Leeds LS1 4AP", "ADDRESS"),
    ("收货地址：Schillerstraße 110, 55845 Berlin", "Schillerstraße 110, 55845 Berlin", "ADDRESS"),
    # A person's name after the words that introduce one.
    ("My name is Priya Raghunathan and I need help", "Priya Raghunathan", "PERSON_NAME"),
    ("Name: Jo Smith\nRoom 204", "Jo Smith", "PERSON_NAME"),
    ("Dear Ana,\nthanks for writing.", "Ana", "PERSON_NAME"),
    ("Please ask Dr. Maria Van der Berg about it.", "Maria Van der Berg", "PERSON_NAME"),
    ("Yours sincerely,\nJ. R. Tolkien", "J. R. Tolkien", "PERSON_NAME"),
    ("Kind regards,\nSiobhan O'Brien-Smith", "Siobhan O'Brien-Smith", "PERSON_NAME"),
    ("je m'appelle Louise Martin.", "Louise Martin", "PERSON_NAME"),
    ("我叫张伟，今年30岁", "张伟", "PERSON_NAME"),
    ("私の名前は田中太郎です", "田中太郎", "PERSON_NAME"),
]  # fmt: skip
# Secrets after a short or a session's name.
NAMED_SHORT_SECRETS = [
    ('{"user": "bob", "pass": "hunter22"}', "hunter22", "SECRET"),
    ('{"pw": "Zx9qwerty"}', "Zx9qwerty", "SECRET"),
    ("{'passcode': '8812'}", "8812", "SECRET"),
    ("SMTP_PASS=Zx9qwerty", "Zx9qwerty", "SECRET"),
    ("Cookie: sessionid=8f3a9c2e77b1d4", "8f3a9c2e77b1d4", "SECRET"),
    ("set-cookie: sid=Zx9qwertyUI12; Path=/", "Zx9qwertyUI12", "SECRET"),
]


def test_a_form_line_hides_the_name_and_the_number() -> None:
    text = "Name: J. Smith, DL: D1234-5678-9012, exp 2027"
    result = REDACTOR.redact([text])
    assert result.texts == ("Name: <PERSON_NAME_1>, DL: <RECORD_NUMBER_1>, exp 2027",)


@pytest.mark.parametrize(("text", "value", "kind"), NAMED_PERSONAL_VALUES + NAMED_SHORT_SECRETS)
def test_a_named_value_is_hidden_whole_as_its_kind(text: str, value: str, kind: str) -> None:
    result = REDACTOR.redact([text])
    assert result.counts == {kind: 1}, result.texts
    assert result.texts[0] == text.replace(value, f"<{kind}_1>")


# Dates, numbers and streets that are nobody's.
NOBODYS = [
    "The meeting is on 03/14/2025 at 10:00; born in 1985, she moved to Paris.",
    "I was born on a Tuesday; the birthday cake costs 1234 yen.",
    "He was stubborn 12/12/2012 about it.",
    "The account was created in 2019; routing number 123456789 is not valid.",
    "My account balance is $1234567 and the account had 1234567.50 in it.",
    "The account has 1234567 followers; he was born in Leeds on 14 March 1985's eve.",
    "Use `student_id = 12345` in the query; the license number is required.",
    "Time 12:30:45 and 2024-01-01; uuid 123e4567-e89b-12d3-a456-426614174000",
    "There are 3 Main Points in this Street Fighter review; we walked 5 miles down the road.",
    "See section 4 Road Safety Rules; the function returns 2 Drive objects.",
    "Take line 3 to the station; 3号线很挤。这条路有100米长。",
    "Order #12345678 shipped via 2 couriers; the MIT License 2024.",
    "We rated 5 Great Cafes in Portland, and 3 Big Ideas, Ready For 2025.",
    "DL the 2 GB file: dl 1234 blocks, then DL speed 12345678 bps.",
]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("api_key=Zq8vLw3NbX7kPr2Tm5Yd", "api_key=<SECRET_1>"),
        ("run with SESSION=Zq8vLw3NbX7kPr2Tm5Yd now", "run with SESSION=<HIGH_ENTROPY_1> now"),
        # a name of no words, or a value too short alone: the run whole, as before
        ("X7kPr2Tm5Yd=Zq8vLw3NbX7kPr2Tm5Yd", "<HIGH_ENTROPY_1>"),
    ],
)
def test_a_token_after_its_name_and_an_equals_sign_leaves_the_name(text: str, shown: str) -> None:
    """Before: the name and the value were one word of random-looking characters, replaced
    whole (`<SECRET_1>`): the reviewer could not tell what had been there."""
    assert REDACTOR.redact([text]).texts == (shown,)


# What looks like a secret but is not.
NOT_SECRETS = [
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "git checkout 3f786850e387550fdab836ed7e6dc881de23001b",
    'EXPECTED = "d41d8cd98f00b204e9800998ecf8427e"',
    "request 123e4567-e89b-12d3-a456-426614174000 failed",
    'print(base64.b64decode("SGVsbG8sIFdvcmxkIQ=="))',
    "echo VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw== | base64 -d",
    "class UserAccountSettingsRepository2: def getUserAccountSettingsById(self): ...",
    "edit src/components/UserProfileCardV2.tsx and rebuild",
    "the password is long and the token is short",
    # A word of a script with vowel signs after `password`: "never write your password in a
    # ticket" in Telugu; Italian's `hai`, "you have", before a count.
    "గమనిక: మీ password ఎప్పుడూ ticket లో రాయకండి.",
    "hai 5 minuti per inserire il codice",
    "a nip of 12 year old whisky",
    "the code for the gate of the park opens at 9",
    "error code 500 on the server, see code 1234 ABC in the manual",
    "2^34 = 17179869184 and 123456789 × 987654321 = 121932631112635269",
    "Order #84412093 shipped on 2024-05-01 for $129.99.",
    "Timestamp 1733011200 is in seconds; 1733011200123 in ms.",
    "计算结果：438291 + 992831 = 1431122，误差小于0.00042。",
    "版本 3.12.4 于 2024年5月1日发布，共修复 128 个问题。",
    "The population grew from 15000000000 to 16000000000.",
    "Use sk-learn's Pipeline and the key-value store.",
    '{"id": "a27a0dae-b013-c62b-4a45-951fb86c9ddf", "status": "ok"}',  # a quoted UUID
    "Basic instructionsforeveryone are in the guide.",  # a scheme word, then prose
    # code that reads a secret from elsewhere, or passes one on
    'password = os.environ["DB_PASSWORD"]\napi_key = os.getenv("OPENAI_API_KEY")',
    "password = getpass.getpass()\ntoken = response.json()['access_token']",
    "conn = psycopg2.connect(host=h, password=args.pw, api_key=None)",
    "self.password = password\nsecret_key = settings.SECRET_KEY\nif password == confirm: ...",
    # `pwd` inside base64 data, right before its `==` padding, then a quoted attribute
    '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlE'
    'QVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg1TPWDGx4CRgpwg==" alt="logo">',
]


@pytest.mark.parametrize(
    "text",
    grouped(
        {
            "about_passwords_and_codes": ABOUT_PASSWORDS_AND_CODES,
            "nobodys": NOBODYS,
            "not_a_secret": NOT_SECRETS,
        }
    ),
)
def test_what_names_or_looks_like_a_value_but_gives_none_is_left(text: str) -> None:
    assert REDACTOR.redact([text]).counts == {}, REDACTOR.redact([text]).texts


def test_phone_regions_decide_how_numbers_without_plus_are_read() -> None:
    text = "call 98765 43210 after six"  # an Indian mobile, written in groups
    assert Redactor.from_config(RedactConfig()).redact([text]).counts == {}
    indian = Redactor.from_config(RedactConfig(phone_regions=["in", "US"]))
    assert indian.redact([text]).texts == ("call <PHONE_1> after six",)
    # With `+` a number of any country is read as international, whatever the regions.
    assert indian.redact(["+49 30 12345678"]).counts == {"PHONE": 1}


def test_an_unknown_phone_region_is_one_clear_message() -> None:
    with pytest.raises(ValidationError, match=r"(?s)phone_regions.*'UK' is not a region"):
        RedactConfig(phone_regions=["US", "UK"])


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("İİ api_key=abcd1234efgh ok", "abcd1234efgh"),  # `İ` lower-cases to two characters
        ("İİİİ password is Tr0ub4dor&3 ok", "Tr0ub4dor&3"),
    ],
)
def test_a_letter_whose_lower_case_is_longer_moves_no_find(text: str, value: str) -> None:
    redacted, _ = _hidden(text, value)
    assert redacted.endswith(" ok")


test_a_code_hosts_ssh_account_is_no_mailbox = leaves_each(
    [
        "git remote add origin git@github.com:tidewater/harbour.git",
        "ssh -T git@gitlab.example.com",
        "url = git@bitbucket.org:team/repo.git",
    ]
)
