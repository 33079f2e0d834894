"""Secrets in the forms people paste them: passwords given to commands (an option, a pipe, the
line after `mysql -p`), credential files (`.netrc`, `.pgpass`), names apart from their values
(XML, `define('DB_PASSWORD', ...)`, name/value pairs), Wi-Fi keys, lists of backup codes, TOTP
secrets, seed phrases without a name before them, hex keys with `0x`; and what stands in a
secret's place without being one (variables, placeholders, paths, hashes, public keys)."""

from __future__ import annotations

import html
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sampling.redaction.context import NO_VALUE, placeholder
from sampling.redaction.finders import build
from sampling.redaction.finders.stated_secrets import PasswordPhraseFinder
from sampling.redaction.spans import Text
from sampling.redaction.views import views
from tests.helpers.redaction import REDACTOR, grouped, hidden, leaves_each

pytestmark = pytest.mark.unit


def _hidden(text: str, value: str, start: int | None = None) -> bool:
    """Every visible character of `value` is redacted."""
    return hidden(text, value, start, spaces=False)


# (text, the secret in it), by the form it takes.
COMMAND_OPTIONS = [
    ("docker login -u ci -p 4mber&Ash registry.example.com", "4mber&Ash"),
    ("docker login registry.example.com --username ci --password sunflowerfield", "sunflowerfield"),
    ("mongosh mongodb://db -u admin -p 'Zz8*yY7&xX' --authenticationDatabase admin", "Zz8*yY7&xX"),
    ("redis-cli -h cache -a n0t-s0-s3cret ping", "n0t-s0-s3cret"),
    ("sqlcmd -S tcp:db,1433 -U sa -P 'Wint3r.is.coming' -Q 'SELECT 1'", "Wint3r.is.coming"),
    ("ldapsearch -x -D cn=admin,dc=example,dc=org -w P@ssw0rd99 -b dc=org", "P@ssw0rd99"),
    ("smbclient //fs/share -U alice%S3cr3t!pw", "S3cr3t!pw"),
    ("htpasswd -b -c .htpasswd admin c0ffee+Cake", "c0ffee+Cake"),
    ("openssl pkcs12 -export -out cert.p12 -passout pass:lemon_Tree77", "lemon_Tree77"),
    ("keytool -list -keystore ks.jks -storepass r3dP4nda%%", "r3dP4nda%%"),
    ("7z a -pXk9mL2vQ backup.7z data/", "Xk9mL2vQ"),
    ("echo 'Tr0ub4dor&3' | sudo -S apt-get update", "Tr0ub4dor&3"),
    ("echo hunter2horse | docker login -u ci --password-stdin", "hunter2horse"),
    ("az login -u ops@example.com -p Blue-Horse-42", "Blue-Horse-42"),
    ("    command: redis-server --requirepass Qw7rT2yU9iO3", "Qw7rT2yU9iO3"),
    ("redis-server --port 6380 --masterauth p4ssW0rd-Lake", "p4ssW0rd-Lake"),
    # An `@` in a URL's password, not percent-encoded as people paste it.
    ("DATABASE_URL=postgresql://admin:P@ssw0rd!@db.prod.internal:5432/app", "P@ssw0rd!"),
    ("试试redis://:s3M7kH8aT#5@cache.internal:6379/0，能用吗？", "s3M7kH8aT#5"),  # a # in it
]
PROMPTED = [
    ("$ mysql -u root -p\nS3cret!pw\nWelcome to the MySQL monitor.", "S3cret!pw"),
    (
        "$ mysql -h db -u admin -p\nEnter password:\nmaplesyrupjar\nERROR 1045 (28000)",
        "maplesyrupjar",
    ),
    ('{"output": "mysql -u root -p\\nc0ffee+Cake"}', "c0ffee+Cake"),
    ("psql -h db -U app -W\nPassword for user app:\npurplemonkeydish", "purplemonkeydish"),
    ("[sudo] password for ana: bluebirdsinging", "bluebirdsinging"),
]
CREDENTIAL_FILES = [
    ("machine ftp.example.org login bob password bluebirdsinging", "bluebirdsinging"),
    ("machine api.example.com\n  login ana\n  password\n  4f0c1e9a-77d2", "4f0c1e9a-77d2"),
    ("db.example.com:5432:appdb:appuser:n0t-s0-s3cret", "n0t-s0-s3cret"),
    ("cat ~/.pgpass\nlocalhost:*:*:postgres:sunflowerfield", "sunflowerfield"),
]
NAMED_FIELDS = [
    ("define('DB_PASSWORD', 'Wint3r.is.coming');", "Wint3r.is.coming"),
    ('os.environ["OPENAI_API_KEY"] = "correcthorsebattery"', "correcthorsebattery"),
    ("<password>lemon_Tree77</password>", "lemon_Tree77"),
    ("env:\n  - name: DB_PASSWORD\n    value: maplesyrupjar", "maplesyrupjar"),
    ('network={\n    ssid="HomeNet"\n    psk="purplemonkeydish"\n}', "purplemonkeydish"),
    ("creds are admin/Xk9#mL2$vQ", "Xk9#mL2$vQ"),
    ('<add key="SmtpPassword" value="Hark!Lantern22" />', "Hark!Lantern22"),
    ("ftp> user admin\n331 Password required\nftp> pass ember7Glow", "ember7Glow"),
    ("redis-cli\n127.0.0.1:6379> AUTH quartzRiver81", "quartzRiver81"),
    ("SECRET_KEY=django-insecure-7&9^g^+53(qn=cn+o2n3&om5pob1", "7&9^g^+53(qn=cn+o2n3&om5pob1"),
]
STATED = [
    # what it is for between the word and the value, and no verb (Russian leaves it out)
    ("Мой телефон у тебя есть, пароль от почты Gr4nat!yablo", "Gr4nat!yablo"),
    ("пароль к серверу Vetka2027", "Vetka2027"),
    ("пароль для входа lesnoy1988", "lesnoy1988"),
    ("la password della posta è Cav0lo#verde", "Cav0lo#verde"),
    ("la contraseña del wifi: correcthorsebattery", "correcthorsebattery"),
    ("пароль от почты c0ffee+Cake", "c0ffee+Cake"),
    ("Das Passwort lautet\n    4mber&Ash", "4mber&Ash"),
    ("Password: ab(c;d<e>f", "ab(c;d<e>f"),
    ("와이파이 비번: moonriver77", "moonriver77"),
]
WIFI_KEYS = [
    ("WPA key: hunter2horse", "hunter2horse"),
    ("WPA2 PSK: correcthorsebattery", "correcthorsebattery"),
    ("Network: CafeNet\nKey: maplesyrupjar", "maplesyrupjar"),
    ("wireless key sunflowerfield", "sunflowerfield"),
    ("WLAN-Schlüssel: 06454358602146783203", "06454358602146783203"),
    ("clé Wi-Fi : purplemonkeydish", "purplemonkeydish"),
]
CODES_AND_TOTP = [
    ("2FA backup codes:\n0500-4990\n1950-6695\n7773-8053", "0500-4990\n1950-6695\n7773-8053"),
    ("GitHub recovery codes:\ne01af-56fbe\n0050e-c5f14", "e01af-56fbe\n0050e-c5f14"),
    ("backup codes: 64886415 05989809 48221447", "64886415 05989809 48221447"),
    ("2FA'yı kaybettim, yedek kodum 8K3M-2PQX-71ZD ama olmuyor", "8K3M-2PQX-71ZD"),
    ("perdi o celular, meu código de backup é 4417-9921", "4417-9921"),
    ("кодов нет, резервный код: 5519 2287", "5519 2287"),
    ("my backup code 7TQ2-KW9M-44XA doesn't work", "7TQ2-KW9M-44XA"),
    (
        "Microsoft account recovery code: 4K7PQ-2M9XR-T8W3N-6B1YH-5CZ2D",
        "4K7PQ-2M9XR-T8W3N-6B1YH-5CZ2D",
    ),
    ("2FA secret key: 4uss gvhh a4wy w6mf ovov b2vc", "4uss gvhh a4wy w6mf ovov b2vc"),
    ("pyotp.TOTP('26HIV7C2UCHWWKDB6PKDAX653KWCSK2J').now()", "26HIV7C2UCHWWKDB6PKDAX653KWCSK2J"),
    ("authenticator setup key\n  QRAISK7YAQRFSOM6", "QRAISK7YAQRFSOM6"),
    (
        "https://paste.example.com/view?lang=en&text=otpauth%3A%2F%2Ftotp%2FACME%3Fsecret%3D"
        "X5EAT7PFT5UP42H46DBLWTOMREWLOMSJ%26issuer%3DACME",
        "X5EAT7PFT5UP42H46DBLWTOMREWLOMSJ",
    ),
]
# 24 distinct list words typed by hand, a checksum-valid 12 among them (`dolphin` to `tackle`).
WORDS_24 = (
    "canyon dolphin lemon badge rocket umbrella fabric garlic panda harbor quantum saddle tackle "
    "marble zebra pepper orbit bacon ivory jungle donkey hammer balcony velvet"
)
# A valid 12-word phrase (its checksum holds), said to be one only after it.
PHRASE = "always label square process bird paddle assault ghost recall bright banana immense"
KEYS = [
    (f"{PHRASE}\nthat's the 12 words from my wallet backup", PHRASE),
    (
        "My wallet backup: "
        + " ".join(f"{number} {word}" for number, word in enumerate(PHRASE.split(), 1)),
        "immense",
    ),
    # Named in one turn of a chat, given in the next, typed by hand (its checksum fails).
    (
        "buyer_01: i typed my recovery phrase into that sync site\n"
        "buyer_01: it was sugar orbit velvet lumber tunnel misery harvest pioneer gravity salad "
        "ocean depart\nSupport: please move your funds now",
        "sugar orbit velvet lumber tunnel misery harvest pioneer gravity salad ocean depart",
    ),
    # In a text that speaks of a wallet, twelve distinct list words typed by hand.
    (
        "el soporte de la wallet me pidió esto\nfrase: pelican marble uncle frost gadget orbit "
        "velvet crunch ladder soap tribe yellow\n¿ya fue?",
        "pelican marble uncle frost gadget orbit velvet crunch ladder soap tribe yellow",
    ),
    # Named in a turn, given whole in the next: a checksum-valid 12 inside its 24 words is
    # there by chance, and every word is hidden.
    (
        "Support: we need the 24-word recovery phrase in order, please.\nMe: ok. " + WORDS_24,
        WORDS_24,
    ),
    # Named in Russian; a wallet in Portuguese.
    (
        "Поддержка: нужна ваша секретная фраза из 12 слов.\nВы: ок вот она army bamboo salmon "
        "quantum ivory walnut ladder sunset orbit harbor gentle kitten",
        "army bamboo salmon quantum ivory walnut ladder sunset orbit harbor gentle kitten",
    ),
    (
        "[22/01/2025 23:41] Você: frase da carteira, NÃO APAGAR: gentle walnut cabin eagle "
        "tomato ladder napkin sunset carbon kitten ivory absurd",
        "gentle walnut cabin eagle tomato ladder napkin sunset carbon kitten ivory absurd",
    ),
    ("solana keypair: [" + ",".join(str(n * 37 % 256) for n in range(64)) + "]", "37,74,111"),
    (
        '{"note": "mnemonic:\\n1. always\\n2. label\\n3. square\\n4. process\\n5. bird\\n'
        '6. paddle\\n7. assault\\n8. ghost\\n9. recall\\n10. bright\\n11. banana\\n12. immense"}',
        "immense",
    ),
    (
        "ETH private key 0x11a95a18f928bd54cdfa5edc2a348f135ee05ec77236555086fde0dedb11e60b",
        "0x11a95a18f928bd54cdfa5edc2a348f135ee05ec77236555086fde0dedb11e60b",
    ),
]
FORMS = {
    "command_options": COMMAND_OPTIONS,
    "prompted": PROMPTED,
    "credential_files": CREDENTIAL_FILES,
    "named_fields": NAMED_FIELDS,
    "stated": STATED,
    "wifi_keys": WIFI_KEYS,
    "codes_and_totp": CODES_AND_TOTP,
    "keys": KEYS,
}
CASES = [(form, text, value) for form, cases in FORMS.items() for text, value in cases]


@pytest.mark.parametrize(("form", "text", "value"), grouped(FORMS, name_first=True))
def test_a_secret_in_the_form_people_paste_it_is_hidden_whole(
    form: str, text: str, value: str
) -> None:
    assert _hidden(text, value), (form, REDACTOR.redact([text]).texts[0])


# What stands where a secret would, without being one: nothing here is redacted.
NOT_SECRETS = [
    "      DB_PASSWORD: ${DB_PASSWORD:?set in CI}",
    "REDIS_PASSWORD: ${REDIS_PASSWORD:-}",
    'redis-server --requirepass "$REDIS_PASSWORD"',
    "the backup code step was skipped on 2024-01-02",
    "backup codes were generated on 2024-01-02",
    "My wallet is brown, and I keep my cards and a photo of my dog in it since 2019.",
    # Twelve list words told well after a recovery phrase is mentioned: prose, not a phrase.
    "Never type your recovery phrase into a site.\n\n\n\nWe found the same issue again and "
    "again: a small team can build a simple tool that will help people save time today.",
    "я менял пароль от почты 2 раза",
    "пароль от почты в 2024",
    "please reset the password for user admin2",
    "export AWS_SECRET_ACCESS_KEY=$AWS_SECRET",
    "PGPASSWORD=$PGPASS psql -h db",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "DB_PASSWORD=your_password_here",
    "password=%(db_password)s",
    "SLACK_BOT_TOKEN=xoxb-your-token",
    "curl -u $USER:$TOKEN https://api.example.com",
    'sshpass -p "$SSHPASS" ssh host',
    "postgres://user:password@localhost:5432/db",
    "WIFI:T:WPA;S:<ssid>;P:<password>;;",
    "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
    "password: changeme",
    "machine api.heroku.com login $HEROKU_USER password $HEROKU_TOKEN",
    "const token = localStorage.getItem('token');",
    "Enter passphrase for key '~/.ssh/id_ed25519':",
    "Password for 'https://github.com':",
    "vault kv get -field=password secret/db",
    "password_reset_token_ttl = 3600",
    "eos_token_id = 50256",
    "secret_name: prod/db/credentials",
    "token_ids = [101, 2023, 2003, 102]",
    "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db",
    "docker run -p 8080:80 nginx",
    "docker login -u myuser --password-stdin < token.txt",
    "psql --no-password -h db app",
    "mysql -u root -p\nEnter password:\nERROR 1045 (28000): Access denied for user 'root'",
    "mysql -u root -p\nmysql>",
    "Use the --password option to pass it.",
    "ssh -p 2222 user@host",
    "integrity sha512-BMnVQUTFJE9Zui8BRBv9UUVVcBbUoKiM1Spl5sF95pR/6HjCaMzxiYc1NvbbkzTlt8l1wy==",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ana@host",
    "WPA key management: WPA-PSK",
    "The WPA key must be 8 to 63 characters.",
    "The wifi password is incorrect.",
    "key_mgmt=WPA-PSK",
    "recovery codes: 10 codes were generated",
    "Use a TOTP app such as Authy.",
    "The BIP39 test vector for my wallet: abandon abandon abandon abandon abandon abandon "
    "abandon abandon abandon abandon abandon about",
    "password for the 2-factor app",
    "tx hash 0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
    "input_ids: [" + ",".join(str(n * 37 % 256) for n in range(64)) + "]",
    "Enter the PASS command after USER.",
]


test_what_stands_in_a_secrets_place_is_left = leaves_each(NOT_SECRETS)


# The words for a password, in the languages the finders read, as a label.
LABELS = ["password:", "Password:", "PASSWORD:", "passwd:", "Passwort:", "Kennwort:",
          "mot de passe :", "contraseña:", "senha:", "wachtwoord:", "пароль:", "密码：", "密碼：",
          "パスワード：", "비밀번호:", "hasło:", "şifre:", "lösenord:", "The root password is:",
          "Das Passwort für das WLAN lautet:", "我的密码是："]  # fmt: skip
# Printable characters but white space and the quotes that would delimit the value.
PASSWORD_CHARS = "".join(c for c in string.printable if not c.isspace() and c not in "\"'`")
# Words that say a label has no value here (`password: null`, `Password: required`).
NO_PASSWORD = NO_VALUE | PasswordPhraseFinder._NOT_A_VALUE


def _a_password(value: str) -> bool:
    # What reads as an escape (`0%00` as `0` and a NUL, `00\\r` as `00` and a line break, `&LT;`
    # as `<`) is decoded before it is read: not this test's.
    url_encoded = re.search(r"%[0-9A-Fa-f]{2}|\\[\\/bfnrtux]", value) is not None
    url_encoded |= html.unescape(value) != value
    return (
        len(set(value)) > 1
        and not placeholder(value)
        and not placeholder(value.removesuffix(";"))  # `<0>;`: a placeholder ending its field
        and re.search(r"</[a-zA-Z][\w-]*>$", value) is None  # `0000</A>`: markup closes there
        and value.lower() not in NO_PASSWORD
        and not url_encoded
    )


@given(
    st.sampled_from(LABELS),
    st.text(PASSWORD_CHARS, min_size=4, max_size=24).filter(_a_password),
    st.sampled_from([" ", "\n", "\n  ", " \n    "]),
    st.sampled_from(["", "\nThanks!", "\n\nNext step: restart the server."]),
)
@settings(max_examples=300, deadline=None)
def test_any_password_after_a_password_label_is_hidden_whole(
    label: str, password: str, gap: str, after: str
) -> None:
    text = f"{label}{gap}{password}{after}"
    start = len(label) + len(gap)
    assert _hidden(text, password, start), (text, REDACTOR.redact([text]).texts[0])


@pytest.mark.parametrize(
    "name", ["command_line_password", "credential_files", "named_secret_fields"]
)
def test_the_gates_of_a_finders_patterns_lose_nothing(name: str) -> None:
    # Each pattern runs only where its gate opens: without the gates, the same finds.
    finder = build(name)
    assert finder.gates
    ungated = type(finder)(**{**finder.__dict__, "gates": ()})
    texts = [text for _, text, _ in CASES] + NOT_SECRETS
    found = 0
    for text in texts:
        for view in views(text):
            gated_spans = list(finder.find(Text(view.text)))
            assert gated_spans == list(ungated.find(Text(view.text))), text
            found += len(gated_spans)
    assert found  # the texts exercise the finder


def test_a_seed_phrase_that_holds_the_word_seed_is_hidden_from_its_first_word() -> None:
    # `seed` names a phrase and is a list word too: the phrase starts after the first name.
    words = ["abandon"] * 4 + ["seed"] + ["abandon"] * 12 + ["alcohol"]
    text = f"好的 助记词：{' '.join(words)} 谢谢"
    assert REDACTOR.redact([text]).texts[0] == "好的 助记词：<SEED_PHRASE_1> 谢谢"
