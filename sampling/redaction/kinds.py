"""The built-in kinds of redacted text: the name a config uses, the placeholder's stem
(`<EMAIL_1>`), and what the kind covers. Light on purpose: config validation imports it."""

from __future__ import annotations

import re

# A kind name, built-in or a user's: upper-case words joined by `_`, as it appears in placeholders.
KIND_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,39}")

SECRET_KINDS: dict[str, str] = {
    "PRIVATE_KEY": "PEM/OpenSSH/PGP private key blocks (header to footer)",
    "JWT": "JSON Web Tokens (three base64url parts whose header and payload are JSON)",
    "PASSWORD": "the password in a URL or connection string (scheme://user:PASSWORD@host, "
    "Password=...;)",
    "API_KEY": "cloud and service keys and tokens found by detect-secrets' token plugins "
    "(AWS, Azure storage, GitHub, GitLab, Slack, Stripe, OpenAI, Twilio, SendGrid, npm, PyPI, ...)",
    "SECRET": "a value assigned to a secret-sounding name (password=..., api_key: ...)",
    "HIGH_ENTROPY": "quoted strings of high entropy (detect-secrets' base64 and hex plugins)",
}
PERSONAL_KINDS: dict[str, str] = {
    "EMAIL": "e-mail addresses",
    "PHONE": "phone numbers: international (+CC ...), North American (555-123-4567), UK (0...)",
    "CARD": "payment card numbers (13-19 digits, known prefixes, Luhn check)",
    "IBAN": "International Bank Account Numbers (country length and mod-97 check)",
    "IP_ADDRESS": "IPv4 and IPv6 addresses (checked by the standard library's ipaddress)",
    "US_SSN": "US Social Security numbers (123-45-6789, invalid ranges excluded)",
    "UK_NINO": "UK National Insurance numbers (AB 12 34 56 C)",
}
BUILTIN_KINDS: dict[str, str] = SECRET_KINDS | PERSONAL_KINDS
