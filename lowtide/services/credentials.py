"""Label Studio login and API token: from the environment, else a local `.env`, else generated
(with them, for a new setup, the key that seals review tasks: LOWTIDE_TASK_KEY). The Redis that
`lowtide up` starts has a generated password too, kept as REDIS_URL in the same file.

The generated values are appended to `.env` (git-ignored, mode 600) so that every later command,
and Label Studio itself, agree on them. Nothing here prints a secret.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dotenv import dotenv_values

from rl.atomic_file import write_text_atomically
from rl.masking import url_has_secret, url_without_secrets

USERNAME_VAR = "LABEL_STUDIO_USERNAME"
PASSWORD_VAR = "LABEL_STUDIO_PASSWORD"
API_KEY_VAR = "LABEL_STUDIO_API_KEY"
TASK_KEY_VAR = "LOWTIDE_TASK_KEY"  # the key of task seals (annotation/task_seal.py)
REDIS_URL_VAR = "REDIS_URL"
DEFAULT_USERNAME = "admin@lowtide.local"  # Label Studio wants an email-like login


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str
    api_key: str
    env_file: Path


def env_file_path() -> Path:
    return Path(os.environ.get("LOWTIDE_ENV_FILE") or Path.cwd() / ".env")


def read_env_file(path: Path) -> dict[str, str]:
    """The file's KEY=VALUE pairs, read as python-dotenv reads them (comments, quotes, `export`);
    a missing file is empty."""
    if not path.is_file():
        return {}
    return {key: value for key, value in dotenv_values(path).items() if value is not None}


# What `.env` may set: lowtide's services and their secrets. A `.env` is read from the current
# directory, which may be a folder someone else wrote (a checkout, a copied run): a variable
# that names code or a file to load (LOWTIDE_CONFIG, PYTHONPATH, LD_PRELOAD) never comes from it.
ENV_FILE_VARIABLES = frozenset(
    {USERNAME_VAR, PASSWORD_VAR, API_KEY_VAR, "LABEL_STUDIO_URL", REDIS_URL_VAR, "WANDB_API_KEY",
     "LOWTIDE_TASK_KEY", "LOWTIDE_PROXY_TOKEN"}
)  # fmt: skip
_LOADS_CODE = ("LOWTIDE_", "PYTHON", "LD_", "DYLD_")


def load_env_file_into_environ(path: Path | None = None) -> list[str]:
    """Make `.env` values visible to config loading (`environ_with_env_file`). Returns a line to
    show where the file set variables that name code or files to load, which it leaves alone."""
    path = path or env_file_path()
    merged, ignored = _merged(os.environ, read_env_file(path))
    for key, value in merged.items():
        if os.environ.get(key) != value:
            os.environ[key] = value
    if not ignored:
        return []
    names = ", ".join(sorted(ignored)[:5]) + (" ..." if len(ignored) > 5 else "")
    return [f"{path}: ignored {names} (a .env sets only lowtide's services and secrets)"]


def environ_with_env_file(environ: Mapping[str, str], path: Path | None = None) -> dict[str, str]:
    """`environ` with what `.env` adds, for a library caller (a trainer's own script) that must
    not have its process environment changed: real variables win (an empty one counts as
    unset, as it does for the config), except that a REDIS_URL without a password takes the
    file's password for the same server (what `lowtide up` wrote for the Redis it started)."""
    return _merged(environ, read_env_file(path or env_file_path()))[0]


def _merged(
    environ: Mapping[str, str], stored: Mapping[str, str]
) -> tuple[dict[str, str], list[str]]:
    merged, ignored = dict(environ), []
    for key, value in stored.items():
        if key not in ENV_FILE_VARIABLES:
            if key.startswith(_LOADS_CODE):
                ignored.append(key)
        elif not merged.get(key):
            merged[key] = value
        elif key == REDIS_URL_VAR:
            merged[key] = same_server_with_password(merged[key], value)
    return merged, ignored


def same_server_with_password(url: str, stored: str | None) -> str:
    """`stored` where `url` has no password and `stored` is the same server's URL with one (what
    `up` wrote for the Redis it started at a REDIS_URL the user set without one); else `url`."""
    if not stored or url_has_secret(url) or not url_has_secret(stored):
        return url
    return stored if url_without_secrets(stored) == url_without_secrets(url) else url


def stored_redis_url(url: str, path: Path | None = None) -> str:
    """`url`, with the password `.env` keeps for that server when it has none of its own."""
    stored = read_env_file(path or env_file_path()).get(REDIS_URL_VAR)
    return same_server_with_password(url, stored)


def save_redis_url(url: str, path: Path | None = None) -> Path:
    """Keep `url` (with the password `up` generated) as REDIS_URL in `.env`, mode 600. An earlier
    REDIS_URL line there is commented out, not deleted: it may be the user's."""
    path = path or env_file_path()
    existing = path.read_text() if path.exists() else ""
    lines = existing.splitlines(keepends=True)
    if not any(_defines(line, REDIS_URL_VAR) for line in lines):
        _append(path, {REDIS_URL_VAR: url}, "the local Redis")
        return path
    kept = [f"# replaced by `lowtide up`: {line}" if _defines(line, REDIS_URL_VAR) else line
            for line in lines]  # fmt: skip
    if kept and not kept[-1].endswith("\n"):
        kept[-1] += "\n"
    header = "# generated by `lowtide up` for the local Redis\n"
    write_text_atomically(path, "".join(kept) + header + f"{REDIS_URL_VAR}={url}\n")  # 0600
    return path


def _defines(line: str, name: str) -> bool:
    assignment = line.strip().removeprefix("export").lstrip()
    return assignment.partition("=")[0].strip() == name and "=" in assignment


def ensure_credentials(path: Path | None = None) -> Credentials:
    path = path or env_file_path()
    stored = read_env_file(path)
    wanted = {
        USERNAME_VAR: lambda: DEFAULT_USERNAME,
        PASSWORD_VAR: lambda: secrets.token_urlsafe(18),
        API_KEY_VAR: lambda: secrets.token_hex(20),
    }
    values: dict[str, str] = {}
    missing: dict[str, str] = {}
    for name, make in wanted.items():
        value = os.environ.get(name) or stored.get(name)
        if not value:
            value = missing[name] = make()
        values[name] = value
    if API_KEY_VAR in missing and not (os.environ.get(TASK_KEY_VAR) or stored.get(TASK_KEY_VAR)):
        # A new setup gets a task seal key of its own. Not added to an existing one: its tasks
        # are sealed with the key derived from its API token, which a new key would not match.
        missing[TASK_KEY_VAR] = secrets.token_hex(32)
    if missing:
        _append(path, missing, "the local Label Studio")
    return Credentials(values[USERNAME_VAR], values[PASSWORD_VAR], values[API_KEY_VAR], path)


def _append(path: Path, values: dict[str, str], purpose: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = path.read_text() if path.exists() else ""
    needs_newline = bool(existing) and not existing.endswith("\n")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a") as handle:
        if needs_newline:  # a hand-edited .env may lack its last newline
            handle.write("\n")
        handle.write(f"# generated by `lowtide up` for {purpose}\n")
        for name, value in values.items():
            handle.write(f"{name}={value}\n")
    os.chmod(path, 0o600)
