"""Secrets in the files and command output an agent reads: a private key's PEM block in base64
(a kubeconfig's `client-key-data`, a Secret's `tls.key`), a password hash in crypt or LDAP form
(`.htpasswd`, `/etc/shadow`: a verifier that a password can be guessed against), a password a
daemon's config file gives by its directive (`requirepass ...` in redis.conf, `BINDPW` in
ldap.conf), a network device's (`enable secret ...`, HAProxy's `stats auth`), a Redis ACL
user's (`user app on >...`), a Terraform variable's default (`variable "db_password" { default =
"..." }`), WordPress's keys and salts (`define( 'AUTH_KEY', '...' )`) and an app password of four
groups of four letters after a password's name (`password: hbzq mxwt rkvp ydle`), and a password
after its login's address (`relay@example.com:PASSWORD` in postfix's `sasl_passwd`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from sampling.redaction.checks import PEM_IN_BASE64, pem_header_in_base64
from sampling.redaction.context import matches, placeholder
from sampling.redaction.finders import register
from sampling.redaction.randomness import reads_as_words
from sampling.redaction.spans import ALL_VIEWS, SECRET_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

# The crypt alphabet, and the base64 one of LDAP's `{SSHA}`.
_CRYPT = r"[./A-Za-z0-9]"
_B64 = r"[A-Za-z0-9+/]"
# A hash in the modular crypt format or LDAP's: the scheme stays for the reader, the salt and
# the hash (group `value`) go. MD5 (`$1$`, Apache's `$apr1$`), bcrypt (`$2y$10$`), SHA-crypt
# (`$5$`, `$6$`, with its rounds), yescrypt (`$y$`), scrypt and Argon2, `{SHA}`/`{SSHA}`.
_HASHES = re.compile(
    rf"(?<![\w$])(?:"
    rf"\$(?:1|apr1|md5)\$(?P<md5>{_CRYPT}{{1,8}}\${_CRYPT}{{22}})"
    rf"|\$2[abxy]?\$[0-9]{{2}}\$(?P<bcrypt>{_CRYPT}{{53}})"
    rf"|\$[56]\$(?:rounds=[0-9]+\$)?(?P<sha>{_CRYPT}{{1,16}}\${_CRYPT}{{40,90}})"
    rf"|\$(?:y|gy|7)\$(?P<yescrypt>{_CRYPT}+\${_CRYPT}*\$?{_CRYPT}{{43}})"
    rf"|\$argon2(?:id|i|d)\$(?:v=[0-9]+\$)?m=[0-9]+,t=[0-9]+,p=[0-9]+\$(?P<argon>{_B64}+\${_B64}{{16,}})"
    rf"|\{{(?:SHA|SSHA|SHA256|SSHA256|SHA512|SSHA512|MD5|SMD5)\}}(?P<ldap>{_B64}{{20,}}={{0,2}})"
    rf")(?![\w$/.])",
    re.IGNORECASE,
)  # fmt: skip
_HASH_WORDS = ("$1$", "$apr1$", "$md5$", "$2a$", "$2b$", "$2x$", "$2y$", "$2$", "$5$", "$6$",
               "$y$", "$gy$", "$7$", "$argon2", "{sha", "{ssha", "{md5}", "{smd5}")  # fmt: skip

# A daemon's config directive that takes a password, at the start of its line (a `#` before it
# is a comment: redis.conf's own `# requirepass foobared`).
_DIRECTIVE = re.compile(
    r"(?im)^[ \t]*(?:requirepass|masterauth|auth_pass|rpcpassword|bindpw|rootpw)[ \t]+"
    r"[\"']?(?P<value>[^\s\"']{4,128})[\"']?[ \t]*$"
)
_DIRECTIVE_WORDS = ("requirepass", "masterauth", "auth_pass", "rpcpassword", "bindpw", "rootpw")
# A network device's configuration (Cisco IOS and the like): `enable secret 0 ...`,
# `username admin privilege 15 secret 0 ...`, `username x password 7 ...` (type 7 is a
# reversible encoding, 5, 8 and 9 hashes); HAProxy's `stats auth admin:...` and a userlist's
# `user x insecure-password ...`; net-snmp's `createUser name SHA "..." AES "..."`.
_DEVICE = re.compile(
    r"(?im)^[ \t]*(?:enable[ \t]+(?:password|secret)"
    r"|username[ \t]+\S+(?:[ \t]+privilege[ \t]+[0-9]+)?[ \t]+(?:password|secret))"
    r"(?:[ \t]+[0-9])?[ \t]+(?P<value>\S{4,128})[ \t]*$"
    r"|^[ \t]*stats[ \t]+auth[ \t]+[^\s:]+:(?P<stats>\S{4,128})[ \t]*$"
    r"|^[ \t]*user[ \t]+\S+[ \t]+insecure-password[ \t]+(?P<insecure>\S{4,128})"
    # An SNMPv3 user's passphrases (snmpd.conf's `createUser`), a community string.
    r"|^[ \t]*createUser[ \t]+(?:-e[ \t]+\S+[ \t]+)?\S+[ \t]+(?:MD5|SHA[\w-]*)[ \t]+"
    r"(?P<q1>\"?)(?P<auth>[^\s\"]{4,128})(?P=q1)"
    r"(?:[ \t]+(?:DES|AES[\w-]*)[ \t]+(?P<q2>\"?)(?P<privacy>[^\s\"]{4,128})(?P=q2))?"
    r"|^[ \t]*snmp-server[ \t]+community[ \t]+(?P<community>\S{4,128})"
    # A Redis ACL user's password, after `>` (users.acl, redis.conf, `ACL SETUSER`).
    r"|^[ \t]*(?:acl[ \t]+setuser|user)[ \t]+\S+(?:[ \t]+(?:on|off|reset|resetkeys|resetchannels"
    r"|nopass|[~&%+-]\S*))*[ \t]+>(?P<acl>\S{4,128})"
)
_DEVICE_VALUES = ("value", "stats", "insecure", "auth", "privacy", "community", "acl")
_DEVICE_WORDS = ("enable secret", "enable password", "privilege", "stats auth",
                 "insecure-password", "createuser", "snmp-server community", " on >", "setuser",
                 *(f"{word} {kind} " for word in ("password", "secret")
                   for kind in "05789"))  # fmt: skip
# A Terraform variable whose name says it holds a secret, and the default it is given.
_TF_VARIABLE = re.compile(
    r'variable[ \t]+"(?P<name>[\w-]*(?i:password|passwd|secret|token|api_?key|private_?key)[\w-]*)"'
    r"[ \t]*\{(?P<body>[^{}]{0,400}?)\}",  # `variable` in lower case, as HCL writes it
)
_TF_DEFAULT = re.compile(r'(?m)^[ \t]*default[ \t]*=[ \t]*"(?P<value>[^"\n]{4,200})"')
# WordPress's keys and salts, by their names, in `define()` or an environment file.
_WP_KEY = re.compile(
    r"(?i)(?<![A-Za-z])(?:WORDPRESS_|WP_)?(?:SECURE_AUTH|LOGGED_IN|AUTH|NONCE)_(?:KEY|SALT)"
    r"(?:['\"][ \t]*,[ \t]*|[ \t]*[=:][ \t]*)"
    r"(?P<quote>['\"])(?P<value>(?:(?!(?P=quote)).){16,200})(?P=quote)"
)
_WP_WORDS = ("auth_key", "auth_salt", "logged_in_key", "logged_in_salt", "nonce_key", "nonce_salt")
# An app password (Google's): four groups of four lower-case letters after a password's name,
# ending its line.
_APP_PASSWORD = re.compile(  # matched where its name starts
    r"(?im)(?:pass(?:word)?|passwd|pwd)[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?P<value>(?-i:[a-z]{4}(?P<sep>[ -]?)[a-z]{4}(?P=sep)[a-z]{4}(?P=sep)[a-z]{4}))"
    r"[\"']?[ \t]*$"
)


# A PEM block in base64: `LS0tLS1CRUdJTi` is "-----BEGIN " (lower case in the scan).
_PEM_IN_BASE64 = re.compile(r"(?<![A-Za-z0-9+/])LS0tLS1CRUdJTi[A-Za-z0-9+/]{16,}={0,2}")
_PRIVATE_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")


@register("encoded_private_key")
class EncodedPrivateKeyFinder:
    kinds = frozenset({"PRIVATE_KEY"})
    priority = SECRET_PRIORITY
    triggers = Triggers(words=("ls0tls1crudjti",))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        if PEM_IN_BASE64 not in view.text:
            return
        yield from matches(_PEM_IN_BASE64, view.text, "PRIVATE_KEY", _encodes_a_private_key)


def _encodes_a_private_key(run: str) -> bool:
    return _PRIVATE_PEM.match(pem_header_in_base64(run)) is not None


@register("password_hash")
class PasswordHashFinder:
    kinds = frozenset({"SECRET"})
    priority = SECRET_PRIORITY
    triggers = Triggers(words=_HASH_WORDS)
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if "$" not in text and "{" not in text:
            return
        for match in _HASHES.finditer(text):
            group = next(name for name, value in match.groupdict().items() if value is not None)
            yield Span(*match.span(group), "SECRET")


@register("config_file_secret")
class ConfigFileSecretFinder:
    kinds = frozenset({"SECRET"})
    priority = SECRET_PRIORITY
    # Shapes where a word alone is common in code ("variable", "pass"): the scan lets this
    # finder run only where a Terraform variable or an app password's shape is.
    triggers = Triggers(
        words=(*_DIRECTIVE_WORDS, *_DEVICE_WORDS, *_WP_WORDS),
        shapes=(
            rb'variable[ \t]+"',
            rb"(?:pass|pwd)[a-z]*[\"']?[ \t]*[:=][ \t]*[\"']?[a-z]{4}[ -]?[a-z]{4}[ -]?[a-z]{4}"
            rb"[ -]?[a-z]{4}",
        ),
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text, lower = view.text, view.lower
        if any(word in lower for word in _DIRECTIVE_WORDS):
            for match in _DIRECTIVE.finditer(text):
                if not placeholder(match.group("value")):
                    yield Span(*match.span("value"), "SECRET")
        if any(word in lower for word in _DEVICE_WORDS):
            for match in _DEVICE.finditer(text):
                for group in _DEVICE_VALUES:
                    value = match.group(group)
                    if value is not None and not _stands_in(value):
                        yield Span(*match.span(group), "SECRET")
        if "variable" in lower and "default" in lower:
            for block in _TF_VARIABLE.finditer(text):
                default = _TF_DEFAULT.search(block.group("body"))
                if default is not None and not _stands_in(default.group("value")):
                    offset = block.start("body")
                    start, end = default.span("value")
                    yield Span(offset + start, offset + end, "SECRET")
        if any(word in lower for word in _WP_WORDS):
            for match in _WP_KEY.finditer(text):
                value = match.group("value")
                # The sample file's `put your unique phrase here`: words, no digit or symbol.
                if any(not (char.isalpha() or char == " ") for char in value) and not _stands_in(
                    value
                ):
                    yield Span(*match.span("value"), "SECRET")
        for word in ("pass", "pwd"):
            at = lower.find(word)
            while at >= 0:
                match = _APP_PASSWORD.match(text, at) if _app_password_line(lower, at) else None
                at = lower.find(word, at + len(word))
                if match is None:
                    continue
                value = match.group("value")
                if not reads_as_words(value.replace(" ", "").replace("-", "")):
                    yield Span(*match.span("value"), "SECRET")


# A login given as an address and its password, `user@example.com:PASSWORD`: postfix's
# `sasl_passwd`, a combo list's lines. A remote path (`git@github.com:org/repo.git`,
# `deploy@host:~/src`) or a port (`:8080`) is none: the value ends its word, holds no `/` and
# is not digits alone.
_ADDRESS_AND_PASSWORD = re.compile(
    r"(?<![\w.%+-])[\w.%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}"
    r":(?P<value>[^\s:/'\"`<>,;]{4,128})(?=[ \t]*(?:$|\n))",
)
_PASSWORD_CHARACTERS = re.compile(r"[^A-Za-z]")


@register("address_and_password")
class AddressAndPasswordFinder:
    kinds = frozenset({"PASSWORD"})
    priority = SECRET_PRIORITY
    # The `@` (a literal: a class-led shape in the scan cost every text more than this finder
    # costs the few with an `@`); then, cheaply, an address's last label and the colon, and a
    # character a path or a port does not start with.
    triggers = Triggers(words=("@",))
    views = ALL_VIEWS
    _LABEL_AND_COLON = re.compile(r"\.[A-Za-z]{2,24}:[^\s/~0-9]")

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if self._LABEL_AND_COLON.search(text) is None:
            return
        for match in _ADDRESS_AND_PASSWORD.finditer(text):
            value = match.group("value")
            if value[0].isdigit() or value.startswith("~"):
                continue  # what the trigger turns away: a port, a home directory
            if _PASSWORD_CHARACTERS.search(value) is None or _stands_in(value):
                continue  # letters alone (`ana@host:main`, a branch), a placeholder
            yield Span(*match.span("value"), "PASSWORD")


def _app_password_line(lower: str, at: int) -> bool:
    """Cheaply, before the pattern: as much left on the name's line as a separator and four
    groups of four letters take (most of the texts that hold "pass" are code)."""
    line_end = lower.find("\n", at)
    left = (line_end if line_end >= 0 else len(lower)) - at
    return 20 <= left <= 40


def _stands_in(value: str) -> bool:
    """A placeholder or a template's reference, not a value (`${var.x}`, `<password>`)."""
    return placeholder(value) or "${" in value or "{{" in value
