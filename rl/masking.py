"""The one place that knows what is secret, and the masker every output goes through.

A secret reaches lowtide two ways: as a value of its own (an API token, a key) in an environment
variable, or inside a URL (`redis://user:pw@host`, `redis://host/0?password=pw`,
`https://host/?token=...`). `mask_url` hides the second kind wherever a URL is shown;
`mask_text` hides both kinds in any text (messages, log lines, failed-job records), by the URL
shapes and by the values the environment holds now. Nothing here raises on a malformed URL: a
masker that fails would let the text through unmasked, or lose the message.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

MASK = "****"

# Whole values that are secrets. A `<NAME>_FILE` variable names a file holding one (Docker and
# Kubernetes secrets); what the file holds is read where it is used and masked as the value.
SECRET_VARIABLES = (
    "LABEL_STUDIO_API_KEY",
    "LABEL_STUDIO_PASSWORD",
    "WANDB_API_KEY",
    "LOWTIDE_TASK_KEY",
    "LOWTIDE_PROXY_TOKEN",
    "REDIS_PASSWORD",
    "HF_TOKEN",
)
# URLs whose password (in either form) is a secret.
URL_VARIABLES = ("REDIS_URL", "LABEL_STUDIO_URL")

# Query keys whose value is a credential (redis-py passes `?password=` to the connection):
# one of these words, alone or last after `_` or `-` (`db_password`, `x-api-key`).
_CREDENTIAL_WORDS = (
    r"(?:pass|password|passwd|pwd|secret|token|auth|key|apikey|sig|signature|credentials?)"
)
_SECRET_QUERY_KEY = re.compile(rf"(?i)^(?:.*[_-])?{_CREDENTIAL_WORDS}$")
# A URL inside free text: the scheme, then everything up to white space or a quote.
# No word boundary before the scheme: a URL glued to a long word (`...failedredis://:pw@h`)
# is still a URL; its scheme is then the last 21 characters of the word.
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s'\"<>`]+")
# Userinfo the URL parser could not read (a malformed port, say): hide what follows the colon.
_RAW_USERINFO = re.compile(r"(://[^/@:\s]*):[^/@\s]*@")
_RAW_QUERY_SECRET = re.compile(rf"(?i)([?&;](?:[\w.-]*[_-])?{_CREDENTIAL_WORDS}=)[^&#\s]*")
MIN_SECRET_CHARS = 4  # a shorter value would mask ordinary words; URLs still hide it by shape


def is_secret_query_key(key: str) -> bool:
    return _SECRET_QUERY_KEY.match(key) is not None


def url_has_secret(url: str) -> bool:
    """Whether the URL carries a password: in its userinfo or as a credential query key."""
    return mask_url(url) != url


def mask_url(url: str) -> str:
    """`redis://u:pw@h/0?password=pw&db=1` -> `redis://u:****@h/0?password=****&db=1`."""
    try:
        parts = urlsplit(url)
        netloc = _masked_netloc(parts.netloc)
        query = _masked_query(parts.query)
        if netloc == parts.netloc and query == parts.query:
            return _masked_raw(url)  # nothing by the parser; a shape it could not read still
        return urlunsplit(parts._replace(netloc=netloc, query=query))
    except ValueError:
        return _masked_raw(url)


def url_without_secrets(url: str) -> str:
    """The URL with its credentials left out: what identifies a server in a file name or a
    key, so that a hash of it is no offline test of a guessed password."""
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        user = parts.username
        netloc = f"{user}@{host}" if user else host
        kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                if not is_secret_query_key(k)]  # fmt: skip
        query = "&".join(f"{quote(k)}={quote(v)}" for k, v in kept)
        return urlunsplit(parts._replace(netloc=netloc, query=query))
    except ValueError:
        return _masked_raw(url)


def known_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The secret values the environment holds now, longest first (so that a secret that
    contains another is masked whole)."""
    environ = os.environ if environ is None else environ
    names = [*SECRET_VARIABLES, *URL_VARIABLES]
    # Every console write and log record asks: read files only when the variables change.
    return list(_secrets_of(tuple((n, environ.get(n), environ.get(f"{n}_FILE")) for n in names)))


@functools.lru_cache(maxsize=8)
def _secrets_of(variables: tuple[tuple[str, str | None, str | None], ...]) -> tuple[str, ...]:
    found: set[str] = set()
    for name, value, path in variables:
        values = _value_and_file(value, path)
        if name in URL_VARIABLES:
            values = [password for url in values for password in _url_passwords(url)]
        found.update(values)
    return tuple(sorted((s for s in found if len(s) >= MIN_SECRET_CHARS), key=len, reverse=True))


def mask_text(text: str, secrets: Iterable[str] | None = None) -> str:
    """Any text with the passwords of the URLs in it, and every known secret value (as it is
    and as a URL would encode it), replaced by the mask."""
    masked = _URL_IN_TEXT.sub(lambda match: mask_url(match.group(0)), text)
    for secret in known_secrets() if secrets is None else secrets:
        if len(secret) < MIN_SECRET_CHARS:
            continue
        masked = masked.replace(secret, MASK)
        encoded = quote(secret, safe="")
        if encoded != secret:
            masked = masked.replace(encoded, MASK)
    return masked


def install_log_masking() -> None:
    """Mask every log record as it is made, whichever handler writes it (a command's own, the
    root's, logging's last resort): its message, and its traceback formatted now."""
    factory = logging.getLogRecordFactory()
    if getattr(factory, "masks", False):
        return

    def masked_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: let logging report it as it would
            return record
        record.msg, record.args = mask_text(message), ()
        if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
            record.exc_text = mask_text(logging.Formatter().formatException(record.exc_info))
        return record

    masked_record.masks = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(masked_record)


# ---- parts ------------------------------------------------------------------------------------


def _masked_netloc(netloc: str) -> str:
    userinfo, at, host = netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return netloc
    user = userinfo.partition(":")[0]
    return f"{user}:{MASK}@{host}"


def _masked_query(query: str) -> str:
    if not query:
        return query
    pieces = []
    for piece in re.split(r"([&;])", query):
        key, equals, value = piece.partition("=")
        if equals and value and is_secret_query_key(unquote(key)):
            piece = f"{key}={MASK}"
        pieces.append(piece)
    return "".join(pieces)


def _masked_raw(url: str) -> str:
    masked = _RAW_USERINFO.sub(lambda m: f"{m.group(1)}:{MASK}@", url)
    return _RAW_QUERY_SECRET.sub(lambda m: f"{m.group(1)}{MASK}", masked)


def _url_passwords(url: str) -> list[str]:
    found: list[str] = []
    try:
        parts = urlsplit(url)
        if parts.password:
            found += [parts.password, unquote(parts.password)]
        for key, value in parse_qsl(parts.query, keep_blank_values=False):
            if is_secret_query_key(key):
                found.append(value)
    except ValueError:
        pass
    return found


def _value_and_file(value: str | None, path: str | None) -> list[str]:
    values = [value or ""]
    if path:
        try:
            with open(path, encoding="utf-8") as handle:
                values.append(handle.read(64 * 1024).strip())
        except (OSError, UnicodeDecodeError):
            pass  # the config's own reading of the file says what is wrong with it
    return [value for value in values if value]
