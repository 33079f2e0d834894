"""Secrets: private key blocks, JWTs, passwords in URLs, connection strings and command lines,
values given to a secret-sounding name, and random tokens, quoted or not (tokens of known
formats are tokens.py's, sentences that state a secret stated_secrets.py's).

Every finder declares the triggers each of its finds needs (a long word, a `://`, a name), so
that the views without them never run it (bench/redaction_throughput.py measures each).
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sampling.redaction.checks import pem_header_in_base64
from sampling.redaction.context import (
    NO_VALUE,
    NamedBefore,
    annotated,
    code_not_a_secret,
    matches,
    next_prompt,
    placeholder,
    results_line,
    without_annotation,
    working_directory,
)
from sampling.redaction.finders import register
from sampling.redaction.randomness import (
    character_classes,
    looks_random,
    made_of_words,
    reads_as_words,
    unnamed_secret,
)
from sampling.redaction.spans import (
    ALL_VIEWS,
    SECRET_PRIORITY,
    TOKEN_WORD,
    USER_PRIORITY,
    Span,
    Text,
)
from sampling.redaction.triggers import Triggers, word

# Names of secrets in assignments (`db_pass = ...`, `API_KEY: ...`), as regex fragments.
SECRET_NAMES = (
    "api_?key", "auth_?key", "service_?key", "account_?key", "db_?key", "database_?key",
    "priv_?key", "private_?key", "client_?key", "secret_?key", "access_?key", "db_?pass",
    "database_?pass", "key_?pass", "password", "passwd", "passphrase", "pwd", "secret",
    "credentials?", "access_?token", "auth_?token", "token", "contraseña", "contrasena",
    "passwort", "mot_?de_?passe", "密码", "密钥", "秘钥", "令牌", "口令", "passcode",
    # Short names only as a word or a name's last part (`"pw": ...`, `SMTP_PASS=`), so that
    # "bypass" and "compass" stay names; a session's id is a login too (`sessionid=`, `sid=`).
    r"(?<![a-z])pass(?![a-z])", r"(?<![a-z])pw(?![a-z])", "session_?id", r"(?<![a-z])sess_?id",
    r"(?<![a-z])sid(?![a-z])",
    # A Wi-Fi key (`psk="..."` in wpa_supplicant.conf) and the variables that hand a password
    # to a command (`SSHPASS=... sshpass -e`).
    r"(?<![a-z])psk(?![a-z])", "sshpass",
    # The cookie Erlang nodes share (RabbitMQ's, CouchDB's): whoever holds it runs code there.
    "erlang_?cookie",
    # An LDAP client's bind password (sssd's `ldap_default_authtok`, `bind_pw`).
    "authtok", r"bind_?pw",
)  # fmt: skip
# Words that name a secret in prose: a random-looking token right after one is a secret
# ("my key is ...", "secret wJalr...", "令牌：...").
SECRET_NAMED = NamedBefore(
    ("secret", "token", "key", "password", "passwd", "pwd", "passphrase", "passcode", "credential",
     "api key", "api_key", "apikey", "auth", "bearer", "contraseña", "clave", "passwort",
     "mot de passe", "senha", "密钥", "秘钥", "令牌", "密码", "口令", "凭证", "凭据", "私钥",
     "访问码", "授权码", "パスワード", "トークン", "비밀번호"),
    gap=24,
)  # fmt: skip
# A token-shaped run: what a key, a password or an encoded secret is written with.
_TOKEN_RUN = re.compile(r"[A-Za-z0-9+/=_.~-]{12,}")
# A run that starts with a name and `=` (`api_key=...`); the name is group 1.
_ASSIGNED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(?=[^=])")
_DIGIT = re.compile(r"[0-9]")


@dataclass(frozen=True)
class PatternFinder:
    """One kind from compiled patterns, run only when the text holds one of `triggers` (lower
    case: looked for in the lower-cased text; else as written). The whole match is redacted, or
    with `value_group` its first group (the password of a URL, so that the user and host stay
    readable); with `is_value`, only what it says is a value."""

    kind: str
    patterns: tuple[re.Pattern[str], ...]
    words: tuple[str, ...]  # one of them is in every match (any case); () for none known
    name: str = ""  # its registry name, and the benchmark's
    value_group: bool = False
    needs: str = ""  # a character every match has: looked for first (one memchr)
    is_value: Callable[[str], bool] | None = None
    priority: int = USER_PRIORITY
    shapes: tuple[bytes, ...] = ()  # what a match holds where no word names it (Triggers)
    # Per pattern (in order), what a text must hold for it to run: lower-case words, one of
    # which every match holds, or a pattern of the lower case quick to search for (a literal
    # first): a regex that no literal starts costs ~100 µs on 2 KB, a substring test under one.
    gates: tuple[tuple[str, ...] | re.Pattern[str], ...] = ()
    views = ALL_VIEWS

    def __post_init__(self) -> None:
        if self.gates and len(self.gates) != len(self.patterns):
            raise ValueError(f"{self.name}: {len(self.gates)} gates for {len(self.patterns)} "
                             "patterns")  # fmt: skip

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset({self.kind})

    @property
    def triggers(self) -> Triggers | None:
        if not self.words and not self.shapes:
            return None
        return Triggers(words=tuple(w.lower() for w in self.words), shapes=self.shapes)

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if self.needs and self.needs not in text:
            return
        for number, pattern in enumerate(self.patterns):
            if self.gates and not _opens(self.gates[number], view):
                continue
            # The value is the group named `value`, else the first (where it took part).
            index = pattern.groupindex.get("value", 1) if self.value_group else 0
            for match in pattern.finditer(text):
                group = index if index and match.group(index) else 0
                start, end = match.span(group)
                if end > start and (self.is_value is None or self.is_value(text[start:end])):
                    yield Span(start, end, self.kind)


def _opens(gate: tuple[str, ...] | re.Pattern[str], view: Text) -> bool:
    """A gate's pattern is in the text, or one of its words: in the lower case, or as written
    where the word is in capitals (`PASS `, a protocol's command)."""
    if isinstance(gate, re.Pattern):
        return gate.search(view.lower) is not None
    return not gate or any(word in (view.text if word.isupper() else view.lower) for word in gate)


# Any run up to the last `@` before the host's path is the password (people do not
# percent-encode `@`, `#`, `&`, `!`, `$`: `postgres://admin:P@ss#w0rd!@db`), and the user may
# be empty (`redis://:PASSWORD@host`).
_URL_CREDENTIALS = re.compile(r"://[^\s:/?#@]*:([^\s/]+)@")


def _connection_string_value(value: str) -> bool:
    """Four characters or more, and not code (`password=getpass()`, `password=password`) nor a
    placeholder (`Password=${DB_PASSWORD}`)."""
    bare = value.rstrip("`'\").,;:")  # the sentence or the markup around it
    if bare.startswith(("(sensitive", "(known")):
        return False  # what a Terraform plan shows in a secret's place
    return len(value) >= 4 and not code_not_a_secret(value, "password") and not placeholder(bare)


# A value never starts with `&`: in a query string (`?password=&page=2`) it ends an empty one.
# After a space, `NAME=...` is the next field of an empty one (`PASSWORD=⏎HOST=db`).
# Not the shell's working directory (`PWD=/app`: context.working_directory, read here in the
# pattern, which this finder's value check does not see).
_CONNECTION_STRING = re.compile(
    r"(?!PWD=[/~])[Pp](?<![\w-][Pp])(?i:assword|wd)\s*=(?!=)(?:|\s+(?![A-Za-z_]\w*=(?!=)))"
    r"([^\s;'\"&][^\s;'\"]*)"
)
# Upper case, as the format has it. The fields before `P:` are read up to the next code's
# `WIFI:`, which is read from there (a line of thousands of `WIFI:` is read once, not again
# from each).
_WIFI = re.compile(r"WIFI:(?:[^\n:]|(?<!WIFI):)*?[:;]P:((?:\\.|[^;\\\n])+)")


def _options(command: str) -> str:
    r"""`command` (a regex), then its options on the same line (a pipe, `;` or `&` ends the
    command; a line wrapped with `\\` reads as one in the decoded view), up to a space or a tab
    before the option looked for. The options end where the command starts again: its options
    are read from there, once (a line of thousands of `mysql` is read in time proportional to
    its length, not to its square)."""
    return rf"{command}\b(?:(?!{command}\b)[^\n|;&])*?[ \t]"


# What stands between a flag and its value when people type it: spaces (any kind, as the
# normalised view has them), a quote, a colon or `=`, a line break after one (the decoded view
# joins the lines): `-p 'S3cr3t!'`, `-p: S3cr3t!`, `-p=S3cr3t!`.
_GAP = r"[ \t]*[\"']?[ \t]*[:=]?[ \t]*[\"']?[ \t]*"
# A flag's value: not a colon or `=` (the gap's), a quote or a backtick around it, nor the `\\`
# that wraps the command's line.
_VALUE = r"([^\s'\"`:=\\][^\s'\"`]*)"
# After `mysql -p` and a space the next word is a database, unless it cannot be one: it holds
# a symbol, or a digit and letters of both cases (`-p Tr0ub4dor`, `-p s3cr3t!`); a variable or
# another option (`$DB_PASS`, `-h`) is neither.
_NOT_A_DATABASE = (
    r"(?![$<{%-])(?=[^\s'\"`]*[^\w\s'\"`.,;()\[\]-]"
    r"|(?=[^\s'\"`]*[0-9])(?=[^\s'\"`]*[A-Z])[^\s'\"`]*[a-z])"
)
_MYSQL = re.compile(
    rf"{_options('(?:mysql|mysqldump|mysqladmin|mariadb)')}-p"
    rf"(?:[\"']?|[ \t]*[:=][ \t]*[\"']?|(?=[ \t\"']){_GAP}{_NOT_A_DATABASE}){_VALUE}"
)
_USER = re.compile(
    rf"{_options('(?:curl|wget)')}(?:-u|--user)[ \t=]+[\"']?[^\s:'\"]*:[ \t]?([^\s'\"]+)"
)
_SSHPASS = re.compile(rf"sshpass[ \t]+-p{_GAP}{_VALUE}")
# The commands whose short option takes a password, by option: `docker login -p`, `mongosh -p`,
# `redis-cli -a`, `sqlcmd -P`, `ldapsearch -w`, `unzip -P`, `openssl enc -k` (`docker run -p` is
# a port: the login subcommand is named).
_PASSWORD_OPTIONS = {
    "p": r"(?:docker|podman|nerdctl|buildah|skopeo|oras|helm(?:[ \t]+registry)?|az|cf|oc)"
         r"[ \t]+login|mongo(?:sh|dump|restore|export|import|stat|top)?|evil-winrm|crackmapexec"
         r"|nxc|netexec|rdesktop|rabbitmqadmin",
    "P": r"sqlcmd|bcp|osql|mosquitto_(?:pub|sub|rr)|unzip|zip|ipmitool",
    "a": r"redis-cli|keydb-cli|valkey-cli",
    "w": r"ldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn|exop)",
    "k": r"openssl",
}  # fmt: skip
# A word of the commands of each option above, which gates its pattern.
_OPTION_GATES = {
    "p": ("login", "mongo", "evil-winrm", "crackmapexec", "nxc", "netexec", "rdesktop",
          "rabbitmqadmin"),
    "P": ("sqlcmd", "bcp", "osql", "mosquitto", "zip", "ipmitool"),
    "a": ("-cli",),
    "w": ("ldap",),
    "k": ("openssl",),
}  # fmt: skip
_SHORT_OPTIONS = tuple(
    re.compile(
        _options(r"(?<![\w-])(?:" + commands + ")")
        + rf"-{option}(?:[ \t]+|[ \t]*=[ \t]*)[\"']?{_VALUE}"
    )
    for option, commands in _PASSWORD_OPTIONS.items()
)
# Long options with `pass` glued to what it is for (redis-server's `--requirepass X`).
_GLUED_PASS = ("requirepass", "masterauth", "masterpass", "adminpass", "rootpass", "dbpass",
               "authpass", "bindpass", "rpcpass")  # fmt: skip
# Long options that name a password, whatever the command (`--password X`, `--db-password=X`,
# `keytool -storepass X`); not a flag that only says where one comes from
# (`--password-stdin`, `--no-password`, `--ask-password`).
_LONG_OPTION = re.compile(
    r"(?<![\w-])(?:--(?!(?:no|ask|prompt|use|read|skip|show|hide|reset|change|require|empty"
    r"|random|generate)-)(?:[a-z]+-)?(?:password|passwd|pass|pwd)"
    rf"|--(?:{'|'.join(_GLUED_PASS)})(?:word)?"  # redis-server's
    r"|-(?:(?:src|dest)?(?:store|key)pass|password))"
    rf"(?:[ \t]+|[ \t]*=[ \t]*)[\"']?{_VALUE}"
)
# openssl's `-passout pass:X` (env:, file: and stdin say where it is, not what it is), and the
# archivers' glued `-pX` (`7z a -pS3cret x.7z`).
_OPENSSL_PASS = re.compile(r"-pass(?:in|out)?[ \t]+[\"']?pass:([^\s'\"`]+)")
_GLUED = re.compile(rf"{_options('(?:7z|7za|7zr|rar|unrar)')}-p([^\s'\"`-][^\s'\"`]*)")
# `smbclient -U user%PASSWORD`, `htpasswd -b [file] user PASSWORD`.
_PERCENT_USER = re.compile(
    rf"{_options('(?:smbclient|rpcclient|smbcacls|smbget|smbmap)')}(?:-U|--user(?:name)?)[ \t=]+"
    r"[\"']?[^\s%'\"]+%([^\s'\"]+)"
)
# Its options are a few short flags: a line of `htpasswd -Wj -Av` repeated is not read on to its
# end from each `htpasswd` (`-Avhtpasswd` is letters, as a flag's are).
_HTPASSWD = re.compile(
    r"htpasswd(?:[ \t]+-[A-Za-z]{1,12}){0,6}?[ \t]+-[A-Za-z]{0,12}b[A-Za-z]{0,12}"
    r"(?:[ \t]+-[A-Za-z]{1,12}){0,6}"
    rf"(?:[ \t]+[^\s-]\S*)?[ \t]+[^\s-]\S*[ \t]+[\"']?{_VALUE}"
)
# A value echoed into what reads a password from its input (`echo S3cret | docker login
# --password-stdin`, `| sudo -S`, `| passwd --stdin`, `| chpasswd`), or into a command's
# `login` that reads its token there (`echo $PAT | az devops login`, `| gh auth login
# --with-token`).
_PIPED = re.compile(
    r"(?:echo|printf)(?:[ \t]+-[a-zA-Z]+)*[ \t]+[\"']?([^\s'\"`|]+)[\"']?[ \t]*\|[^\n|]*?"
    r"(?:--password-stdin|--stdin|--with-token|sudo(?:[ \t]+-\w+)*?[ \t]+-S\b|chpasswd"
    r"|[ \t]login(?=[ \t]*(?:$|[\n;&|]|--?[a-z])))"
)
# A command that asks for its password (`mysql -u root -p` at the end of its line, `psql -W`),
# and the password typed on a line of its own after it, or after the prompt ("Enter password:").
_PROMPTED_COMMANDS = (
    r"(?:mysql|mysqldump|mysqladmin|mariadb|mongo|mongosh|psql|pg_dump|pg_dumpall|pg_restore"
    r"|createdb|dropdb|createuser|vacuumdb|reindexdb)"
)
_PROMPTED = re.compile(
    rf"{_options(_PROMPTED_COMMANDS)}(?:-p|-W|--password)[ \t]*\n"
    r"(?:[ \t]*\n)*(?:[^\n]{0,40}?(?i:password|passphrase|密码|口令|パスワード|비밀번호)"
    r"[^\n]{0,40}?[:：][ \t]*\n?){0,2}[ \t]*([^\s'\"`]{4,128})[ \t]*[\"'}\]),]*(?:\n|\Z)"
)
# A Kubernetes Secret's field decoded on a command's line (`kubectl get secret db -o
# jsonpath='{.data.password}' | base64 -d`): what it prints on the next line is the secret.
_DECODED_SECRET = re.compile(
    r"(?:kubectl|oc)[ \t][^\n]*?secrets?[ \t][^\n]*?\.data[^\n]*?\|[ \t]*base64[ \t]+"
    r"(?:-d|-D|--decode)\b[^\n]*\n[ \t]*([^\s'\"`]{4,128})[ \t]*(?:\n|\Z)"
)
# Words that follow an option in a sentence about it ("the --password option"), and what a
# command prints on the line after its prompt: none is a password.
_NOT_A_PASSWORD = frozenset({
    "option", "options", "flag", "flags", "argument", "parameter", "switch", "value", "field",
    "instead", "when", "with", "only", "must", "should", "will", "that", "this", "here", "also",
    "exit", "quit", "help", "clear", "logout", "welcome",
    # "WARNING! Using --password via the CLI is insecure." (docker login's own warning)
    "via", "on", "in", "is", "the", "for", "and", "or", "from",
})  # fmt: skip


# A client's prompt (`mysql>`, `postgres=#`, `>`), printed on the line after a login.
_PROMPT = re.compile(r"[a-z]*>|[\w-]+=[>#]|[#$]")


def _typed_password(value: str) -> bool:
    """A password given to a command: not a placeholder (`$DB_PASS`, `<password>`, `PASSWORD`
    in a usage line, with the sentence's comma after it), another option, a prompt (`mysql>`)
    or a word of a sentence about it."""
    value = value.rstrip(",.;:)")
    return not (
        not value  # a command's end after `-p` (`mysql -u root -p;`): it asks for one
        or placeholder(value)
        or value.startswith("-")
        or _PROMPT.fullmatch(value) is not None
        or value.lower() in _NOT_A_PASSWORD
        or re.fullmatch(r"[A-Z_]+", value) is not None
    )


def _not_a_placeholder(value: str) -> bool:
    return not placeholder(value)


# The passwords of a URL (`scheme://user:PASSWORD@`), of a key=value connection string
# (`Server=db;User Id=sa;Password=PASSWORD;`), of a Wi-Fi QR code (`WIFI:S:net;P:PASSWORD;;`),
# and of the command lines that take one: `mysql -pPASSWORD` (with a space, `-p` asks for it and
# the next word is a database), `curl -u user:PASSWORD`, `sshpass -p PASSWORD`, the options
# above, and the password typed after a command asked for it.
@register("url_credentials")
def url_credentials(config: object = None) -> PatternFinder:
    return PatternFinder("PASSWORD", (_URL_CREDENTIALS,), ("://",), "url_credentials",
                         value_group=True, needs="@", is_value=_not_a_placeholder,
                         priority=SECRET_PRIORITY)  # fmt: skip


@register("connection_string")
def connection_string(config: object = None) -> PatternFinder:
    return PatternFinder("PASSWORD", (_CONNECTION_STRING,), ("password", "pwd"),
                         "connection_string", value_group=True, needs="=",
                         is_value=_connection_string_value, priority=SECRET_PRIORITY)  # fmt: skip


@register("wifi_qr_code")
def wifi_qr_code(config: object = None) -> PatternFinder:
    return PatternFinder("PASSWORD", (_WIFI,), ("wifi:",), "wifi_qr_code", value_group=True,
                         needs="W", is_value=_not_a_placeholder,
                         priority=SECRET_PRIORITY)  # fmt: skip


# One of them is in every command line above (`-pass` in each long option).
_COMMAND_WORDS = (*_GLUED_PASS, "mysql", "mariadb", "curl", "wget", "sshpass", "login", "mongo",
                  "-cli", "sqlcmd", "bcp", "osql", "mosquitto", "zip", "ldap", "openssl",
                  "-pass", "-pwd", "storepass", "keypass", "7z", "rar", "smb", "rpcclient",
                  "htpasswd", "psql", "pg_", "createdb", "dropdb", "createuser", "vacuumdb",
                  "reindexdb", "evil-winrm", "crackmapexec", "nxc", "netexec", "rdesktop",
                  "rabbitmqadmin", "ipmitool", "base64")  # fmt: skip


@register("command_line_password")
def command_line_password(config: object = None) -> PatternFinder:
    return PatternFinder("PASSWORD",
                         (_MYSQL, _USER, _SSHPASS, *_SHORT_OPTIONS, _LONG_OPTION, _OPENSSL_PASS,
                          _GLUED, _PERCENT_USER, _HTPASSWD, _PROMPTED, _DECODED_SECRET),
                         _COMMAND_WORDS, "command_line_password", value_group=True, needs="-",
                         is_value=_typed_password, priority=SECRET_PRIORITY,
                         gates=(("mysql", "mariadb"), ("curl", "wget"), ("sshpass",),
                                *_OPTION_GATES.values(),
                                ("-pass", "-pwd", "storepass", "keypass", *_GLUED_PASS),
                                ("pass:",), ("7z", "rar"), ("smb", "rpcclient"), ("htpasswd",),
                                re.compile(r"-(?:p|w|-password)[ \t]*\n"),
                                ("base64",)))  # fmt: skip


# Tools that take a password without a dash before it: `sqlplus user/PASSWORD@db` (Oracle's
# tools), `lftp -u user,PASSWORD`, FreeRDP's and Windows' `/p:PASSWORD` (`cmdkey /pass:`,
# `wmic /password:`), `net user NAME PASSWORD /add`, `mysqladmin ... password NEW`.
_ORACLE_LOGIN = re.compile(
    r"(?<![\w-])(?:sqlplus|rman|expdp|impdp|sqlldr|dgmgrl)(?:[ \t]+-[A-Za-z]+)*[ \t]+[\"']?"
    r"[A-Za-z_][\w$#]*/([^\s@'\"/]+)(?=@|[\s'\"]|$)"
)
# Oracle's JDBC URL with the login in it: `jdbc:oracle:thin:scott/PASSWORD@//host:1521/db`.
_ORACLE_URL = re.compile(r"(?i:jdbc:oracle:(?:thin|oci8?|kprb)):[A-Za-z_][\w$#]*/([^\s@'\"/]+)@")
_LFTP = re.compile(_options(r"(?<![\w-])lftp") + r"-u[ \t]+[\"']?[^\s,'\"]+,([^\s'\"]+)")
_SLASH_OPTION = re.compile(
    _options(r"(?<![\w-])(?:[xw]freerdp3?|sdl-freerdp|cmdkey|wmic|schtasks)")
    + r"/(?i:p|pass|password|rp)(?::|[ \t]+)[\"']?([^\s'\"/][^\s'\"]*)"
)
_NET_USER = re.compile(
    r"(?<![\w-])net[ \t]+user[ \t]+[\"']?[^\s/'\"]+[\"']?[ \t]+[\"']?([^\s/*'\"][^\s'\"]*)"
    r"[\"']?[ \t]+/(?i:add|y)\b"
)
# `net use \\fs\share /user:CORP\ops PASSWORD`, and the password in its place after the
# share (`net use Z: \\fs\share PASSWORD /user:ops`; `*` asks for it), its `\\` read as one
# `\` in the decoded view.
# The options are read up to the next `net use`, and a `/user:` up to the next one in its
# word, where the rest of the word is read from (its end is the same, and from each it would
# be read again): `/user:/user:...` and a line of thousands of `net use` are read once.
_NET_USE_WORDS = r"(?<![\w-])(?i:net)[ \t]+(?i:use)\b"
_NET_USE = re.compile(
    rf"{_NET_USE_WORDS}(?:(?!{_NET_USE_WORDS})[^\n|;&])*?/(?i:user):(?=[^\s'\"])"
    r"(?:(?!/(?i:user):[^\s'\"])[^\s'\"|;&])*+(?:[|;&][^\s'\"]*+)?[ \t]+[\"']?([^\s/*'\"][^\s'\"]*)"
)
_NET_USE_SHARE = re.compile(
    r"(?<![\w-])(?i:net)[ \t]+(?i:use)(?:[ \t]+(?:[A-Za-z]:|\*))?[ \t]+\\\\?[^\s\\]+\\\S*[ \t]+"
    r"[\"']?([^\s/*'\"][^\s'\"]*)"
)
_MYSQLADMIN_PASSWORD = re.compile(
    _options(r"(?<![\w-])mysqladmin") + r"password[ \t]+[\"']?([^\s'\"`-][^\s'\"`]*)"
)


@register("tool_password")
def tool_password(config: object = None) -> PatternFinder:
    return PatternFinder("PASSWORD",
                         (_ORACLE_LOGIN, _ORACLE_URL, _LFTP, _SLASH_OPTION, _NET_USER,
                          _NET_USE, _NET_USE_SHARE, _MYSQLADMIN_PASSWORD),
                         ("sqlplus", "rman", "expdp", "impdp", "sqlldr", "dgmgrl", "jdbc:oracle",
                          "lftp", "freerdp", "cmdkey", "wmic", "schtasks", "net use", "net user",
                          "mysqladmin"),
                         "tool_password", value_group=True, is_value=_typed_password,
                         priority=SECRET_PRIORITY,
                         gates=(("sqlplus", "rman", "expdp", "impdp", "sqlldr", "dgmgrl"),
                                ("jdbc:oracle",), ("lftp",),
                                ("freerdp", "cmdkey", "wmic", "schtasks"),
                                ("net user",), ("net use",), ("net use",),
                                ("mysqladmin",)))  # fmt: skip


@register("piped_password")
def piped_password(config: object = None) -> PatternFinder:
    return PatternFinder("PASSWORD", (_PIPED,), ("echo", "printf"), "piped_password",
                         value_group=True, needs="|", is_value=_typed_password,
                         priority=SECRET_PRIORITY)  # fmt: skip


# A `.netrc` entry (`machine host login ana password PASSWORD`, on one line or several), and a
# `.pgpass` line (`host:port:database:user:PASSWORD`, the host a name, `*` or an IPv4 address,
# the port digits or `*`).
_NETRC = re.compile(
    r"(?:\bmachine[ \t]+\S+|\bdefault)(?:\s+(?:login|account|port|protocol)\s+\S+)*"
    rf"\s+password\s+[\"']?{_VALUE}"
)
_PGPASS = re.compile(
    r"(?:^|(?<=[\s\"'=]))(?:[A-Za-z*][A-Za-z0-9.*-]*|\d{1,3}(?:\.\d{1,3}){3}):(?:\d{1,5}|\*)"
    r":[A-Za-z_*][A-Za-z0-9_.*-]*:[A-Za-z_*][A-Za-z0-9_.*-]*:([^\s:]\S{3,})[ \t]*$",
    re.MULTILINE,
)


@register("credential_files")
def credential_files(config: object = None) -> PatternFinder:
    return PatternFinder("PASSWORD", (_NETRC, _PGPASS), ("password",), "credential_files",
                         value_group=True, is_value=_typed_password,
                         shapes=(rb":(?:[0-9]{1,5}|\*):[a-z0-9_.*-]{1,64}:[a-z0-9_.*-]{1,64}:",),
                         priority=SECRET_PRIORITY,
                         gates=(("machine", "default"),
                                re.compile(r":(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:")))  # fmt: skip


# A secret's name (`DB_PASSWORD`, `apiKey`, `client_secret`) where code or markup gives it
# apart from its value: an XML element (`<password>...</password>`), a call or an index with
# the name quoted (`define('DB_PASSWORD', '...')`, `os.environ["API_KEY"] = "..."`; not a
# tuple of names, `("kl_per_token", "logprobs")`), and a
# name/value pair (`- name: DB_PASSWORD` then `value: ...`, `<add key="SmtpPassword"
# value="..." />`).
# The secret's word ends the name or one of its parts (`DB_PASSWORD`, `secretKey`), not a
# longer word (`TOKENIZERS_PARALLELISM`, `max_new_tokens`).
# Each use reads the name's whole run of `[\w.-]` (a quote, a space, a comma, a line break or
# `>` comes next), so the word is looked for once, in a lookahead, then the run is read: a
# lazy run before the word retried each later occurrence of it up to the run's end
# (quadratic in a long run of `token_token_...`).
_NAMED_SECRET = (r"(?=[\w.-]*?(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey"
                 r"|access[_-]?key|private[_-]?key|credentials?|pwd|psk)"
                 r"(?-i:(?=[\W_]|[A-Z][a-z]|$)))[\w.-]*")  # fmt: skip
_XML_ELEMENT = re.compile(
    rf"(?i)<({_NAMED_SECRET})(?:[ \t][^>\n]*)?>(?P<value>[^<\n]{{4,200}})</\1>"
)
_QUOTED_NAME = (
    re.compile(  # a call: a literal first, which the regex engine skips to
        rf"(?i)\((?<=[\w.]\()[ \t]*[\"']{_NAMED_SECRET}[\"'][ \t]*,\s*"
        r"[\"'](?P<value>[^\"'\n]{4,200})[\"']"
    ),
    re.compile(  # an index
        rf"(?i)\[[ \t]*[\"']{_NAMED_SECRET}[\"'][ \t]*\][ \t]*=[ \t]*"
        r"[\"'](?P<value>[^\"'\n]{4,200})[\"']"
    ),
)
_NAME_THEN_VALUE = re.compile(  # `name` or `key` spelt out: a first letter to skip to
    rf"(?:[nN][aA][mM][eE]|[kK][eE][yY])[\"']?[ \t]*[:=][ \t]*[\"']?(?i:{_NAMED_SECRET})[\"']?"
    r"(?:[ \t]*,[ \t]*|[ \t]*\n[ \t]*|[ \t]+)"
    r"[\"']?(?i:value)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<value>[^\s\"',}]{4,200})"
)
# A private key written as its bytes (`"secretKey": [12, 201, ...]`, a Solana keypair file):
# 32 or 64 numbers after a key's name.
_KEY_BYTES = re.compile(
    r"(?i)(?:keypair|private[ _-]?key|secret[ _-]?key|privkey|seed)[^\n\[]{0,24}\[\s*"
    r"(?P<value>\d{1,3}(?:\s*,\s*\d{1,3}){31}(?:(?:\s*,\s*\d{1,3}){32})?)\s*\]"
)
# A password sent by the commands of a line protocol (`ftp> pass ...`, `PASS ...` to a POP3 or
# FTP server, `AUTH ...` to redis): the command in capitals at a line's start, or after a
# client's prompt.
_PROMPTED_PASS = re.compile(
    r"(?m)^[\w.-]*(?::\d+)?>[ \t]*(?i:pass|auth)[ \t]+(?P<value>\S{4,128})[ \t]*$"
)
_PROTOCOL_PASS = re.compile(r"(?m)^(?:PASS|AUTH)[ \t]+(?P<value>\S{4,128})[ \t]*$")
# A call without brackets that gives a secret's name its value, a line of a Groovy, Gradle or
# Ruby file (`storePassword 'andr0idStore!'` in a signing config, Chef's `password "..."`).
_NAME_SPACE_GATE = re.compile(r"(?:pass|pwd|secret|token|key|psk|cred)[a-z]{0,64}[ \t]+[\"']")
_NAME_SPACE_VALUE = re.compile(
    rf"(?im)^[ \t]*{_NAMED_SECRET}[ \t]+([\"'])(?P<value>[^\"'\n]{{4,200}})\1[ \t]*,?[ \t]*$"
)


# A user and password given as a pair after the word for them ("creds are admin/S3cr3t!",
# "username/password: ana:hunter2!").
_CREDENTIAL_PAIR = re.compile(
    r"(?i)(?<![a-z])(?:creds|credentials|user(?:name)?[ \t]*/[ \t]*pass(?:word)?)"
    r"(?:[ \t]+(?:are|is|were)(?![a-z]))?[ \t]*(?:[:=]|->|=>|→)?[ \t]*[^\s/:@]{2,32}[/:]"
    r"(?P<value>[^\s/]{3,63}[^\s/.,;!?)])(?![^\s/]*/)"
)


# What the lower case holds where one of the patterns above can match and no word says so:
# a quoted secret's name after `(` or `[`, `value:` or `value=`, a list of numbers, a prompt's
# `pass` or `auth`, a line that starts with one.
_SECRET_WORD = rb"(?:pass|pwd|secret|token|key|psk|cred)"
_NAMED_FIELD_SHAPES = (
    rb"[(\[][ \t]*[\"'][a-z0-9_.-]{0,40}" + _SECRET_WORD,
    rb"value[\"']?[ \t]*[:=]",
    rb"\[[ \t]*[0-9]{1,3}[ \t]*,[ \t]*[0-9]{1,3}[ \t]*,",
    rb"(?:>[ \t]*|^|\n)(?:pass|auth)[ \t]",
    _NAME_SPACE_GATE.pattern.encode(),
)


def _named_secret_value(value: str) -> bool:
    """A literal (quoted, or an element's text): anything but a placeholder, a mask or a flag."""
    return not placeholder(value) and len(set(value)) > 1 and value.lower() not in NO_VALUE


@register("named_secret_fields")
def named_secret_fields(config: object = None) -> PatternFinder:
    return PatternFinder("SECRET",
                         (_XML_ELEMENT, *_QUOTED_NAME, _NAME_THEN_VALUE, _CREDENTIAL_PAIR,
                          _KEY_BYTES, _PROMPTED_PASS, _PROTOCOL_PASS, _NAME_SPACE_VALUE),
                         ("</", "creds", "credentials", "/pass", "/ pass"),
                         "named_secret_fields", value_group=True, is_value=_named_secret_value,
                         shapes=_NAMED_FIELD_SHAPES,
                         priority=SECRET_PRIORITY,
                         gates=(("</",), ('("', "('", "( "), ('["', "['", "[ "),
                                re.compile(r"value[\"']?[ \t]*[:=]"),
                                re.compile(r"cred(?:s|entials)(?![a-z])|/[ \t]*pass"),
                                re.compile(r"\[\s*\d{1,3}\s*,\s*\d"),
                                re.compile(r">[ \t]*(?i:pass|auth)[ \t]"),
                                ("PASS ", "AUTH "), _NAME_SPACE_GATE))  # fmt: skip


def password_finders() -> list[PatternFinder]:
    return [url_credentials(), connection_string(), wifi_qr_code(), command_line_password()]


@register("session_cookie")
class SessionCookieFinder:
    """The value of a login's cookie in a request's `Cookie:` header or a response's
    `Set-Cookie:` (`session=.eJw...`, `JSESSIONID=...`, `connect.sid=s%3A...`,
    `__Secure-next-auth.session-token=...`): whoever holds it is logged in. A cookie named for
    something else (`theme=dark`, `_ga=GA1.2...`) stays."""

    kinds = frozenset({"SECRET"})
    priority = SECRET_PRIORITY
    triggers = Triggers(words=("cookie:", "cookie :"))
    views = ALL_VIEWS
    # The header's name and colon; then its cookies, `name=value` pairs up to the line's end.
    _HEADER = re.compile(r"(?<![\w-])(?:set-)?cookie[ \t]*:[ \t]*")
    _PAIR = re.compile(r"[ \t]*([^\s=;,\"']{1,64})=([^\s;,\"']*)[ \t]*;?")
    _LOGIN_NAME = re.compile(r"sess|(?<![a-z])sid(?![a-z])|auth|token|remember|logged[_-]?in|jwt")

    def find(self, view: Text) -> Iterator[Span]:
        text, lower = view.text, view.lower
        for header in self._HEADER.finditer(lower):
            position = header.end()
            while (pair := self._PAIR.match(text, position)) is not None and pair.end() > position:
                position = pair.end()
                value = pair.group(2)
                if (
                    self._LOGIN_NAME.search(pair.group(1).lower()) is not None
                    and len(value) >= 8
                    and len(set(value)) > 2
                    and not placeholder(value)
                ):
                    yield Span(pair.start(2), pair.end(2), "SECRET")


@register("jwt")
class JwtFinder:
    """Three base64url parts whose header and payload decode to JSON."""

    kinds = frozenset({"JWT"})
    priority = SECRET_PRIORITY
    triggers = Triggers(words=("eyj",))
    views = ALL_VIEWS
    # From a token's start only, its header's run up to its padding: a run of `eyJ` (or of
    # `=eyJ`) is read once, not again from each.
    _JWT = re.compile(
        r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_=-]+(?:\.[A-Za-z0-9_.+/=-]*)?"
    )

    def find(self, view: Text) -> Iterator[Span]:
        if not view.long_words or "eyJ" not in view.text:
            return
        yield from matches(self._JWT, view.text, "JWT", _is_jwt)


def _is_jwt(token: str) -> bool:
    for part in token.split(".")[:2]:
        try:
            padded = part.encode("ascii") + b"=" * (-len(part) % 4)
            json.loads(base64.urlsafe_b64decode(padded).decode("utf-8"))
        except (ValueError, UnicodeDecodeError, binascii.Error, RecursionError):
            return False  # RecursionError: JSON nested past the interpreter's limit
    return True


@register("private_key")
class PrivateKeyFinder:
    """A whole key block, header to footer (or to the end of a text cut inside the key); an
    OpenVPN static key (`<tls-auth>`, `<tls-crypt>`, `secret` files): a key both ends share."""

    kinds = frozenset({"PRIVATE_KEY"})
    priority = SECRET_PRIORITY
    triggers = Triggers(words=("private key", "putty-user-key", "static key"))
    views = ALL_VIEWS
    _BLOCK = re.compile(
        r"(?:-----)?BEGIN ([A-Z0-9 ]*)PRIVATE KEY((?: BLOCK)?)(?:-----)?"
        r".*?(?:-----END \1PRIVATE KEY\2-----|END \1PRIVATE KEY\2|\Z)",
        re.DOTALL,
    )
    _PUTTY = re.compile(r"PuTTY-User-Key-File-\d.*?(?:Private-MAC: *[0-9a-fA-F]+|\Z)", re.DOTALL)
    _STATIC = re.compile(
        r"-----BEGIN ([\w ]*Static key V\d)-----.*?(?:-----END \1-----|\Z)", re.DOTALL
    )
    _MARKERS = ((_BLOCK, "PRIVATE KEY"), (_PUTTY, "PuTTY-User-Key"), (_STATIC, "Static key"))

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        # The markers in capitals hold a "Y": one memchr turns most texts away.
        if "Y" not in text and "Static key" not in text:
            return
        for pattern in (pattern for pattern, marker in self._MARKERS if marker in text):
            yield from matches(pattern, text, "PRIVATE_KEY")


@register("keyword")
class KeywordFinder:
    """A value assigned to a secret-sounding name (`password=hunter2`, `API key: sk-123...`,
    `"client_secret": "..."`). After a colon without quotes the value must hold a digit or a
    symbol, so that "Secret: the plan" stays as it is.

    Assignments are rarer than names ("key" is in "monkey"): each `=` or `:` is found first,
    then the name before it and the value after it are matched there."""

    kinds = frozenset({"SECRET"})
    priority = SECRET_PRIORITY
    views = ALL_VIEWS
    _NAME = re.compile(rf"(?:{'|'.join(SECRET_NAMES)})([\w.-]{{0,20}})$")
    _VALUE = re.compile(r"[=>]?\s*(?:([\"'`])(.{4,200}?)\1|([^\s\"'`,;&<>。]{4,200}))")
    # Outside a query string an unquoted value runs on over `&` (`SECRET_KEY=x&9^g...`).
    _VALUE_WITH_AMPERSANDS = re.compile(r"[=>]?\s*([^\s\"'`,;<>。]{4,200})")
    # What a name says after the secret's word when it names something else about it: where
    # it is kept or how it is given (`secret_name: prod/db`, `password_file`, `secretKeyRef`),
    # or, with a number, its length, lifetime or count (`token_ttl = 3600`, `token_id = 50256`).
    _ABOUT_THE_SECRET = re.compile(
        r"(?:name|field|path|file|dir|env|var|variable|ref|type|label|prompt|hint|policy|header"
        r"|regex|pattern|mode|enabled|required|version|url|uri|endpoint|filter)$|^s$"
    )
    # An id names the secret, it is not it (`credentialsId: 'nexus-deploy'`, `"KeyId": "<uuid>"`,
    # `private_key_id`) ...
    _AN_ID = re.compile(r"[_.-]?ids?$")
    # ... but for the AppRole's `secret_id` and a cloud's access key id (`AWS_ACCESS_KEY_ID`):
    # half of a credential, a reviewer has no use for it.
    _IDS_THAT_ARE_SECRETS = ("secret", "access_key", "access-key", "accesskey")
    # A name inside an ARN (`arn:aws:secretsmanager:...:secret:prod/db`) or a template's
    # expression (`{{resolve:secretsmanager:prod/db:SecretString:password}}`): no assignment.
    _INSIDE = re.compile(r"(?:^|[^\w-])arn:[\w-]+:[^\s\"']*$|\{\{(?:(?!\}\}).)*$")
    # Any word of the name after the secret's (`TOKEN_EXPIRY_SECONDS`, `token_ttl_ms`,
    # `ACCESS_TOKEN_EXPIRE_MINUTES`, `password_max_age`).
    _COUNTED = re.compile(
        r"(?:^|[_.-])(?:(?:min|max)[_-]?)?(?:length|len|size|ttl|timeout|expiry|expires?"
        r"|expiration|lifetime|age|count|attempts|retries|rounds|bits|bytes|limit|ids?|index"
        r"|min|max|seconds|secs?|minutes|mins|hours|hrs|days|weeks|ms|millis|milliseconds"
        r"|interval|period|duration|validity|delay|window)(?=[_.-]|$)",
        re.IGNORECASE,
    )
    _NUMBER = re.compile(r"[0-9][0-9_.,]*(?:[smhdw]|ms|min)?")
    # Keywords that start an expression: what follows them is the value, in code.
    _BEFORE_AN_EXPRESSION = frozenset({"await", "new", "yield", "typeof", "lambda", "async"})
    # A literal in a wrapper that keeps it as a secret or gives it as a setting's default.
    _WRAPPED = re.compile(
        r"(?:pydantic\.|types\.)?(?:SecretStr|SecretBytes|Secret|SecureString|Field|str|String)"
        r"\([ \t]*(?:default[ \t]*=[ \t]*)?b?([\"'])([^\n\"']{4,200})\1"
    )
    # What ends the field before a name that a long run of characters leads up to: a URL's
    # query (`...?secret=`), another value (`text=SECRET_KEY=`). Base64 data has none of them.
    _FIELD_STARTS = frozenset("?&;=,")
    _TRIGGERS = ("key", "pass", "pw", "sid", "sess", "secret", "token", "contrase",
                 "credential", "passwort", "passe", "密码", "密钥", "秘钥", "令牌",
                 "口令", "psk", "erlang", "authtok")  # fmt: skip

    # Every name in SECRET_NAMES holds one of them.
    triggers = Triggers(words=_TRIGGERS)

    # With more operators than this, the whole text is searched for a trigger first; with fewer,
    # the name before each is matched directly: every name in the list holds a trigger.
    _FEW_OPERATORS = 8
    # Characters before a secret's word where the words of its name are read (`existing
    # secret`, `admin password key`).
    _LINE_REACH = 64

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if "=" not in text and ":" not in text:
            return
        operators = _positions(text, "=:")
        lower = view.lower
        if len(operators) > self._FEW_OPERATORS and not any(
            trigger in lower for trigger in self._TRIGGERS
        ):
            return
        for at in operators:
            if text[at] == ":" and annotated(text, at):
                continue  # `password: Optional[str] = "..."`: the value is after the `=`
            # The word just before the operator, without quotes or a closing bracket, nor the
            # type annotated between them (`val dbPassword: String = "..."`).
            name_end = without_annotation(lower, max(0, at - 48), at) if text[at] == "=" else at
            tail = lower[max(0, at - 48) : name_end].rstrip(" \t\"']")
            before = tail.rsplit(None, 1)
            name = self._NAME.search(before[-1][-32:]) if before else None
            if name is None:
                continue
            if self._INSIDE.search(before[-1]) is not None:
                continue
            an_id = self._AN_ID.fullmatch(name.group(1)) is not None
            if an_id and not name.group().startswith(self._IDS_THAT_ARE_SECRETS):
                continue
            # Where the name starts: its word ends where the tail does.
            name_start = max(0, at - 48) + len(tail) - len(before[-1][-32:]) + name.start()
            if results_line(text, name_start):
                continue  # `--- PASS: TestRateLimiter/burst_of_20 (0.02s)`: a test's result
            if text[at] == ":" and text[name_start - 2 : name_start] == "${":
                continue  # a shell's `${DB_PASSWORD:?set in CI}`, `${TOKEN:-}`: an operator
            in_a_query = lower[name_start - 1 : name_start] in ("?", "&", ";")
            if (
                len(before) == 1
                and at > 48
                and not lower[at - 49].isspace()
                and lower[name_start - 1 : name_start] not in self._FIELD_STARTS
            ):
                continue  # inside a run of 48 characters or more (base64 data), not a name
            if text[at] == "=" and (text[at + 1 : at + 2] == "=" or text[at - 1 : at] in "!<>="):
                continue  # a comparison: `==`, `!=`, `<=`
            value = self._VALUE.match(text, at + 1)
            if value is None:
                continue
            quoted = value.group(2) is not None
            group = 2 if quoted else 3
            if not quoted and not in_a_query:
                value = self._VALUE_WITH_AMPERSANDS.match(text, at + 1) or value
                group = 1 if value.re is self._VALUE_WITH_AMPERSANDS else 3
            found = value.group(group) if quoted else value.group(group).rstrip(")]}")
            start = value.start(group)
            wrapped = None if quoted else self._WRAPPED.match(text, start)
            if wrapped is not None:  # `SecretStr("...")`, `Field(default="...")`
                found, start, quoted = wrapped.group(2), wrapped.start(2), True
            if an_id and name.group().startswith("access") and not _KEY_ID.fullmatch(found):
                continue  # `access_key_id: Optional[str] = OMIT`: a constant, not a key's id
            if len(found) < 4:
                continue  # `password: str)`: a parameter's type
            if len(set(found)) < 2 or found.startswith(("<", "${", "{{", "%(")):
                continue  # `****`, a placeholder or a template, not a secret
            if "****" in found:
                continue  # a value shown masked: `gho_************`, `****ABCD`
            if found.lower() in NO_VALUE:
                continue  # `"pass": "true"`: a flag, not a secret
            if not quoted and text[at] != "=" and found.isalpha():
                continue
            if not quoted and found in self._BEFORE_AN_EXPRESSION:
                continue  # `const token = await getToken();`: code
            if not quoted and code_not_a_secret(found, before[-1].rsplit(".", 1)[-1]):
                continue
            if (
                not quoted
                and text[at] == "="
                and self._next_assignment(found, text[at + 1 : start])
            ):
                continue
            if working_directory(text, at, found):
                continue  # `PWD=/app`: a path
            if next_prompt(text, start):
                continue  # `New password: ⏎Re-type new password:`: the next line asks again
            # The name's line, as far back as the words of a name reach: a line of thousands of
            # `pass:` is read a stretch at a time, not again from its start at each one.
            line_start = max(lower.rfind("\n", 0, name_start) + 1, name_start - self._LINE_REACH)
            line = lower[line_start:at].strip(" \t\"'-*{[(")
            if self._not_a_value(found, quoted, name.group(1), line):
                continue
            end = start + len(found)
            if self._code(found, quoted, name, before[-1], text, end):
                continue
            yield Span(start, end, "SECRET")

    # An identifier (`word_tokenizer`), its name's leading underscores and owner aside.
    _IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
    _LAST_IDENTIFIER = re.compile(r"[A-Za-z_]\w*$")
    _DOTTED = re.compile(r"\.?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
    # What follows the left side of an expression or an assignment: `x = y / z`, `a = b(`.
    _OPERATOR_AFTER = re.compile(r"[ \t]*(?:[-+*/%@|^]=?[ \t]|[<>!=]=|=(?!=)|[(\[])")
    # A secret's word that runs on into another word (`tokenizer`, `tokenization`).
    _ANOTHER_WORD = re.compile(r"i[sz]")

    def _code(
        self, found: str, quoted: bool, name: re.Match[str], word: str, text: str, end: int
    ) -> bool:
        """Code, not a secret: the name's word runs on into another (`slow_tokenizer_class =
        X`); a variable passed on (`token=token)`, `_x = x`) or that holds the secret's word
        (`tokens = tokens_per_expert_sum`, `"image_token_id": "image_token_index"`); the left
        side of the next expression (`if x.token_healing:` / `input_ids = f(...)`); a dotted
        path of words (`"embed_tokens.weight": "shared.weight"`)."""
        suffix = name.group(1)
        if self._ANOTHER_WORD.match(suffix) and "token" in name.group():
            return True
        if quoted:
            if "." in found and self._DOTTED.fullmatch(found) and _names(found.split(".")):
                return True
            return bool(suffix) and self._holds_the_name(found, name)
        core = re.split(r"[)\]]", found, maxsplit=1)[0]  # `False)[0`, `token).kill(`
        if core != found and (
            core.lower() in NO_VALUE or code_not_a_secret(core, self._last_identifier(word))
        ):
            return True
        if not self._IDENTIFIER.fullmatch(core):
            return False
        passed_on = core.lstrip("_").lower() == self._last_identifier(word).lstrip("_")
        return (
            passed_on
            or self._holds_the_name(core, name)
            or (
                core == found
                and not any(char.isdigit() for char in core)  # `api_key=abc123 [prod]` is one
                and self._OPERATOR_AFTER.match(text, end) is not None
            )
        )

    def _last_identifier(self, word: str) -> str:
        last = self._LAST_IDENTIFIER.search(word)
        return last.group() if last else word

    @staticmethod
    def _holds_the_name(value: str, name: re.Match[str]) -> bool:
        """An identifier in words (snake_case or camelCase) that holds the secret's word itself:
        a variable, not its value."""
        word = name.group()[: len(name.group()) - len(name.group(1))]
        lower = value.lower()
        parts = [part for part in re.split(r"_|(?<=[a-z])(?=[A-Z])", value) if part]
        # Words and a short number at most (`dep_token0`): `ghx_token_9f8a7b6c` is a token.
        in_words = len(parts) > 1 and all(re.fullmatch(r"[A-Za-z]+\d{0,2}|\d{1,2}", part)
                                          for part in parts)  # fmt: skip
        return in_words and word.replace("_", "") in lower.replace("_", "")

    _ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(?!=)")

    def _next_assignment(self, found: str, between: str) -> bool:
        """An empty value, then the next line's or field's assignment (`SECRET_KEY=⏎
        ALLOWED_HOSTS=localhost`, `A= B=c cmd`): a name of words and `=` after white space."""
        assignment = self._ASSIGNMENT.match(found)
        return (
            assignment is not None
            and any(char.isspace() for char in between)
            and made_of_words(assignment.group(1))
        )

    # A name that points at a secret kept elsewhere (a Helm chart's `existingSecret`,
    # `passwordSecretKey`: the Kubernetes Secret and the key in it), or the shell's working
    # directory (`PWD=/app`).
    _REFERENCE = re.compile(
        r"(?:^|[^a-z])(?:existing[ _-]?secret[\w ]*"
        r"|[\w ]*(?:password|token)[ _-]?secret[ _-]?(?:key|name))$"
    )
    # The key of a Secret that holds the password (`adminPasswordKey: postgres-password`), where
    # the value is a name of words.
    _KEY_OF_A_PASSWORD = re.compile(r"[\w ]*(?:password|passwd)[ _-]?keys?$")
    # A tokenizer's special token (`unk_token="[UNK]"`, `sep_token="[SEP]"`): a word in brackets,
    # as `<unk>` and `<|endoftext|>` are (left before, as markup).
    _SPECIAL_TOKEN = re.compile(r"\[[A-Za-z_]{1,20}\]")
    # An attribute of an object named for a secret (`token.markup = marker`, a syntax
    # highlighter's `Token.Keyword: "bold"`): its value is the attribute's, a secret only where
    # it looks random; but for the attributes that hold the secret itself (`token.value`).
    _ATTRIBUTE = re.compile(r"\.([a-z_][a-z0-9_]*)")
    _THE_SECRET_ITSELF = frozenset({"value", "secret", "key", "token", "password", "passwd",
                                    "pwd", "pass", "passphrase", "credential", "credentials",
                                    "auth", "raw", "plain"})  # fmt: skip
    _WORDS = re.compile(r"[A-Za-z]+(?:[._-][A-Za-z]+)*")
    _A_FILE = re.compile(
        r"\.(?:py|pyi|ipynb|go|js|jsx|mjs|ts|tsx|rb|java|kt|rs|c|cc|cpp|h|hpp|cs|php|swift"
        r"|scala|json|ya?ml|toml|ini|cfg|conf|txt|md|rst|sh|log|lock|sql|csv|xml|html?)$"
    )
    _FETCH_MODES = frozenset({"include", "omit", "same-origin"})

    def _not_a_value(
        self, found: str, quoted: bool, after_the_name: str, name_before: str = ""
    ) -> bool:
        """A placeholder (`$DB_PASS`, `your-api-key`), the key of the next line's mapping
        (`secretKeyRef:`), a list (`token_ids = [101, ...`), or a fact about the secret that a
        name says it is (`token_ttl = 3600`, `secret_name: prod/db`)."""
        if placeholder(found) or self._REFERENCE.search(name_before) is not None:
            return True
        if self._KEY_OF_A_PASSWORD.search(name_before) and self._WORDS.fullmatch(found):
            return True
        if not quoted and (found.endswith(":") or found.startswith(("[", "(", "{"))):
            return True
        if self._SPECIAL_TOKEN.fullmatch(found) is not None:
            return True
        attribute = self._ATTRIBUTE.match(after_the_name)
        if (
            attribute is not None
            and attribute.group(1) not in self._THE_SECRET_ITSELF
            and not looks_random(found)
        ):
            return True
        if self._ABOUT_THE_SECRET.search(after_the_name) is not None:
            return True
        if self._A_FILE.search(after_the_name) is not None:
            return True  # `tests/test_tokens.py::test_x`: a file's name, then its test's
        if quoted and found in self._FETCH_MODES:
            return True  # `credentials: 'include'`: how a browser's fetch sends cookies
        return self._COUNTED.search(after_the_name) is not None and (
            self._NUMBER.fullmatch(found) is not None
        )


# A cloud access key's id: 16 letters and digits or more, a digit among them (`AKIA...`).
_KEY_ID = re.compile(r"(?=[A-Za-z]*[0-9])[A-Za-z0-9]{16,128}")


def _positions(text: str, chars: str) -> list[int]:
    """Where each of `chars` is in `text`, in order: str.find skips in C at a fraction of what a
    regex character class costs a character."""
    found = []
    for char in chars:
        at = text.find(char)
        while at >= 0:
            found.append(at)
            at = text.find(char, at + 1)
    return sorted(found)


_DIGIT_RUNS = re.compile(r"[0-9]+")


def _short_token(value: str) -> bool:
    """A run under 20 characters that can be a token when a secret's name precedes it: letters
    and a digit (not a word, a number or a date), in one piece (not a dotted name, a version or
    `gpt-4o-2024-08-06`), and not an identifier of words (`UserProfileCardV2`)."""
    letters = sum(char.isalpha() for char in value)
    if letters < 2 or not any(char.isdigit() for char in value):
        return False
    if sum(value.count(separator) for separator in "._-=/+~") > 1:
        return False
    # Three digits or more spread through it: a token that happens to hold syllables
    # (`9pfi2Cn61IMyos4`), where an identifier of words has a version number at most.
    digit_runs = len(_DIGIT_RUNS.findall(value))
    return digit_runs >= 3 or not reads_as_words(value)


# A file's name: its extension, one of documents, data, images, archives and code.
_A_FILE = re.compile(
    r".+\.(?:pdf|docx?|xlsx?|pptx?|odt|ods|csv|tsv|txt|rtf|md|json|ya?ml|toml|xml|html?|log"
    r"|png|jpe?g|gif|webp|svg|zip|tar|gz|tgz|7z|rar|py|js|ts|go|rs|java|rb|sh|ipynb)",
    re.IGNORECASE,
)


@register("random_tokens")
class RandomTokenFinder:
    """Random-looking tokens that no format rule knows, in the text's words of 12 characters or
    more:
    - right after a word that names a secret ("my key is ...", "secret wJalr...", "密钥是..."):
      a secret (SECRET) when it looks random, hex included, from 12 characters;
    - anywhere else (HIGH_ENTROPY): 20 to 128 characters of letters and digits in both cases,
      near the entropy of a random string of its length. Hex alone is a hash, a UUID or a git
      SHA, not a secret; longer runs are encoded data (images, archives) in code answers, and
      a run inside a path, a URL or an expression (`a/b/c`, `x.y.z`) is left alone too."""

    kinds = frozenset({"SECRET", "HIGH_ENTROPY"})
    priority = SECRET_PRIORITY
    views = ALL_VIEWS
    BARE_LENGTH = (20, 128)
    triggers = Triggers(facts=(word(TOKEN_WORD),))  # the words it reads
    _DATA_URI = re.compile(r"base64,\s*$|data:[\w/+.-]*;?$")

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        blocks = (
            [block.span() for block in self._PUBLIC_BLOCK.finditer(text)]
            if "-----BEGIN " in text
            else []
        )
        for word_start, word_end in view.token_words:
            if word_end - word_start < self.BARE_LENGTH[0] and not _DIGIT.search(
                text, word_start, word_end
            ):
                continue  # a short run needs a digit (most words of prose end here)
            for match in _TOKEN_RUN.finditer(text, word_start, word_end):
                start, end = match.span()
                # Trailing sentence punctuation is not part of a token; `=` padding is.
                while end > start and text[end - 1] in ".-_~":
                    end -= 1
                # `api_key=Zq8v...`: the value after its name, so that the reviewer reads
                # the name; the whole run where the value alone is not found.
                named = _ASSIGNED.match(text, start, end)
                assigned = named is not None and made_of_words(named.group(1))
                if assigned:
                    span = self._token(text, named.end(), end, blocks)
                    if span is not None:
                        yield span
                        continue
                # A whole assignment whose value is none (`PASSWORD_MIN_LENGTH=12` under
                # `TOKEN_TTL=3600`, `HOSTNAME=api-7d9f8c6b5-x2k9p`) is no secret: its name's
                # capitals and underscores are no value's randomness.
                if assigned:
                    continue
                span = self._token(text, start, end, blocks)
                if span is not None:
                    yield span

    def _token(
        self,
        text: str,
        start: int,
        end: int,
        blocks: list[tuple[int, int]],
        bare_only: bool = False,
    ) -> Span | None:
        """text[start:end] as a secret (named before it) or a bare random token, or None."""
        value = text[start:end]
        if len(value) < 12 or self._public(text, start, value, blocks):
            return None
        if text[start - 1 : start] == "<" and text[end : end + 1] == ">":
            return None  # a placeholder's words in angle brackets (`<random-32-byte-string>`)
        if _A_FILE.fullmatch(value):
            return None  # a file's name (`1099-DIV_template.pdf`), not a token
        if value.startswith(("bh=", "b=")) and _signed_mail(text):
            return None  # a DKIM signature's body hash and signature: sent with every e-mail
        if len(value) < self.BARE_LENGTH[0] and not _short_token(value):
            return None
        if (
            not bare_only
            and SECRET_NAMED.before(text, start)
            and self._named_secret(value)
            and not self._given_already(text, start, value)
            and not self._named_otherwise(text, start)
        ):
            return Span(start, end, "SECRET")
        if self._bare_secret(text, start, end, value):
            return Span(start, end, "HIGH_ENTROPY")
        return None

    # What is published, not kept: a hash given with its algorithm (`sha512-...` in a lock
    # file's integrity, `sha256:...`), an SSH public key (`ssh-ed25519 AAAA...`), the body of a
    # public key, a certificate or a signature.
    _HASH = re.compile(r"(?:sha(?:1|224|256|384|512)|sha3-(?:224|256|384|512)|md5|blake2[bs]?)[-:]")
    _SSH_KEY_TYPE = re.compile(r"(?:ssh-[\w@.-]+|ecdsa-sha2-nistp\d+)[ \t]+$")
    _PUBLIC_BLOCK = re.compile(
        r"-----BEGIN ([A-Z0-9 ]*(?:PUBLIC KEY|CERTIFICATE|CERTIFICATE REQUEST|SIGNATURE"
        r"|PGP MESSAGE)(?: BLOCK)?)-----.*?(?:-----END \1-----|\Z)",
        re.DOTALL,
    )

    _DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:[.=][A-Za-z_]\w*)+")
    _DOTTED_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
    # What a base64 run starts with once decoded (checks.pem_header_in_base64): a certificate's or a
    # public key's in a kubeconfig's `certificate-authority-data` or a Secret's `tls.crt`.
    _PUBLIC_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]*(?:CERTIFICATE|PUBLIC KEY)")
    # What else is published or names a thing: a GnuPG key's algorithm and id
    # (`ed25519/3AA5C34371567BD2`), a program and its version (`Docker-Client/24.0.7`), an
    # absolute path under a system's folders (`/tmp/ssh-XXXXkq7Lm2/agent.1234`).
    _NAMED_THING = re.compile(
        r"(?:rsa|dsa|elg|ed|cv|nistp|brainpoolp|secp)[0-9]+[a-z0-9]*/(?:[0-9A-F]{8}){1,5}"
        r"|[A-Za-z][\w.+-]*/v?[0-9]+(?:\.[0-9]+)+[\w.+-]*"
        r"|/(?:tmp|run|var|home|usr|etc|opt|srv|mnt|proc|sys|dev|root|Users|private|Library)(?:/[\w.@+-]+)+/?"
    )
    # An OpenPGP key's fingerprint or id under its name (`GPG_KEY=7169605F...` in an image's
    # environment: the key its downloads are checked against), a key's fingerprint after its
    # hash's name (`SHA256:...` in `ssh-keygen -l`).
    _FINGERPRINT_NAME = re.compile(
        r"(?:gpg|pgp)[\w -]*(?:key|fingerprint)s?[\"']?[ \t]*[=:][ \t]*[\"']?$", re.I
    )
    _HEX_ID = re.compile(r"(?:[0-9A-F]{8}){2,5}|(?:[0-9a-f]{8}){2,5}")
    _HASH_BEFORE = re.compile(r"(?:sha(?:1|256|384|512)|md5):$", re.I)
    # A hashed host of known_hosts: `|1|salt|hash`.
    _HASHED_HOST = re.compile(r"\|1\|(?:[A-Za-z0-9+/]+=*\|)?$")

    def _named_secret(self, value: str) -> bool:
        """Random after a secret's name, and neither a placeholder or a path (`/run/secrets/db`)
        nor names of words (`secrets.GITHUB_TOKEN`, `localStorage.getItem`,
        `add_special_tokens=False`)."""
        if placeholder(value) or not looks_random(_unprefixed(value)):
            return False
        if self._FILE_NAME.fullmatch(value) is not None:
            return False
        value = value.removeprefix(".")  # `.Values.db.secretName` in a Helm template
        if self._DOTTED_NAME.fullmatch(value) is None:
            return True
        return not _names(re.split(r"[.=]", value))

    # A file's name (`elastic-certificates.p12`, `ca-bundle.pem`): where a secret is kept.
    _FILE_NAME = re.compile(
        r"[\w-]+(?:\.[\w-]+)*\.(?:p12|pfx|jks|keystore|truststore|pem|key|crt|cer|der|kdbx|gpg"
        r"|asc|json|ya?ml|txt|conf|cfg|ini|env|properties)"
    )

    # What stands for a value (`$API_TOKEN`, `${TOKEN}`, `<token>`, `{{ secrets.X }}`).
    _STANDS_IN = re.compile(
        r"\$\{?[A-Za-z_]\w*\}?|\$\([^)\n]*\)|<[^<>\s]+>|\{\{[^}\n]*\}\}|%\(\w+\)s"
    )

    # The name just before a value (`KeyId": "`, `keystore.path: `).
    _LAST_NAME = re.compile(r"([A-Za-z][\w.-]*)[\"']?[ \t]*[:=][ \t]*[\"']?$")
    # A secret's id, or where it is kept: `KeyId`, `private_key_id`, `keystore.path`,
    # `token_file`; not a session's id (`sid`, `sessionid`) nor the AppRole's `secret_id`.
    _ABOUT_A_SECRET = re.compile(r"(?:[_.-]?ids?|path|file(?:name)?|dir)$")
    _OPEN_TEMPLATE = re.compile(r"\{\{[^}\n]*$")
    _IS_AN_ID_SECRET = re.compile(r"(?:^|[_.-])(?:sid|sess(?:ion)?[_-]?id|secret[_-]?id)$")

    def _named_otherwise(self, text: str, start: int) -> bool:
        """The name before the value says it is a secret's id or where one is kept, or the
        value is a template's expression (`{{ .Values.db.secretName }}`)."""
        if self._OPEN_TEMPLATE.search(text, max(0, start - 48), start) is not None:
            return True
        last = self._LAST_NAME.search(text, max(0, start - 48), start)
        if last is None:
            return False
        name = last.group(1).lower()
        return (
            self._ABOUT_A_SECRET.search(name) is not None
            and self._IS_AN_ID_SECRET.search(name) is None
        )

    def _given_already(self, text: str, start: int, value: str) -> bool:
        """The secret's name has its value before this run: a placeholder, with no other
        name of a secret after it (`Bearer $API_TOKEN https://...`); or the run is a URL's
        (`//host/path` after its scheme)."""
        if value.startswith("//") and text[start - 1 : start] == ":":
            return True
        line_start = text.rfind("\n", 0, start) + 1
        window = text[max(line_start, start - 64) : start]
        last = None
        for last in self._STANDS_IN.finditer(window):  # noqa: B007 - the last one
            pass
        return last is not None and not SECRET_NAMED.ends(window[last.end() :])

    # A public key under its name (WireGuard's `PublicKey = ...`, `wg show`'s `public key:`).
    _PUBLIC_KEY_NAME = re.compile(
        r"(?:public|pub)[ _.-]?keys?[\"']?[ \t]*[:=][ \t]*[\"']?$", re.IGNORECASE
    )
    # A value encrypted for a CI or a stack (Travis's and Pulumi's `secure: ...`): ciphertext
    # that only the service's own key opens.
    _ENCRYPTED = re.compile(r"(?<![\w-])secure[\"']?[ \t]*:[ \t]*[\"']?$")
    # A cloud resource's id: a type's word and 8 or 17 hex digits (`vpc-0e9801d129a3b4c5d`,
    # `i-0abcd1234ef567890`, `sg-1a2b3c4d`).
    _RESOURCE_ID = re.compile(r"[a-z]{1,16}-(?:[0-9a-f]{8}|[0-9a-f]{17})")

    def _public(self, text: str, start: int, value: str, blocks: list[tuple[int, int]]) -> bool:
        if self._HASH.match(value) is not None or self._NAMED_THING.fullmatch(value) is not None:
            return True
        if self._PUBLIC_KEY_NAME.search(text, max(0, start - 24), start) is not None:
            return True
        if self._ENCRYPTED.search(text, max(0, start - 16), start) is not None:
            return True
        if self._PUBLIC_PEM.match(pem_header_in_base64(value)) is not None:
            return True
        if text[start - 1 : start] == "|" and self._HASHED_HOST.search(
            text, max(0, start - 64), start
        ):
            return True
        if self._HASH_BEFORE.search(text, max(0, start - 7), start):
            return True
        if self._HEX_ID.fullmatch(value) and self._FINGERPRINT_NAME.search(
            text, max(0, start - 40), start
        ):
            return True
        if value.startswith("AAAA") and self._SSH_KEY_TYPE.search(text, max(0, start - 48), start):
            return True
        return any(block_start < start < block_end for block_start, block_end in blocks)

    def _bare_secret(self, text: str, start: int, end: int, value: str) -> bool:
        low, high = self.BARE_LENGTH
        if not low <= len(value) <= high or character_classes(value) < 3:
            return False
        # Part of a path, a URL or a dotted name: `/`, `\` or `.` right outside the run.
        outside = text[start - 1 : start] + text[end : end + 1]
        if any(char in "/\\.:" for char in outside) or value.count("/") > 2:
            return False
        if self._DATA_URI.search(text, max(0, start - 40), start):
            return False
        # A dotted name in code (`torch.nn.BatchNorm2d`, `OpenSSL.crypto.FILETYPE_ASN1`): a
        # random key has no `.` between identifiers.
        if self._DOTTED_PATH.fullmatch(value.lstrip("~+")) is not None:
            return False
        return unnamed_secret(value)


def _names(parts: list[str]) -> bool:
    """Every part of a dotted path an identifier of words (`embed_tokens`, `getItem`)."""
    return all(made_of_words(part) or reads_as_words(part) for part in parts if part)


def _unprefixed(value: str) -> str:
    """A key without the `0x` that writes it as hex (`0x4c0883a6...`, an Ethereum key)."""
    return value[2:] if value.startswith(("0x", "0X")) else value


@register("quoted_entropy")
class QuotedEntropyFinder:
    """Quoted strings of high entropy (`"Zm9vYmFy..."`): what code carries a secret in. Hex in
    quotes is a hash as often as a key: only named hex (KeywordFinder) is a secret."""

    kinds = frozenset({"HIGH_ENTROPY"})
    priority = SECRET_PRIORITY
    triggers = Triggers(shapes=(rb"[\"'][a-z0-9+/\\_=\-]{20}",))  # _QUOTED, in lower case
    views = ALL_VIEWS
    _QUOTED = re.compile(r"(['\"])([A-Za-z0-9+/\\_=-]{20,})\1")
    MAX_LENGTH = 128  # longer: encoded data in a code answer

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if ('"' not in text and "'" not in text) or not view.long_words:
            return
        for match in self._QUOTED.finditer(text):
            value = match.group(2)
            if RandomTokenFinder._HASH.match(value) is not None:
                continue  # a hash given with its algorithm (a lock file's `integrity`)
            if RandomTokenFinder._RESOURCE_ID.fullmatch(value) is not None:
                continue  # `"vpc-0e9801d129a3b4c5d"`: a cloud resource's id
            start = match.start(2)
            if RandomTokenFinder._ENCRYPTED.search(text, max(0, start - 17), start):
                continue  # `secure: "..."`: ciphertext
            if len(value) <= self.MAX_LENGTH and unnamed_secret(value):
                yield Span(match.start(2), match.end(2), "HIGH_ENTROPY")


_SIGNED_MAIL = re.compile(r"(?i)(?:DKIM|ARC-Message)-Signature:")


@functools.lru_cache(maxsize=1)
def _signed_mail(text: str) -> bool:
    """The text holds a mail's DKIM or ARC signature: asked once a text (a text's hash is
    kept with it), not again for each `b=` token in it. The last text only is kept: its tokens
    are read one after another."""
    return _SIGNED_MAIL.search(text) is not None
