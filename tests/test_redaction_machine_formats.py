"""Machine formats an agent reads in tool output: CI/CD and service configs, cloud CLI output,
network device configs, database dumps, notebooks and markup. The secrets and personal data they
hold are found (an OpenVPN static key, an FCM server key, an LDAP bind password, a device's
`enable secret`, an address and its password, a token piped into a `login`, an address inside
base64 JSON, the rows of a `COPY ... FROM stdin`, a psql or mysql table, an HTML table, an
element or a form field that names personal data, an INI section), and what only looks like one
stays (a public key under its name, a cloud resource's id, an assignment whose value is an id, a
secret's id or path, a name inside an ARN or a template, a masked value, a placeholder webhook,
a URL's user, ciphertext, docker's own warning about `--password`, a mapping under
`password:`)."""

from __future__ import annotations

import base64
import json

import pytest

from tests.helpers.redaction import found, hidden, hides_each, leaves_each

pytestmark = pytest.mark.unit

_HEX_LINES = "\n".join(f"{i:02d}f4c1a9e07b3d58c2{i:02d}a96e1f0b7d3c5a8" for i in range(16))
_FCM = "AAAAx7Kp2Qz:APA91b" + ("Hq3vN8sL2mR7tW4yZ9aB1cD6eF0gJ5kP-_" * 4)[:134]

SECRETS = [
    # An OpenVPN static key (`<tls-auth>`, `<tls-crypt>`): both ends of the tunnel hold it.
    (f"<tls-crypt>\n-----BEGIN OpenVPN Static key V1-----\n{_HEX_LINES}\n"
     "-----END OpenVPN Static key V1-----\n</tls-crypt>\n", _HEX_LINES),
    (f"FCM_SERVER_KEY={_FCM}\n", _FCM),
    ("URI ldaps://ldap.corp.test\nBINDDN cn=reader,dc=corp,dc=test\nBINDPW Kv8-lamp-Rq2\n",
     "Kv8-lamp-Rq2"),
    ('database mdb\nrootdn "cn=Manager,dc=corp,dc=test"\nrootpw Zt4!harbor9\n', "Zt4!harbor9"),
    ("[domain/corp.test]\nldap_default_authtok_type = password\nldap_default_authtok = Pw7#delta\n",
     "Pw7#delta"),
    ("hostname edge-rt2\nenable secret 0 Mq5$tundra\n!\n", "Mq5$tundra"),
    ("username netops privilege 15 secret 0 Lr3&canyon7\n", "Lr3&canyon7"),
    ("username backup password 7 0822455D0A16544541\n", "0822455D0A16544541"),
    ("listen stats\n    bind :8404\n    stats auth ops:Vb2%meadow\n", "Vb2%meadow"),
    ("userlist ops\n    user viewer insecure-password Hn6^quartz\n", "Hn6^quartz"),
    ('createUser monitor SHA "Gf5#lantern" AES "Yk2@ember7"\n', "Gf5#lantern"),
    ('createUser monitor SHA "Gf5#lantern" AES "Yk2@ember7"\n', "Yk2@ember7"),
    ("snmp-server community Rt9-prairie RO\n", "Rt9-prairie"),
    # An address and its password: postfix's sasl_passwd, a combo list.
    ("[smtp.mail.test]:587    alerts@corp.test:Jd8*willow\n", "Jd8*willow"),
    ("leaked:\nmarek.n@mail.test:Qw4-orchid!\n", "Qw4-orchid!"),
    # A token echoed into a command's login, which reads it from its input.
    ("echo ynq4hs7wd2kp9xv3mf6tb8rj5cl1ga0ze7uq2ni4os9bw3ek | az devops login --org https://x\n",
     "ynq4hs7wd2kp9xv3mf6tb8rj5cl1ga0ze7uq2ni4os9bw3ek"),
    ("echo hq7ws3kd9pl2mx8vn4tb6rj1cz5gf0ye | cf auth --with-token\n",
     "hq7ws3kd9pl2mx8vn4tb6rj1cz5gf0ye"),
    # An element or a form's field that names a secret or personal data holds its value.
    ("<card><holder>x</holder><pin>4829</pin></card>", "4829"),
    ("<customer><ssn>078-05-1120</ssn></customer>", "078-05-1120"),
]  # fmt: skip


test_a_secret_in_a_config_or_a_command_line_is_hidden = hides_each(SECRETS, spaces=False)


def _b64json(data: dict, urlsafe: bool = False) -> str:
    raw = json.dumps(data).encode()
    return (base64.urlsafe_b64encode(raw).decode().rstrip("=") if urlsafe
            else base64.b64encode(raw).decode())  # fmt: skip


@pytest.mark.parametrize("urlsafe", [False, True])
def test_an_address_inside_base64_json_is_hidden(urlsafe: bool) -> None:
    encoded = _b64json({"uid": 4411, "mail": "ines.ferreira@mail.test", "cart": 2}, urlsafe)
    for text in (f"Cookie: prefs={encoded}; theme=dark", f"GET /cb?code=x&state={encoded}"):
        assert hidden(text, encoded)


def test_base64_json_without_an_address_stays() -> None:
    encoded = _b64json({"event": "deploy", "version": "2.14.0", "region": "eu-west-1"})
    assert found(f"payload: {encoded}") == []


PERSONAL = [
    ("COPY public.members (id, full_name, email, joined) FROM stdin;\n"
     "1\tHelga Sørensen\thelga.s@mail.test\t2024-01-02\n"
     "2\tTomasz Wójcik\ttw@mail.test\t2024-02-03\n\\.\n", ["Helga Sørensen", "Tomasz Wójcik"]),
    (" id |     name      |        email\n----+---------------+--------------------\n"
     "  1 | Helga Sørensen | helga.s@mail.test\n  2 | Tomasz Wójcik | tw@mail.test\n(2 rows)\n",
     ["Helga Sørensen", "Tomasz Wójcik"]),
    ("+----+----------------+-------------------+\n| id | name           | email             |\n"
     "+----+----------------+-------------------+\n|  1 | Helga Sørensen | helga.s@mail.test |\n"
     "+----+----------------+-------------------+\n", ["Helga Sørensen"]),
    ("<table><tr><th>name</th><th>email</th></tr>"
     "<tr><td>Helga Sørensen</td><td>helga.s@mail.test</td></tr></table>", ["Helga Sørensen"]),
    ("<member><name>Helga Sørensen</name><email>helga.s@mail.test</email></member>",
     ["Helga Sørensen"]),
    ('<input id="fn" name="fullname" value="Helga Sørensen">', ["Helga Sørensen"]),
    ("[user]\n\tname = Helga Sørensen\n\temail = helga.s@mail.test\n", ["Helga Sørensen"]),
    ("GIT_AUTHOR_NAME=Helga Sørensen\nGIT_AUTHOR_EMAIL=helga.s@mail.test\n", ["Helga Sørensen"]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "names"), PERSONAL)
def test_a_name_in_a_dump_a_table_markup_or_a_config_is_hidden(text: str, names: list) -> None:
    for name in names:
        assert hidden(text, name)


BENIGN = [
    "WARNING! Using --password via the CLI is insecure. Use --password-stdin.\n",
    "security:\n  password:\n    min_length: 14\n    max_age_days: 90\n",
    "ansible_password: \"{{ lookup('env', 'ANSIBLE_PASSWORD') }}\"\n",
    "        - name: DB_PASSWORD\n          valueFrom:\n            secretKeyRef:\n"
    "              name: {{ .Values.db.secretName }}\n",
    "[Peer]\nPublicKey = xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=\nPersistentKeepalive = 25\n",
    "interface: wg0\n  public key: HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=\n",
    'vpc_id = "vpc-0e9801d129a3b4c5d"\nsubnet: subnet-0bb1c79de3a4f5e6d\n',
    "HOSTNAME=checkout-api-7d9f8c6b5-x2k9p\n",
    'ts=2026-12-06T10:02:11Z level=info request_id=01HGW2N7ZK8Q5V4T3S2R1P0NMB status=200\n',
    "OAUTH_CLIENT_ID=1048576204857-abc123def456.apps.googleusercontent.com\n",
    "withCredentials([usernamePassword(credentialsId: 'nexus-deploy', "
    "usernameVariable: 'USER', passwordVariable: 'PASS')]) {\n",
    "    SecretsFilter: 'DbPassword,ApiKey'\n",
    '{"KeyMetadata":{"KeyId":"1234abcd-12ab-34cd-56ef-1234567890ab","KeyState":"Enabled"}}\n',
    '{"ARN":"arn:aws:secretsmanager:eu-west-1:secret:prod/db-AbCdEf","Name":"prod/db"}\n',
    "MasterUserPassword: '{{resolve:secretsmanager:prod/db:SecretString:password}}'\n",
    "xpack.security.transport.ssl.keystore.path: elastic-certificates.p12\n",
    '{"keystore": "elastic-certificates.p12", "keystore_type": "PKCS12"}\n',
    "DOCKER_PASS=xxxxjK9a\nAWS_SECRET_ACCESS_KEY=xxxx8fQ2\n",
    "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/XXXXXXXXX/XXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX\n",

    'env:\n  global:\n    - secure: "gSly+Kvzd5uSul15CVaEV91ALwsGSU7yJLHSK0vk+oqjmLm0jp05iiKf"\n',
    "config:\n  app:dbPassword:\n    secure: AAABAHxVhQz1FQe2Zs3d0ubU0N6r7r6cR5eC3ZnA==\n",

    " id |    sku    |   title\n----+-----------+------------\n  1 | SKU-88421 | USB-C cable\n",
    "<table><tr><th>Package</th><th>Version</th></tr><tr><td>numpy</td><td>1.26.4</td></tr></table>",
    "<project><name>lowtide-core</name><version>2.14.0</version></project>\n",
    '<input type="hidden" name="name" value="checkout-form">\n',
    "[metadata]\nname = lowtide\nversion = 2.14.0\n",
    "git@github.com:acme/app.git\nhttps://api.example.test:8443/health\n",
]  # fmt: skip


@pytest.mark.parametrize("text", BENIGN)
def test_what_only_looks_like_a_secret_or_a_name_in_machine_output_stays(text: str) -> None:
    # An address is one wherever it stands (`release@project.test`): only the rest is asked.
    kept = [value for value in found(text) if "@" not in value]
    assert kept == [], kept


test_a_urls_user_or_a_copys_login_is_no_address = leaves_each(
    [
        # A URL's user (a Sentry DSN's public key), a login on a host after the files `scp`
        # copies: no mailbox.
        "SENTRY_DSN=https://6c664dcf68387198849b2f2fd3e91145@o450123.ingest.sentry.io/5512345\n",
        "scp build-4821.tar.gz deploy@web01.example.test:releases/\n",
        "rsync -az dist/ ci@cache.example.test:artifacts/\n",
    ]
)


def test_a_keys_display_name_is_no_persons() -> None:
    text = "uid           [ultimate] Release Signing Key <release@project.test>\n"
    assert found(text) == ["release@project.test"]
