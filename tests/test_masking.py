"""The one masker (rl/masking.py): a password in any URL form, or any secret the environment
holds, never reaches an output; it never raises on what it is given."""

from __future__ import annotations

import logging
import string
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rl.masking import (
    MASK,
    install_log_masking,
    known_secrets,
    mask_text,
    mask_url,
    url_has_secret,
    url_without_secrets,
)

pytestmark = pytest.mark.unit

PASSWORDS = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="*"),
    min_size=4,
    max_size=40,
)  # a password of stars would read as masked


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("redis://:pw@host:6379/0", "redis://:****@host:6379/0"),
        ("rediss://user:p%40ss@host/1", "rediss://user:****@host/1"),
        ("redis://host:6379/0?password=pw", "redis://host:6379/0?password=****"),
        ("redis://host/0?db=1&password=pw&ssl=1", "redis://host/0?db=1&password=****&ssl=1"),
        ("https://ls/?api_token=abc&x=1", "https://ls/?api_token=****&x=1"),
        ("https://u:pw@ls:notaport/", "https://u:****@ls:notaport/"),  # the parser gives up
        ("http://ls/?page=2", "http://ls/?page=2"),
    ],
)
def test_each_url_form_is_masked(url: str, shown: str) -> None:
    assert mask_url(url) == shown
    assert url_has_secret(url) is (url != shown)


@given(PASSWORDS, st.sampled_from(["userinfo", "query"]))
@settings(max_examples=150, deadline=None)
def test_a_password_never_survives_masking(password: str, form: str) -> None:
    encoded = quote(password, safe="")
    url = (
        f"redis://app:{encoded}@redis.internal:6379/0"
        if form == "userinfo"
        else f"redis://redis.internal:6379/0?password={encoded}"
    )
    masked = mask_url(url)
    parts = urlsplit(masked)
    shown = parts.password if form == "userinfo" else parse_qs(parts.query)["password"][0]
    assert shown == MASK
    assert url_has_secret(url)
    assert url_without_secrets(url) in ("redis://app@redis.internal:6379/0",
                                        "redis://redis.internal:6379/0")  # fmt: skip
    env = {"REDIS_URL": url}
    text = f"cannot reach {url} (password {password}, encoded {encoded})"
    assert password not in mask_text(text, known_secrets(env))
    assert encoded not in mask_text(text, known_secrets(env))


@given(st.text(string.ascii_letters + "+.-", max_size=60), st.sampled_from(["redis", "https"]))
@example("y" * 30, "redis")  # longer than any scheme
@settings(max_examples=100, deadline=None)
def test_a_url_glued_to_any_word_has_its_password_masked(before: str, scheme: str) -> None:
    text = f"error: {before}{scheme}://app:hunter2x@redis.internal:6379/0 refused"
    assert "hunter2x" not in mask_text(text, [])


@given(st.text(max_size=300))
@settings(max_examples=200, deadline=None)
def test_the_masker_never_raises(text: str) -> None:
    mask_url(text)
    url_has_secret(text)
    url_without_secrets(text)
    mask_text(text, ["s3cret-value"])


def test_secrets_come_from_the_environment_and_files_they_name(tmp_path) -> None:
    secret_file = tmp_path / "key"
    secret_file.write_text("from-a-file-123\n")
    env = {
        "LABEL_STUDIO_API_KEY": "tok-abcdef",
        "WANDB_API_KEY_FILE": str(secret_file),
        "LABEL_STUDIO_URL": "https://me:ls-pass-1@ls",
        "REDIS_URL": "redis://h/0?password=redis-pass-2",
        "HOME": "/root",  # not a secret
    }
    assert set(known_secrets(env)) == {
        "tok-abcdef", "from-a-file-123", "ls-pass-1", "redis-pass-2"
    }  # fmt: skip
    assert mask_text("a tok-abcdef b from-a-file-123 c", known_secrets(env)) == "a **** b **** c"


def test_url_without_secrets_names_the_same_server_whatever_the_password() -> None:
    one = url_without_secrets("redis://app:first@h:6379/0?password=x&db=2")
    two = url_without_secrets("redis://app:second@h:6379/0?password=y&db=2")
    assert one == two == "redis://app@h:6379/0?db=2"


def test_log_records_are_masked_whichever_handler_writes_them(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "tok-in-a-log-line")
    factory = logging.getLogRecordFactory()
    try:
        install_log_masking()
        install_log_masking()  # once only
        log = logging.getLogger("tests.masking")
        with caplog.at_level(logging.INFO):
            log.info("token %s at %s", "tok-in-a-log-line", "redis://:pw-in-url@h/0")
            try:
                raise ValueError("failed with tok-in-a-log-line")
            except ValueError:
                log.exception("boom")
    finally:
        logging.setLogRecordFactory(factory)
    text = caplog.text
    assert "tok-in-a-log-line" not in text and "pw-in-url" not in text
    assert "token **** at redis://:****@h/0" in text and "ValueError: failed with ****" in text


def test_the_services_file_keeps_no_password_and_connects_with_the_environments(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lowtide.services.state import ServiceRecord, ServiceRegistry

    url = "redis://:pw-of-redis-41@127.0.0.1:6390/0"
    registry = ServiceRegistry(tmp_path)
    registry.put(ServiceRecord(name="redis", url=url, kind="external"))
    assert "pw-of-redis-41" not in (tmp_path / "services.json").read_text()
    record = registry.get("redis")
    assert record is not None and record.url == "redis://127.0.0.1:6390/0"
    monkeypatch.setenv("REDIS_URL", url)
    assert record.reachable_url() == url  # the same server: the environment's URL
    monkeypatch.setenv("REDIS_URL", "redis://:other@10.0.0.1:6379/0")
    assert record.reachable_url() == "redis://127.0.0.1:6390/0"
