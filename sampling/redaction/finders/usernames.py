"""A person's login or account name: after a word that names it in many languages ("username:
CoolDino_Max2015", "el usuario es marianaq_77", "Benutzername: k.schulze", "用户名：", "아이디:"),
and where credentials' syntax puts it: a URL's userinfo (`https://USER:token@host`), an ssh
config's `User`, a `.pgpass` line (`host:port:db:USER:password`), `ssh USER@host`, a command's
`-u`/`-a USER:password` and `net use ... /user:DOMAIN\\USER`; a chat's speakers by handle; the
account in a social network's profile URL (`linkedin.com/in/USER`).

A generic account (root, admin, postgres, ubuntu, git, ...), a placeholder (`<user>`, `$USER`,
`your_username`) and code (`request.form['username']`, `os.getenv(...)`, `args.username`,
`None`) are no one's name; after a sentence's verb ("the username is required") a plain word
of the language is none either."""

from __future__ import annotations

import re
from collections.abc import Iterator

from sampling.redaction.context import COPULAS, NO_VALUE, either, placeholder, speaks_in_a_chat
from sampling.redaction.finders import register
from sampling.redaction.finders.seed_phrases import WORDS
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

# A message's sender, written before what they said: the colon after the handle is theirs.
_SENDER_LABELS = ("message from", "mensaje de", "mensagem de", "messaggio da", "bericht van",
                  "nachricht von")  # fmt: skip
# The words that name a login, lower case: each is looked for with str.find, then read there.
_ASCII_LABELS = (
    "username", "user name", "user-name", "userid", "user id", "login", "login name",
    "login id", "logon name", "screen name", "screenname", "benutzername", "benutzer",
    "anmeldename", "nom d'utilisateur", "nom d’utilisateur", "identifiant", "utilisateur",
    "usuario", "nombre de usuario", "nome de usuario", "utilizador", "nome de utilizador",
    "nome utente", "utente", "gebruikersnaam", "gebruiker", "kullanici adi", "brukernavn",
    "brugernavn", "nama pengguna", "nume de utilizator", "ten dang nhap", "account name",
    "kasutajanimi", "kasutajatunnus", "notandanafn", "korisnicko ime", "emri i perdoruesit",
    "jina la mtumiaji", "lietotajvards", "vartotojas", "vartotojo vardas", "ansible_user",
    "ansible_ssh_user", "remote_user",
    "ign", "in-game name", "nickname", "name in game", "in-game naam", "player name",
    "pelaajanimi", *_SENDER_LABELS,
)  # fmt: skip
_OTHER_LABELS = (
    "usuário", "nome de usuário", "nazwa użytkownika", "użytkownik", "kullanıcı adı",
    "kullanıcı", "användarnamn", "käyttäjätunnus", "käyttäjänimi", "uživatelské jméno",
    "felhasználónév", "имя пользователя", "логин", "пользователь", "ім'я користувача",
    "логін", "користувач", "όνομα χρήστη", "用户名", "用戶名", "登录名", "登錄名", "账号",
    "帳號", "ユーザー名", "ユーザ名", "ユーザーid", "ログインid", "ログイン名", "アカウント名",
    "아이디", "사용자 이름", "사용자명", "사용자 아이디", "로그인 아이디", "اسم المستخدم",
    "نام کاربری", "שם משתמש", "tên đăng nhập", "tên người dùng", "ชื่อผู้ใช้",
    "उपयोगकर्ता नाम", "никнейм", "ник в игре", "tài khoản", "lietotājvārds",
    "korisničko ime", "uporabniško ime", "emri i përdoruesit",
    "корисничко име", "потребителско име", "մուտքանուն", "ব্যবহারকারীর নাম",
    "பயனர் பெயர்", "వినియోగదారు పేరు", "ഉപയോക്തൃനാമം", "ਯੂਜ਼ਰਨੇਮ", "યુઝરનેમ", "нік у грі",
    "닉네임", "게임 닉네임",
)  # fmt: skip
_LABELS = _ASCII_LABELS + _OTHER_LABELS
_COLON_ONLY = frozenset({"ign"})
# An AWS IAM user's name in its ARN (`arn:aws:iam::731904265518:user/j.morrison`).
_IAM_USER = re.compile(
    r"arn:aws[\w-]*:iam::\d{12}:user/(?:[\w+=,.@-]+/)*(?P<value>[\w+=,.@-]{2,64})"
)
# Two more words after a label's value on its line: a message after who says it, not a login.
_WORDS_AFTER = re.compile(r"[ \t]+(?P<word>[^\W\d_]+)[ \t]+[^\s(\[]")
# Words that go on to the password after a login (`username: jsmith and the password is`).
_ON_TO_THE_PASSWORD = frozenset({"and", "und", "et", "y", "e", "и", "i", "ve", "dan", "og",
                                 "och", "en", "a", "with", "mit", "avec", "con", "com", "pass",
                                 "password", "pw", "pwd"})  # fmt: skip


def _a_message(value: str, text: str, end: int) -> bool:
    """A label's value of letters alone with more words after it on its line: the first word
    of a message after who says it (`Пользователь: сколько будет 15% от 84 000?`)."""
    if not value.isalpha():
        return False
    words = _WORDS_AFTER.match(text, end)
    return words is not None and words["word"].lower() not in _ON_TO_THE_PASSWORD


# A few words between the name and its value: "username for the portal is", "login do ePUAP ->".
_BETWEEN = (
    r"(?:[ \t]+(?:for|to|of|on|at|in|do|de|del|da|du|für|pour|per|para|na|w|на|для|з)"
    r"[ \t]+[^\n:=<>\"'`]{1,30}?(?=[ \t]*(?:[:=：]|->|=>|→|[ \t](?:is|was|es|ist|est|é|è|jest|"
    r"to|era)[ \t])))?"
)
_COPULA = "|".join(re.escape(word) for word in sorted(COPULAS, key=len, reverse=True))
# `:`, `=`, an arrow, a verb ("is", "es", "ist", "jest", "é"), or the particles of CJK text.
# The value may stand on the next line ("Username:⏎  jdoe").
_JOIN = (
    rf"(?P<join>(?:[\"']?[ \t]*(?:[:=：]|->|=>|→)|[ \t]+(?:{_COPULA})(?=[\s:：])(?:[ \t]*[:：])?"
    r"|[ \t]*(?:是|为|為|は|는|은)(?:[ \t]*[:：])?)[ \t]*(?:\n[ \t]*)?|(?P<space>[ \t]+))"
)
_VALUE_CHARS = r"A-Za-z0-9À-ɏЀ-ӿ._\-#\\@"
# The value, a quote or `@` before it allowed; then where it ends (white space, punctuation).
_VALUE = rf"[\"'`]?@?(?P<value>[A-Za-z0-9À-ɏЀ-ӿ_][{_VALUE_CHARS}]{{1,60}})"
_LABEL_PATTERNS: dict[str, re.Pattern[str]] = {
    label: re.compile(rf"{re.escape(label)}(?:[\"'])?{_BETWEEN}{_JOIN}{_VALUE}", re.IGNORECASE)
    for label in _LABELS
}

# Credentials' syntax.
_URL_USER = re.compile(rf"://(?P<value>[A-Za-z0-9_][{_VALUE_CHARS[:-1]}%]{{0,60}})(?::[^\s/@]*)?@"
                       r"(?=[A-Za-z0-9\[])")  # fmt: skip
_SSH_CONFIG_USER = re.compile(r"(?m)^[ \t]*(?:User|user)[ \t]+(?P<value>[^\s#\"']+)[ \t]*$")
_SSH_CONFIG_HOST = re.compile(r"(?mi)^[ \t]*host(?:name)?[ \t]+\S")
_PGPASS = re.compile(
    r"(?m)(?:^|(?<=[\s\"'=]))(?:[A-Za-z*][A-Za-z0-9.*-]*|\d{1,3}(?:\.\d{1,3}){3}):(?:\d{1,5}|\*)"
    r":[A-Za-z_*][A-Za-z0-9_.*-]*:(?P<value>[A-Za-z_][A-Za-z0-9_.-]*):[^\s:]\S{3,}[ \t]*$"
)
# What every .pgpass line holds, a literal first (a search that skips along in C).
_PGPASS_FIELDS = re.compile(r":(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:")
_SSH_TARGET = re.compile(
    r"(?<![\w.-])(?:ssh|scp|sftp|rsync|mosh|ssh-copy-id|autossh)[ \t][^\n|;&]*?"
    r"(?<=[ \t\"'])(?P<value>[A-Za-z_][A-Za-z0-9_.-]{0,31})@[A-Za-z0-9\[][\w.:\[\]-]*"
)
_SSH_LOGIN = re.compile(
    r"(?<![\w.-])(?:ssh|mosh|autossh)[ \t][^\n|;&]*?[ \t]-l[ \t]+[\"']?(?P<value>[A-Za-z_][\w.-]*)"
)
_USER_AND_PASSWORD = re.compile(
    r"(?<![\w.-])(?:curl|wget|http|https|httpie|xh|xhs|ab|hey|lftp)[ \t](?:[^\n|;&]{0,200}?[ \t])?"
    r"(?:-u|--user|-a|--auth|--http-user)(?:[ \t]+|=)[\"']?"
    rf"(?P<value>[A-Za-z0-9_][{_VALUE_CHARS}]{{0,60}}?)[:,][^\s\"']"
)
# What sshd, sudo and PAM log of who logged in (`Accepted password for USER from`, `Invalid
# user USER from`, `sudo:  USER : TTY=`, `session opened for user USER`), and a home
# directory's path (`/home/USER/`, `/Users/USER/`, `C:\\Users\\USER\\`).
_LOGGED_IN = re.compile(
    r"(?:(?:Accepted|Failed) (?:password|publickey|keyboard-interactive/pam|none|hostbased)"
    r" for (?:invalid user )?|Invalid user |sudo: +|session (?:opened|closed) for user )"
    r"(?P<value>[A-Za-z0-9_][A-Za-z0-9_.-]{0,31})(?= from | : TTY=|\(| by |$|\n)"
)
_HOME = re.compile(
    r"(?:(?<![\w.])/home/|(?<![\w.])/Users/|(?i:[A-Z]:\\{1,2}Users\\{1,2}))"
    r"(?P<value>[A-Za-z0-9_][A-Za-z0-9_.-]{0,31})(?=[/\\\s\"'`:;,)>]|$)"  # (`PS C:\Users\x>`)
)
_NET_USE = re.compile(
    r"(?<![\w-])(?i:net)[ \t]+(?i:use)\b[^\n|;&]*?/(?i:user|u):[\"']?(?:[\w.-]+\\{1,2})?"
    r"(?P<value>[A-Za-z0-9_][\w.-]*)"
)
# A client that logs in as a user named by an option: registries' and databases' (`docker
# login -u USER`, `psql -U USER`, `mysql -u USER -p`).
_CLIENTS = ("docker", "podman", "helm", "oras", "skopeo", "buildah", "nerdctl", "mysql",
            "mysqldump", "mariadb", "psql", "pg_dump", "pg_dumpall", "pg_restore", "createdb",
            "mongo", "mongosh", "mongodump", "mongorestore", "sqlcmd", "bcp", "clickhouse-client",
            "cqlsh", "redis-cli", "smbclient", "influx")  # fmt: skip
_CLIENT_USER = re.compile(
    rf"(?<![\w.-])(?:{either(_CLIENTS)})"
    r"[ \t](?:[^\n|;&]{0,200}?[ \t])?(?:-u|-U|--user|--username)(?:[ \t]*|=)[\"']?"
    rf"(?P<value>[A-Za-z0-9_][{_VALUE_CHARS}]{{0,60}}?)(?=[\"']?(?:[ \t]|$))",
    re.MULTILINE,
)
# A call's or a config's user given beside its password (`connect(host=..., user="pj",
# password="...")`): the user, where a password is given on its line.
_CALL_USER = re.compile(
    r"(?<![\w.$])(?i:user|usr|uid|username|user_name|login|db_user)[ \t]*[=:][ \t]*"
    r"(?P<q>[\"'])(?P<value>[A-Za-z0-9_][\w.@-]{0,40})(?P=q)"
)
_PASSWORD_ON_ITS_LINE = re.compile(
    r"(?i)(?:pass(?:word|wd)?|pwd)[\"']?[ \t]*[=:][ \t]*[\"'][^\"'\s]"
)
_LONG_OPTION = re.compile(r"(?<![\w-])--(?:username|login-name)(?:[ \t]+|=)[\"']?"
                          rf"(?P<value>[A-Za-z0-9_][{_VALUE_CHARS}]{{1,60}})")  # fmt: skip

# Who speaks on a chat export's line, by handle: `@jess.moreno.ink: hey`, or without the `@`
# when the same handle, ending in digits as most do, speaks on two lines or more
# (`cryptoklaus_77: my wallet ...`).
_AT_SPEAKER = re.compile(
    r"(?m)^[ \t>]*@(?P<value>[A-Za-z0-9_][A-Za-z0-9_.-]{0,37}[A-Za-z0-9_])[ \t]?:[ \t]"
)
_SPEAKER = re.compile(
    r"(?m)^[ \t>]*(?P<value>[A-Za-z][A-Za-z0-9_.-]{0,36}[0-9]{2})[ \t]?:[ \t]+"
    r"(?=\S+[ \t]+\S+[ \t]+\S)"  # three words said, not a key's value
)
# A UPI payment address (India): `name@okicici`, a bank's handle after the `@`, no dot in it.
_UPI_HANDLES = ("okicici", "okaxis", "oksbi", "okhdfcbank", "ybl", "ibl", "axl", "paytm", "upi",
                "apl", "yapl", "icici", "sbi", "hdfcbank", "axisbank", "kotak", "pnb", "boi",
                "barodampay", "freecharge", "jupiteraxis", "slc", "fbl", "idfcbank")  # fmt: skip
_UPI_HINT = re.compile(f"@(?:{'|'.join(_UPI_HANDLES)})(?![\\w.@-])")
_UPI = re.compile(
    rf"(?<![\w.@-])(?P<value>[A-Za-z0-9][\w.-]{{1,60}}@(?:{'|'.join(_UPI_HANDLES)}))(?![\w.@-])",
    re.IGNORECASE,
)

# Generic, system and placeholder accounts, and the ones a tool's token logs in as: no person's.
_GENERIC = frozenset({
    "root", "admin", "administrator", "administrador", "user", "users", "guest", "test", "tester",
    "postgres", "ubuntu", "ec2-user", "git", "www-data", "nobody", "sa", "oracle", "mysql", "pi",
    "jenkins", "deploy", "deployer", "anonymous", "your_username", "yourusername", "username",
    "user_name", "me", "centos", "debian", "fedora", "core", "azureuser", "opc", "vagrant",
    "cloud-user", "rocky", "almalinux", "alpine", "bitnami", "kali", "ubnt", "node", "app", "apps",
    "api", "web", "www", "service", "svc", "bot", "backup", "replication", "replicator",
    "readonly", "default", "system", "sys", "daemon", "operator", "superuser", "su", "demo",
    "sample", "example", "dev", "developer", "local", "localhost", "host", "foo", "bar", "baz",
    "foobar", "scott", "tiger", "alice", "bob", "john", "jane", "johndoe", "john_doe", "john.doe",
    "jdoe", "janedoe", "jane_doe", "jane.doe", "testuser", "test_user", "test-user", "myuser",
    "my_user", "dbuser", "db_user", "someone", "somebody", "oauth", "oauth2", "oauth2accesstoken",
    "x-access-token", "x-token-auth", "gitlab-ci-token", "token", "__token__", "apikey", "api_key",
    "api-key", "aws", "_json_key", "json_key", "x", "xx", "xxx", "login", "password", "pass",
    "passwd", "none", "null", "nil", "undefined", "true", "false", "yes", "no", "sudo", "redis",
    "rabbitmq", "elastic", "kibana", "grafana", "minio", "minioadmin", "mongo", "mongodb",
    "mariadb", "sqlserver", "ftp", "ftpuser", "mail", "email", "smtp", "postmaster", "bin",
    "nginx", "apache", "httpd", "docker", "runner", "ci", "build", "builder", "worker", "airflow",
    "hadoop", "hdfs", "spark", "hive", "kafka", "zookeeper", "ansible", "ec2", "azure", "gcp",
    "ssh", "sshd", "user1", "user2", "test1", "test2", "admin1", "anon", "ops", "devops",
    "sysadmin", "support", "info", "noc", "monitor", "monitoring", "nagios", "zabbix", "team",
    "staff", "dba", "prod", "production", "staging", "qa", "uat",
    # Home directories that are no one's: macOS's shared one, notebooks', CI's and dev boxes'.
    "shared", "public", "jovyan", "vscode", "codespace", "circleci", "travis", "gitpod",
    "coder", "nonroot", "appuser", "linuxbrew", "runneradmin", "defaultuser0",
})  # fmt: skip
# What a sentence says of a username that names no one ("the username is required", "login:
# failed"), and the types and keywords code annotates one with.
_SENTENCE_WORDS = frozenset({
    "required", "incorrect", "invalid", "wrong", "correct", "valid", "missing", "empty", "blank",
    "taken", "available", "unavailable", "unique", "optional", "mandatory", "case", "sensitive",
    "case-sensitive", "case-insensitive", "changed", "updated", "saved", "stored", "shown",
    "displayed", "used", "needed", "same", "different", "already", "not", "too", "also", "only",
    "still", "now", "then", "here", "there", "below", "above", "given", "provided", "set", "unset",
    "locked", "expired", "reset", "created", "deleted", "removed", "verified", "confirmed",
    "failed", "failure", "successful", "success", "succeeded", "denied", "disabled", "enabled",
    "active", "inactive", "unknown", "known", "the", "a", "an", "your", "my", "his", "her",
    "their", "our", "its", "this", "that", "these", "those", "it", "what", "which", "who", "how",
    "where", "when", "why", "whatever", "something", "anything", "nothing", "and", "or", "but",
    "if", "for", "with", "from", "of", "to", "in", "on", "at", "as", "by", "into", "via", "is",
    "was", "are", "be", "been", "being", "will", "would", "should", "can", "cannot", "could",
    "must", "may", "might", "has", "have", "had", "does", "do", "did", "please", "enter", "type",
    "choose", "pick", "select", "use", "using", "field", "fields", "value", "values", "input",
    "form", "text", "name", "names", "id", "ids", "str", "string", "strings", "int", "integer",
    "char", "varchar", "bool", "boolean", "any", "object", "dict", "list", "number", "bytes",
    "byte", "date", "datetime", "uuid", "email", "length", "max", "min", "new", "old", "current",
    "first", "last", "full", "short", "long", "display", "real", "public", "private", "page",
    "screen", "button", "prompt", "error", "errors", "warning", "ok", "okay", "done", "true",
    "false", "none", "null", "yes", "no", "off", "credentials", "credential", "details",
    "information", "info", "account", "accounts", "typed", "entered", "stated", "follows",
    "following", "each", "every", "all", "both", "either", "neither", "some", "many", "more",
    "less", "required.", "unchanged", "changeable", "editable", "immutable", "mutable", "visible",
    "hidden", "secret", "internal", "external", "requis", "obligatorio", "obligatoire",
    "erforderlich", "falsch", "ungültig", "incorrecto", "incorrecte", "inválido", "invalide",
    "obbligatorio", "vereist", "wymagany", "gerekli", "username", "login", "user", "usuario",
    "benutzer", "utilisateur", "utente", "gebruiker", "requires", "require", "contains", "contain",
    "consists", "matches", "match", "exists", "exist", "already-taken", "sent", "passed",
    "returned", "read", "written", "logged", "checked", "validated", "generated", "assigned",
    "derived", "extracted", "parsed", "defined", "specified", "configured", "obtained", "async",
    "await", "function", "func", "fn", "def", "lambda", "return", "const", "let", "var", "self",
    "static", "final", "readonly", "undefined", "nullable", "dynamic",
})  # fmt: skip
# Code: an attribute or a call, an index, an operator after the value; a value that is a name of
# the same thing (`userName`, `DB_USER`, `login_id`).
_CODE_AFTER = re.compile(r"[(\[]|\.[A-Za-z_(]|[ \t]*(?:[{+*|?]|&&|==|=>)")
_CODE_SEGMENTS = frozenset({
    "self", "this", "req", "request", "res", "response", "args", "kwargs", "opts", "options",
    "config", "cfg", "conf", "settings", "env", "environ", "os", "process", "params", "props",
    "state", "data", "form", "body", "session", "ctx", "context", "payload", "input", "event",
    "obj", "info", "credentials", "creds", "auth", "account", "profile", "values", "model",
    "record", "row", "item", "result", "query", "cookies", "headers", "json", "instance",
    "cls", "current_user", "window", "document", "field", "fields", "schema",
    "validated_data", "cleaned_data", "user", "users", "username", "login", "name", "id",
    "email", "value", "str", "string", "get", "post", "sys", "argv", "getpass", "getuser",
    "secrets", "vars", "var", "env_vars", "spec", "meta", "metadata", "attrs", "vm", "db",
})  # fmt: skip
_NAMES_A_USER = re.compile(
    r"(?i:.*(?:user|login|usr|uname|account|acct).*)|[A-Z][A-Z0-9]*_[A-Z0-9_]+"
)
_CAMEL = re.compile(r"[a-z][A-Z]")
# Hex of 12 digits or more, or 28 characters or more without a separator: a key, not a name.
_KEY = re.compile(r"[0-9a-f]{12,}|[a-z0-9]{28,}|(?:ghp|gho|ghs|glpat|xox[a-z])[_-].*")
_HANDLE_MARK = re.compile(r"[0-9_.@#\\-]|[a-z][A-Z]")


# Common English words (the BIP-39 list the seed-phrase finder reads): a plain one after a verb
# names no one ("the username is unique").
_DICTIONARY = frozenset(WORDS)
# Words of logs and code that name processes and files, not people (`rank_0:`, `eval_loss:`).
_CODE_WORDS = frozenset({
    "rank", "node", "worker", "thread", "proc", "process", "task", "shard", "replica", "gpu",
    "cuda", "step", "epoch", "loss", "eval", "train", "test", "valid", "batch", "layer", "head",
    "model", "server", "client", "host", "pod", "container", "service", "job", "stage", "phase",
    "item", "line", "file", "data", "info", "warn", "error", "debug", "trace", "stdout",
    "stderr", "main", "init", "config", "port", "user", "admin", "agent", "assistant", "system",
    "tool", "bot", "channel", "queue", "topic", "partition", "device", "sensor", "module",
    "chunk", "block", "frame", "sample", "samples", "prompt", "response", "reward", "score",
    "metric", "metrics", "accuracy", "total", "count", "mean", "median", "param", "params",
    "weight", "weights", "grad", "grads", "norm", "learning", "rate", "warmup", "tokens",
    "token", "input", "output", "result", "results", "label", "labels", "field", "value", "key",
    "name", "type", "version", "build", "release", "commit", "branch", "image", "volume",
})  # fmt: skip


def a_login(value: str, *, sentence: bool = False) -> bool:
    """`value` can be a person's login: 2-40 characters with a letter, not a generic account,
    a placeholder nor code; after a verb (`sentence`), a plain word only outside the
    dictionary."""
    if not 2 <= len(value) <= 40 or not any(char.isalpha() for char in value):
        return False
    lower = value.lower()
    if _KEY.fullmatch(lower) is not None:
        return False  # a key in a login's place (a Sentry DSN's, a token's)
    if lower in _GENERIC or lower in _SENTENCE_WORDS or lower in NO_VALUE:
        return False
    if placeholder(value) or _NAMES_A_USER.fullmatch(value) is not None:
        return False
    if "." in value:
        segments = value.split(".")
        if any(segment.lower() in _CODE_SEGMENTS for segment in segments[:-1]) or (
            segments[-1].lower() in _CODE_SEGMENTS and len(segments[-1]) > 1
        ):
            return False
        if any(_CAMEL.search(segment) for segment in segments):
            return False  # `req.userName`, `configService.get`
    # A plain word of the dictionary: after a verb in any case, after a colon in lower case.
    return not (value.isalpha() and (sentence or value.islower()) and lower in _DICTIONARY)


def _a_handle(value: str) -> bool:
    """A speaker's name made as people make handles: a digit or `_` in it, and a part that
    names no process or metric, of four letters or more and no dictionary word, or in mixed
    case (`cryptoklaus_77`, `khoa_tran_1990`, `xX_Dragon99`; not `worker_1`, `Rank0`)."""
    if not re.search(r"[0-9_]", value) or not a_login(value):
        return False
    parts = [part for part in re.findall(r"[a-z]+", value.lower()) if part not in _CODE_WORDS]
    mixed = value != value.lower() and value != value.upper()  # `xX_Dragon99`
    return any(mixed or (len(part) >= 4 and part not in _DICTIONARY) for part in parts)


# The last labels of host names a command logs in to (a registry's, a server's).
_HOST_ENDS = frozenset({
    "com", "net", "org", "io", "dev", "app", "cloud", "ai", "sh", "co", "lan", "local", "internal",
    "corp", "home", "intra", "azurecr", "amazonaws", "docker", "gov", "edu",
})  # fmt: skip


def _a_host(value: str) -> bool:
    """`value` is a host's name (`ghcr.io`, `registry.gitlab.com`, `nas.home.lan:5000`)."""
    labels = value.lower().split(":")[0].split(".")
    return len(labels) > 1 and labels[-1] in _HOST_ENDS


def _trimmed(text: str, start: int, end: int) -> int:
    """Where the value ends: the sentence's full stop and the like left out."""
    while end > start and text[end - 1] in ".-#@\\":
        end -= 1
    return end


@register("usernames")
class UsernameFinder:
    kinds = frozenset({"USERNAME"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(
        words=(*(label for label in _LABELS if label not in ("user id", "user name", "user-name",
                                                            "username", "userid", "ign")),
               "user", "://", "ssh", "scp", "sftp", "rsync", "mosh", "curl", "wget",
               "http ", "https ", "xh ", "lftp", "net use", "--username", "--login-name",
               "accepted ", "failed password", "invalid user", "sudo:", "for user", "/home/",
               "users/", "users\\", " -u", "--user", ":user/",
               *(f"@{handle}" for handle in _UPI_HANDLES)),
        whole_words=("ign",),  # (not in "design", "sign")
        shapes=(rb":(?:[0-9]{1,5}|\*):[a-z0-9_.*-]{1,64}:[a-z_][a-z0-9_.-]{0,63}:",),
    )  # fmt: skip
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text, lower = view.text, view.lower
        yield from self._labelled(text, lower)
        if "@" in text:
            if _UPI_HINT.search(lower) is not None:
                yield from self._matches(_UPI, text)
            if "://" in text:
                yield from self._matches(_URL_USER, text)
            if "ssh" in lower or "scp" in lower or "sftp" in lower or "rsync" in lower:
                yield from self._matches(_SSH_TARGET, text)
        if " -l" in text and "ssh" in lower:
            yield from self._matches(_SSH_LOGIN, text)
        if "user" in lower:
            if _SSH_CONFIG_HOST.search(text) is not None:
                yield from self._matches(_SSH_CONFIG_USER, text)
            if "/user:" in lower or "/u:" in lower:
                yield from self._matches(_NET_USE, text)
        if " -" in text:
            if "--username" in lower or "--login-name" in lower:
                yield from self._matches(_LONG_OPTION, text)
            if (
                " -u" in text
                or " -a" in text
                or " --user" in text
                or " --auth" in text
                or (" --http-user" in text)
            ):
                yield from self._matches(_USER_AND_PASSWORD, text)
            if (" -u" in text or " -U" in text or " --user" in text) and any(
                client in lower for client in _CLIENTS
            ):
                yield from self._matches(_CLIENT_USER, text)
        if "pass" in lower or "pwd" in lower:
            for match in _CALL_USER.finditer(text):
                line_start = text.rfind("\n", 0, match.start()) + 1
                line_end = text.find("\n", match.end())
                line = text[line_start : len(text) if line_end < 0 else line_end]
                if _PASSWORD_ON_ITS_LINE.search(line) and a_login(match["value"]):
                    yield Span(*match.span("value"), "USERNAME")
        if ":" in text and _PGPASS_FIELDS.search(text) is not None:
            yield from self._matches(_PGPASS, text)
        if " for " in text or "Invalid user" in text or "sudo:" in text:
            for match in _LOGGED_IN.finditer(text):  # (`dkowalski(uid=1001)` is the log's)
                if a_login(match["value"]):
                    yield Span(*match.span("value"), "USERNAME")
        if "/home/" in text or "Users" in text:
            yield from self._matches(_HOME, text)
        if ":user/" in text:
            yield from self._matches(_IAM_USER, text)

    @staticmethod
    def _matches(pattern: re.Pattern[str], text: str) -> Iterator[Span]:
        for match in pattern.finditer(text):
            start, end = match.span("value")
            end = _trimmed(text, start, end)
            if _CODE_AFTER.match(text, end) is None and a_login(text[start:end]):
                yield Span(start, end, "USERNAME")

    @staticmethod
    def _labelled(text: str, lower: str) -> Iterator[Span]:
        for at, label in _label_places(lower):
            if not _label_starts(lower, at, label):
                continue
            match = _LABEL_PATTERNS[label].match(text, at)
            if match is None:
                continue
            start, end = match.span("value")
            end = _trimmed(text, start, end)
            value = text[start:end]
            if _CODE_AFTER.match(text, end) is not None or text[end : end + 1] in (
                "=",
                "(",
                "[",
                "{",
                "<",
                ">",
                "/",
                "$",
                "%",
            ):
                continue  # code, or a path, a tag, a template
            join = match.group("join")
            before_a_colon = text[end : end + 1] in (":", "：") and (
                text[end + 1 : end + 2] in ("", " ", "\t", "\n")
            )
            if label in _SENDER_LABELS:
                if not before_a_colon:
                    continue  # `message from JSONDecodeError is kept`: no sender before a colon
            elif before_a_colon:
                continue  # the next line's key (`login:⏎  url: /signin`), a label
            join = join.strip(" \t\n\"'")
            sentence = join not in (":", "=", "：", "->", "=>", "→", "")
            if label in _COLON_ONLY and (sentence or not join):
                continue  # `IGN is down`: a game's name for a login only before a colon
            if match.group("space") is not None and not (
                _HANDLE_MARK.search(value) or _PASSWORD_NEXT.match(text, end)
            ):
                continue  # "username field", "login page": a handle holds a mark
            if value.lower() == label or not a_login(value, sentence=sentence):
                continue
            if not sentence and (
                speaks_in_a_chat(lower, at, label)
                or (join in (":", "：") and _a_message(value, text, end))
            ):
                continue  # who speaks in a chat (`Usuario: listo`, `Пользователь: сколько
                # будет ...`: words go on after it), no form's field
            if match.group("space") is not None and _a_host(value):
                continue  # `docker login ghcr.io -u ...`: where it logs in, not as whom
            yield Span(start, end, "USERNAME")


@register("chat_handles")
class ChatHandleFinder:
    """Chat lines' speakers by handle: with `@`, any that holds a handle's mark
    (`@jess.moreno.ink: hey`; `@return:` is a docstring's); without, one that speaks twice or
    more and reads as no word of code or logs (`cryptoklaus_77` a person, `worker_12` a
    process); and in a chat of two speakers or more, one of whom speaks twice, each whose name
    is made as handles are (`Kuba_z_Radomia`, `ElPulpoTactico`), and one in lower case outside
    the dictionary that speaks twice beside one of those (`vexlight`). A finder of its own, so
    that it runs only where a line starts so."""

    kinds = frozenset({"USERNAME"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(
        shapes=(rb"(?:^|\n)[ \t>]*@[a-z0-9_][a-z0-9_.-]{0,37}[a-z0-9_][ \t]?:[ \t]",
                rb"(?:^|\n)[ \t>]*[a-z][a-z0-9_.-]{0,36}[0-9]{2}[ \t]?:[ \t]",
                rb"(?:^|\n)(?:\[[^\]\n]{1,40}\][ \t]*)?[a-z][a-z0-9_]{2,30}:[ \t]"),
    )  # fmt: skip
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if "@" in text:
            for match in _AT_SPEAKER.finditer(text):
                value = match["value"]
                if _HANDLE_MARK.search(value) and a_login(value):
                    yield Span(*match.span("value"), "USERNAME")
        for value, places in _said_by(_SPEAKER, text).items():
            if len(places) > 1 and _a_handle(value):
                for start, end in places:
                    yield Span(start, end, "USERNAME")
        if text.count(":") >= 3:
            yield from _chat_speakers(text)


# The sites whose URLs name an account right after the site (and `/in/`, `/@`, `/u/`): a path
# after it still names it (`x.com/USER/status/1`), but for GitHub's (a project's page).
_PROFILE_SITES = (
    "linkedin.com/in/", "linkedin.com/pub/", "facebook.com/", "fb.com/", "instagram.com/",
    "tiktok.com/@", "youtube.com/@", "x.com/", "twitter.com/", "t.me/", "vk.com/",
    "reddit.com/u/", "reddit.com/user/", "threads.net/@", "medium.com/@", "github.com/",
)  # fmt: skip
_PROFILE_URL = re.compile(
    r"(?i)(?<![\w.@-])(?:https?://)?(?:(?:www|m|mobile|[a-z]{2})\.)?"
    rf"(?P<site>{either(_PROFILE_SITES)})"
    r"(?P<value>[\w.-]{2,60})(?![\w@%-])"
)
_PROFILE_ENDS = re.compile(r"/?(?:$|[\s)\]>\"',;!?]|\.(?:\s|$))")
# A site's own pages where an account's name would stand.
_SITE_PAGES = frozenset({
    "about", "accounts", "ads", "apps", "business", "collections", "company", "direct", "events",
    "explore", "features", "feed", "gaming", "groups", "hashtag", "help", "home", "i", "im",
    "intent", "joinchat", "legal", "login", "marketplace", "messages", "new", "notifications",
    "orgs", "p", "pages", "permalink.php", "photo", "photos", "photo.php", "policies", "pricing",
    "privacy", "profile.php", "reel", "reels", "s", "search", "security", "settings", "share",
    "sharer", "sharer.php", "signup", "site", "sponsors", "stories", "story.php", "terms",
    "topics", "tos", "trending", "tv", "watch", "enterprise", "addstickers", "c", "iv",
    "away.php", "wall", "video", "videos", "live", "shorts", "channel", "user", "u", "jobs",
    "school", "learning", "pulse", "in", "pub", "dialog", "plugins", "tr", "r",
})  # fmt: skip


@register("profile_urls")
class ProfileUrlFinder:
    """The account in a social network's profile URL: `linkedin.com/in/USER`,
    `instagram.com/USER`, `x.com/USER/status/...`, `t.me/USER`, `tiktok.com/@USER`,
    `github.com/USER` (a profile alone: `github.com/org/project` is a project's). The site's own
    pages (`facebook.com/groups/...`, `instagram.com/p/...`, `x.com/intent/...`) are none."""

    kinds = frozenset({"USERNAME"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(words=_PROFILE_SITES)
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        for match in _PROFILE_URL.finditer(text):
            value, site = match["value"].rstrip(".-"), match["site"].lower()
            if len(value) < 2 or value.lower() in _SITE_PAGES:
                continue
            if site == "github.com/" and not _PROFILE_ENDS.match(text, match.end("value")):
                continue  # `github.com/pytorch/pytorch`: a project's page
            start = match.start("value")
            yield Span(start, start + len(value), "USERNAME")


# A chat line's speaker at the line's start (after the chat's or the app's name in brackets, not
# a log's time or level), three words or more said after the colon, and no code's `x: int = 1`.
_CHAT_LINE = re.compile(
    r"(?m)^(?:>[ \t]*)?(?:\[(?![A-Z]+\])[^\]\n\d]{1,40}\][ \t]*)?"
    r"(?P<value>[^\W\d_]\w{2,30}):[ \t]+(?=\S+[ \t]+\S+[ \t]+\S)(?![^\s=]+[ \t]*=)"
)
# Names code gives its classes, not people (`ValueError: ...` twice in a traceback).
_CLASS_ENDS = ("Error", "Exception", "Warning", "Handler", "Service", "Manager", "Config",
               "Client", "Server", "Worker", "Thread", "Process", "Task", "Test",
               "Bot")  # fmt: skip


def _chat_speakers(text: str) -> Iterator[Span]:
    """The handles among the speakers of a chat (ChatHandleFinder)."""
    said = _said_by(_CHAT_LINE, text)
    if len(said) < 2 or all(len(places) < 2 for places in said.values()):
        return  # a form's labels, a glossary: each once
    marked = {value for value in said if _a_handle(value) or _camel_handle(value)}
    for value, places in said.items():
        if value in marked or (marked and len(places) > 1 and _plain_handle(value)):
            for start, end in places:
                yield Span(start, end, "USERNAME")


def _said_by(speaker: re.Pattern[str], text: str) -> dict[str, list[tuple[int, int]]]:
    """Each speaker `speaker` finds at a line's start, and where each of their lines names them."""
    said: dict[str, list[tuple[int, int]]] = {}
    for match in speaker.finditer(text):
        said.setdefault(match["value"], []).append(match.span("value"))
    return said


def _camel_handle(value: str) -> bool:
    """A name in mixed case run together, as handles are (`ElPulpoTactico`, `DarkPita`), not a
    class's (`ValueError`, `HttpClient`)."""
    return (
        _CAMEL.search(value) is not None
        and not value.endswith(_CLASS_ENDS)
        and a_login(value)
        and all(part.lower() not in _CODE_WORDS for part in re.findall(r"[A-Z][a-z]+", value))
    )


def _plain_handle(value: str) -> bool:
    """A word in lower case of five letters or more that is no word of the dictionary, of code
    or of logs (`vexlight`, `tuvadoesntmiss`; not `kernel` beside ... in a log)."""
    return (
        value.isalpha()
        and value.islower()
        and len(value) >= 5
        and value not in _DICTIONARY
        and value not in _CODE_WORDS
        and a_login(value)
    )


# The ASCII labels by their first four letters: each four looked for once, then the labels that
# start with them tried where they stand; the other labels are looked for whole.
_BY_STEM: dict[str, tuple[str, ...]] = {}
for _label in sorted(_ASCII_LABELS, key=len, reverse=True):
    _BY_STEM[_label[:4]] = (*_BY_STEM.get(_label[:4], ()), _label)


def _label_places(lower: str) -> Iterator[tuple[int, str]]:
    """(where, label) for each label in the lower-case text: the longest of those that start at
    a place ("user name" before "user")."""
    for stem, labels in _BY_STEM.items():
        at = lower.find(stem)
        while at >= 0:
            for label in labels:
                if lower.startswith(label, at):
                    yield at, label
                    break
            at = lower.find(stem, at + 4)
    if not lower.isascii():
        for label in _OTHER_LABELS:
            at = lower.find(label)
            while at >= 0:
                yield at, label
                at = lower.find(label, at + len(label))


# A password's word after the user ("username mwilliams pass Winter#2023").
# (On the next line too, as a .netrc writes `login` and `password`.)
_PASSWORD_NEXT = re.compile(
    r"(?i)[ \t]*(?:,?[ \t]+|\r?\n[ \t]*)(?:pass(?:word)?|pw|pwd)\b|[ \t]+/[ \t]+\S"
)


def _label_starts(lower: str, at: int, label: str) -> bool:
    """The label starts a word: an ASCII one not inside an identifier or a path (`db_username`,
    `$username`, `/login:`, `args.login`); and, ASCII, it is not the start of a longer word."""
    if not label.isascii():
        return True
    before = lower[at - 1 : at]
    if before and (before.isalnum() or before in "_.$-/@%&#\\"):
        return False
    after = lower[at + len(label) : at + len(label) + 1]
    return not (after.isalnum() or after in "_-")
