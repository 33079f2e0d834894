"""The built-in kinds of redacted text: the name a config uses, the placeholder's stem
(`<EMAIL_1>`), and what the kind covers. Light on purpose: config validation imports it. The
order is the priority when two finds overlap: the kind that comes first names the span."""

from __future__ import annotations

import re

# A kind name, built-in or a user's: upper-case words joined by `_`, as it appears in placeholders.
KIND_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,39}")

SECRET_KINDS: dict[str, str] = {
    "PRIVATE_KEY": "PEM/OpenSSH/PGP/PuTTY private key blocks (header to footer), a PEM "
    "private key in base64 (a kubeconfig's client-key-data), and a wallet's raw key (64 hex "
    "digits) after words naming a private key or given to a name ending in pk",
    "JWT": "JSON Web Tokens (three base64url parts whose header and payload are JSON)",
    "PASSWORD": "the password in a URL or connection string (scheme://user:PASSWORD@host, "
    "Password=...;), a Wi-Fi QR code, a command line (mysql -pPASSWORD, curl -u user:PASSWORD, "
    "sshpass -p PASSWORD), a call that takes a user and a password by position "
    "(smtp.login(user, 'PASSWORD'), auth=('user', 'PASSWORD'), new NetworkCredential(...), "
    "getConnection(url, user, ...)) or SQL that sets one (IDENTIFIED BY 'PASSWORD')",
    "API_KEY": "keys and tokens of known formats (redaction/finders/token_rules.yaml: LLM APIs, "
    "model hubs, code hosts, cloud providers, CI, chat webhooks, payments, bearer headers)",
    "SECRET": "a value given to a secret-sounding name (password=..., api_key: ..., sid=..., "
    "'my key is ...', '密钥是...'), a password a sentence gives in one of many languages ('das "
    "Passwort ist ...', 'mot de passe : ...'), a PIN, CVV or one-time code after its name, every "
    "value of a Kubernetes Secret's data and stringData, a password hash ($apr1$, $2y$, $6$, "
    "{SSHA}), a config file's password directive (requirepass ...)",
    "HIGH_ENTROPY": "random-looking tokens, quoted or not (letters in both cases and digits, "
    "20-128 characters, near a random string's entropy; hex alone is a hash, not a secret)",
    "SEED_PHRASE": "a wallet's seed phrase: 12 to 24 words of one of BIP-39's ten lists after a "
    "word naming it (seed phrase, recovery phrase, mnemonic, my 24 words, 助记词, ...)",
}
PERSONAL_KINDS: dict[str, str] = {
    "EMAIL": "e-mail addresses, also written out (jane (at) example (dot) org)",
    "CN_ID": "Chinese resident identity numbers (18 characters, birth date and check digit)",
    "IN_AADHAAR": "Indian Aadhaar numbers (Verhoeff check; bare 12 digits only after 'Aadhaar')",
    "BR_CPF": "Brazilian CPF numbers (two check digits; bare 11 digits only after 'CPF')",
    "IN_PAN": "Indian PAN numbers (ABCPE1234F, with the holder-type letter checked)",
    "PASSPORT": "passport numbers after a word naming a passport (passport, 护照, ...)",
    "NATIONAL_ID": "identity, tax and social security numbers of about 30 more countries after a "
    "word naming them (Canada's SIN, Korea's RRN, Japan's My Number, Spain's DNI/NIE, France's "
    "NIR, Germany's Steuer-ID, BSN, PESEL, CURP, Nordic personal numbers, ...), each checked",
    "BIRTH_DATE": "a date of birth after a word naming it (date of birth, DOB, born on, "
    "geboren am, né le, fecha de nacimiento, 出生日期, 生年月日, ...), written in numbers, "
    "with a month's name in several languages, or as 1985年3月14日",
    "ACCOUNT_NUMBER": "bank account, routing (ABA-checked), sort code, BSB and IFSC numbers "
    "after a word naming them (account number, acct, Kontonummer, número de cuenta, 账号, ...)",
    "RECORD_NUMBER": "driver's licence, medical record, patient, member, policy, insurance, "
    "student and employee numbers after a word naming them (MRN, Führerschein, 驾驶证, ...)",
    "PHONE": "phone numbers of any country with `+`; without it, read as a number of each of "
    "`phone_regions` (libphonenumber's data), or in North American and UK shapes",
    "CARD": "payment card numbers (13-19 digits, known prefixes, Luhn check)",
    "IBAN": "International Bank Account Numbers (country format and mod-97 check)",
    "MAC_ADDRESS": "hardware (MAC) addresses: six pairs of hex digits joined by `:` or `-`, "
    "or three groups of four joined by `.`",
    "IP_ADDRESS": "IPv4 and IPv6 addresses (checked by the standard library's ipaddress); "
    "loopback (127.0.0.1, ::1), unspecified (0.0.0.0, ::) and a CIDR range's network address "
    "(10.0.0.0/8) name no machine and stay",
    "US_SSN": "US Social Security numbers (123-45-6789, or 9 digits after 'SSN'; invalid ranges "
    "excluded)",
    "UK_NINO": "UK National Insurance numbers (AB 12 34 56 C)",
    "ADDRESS": "street addresses by their shape: a house number beside a street's name and type "
    "as English, German, Dutch, Nordic, Finnish, Polish, French, Spanish, Italian and Portuguese "
    "write them (with the unit, city and postal code after them, in each country's order), "
    "Russian and Ukrainian ones, and Chinese, Japanese and Korean addresses by their units",
    "PERSON_NAME": "a person's name where the words before it say so (my name is, Name:, Dear, "
    "Mr./Ms./Dr., a letter's sign-off, je m'appelle, me llamo, ich heiße, 我叫, 姓名：, 名前は, "
    "...), a full name in running text, a first name alone where the words around it say a "
    "person is meant (Thanks Ravi, ask Priya, Maria said, Noah's, Kayden (8)); a name with "
    "nothing around it needs a redactor of your own (NER)",
    "MESSENGER_ID": "a chat-app ID or handle after the app's name: WeChat ID (微信号), QQ "
    "number, Telegram, WhatsApp, LINE, KakaoTalk, Signal, Discord, Skype, Instagram, Snapchat, "
    "TikTok, a code host's (GitHub: ...); an @handle a few words after such an app's name",
    "USERNAME": "a person's login or account name: after a word naming it in many languages "
    "(username, login, Benutzername, identifiant, usuario, nome utente, 用户名, ユーザー名, "
    "아이디, ...), in a URL's userinfo, an ssh config's User, a .pgpass line, a command's -u/-a "
    "user:password, an IAM user's ARN; a chat's mention of a person (@first.last); a chat's "
    "speakers by handle (Kuba_z_Radomia: ...); the account in a social network's profile URL "
    "(linkedin.com/in/..., instagram.com/..., t.me/...); generic and system accounts (root, "
    "admin, postgres, ...) stay",
    "LICENSE_PLATE": "a vehicle licence plate after a word naming it (licence plate, number "
    "plate, Kennzeichen, plaque, matrícula, 车牌号, ナンバー, 번호판, ...)",
}
BUILTIN_KINDS: dict[str, str] = SECRET_KINDS | PERSONAL_KINDS
# `sampling.redact.phone_regions` by default: how a phone number without `+` is read.
DEFAULT_PHONE_REGIONS = ("US", "GB", "CN")
