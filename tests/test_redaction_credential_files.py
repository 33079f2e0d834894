"""Credential and config files an agent reads, and command output: the secrets they hold are
found (password hashes, a daemon's password directive, a Terraform variable's default, WordPress
keys and salts, an app password, an Erlang cookie), and what only looks like one stays (a
certificate in base64, a key's fingerprint or id, a program's version, a path, a masked value,
a reference to a Secret kept elsewhere, a prompt that asks again)."""

from __future__ import annotations

import base64

import pytest

from tests.helpers.redaction import REDACTOR, hidden, hides_each

pytestmark = pytest.mark.unit


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


_SHA512 = "Bn4Vc7Xz1Mq5Wr8Ty2Ui6Op9As3Df7Gh0Jk4Lz8Xc2Vb6Nm9Qw3Er7Ty1Ui5Op8As2Df6Gh9Jk3Lz7Xc1Vb5Nm8"
# (a line of .htpasswd, /etc/shadow or LDIF, its hash, the scheme that stays in sight)
HASHES = [
    ("ops:$apr1$Wq3nTz8p$hR5vLx2KcJ9mB4sNd7Ya1.\n", "hR5vLx2KcJ9mB4sNd7Ya1.", "$apr1$"),
    ("mira:$2y$12$Pc6Hd9Lw2Qz5Rt8Kx1Vm4eNb7Sf3Gj0Ya6Uo9Ie2Tr5Wq8Ln1Mz4K\n",
     "Pc6Hd9Lw2Qz5Rt8Kx1Vm4eNb7Sf3Gj0Ya6Uo9Ie2Tr5Wq8Ln1Mz4K", "$2y$12$"),
    (f"deploy:$6$Fk2Lp9Qz${_SHA512}:19876:0:99999:7:::\n", _SHA512, "$6$"),
    ("userPassword: {SSHA}q7Lp2Xv9Nc4Rt8Bz1Mk5Hd3Wf6Ys0Je=\n", "q7Lp2Xv9Nc4Rt8Bz1Mk5Hd3Wf6Ys0Je=",
     "{SSHA}"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "value", "scheme"), HASHES)
def test_a_password_hash_is_hidden_and_its_scheme_stays(text: str, value: str, scheme: str) -> None:
    assert hidden(text, value)
    assert scheme in REDACTOR.redact([text]).texts[0]


CONFIG_SECRETS = [
    ("port 6380\nrequirepass Tq4-vault-Mz9\nappendonly yes\n", "Tq4-vault-Mz9"),
    ("replicaof 10.0.0.4 6379\nmasterauth Hx7Pw2Lr\n", "Hx7Pw2Lr"),
    # A Redis ACL user's password after `>`, in users.acl and ACL SETUSER.
    ("user default off\nuser billing_svc on >Kq7!vRw2-zLp ~billing:* +@all\n", "Kq7!vRw2-zLp"),
    ("ACL SETUSER reporter on >Brass9Kettle ~reports:* +get", "Brass9Kettle"),
    ('variable "admin_password" {\n  type      = string\n  sensitive = true\n'
     '  default   = "orbit-Lantern-77"\n}\n', "orbit-Lantern-77"),
    ("define( 'LOGGED_IN_SALT', 'v8#Qm!2Lz@9Wx$4Nk%7Rb^1Yt&5Hc*3Js(6Gd)0Fp-8Ae_2Ur+' );\n",
     "v8#Qm!2Lz@9Wx$4Nk%7Rb^1Yt&5Hc*3Js(6Gd)0Fp-8Ae_2Ur+"),
    ("mail:\n  username: reports@corp.test\n  password: vkqe zrmt pxbw hjnu\n",
     "vkqe zrmt pxbw hjnu"),
    ("RABBITMQ_ERLANG_COOKIE=WZQTPLMXKRVNBCYHDGSF\nRABBITMQ_NODENAME=rabbit@mq1\n",
     "WZQTPLMXKRVNBCYHDGSF"),
]  # fmt: skip


test_a_config_files_secret_ishidden = hides_each(CONFIG_SECRETS)


def test_a_kubeconfigs_key_goes_and_its_certificates_stay() -> None:
    body = "MIIC/zCCAeegAwIBAgIBADANBgkqhkiG9w0BAQsFADAVMRMwEQYDVQQDEwprdWJlcm5ldGVz\n" * 3
    cert = _b64(f"-----BEGIN CERTIFICATE-----\n{body}-----END CERTIFICATE-----\n")
    key = _b64(
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIPq8Zt3Lw6Nc1Vb\n-----END EC PRIVATE KEY-----\n"
    )
    text = (
        f"clusters:\n- cluster:\n    certificate-authority-data: {cert}\n"
        f"    server: https://10.0.0.1:6443\nusers:\n- name: ops\n  user:\n"
        f"    client-certificate-data: {cert}\n    client-key-data: {key}\n"
    )
    assert hidden(text, key)
    assert REDACTOR.redact([text]).texts[0].count(cert) == 2


LEFT = [
    # Files and config whose values are no secret.
    "port 6379\n# requirepass foobared\nappendonly yes\n",
    "user analytics on nopass ~* +@read\n",  # an ACL user with no password
    'variable "region" {\n  default = "eu-north-1"\n}\n'
    'variable "db_password" {\n  type = string\n}\n',
    "define( 'NONCE_KEY', 'put your unique phrase here' );\n",
    # A certificate's body in base64, a program's version, a key's id or fingerprint.
    '"HttpHeaders": {"User-Agent": "Podman-Remote/4.9.3 (linux)"}',
    "sec   rsa4096/8C2E41F7B35A9D60 2023-05-02 [SC]\nssb   rsa4096/1F7D3A95C8E02B46 2023-05-02 [E]",
    "|1|Zk3Qw8Lp2Vn7Xc4Tb9Rm1Hs6Jd0=|Yq5Ne2Wk8Lz3Vc7Pb1Xm4Ts9Rh6= ssh-ed25519 AAAAC3NzaC1lZDI1NTE5",
    "The key fingerprint is:\nSHA256:Tq9Lm4Xz7Vc2Nb8Rk1Hd5Wf3Ys6Jp0Ge2Ua4Oi7Ke9Z ops@build",
    '"Env": ["GPG_KEY=A035C8C19219BA821ECEA86B64E628F8D684696D", "LANG=C.UTF-8"]',
    # The shell's working directory, a socket's path, a masked token, a Terraform plan's mask.
    "HOSTNAME=runner-3\nPWD=/srv\nOLDPWD=/home/ci\nSHLVL=2\n",
    "SSH_AUTH_SOCK=/tmp/ssh-Qz7wLx2Mk9/agent.4821\n",
    "  - Token: gho_************************************\n",
    '      + password = (sensitive value)\n      + port     = 5432\n',
    # Names around a secret that are no secret's value: a Helm chart's references, limits.
    "auth:\n  existingSecret: mq-credentials\n  passwordSecretKey: rabbitmq-password\n",
    "TOKEN_TTL_SECONDS=900\nPASSWORD_MIN_LENGTH=14\nSECRET_NAME=prod/api\nAPI_KEY_HEADER=X-Api-Key\n",
    # A prompt that asks for the password again.
    "$ htpasswd -c /etc/apache2/.htpasswd ci\nNew password: \nRe-type new password: \n"
    "Adding password for user ci\n",
]  # fmt: skip


@pytest.mark.parametrize("text", LEFT)
def test_what_only_looks_like_a_secret_stays(text: str) -> None:
    assert REDACTOR.redact([text]).texts[0] == text
