"""Secrets that code gives without a secret's name beside them, and code that only looks like it
gives one: the password argument of the calls that take a user and a password, SQL that sets a
password, a Kubernetes Secret's values; an empty assignment before the next one, a placeholder
before a URL, a duration named after a token, a hash given with its algorithm, and the IP
addresses that name no machine."""

from __future__ import annotations

import pytest

from tests.helpers.redaction import found, hidden, hides_each, leaves_each, leaves_each_by_kinds

pytestmark = pytest.mark.unit


# (code, the password it gives by position), in many languages and quoting styles.
CALL_PASSWORDS = [
    ("mail.login('reports@corp.test', 'Heron!Basket42')", "Heron!Basket42"),
    ('ftp = FTP("files.corp.test"); ftp.login("mirror", "tundra-Sock-19")', "tundra-Sock-19"),
    ("imap.login(ACCOUNT, 'Quill#Meadow5')", "Quill#Meadow5"),
    ('resp = requests.get(api, auth=("ingest", "Lemur^Pocket8"))', "Lemur^Pocket8"),
    ("httpx.get(u, auth=httpx.BasicAuth('ingest', 'Otter!Marble31'))", "Otter!Marble31"),
    ("s.auth = HTTPDigestAuth('ingest', 'Saddle+Copper6')", "Saddle+Copper6"),
    ("es = Elasticsearch(nodes, basic_auth=('elastic', 'Cinder~Vault27'))", "Cinder~Vault27"),
    ('client.Credentials = new NetworkCredential("svc_backup", "Anvil$Comet73");',
     "Anvil$Comet73"),
    ('var c = new NetworkCredential(@"CORP\\svc", @"Prism&Bolt40", "CORP");', "Prism&Bolt40"),
    ('Connection db = DriverManager.getConnection(jdbcUrl, "report", "Falcon^Drum58");',
     "Falcon^Drum58"),
    ('new PasswordAuthentication("proxyuser", "Gravel#Tide14".toCharArray())', "Gravel#Tide14"),
    ('String basic = Credentials.basic("svc", "Pylon%Sand90");', "Pylon%Sand90"),
    ('webClient.mutate().filter(basicAuthentication("svc", "Thistle*Oar3"))', "Thistle*Oar3"),
    ('template.withBasicAuth("svc", "Lantern@Reef16").getForObject("/x", String.class);',
     "Lantern@Reef16"),
    ('req.SetBasicAuth("exporter", "Mosaic!Plank22")', "Mosaic!Plank22"),
    ('a := smtp.PlainAuth("", "bot@corp.test", "Fjord$Kettle9", "mail.corp.test")',
     "Fjord$Kettle9"),
    ('u.User = url.UserPassword("svc", "Gorge+Pewter34")', "Gorge+Pewter34"),
    ("superagent.get(u).auth('svc', 'Bramble&Iris21').end(cb)", "Bramble&Iris21"),
    ("const db = new Sequelize('shop', 'shop_rw', 'Nectar?Slate57', { dialect: 'postgres' });",
     "Nectar?Slate57"),
    ("$link = mysqli_connect('db.corp.test', 'shop', 'Walnut#Ridge8', 'shop');",
     "Walnut#Ridge8"),
    ('$pdo = new PDO("pgsql:host=db;dbname=crm", "crm", "Sable!Fern46");', "Sable!Fern46"),
    ('ldap_bind($ds, "cn=sync,dc=corp,dc=test", "Kelp%Summit2");', "Kelp%Summit2"),
    ("l.simple_bind_s('uid=ops,ou=people,dc=corp', 'Harbor~Finch66')", "Harbor~Finch66"),
    ("store.connect(\"imap.corp.test\", \"ops\", \"Clover^Tusk75\");", "Clover^Tusk75"),
    ("ssh.connect('jump.corp.test', 2222, 'ops', 'Cobble#Wisp11')", "Cobble#Wisp11"),
    ('jschSession.setPassword("Mantle$Gull53");', "Mantle$Gull53"),
    ("keyring.set_password('smtp', 'ops', 'Ferret+Dune70')", "Ferret+Dune70"),
    ('AwsBasicCredentials.create("AKIDEXAMPLE0001", "tK9r2Lw7Qz4Xv1Bn6Mc3Hs8Jd5Fp0Gy2Ue7Ai4Ro")',
     "tK9r2Lw7Qz4Xv1Bn6Mc3Hs8Jd5Fp0Gy2Ue7Ai4Ro"),
    ('$pw = ConvertTo-SecureString "Willow#Crane12" -AsPlainText -Force', "Willow#Crane12"),
    ("curl_setopt($ch, CURLOPT_USERPWD, 'svc:Quartz!Hinge4');", "Quartz!Hinge4"),
]  # fmt: skip

SQL_PASSWORDS = [
    ("CREATE USER 'bi_reader'@'%' IDENTIFIED BY 'Tx4!mPq9#Lr';", "Tx4!mPq9#Lr"),
    ('ALTER USER "bi_reader"@"localhost" IDENTIFIED BY "Nb7$wQ2&Zk";', "Nb7$wQ2&Zk"),
    ("CREATE USER 'app'@'%' IDENTIFIED WITH caching_sha2_password BY 'Rook%Ember88';",
     "Rook%Ember88"),
    ("create user etl identified by Lynx42tide;", "Lynx42tide"),
    ("SET PASSWORD FOR 'app'@'%' = PASSWORD('Vesper#Loom61');", "Vesper#Loom61"),
    ("SET PASSWORD FOR 'app'@'%' = 'Hollow$Keel29';", "Hollow$Keel29"),
    ("ALTER LOGIN svc_etl WITH PASSWORD = N'Magpie!Cedar36';", "Magpie!Cedar36"),
    ("ALTER ROLE analyst WITH LOGIN PASSWORD 'Tinsel-Oak-83';", "Tinsel-Oak-83"),
]  # fmt: skip


# Command lines whose tools take a password without a dash before it, or after an option of
# their own.
TOOL_PASSWORDS = [
    ("sqlplus scott/Tundra#42@//db.corp.test:1521/ORCL", "Tundra#42"),
    ("sqlplus -S app/Glade!Owl9 @report.sql", "Glade!Owl9"),
    ("expdp system/Marsh%Reed3 directory=dp dumpfile=x.dmp", "Marsh%Reed3"),
    ("lftp -u mirror,Copper!Ant5 sftp://files.corp.test", "Copper!Ant5"),
    ("xfreerdp /v:rdp.corp.test /u:ops /p:Violet!Arch8 /cert:ignore", "Violet!Arch8"),
    ("cmdkey /add:fs01 /user:CORP\\ops /pass:Nettle^Fox2", "Nettle^Fox2"),
    ("wmic /node:host01 /user:admin /password:Sparrow#Hill4 os get caption", "Sparrow#Hill4"),
    ("schtasks /create /tn backup /tr run.bat /ru CORP\\svc /rp Pebble$Wharf6", "Pebble$Wharf6"),
    ("net use \\\\fs01\\share /user:CORP\\ops Tidal!Moss7", "Tidal!Moss7"),
    ("net user helpdesk Lichen#Bay33 /add", "Lichen#Bay33"),
    ("mysqladmin -u root -h db password 'Quiver$Elm41'", "Quiver$Elm41"),
    ("ipmitool -I lanplus -H bmc07 -U admin -P Garnet!Owl61 chassis status", "Garnet!Owl61"),
]

# A secret declared with its type between the name and the value, as typed languages write it,
# or kept in a wrapper (pydantic's `SecretStr`, a setting's default).
TYPED_DECLARATIONS = [
    ('password: Optional[str] = "Tr0ub4dor&3xyz"', "Tr0ub4dor&3xyz"),
    ('    db_password: typing.Optional[str] = "Heron!Basket42"', "Heron!Basket42"),
    ('token: str | None = "Lemur^Pocket8"', "Lemur^Pocket8"),
    ('export const apiKey: string = "Quill#Meadow5";', "Quill#Meadow5"),
    ('let secret_key: &\'static str = "s3cr3t-V4lue-99";', "s3cr3t-V4lue-99"),
    ('val dbPassword: String? = "Otter!Marble31"', "Otter!Marble31"),
    ('var dbPassword string = "tundra-Sock-19"', "tundra-Sock-19"),
    ('    password: SecretStr = SecretStr("Garnet!Owl61")', "Garnet!Owl61"),
    ('    api_key: str = Field(default="Maple#Quartz77")', "Maple#Quartz77"),
]

INTEGRITY = (
    "sha512-pU3KGCUwux1tEyze1iN7LtkeP3IfyxlxF0SU1kk8nVw0YL4xIB5p/"
    "tqg7ui5mX9cfCmZ/a/lkyU81lSvTfrXFA=="
)
UNPREFIXED = INTEGRITY.removeprefix("sha512-")[:60]

# A value on the line after its name or run on from it, a token or a number after its name: still
# the secret; so is a hash's run quoted without its algorithm, an address of a machine and a card
# written with dots.
STILL_HIDDEN = [
    ("DB_PASSWORD=\n  v9!Kq2#Lm", "v9!Kq2#Lm"),
    ("API_KEY=HOSTS=x9Qm2Lr7", "HOSTS=x9Qm2Lr7"),  # no space: one value
    ("curl -H 'Authorization: Bearer Zq8vK2mX9pL4wR7t' https://api.corp.test/v2",
     "Zq8vK2mX9pL4wR7t"),
    ("api_token = 58203917", "58203917"),
    (f'blob = "{UNPREFIXED}"', UNPREFIXED),
    ("the db container is 172.18.0.3", "172.18.0.3"), ("eth0 10.20.30.40/24", "10.20.30.40"),
    ("peer 2001:db8::7/64", "2001:db8::7"), ("pin 198.51.100.9/32", "198.51.100.9"),
    ("gateway 192.168.1.1", "192.168.1.1"),
    ("card 4111.1111.1111.1111 ok", "4111.1111.1111.1111"),
]  # fmt: skip


test_a_secret_code_gives_is_hidden = hides_each(
    {
        "call": CALL_PASSWORDS,
        "sql": SQL_PASSWORDS,
        "tool": TOOL_PASSWORDS,
        "typed_declaration": TYPED_DECLARATIONS,
        "still_hidden": STILL_HIDDEN,
    }
)


# The same calls with variables, placeholders and parameters: nothing to hide.
BENIGN_CALLS = [
    "server.login(user, password)",
    "ftp.login(FTP_USER, os.environ['FTP_PASSWORD'])",
    "mail.login(cfg.user, getpass.getpass())",
    "requests.get(url, auth=(user, token))",
    "requests.get(url, auth=(USER, os.getenv('API_PW')))",
    "r = requests.get(url, auth=HTTPBasicAuth(username, pw))",
    "new NetworkCredential(user, securePassword)",
    'new NetworkCredential("svc", Environment.GetEnvironmentVariable("SVC_PW"))',
    "DriverManager.getConnection(url, props)",
    'DriverManager.getConnection(url, "report", System.getenv("DB_PW"))',
    'req.SetBasicAuth(user, os.Getenv("PASS"))',
    'req.SetBasicAuth("svc", "<password>")',
    "ldap_bind($ds, $dn, $pw);",
    "mysqli_connect($host, $user, $pass, $db);",
    "conn = sqlite3.connect('app.db')",
    "ssh.connect(host, port, user, password)",
    "sock.bind(('127.0.0.1', 8080))",
    "handler.bind(this, 'click', 'submit')",
    'form.password("Enter your password")',
    "mail.login('reports@corp.test', '${SMTP_PASSWORD}')",
    'mail.login("reports", f"{secret}")',
    "CREATE USER 'bi'@'%' IDENTIFIED BY '<password>';",
    "CREATE USER 'bi'@'%' IDENTIFIED BY '${DB_PASS}';",
    'cursor.execute("CREATE USER %s IDENTIFIED BY %s", (name, pw))',
    "ALTER USER app IDENTIFIED BY :new_password",
    "CREATE USER scott IDENTIFIED BY &pw;",
    "CREATE USER etl IDENTIFIED EXTERNALLY;",
    "Each customer is identified by their account number.",
    "$cred = ConvertTo-SecureString $env:SVC_PW -AsPlainText -Force",
    '{"auth": ["admin", "editor"], "scopes": ["read", "write"]}',
    "sqlplus / as sysdba",
    "sqlplus app/$ORA_PW@prod",
    "net user helpdesk * /add",
    "xfreerdp /v:rdp.corp.test /u:ops /p:$RDP_PASSWORD",
    "net use Z: \\\\fs01\\share /user:CORP\\ops /persistent:no",
]

# A type is not the secret.
TYPES = [
    'password: Optional[str] = None', "def login(password: str = '') -> None:",
    "api_key = Field(default=None, description='The API key')", "var tokenCount int = 5",
    'token = tokenizer("Hello there world")', "secret_sauce: Recipe = load()",
]  # fmt: skip


# A Kubernetes Secret: base64 of a URL with a password, a user, a block scalar, a plain value.
SECRET_MANIFEST = """\
apiVersion: v1
kind: Secret
metadata:
  name: billing-secrets
  namespace: prod
type: Opaque
data:
  CACHE_URL: cmVkaXNzOi8vOk5xNHdUOHpMcDJAY2FjaGUuY29ycC50ZXN0OjYzODAvMQ==
  db-user: b3JkZXJzX2FwcA==
stringData:
  ledger.conf: |
    endpoint=https://ledger.corp.test
    signing=Nq4wT8zLp2
  region: eu-west-3
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: billing-config
data:
  LOG_LEVEL: info
  CACHE_HOST: cache.corp.test
"""


def test_every_value_of_a_kubernetes_secret_ishidden() -> None:
    for value in ("cmVkaXNzOi8vOk5xNHdUOHpMcDJAY2FjaGUuY29ycC50ZXN0OjYzODAvMQ==",
                  "b3JkZXJzX2FwcA==", "endpoint=https://ledger.corp.test", "signing=Nq4wT8zLp2",
                  "eu-west-3"):  # fmt: skip
        assert hidden(SECRET_MANIFEST, value), value
    replaced = " ".join(found(SECRET_MANIFEST))
    for kept in ("billing-secrets", "prod", "Opaque", "info", "cache.corp.test", "billing-config"):
        assert kept not in replaced.split(), kept


def test_a_secret_in_a_list_and_in_json_ishidden() -> None:
    listed = ("items:\n  - apiVersion: v1\n    kind: Secret\n    data:\n"
              "      ledger-dsn: VGFuZ28tQnJhdm8tNzc=\n  - apiVersion: v1\n    kind: ConfigMap\n"
              "    data:\n      mode: c3RyaWN0\n")  # fmt: skip
    assert hidden(listed, "VGFuZ28tQnJhdm8tNzc=")
    assert "c3RyaWN0" not in found(listed)
    as_json = ('{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}, '
               '"data": {"LEDGER_DSN": "T2xpdmUtS2l0ZS01NQ=="}}')  # fmt: skip
    assert hidden(as_json, "T2xpdmUtS2l0ZS01NQ==")
    assert "x" not in found(as_json)


# An empty value, then the next line's assignment: not the value.
EMPTY_THEN_NEXT = [
    "SECRET_KEY=\nSERVER_NAME=intranet",
    "DB_PASSWORD=\nTRUSTED_PROXIES=gateway\nDEBUG=1",
    "PASSWORD=\nCACHE_HOST=redis",
    "api_token= debug_mode=on ./run.sh",
    "smtp_password=\nLOG_FORMAT=json",
]

# A placeholder gives the secret's value: what comes after it on the line is not.
AFTER_A_PLACEHOLDER = [
    'curl -H "Authorization: Bearer $GH_TOKEN" https://billing.acme.io/v2/invoices',
    "wget --header='X-Auth-Token: ${DEPLOY_TOKEN}' https://hub.corp.test/v2/tags",
    'curl -sH "X-Api-Key: $SHOP_TOKEN" https://shop.corp.test/api/v1/orders',
    "gh run view --token $CI_TOKEN --job 8f3kQ2xLm9Vp",
]

# A URL after a secret's name is where it is kept or asked for, not the secret.
URL_AFTER_A_NAME = [
    "the token endpoint is https://auth.acme.io/v2/oauth",
    "Token refresh URL: https://auth.acme.io/v2/oauth",
    "secret store at https://vault.acme.io/v1/kv",
]

# A number a name says is a duration, a count or a size of the secret.
DURATIONS = [
    "SESSION_TOKEN_EXPIRY_SECONDS = 7200",
    "ACCESS_TOKEN_EXPIRE_MINUTES=1440",
    '"session_id_max_age": 1209600',
    "PASSWORD_RESET_TIMEOUT_DAYS: 1000",
    "jwt_secret_rotation_days = 3650",
    "api_key_ttl_ms: 86400000",
    "REFRESH_TOKEN_LIFETIME_HOURS=8760",
    "SECRET_KEY_MAX_AGE_SECONDS=604800",
]

# A quoted hash given with its algorithm (a lock file's `integrity`).
HASHES_WITH_THEIR_ALGORITHM = [
    f'"integrity": "{INTEGRITY}",',
    f"integrity: '{INTEGRITY}'",
    '"resolved": "x", "integrity": "sha1-J6Cus/7pIy+K8iEfnuSRxbEL7LU="',
]

# A ConfigMap, a Secret's values by reference; code and decimals that look like values.
CONFIG_AND_CODE = [
    "kind: ConfigMap\ndata:\n  REDIS_URL: cmVkaXM6Ly9jYWNoZTo2Mzc5\n  MODE: fast\n",
    "kind: Secret\ndata:\n  password: {{ .Values.dbPassword | b64enc }}\n  user: ${DB_USER}\n",
    "const token = await getToken();", "secret = new Secret(name)",
    "docker run -d -e POSTGRES_PASSWORD=$POSTGRES_PASSWORD postgres:16",
    "sqrt(2) = 1.4142135623730951 and e = 2.718281828459045",
]  # fmt: skip


test_code_that_names_a_secret_without_giving_one_stays = leaves_each(
    {
        "empty_then_next": EMPTY_THEN_NEXT,
        "after_a_placeholder": AFTER_A_PLACEHOLDER,
        "url_after_a_name": URL_AFTER_A_NAME,
        "duration": DURATIONS,
        "hash_with_its_algorithm": HASHES_WITH_THEIR_ALGORITHM,
        "config_or_code": CONFIG_AND_CODE,
    }
)


# Addresses that name no machine.
NO_MACHINES = [
    "bind 127.0.0.1:6379", "listen on 0.0.0.0 port 80", "[::1]:8443 and [::]:8443",
    "loopback 0:0:0:0:0:0:0:1", "allow 10.0.0.0/8, 192.168.0.0/16 and 172.16.0.0/12",
    "route 2001:db8::/32 via the gateway", "host ::ffff:127.0.0.1 only",
]  # fmt: skip


# (the kinds, a text with no value of them): a call given a variable, a placeholder or a type has
# no password; an address that names no machine is none.
test_what_only_looks_like_a_value_of_its_kind_stays = leaves_each_by_kinds(
    {"PASSWORD,SECRET": BENIGN_CALLS + TYPES, "IP_ADDRESS": NO_MACHINES}
)
