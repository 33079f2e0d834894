"""Label Studio accounts for machine reviewers, each with its own API token.

A scripted reviewer must never annotate as the account a person uses: `completed_by` is how
machine and human reviews are told apart later. Label Studio 1.23 has no admin API that sets a
password or hands out another user's token (`POST /api/users/` makes a user who cannot log in),
so an account is made the way a person joins: the organisation's invite link (read with the
admin token), the sign-up form, then `GET /api/current-user/token` in that session.

The password is derived from the admin token and the e-mail (HMAC), so any process holding the
admin token can log in as the account again to read its token: nothing else is stored.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
from label_studio_sdk.core.api_error import ApiError

from annotation.labelstudio import LabelStudioAuthError, LabelStudioError, LabelStudioUnreachable
from annotation.labelstudio_sdk import LightLabelStudio

_PASSWORD_CONTEXT = b"lowtide reviewer account\x00"


@dataclass(frozen=True)
class ReviewerAccount:
    email: str
    user_id: int
    api_key: str  # the account's own token: what its annotations are made with

    def __repr__(self) -> str:  # never print the token
        return f"ReviewerAccount(email={self.email!r}, user_id={self.user_id})"


def ensure_reviewer_account(
    url: str, admin_api_key: str, email: str, timeout_s: float = 30.0
) -> ReviewerAccount:
    """The account with this e-mail (made if missing) in the admin's organisation, and its own
    API token. Raises LabelStudioError with a message meant for the user."""
    url = url.rstrip("/")
    email = email.strip().lower()
    password = reviewer_password(admin_api_key, email)
    action = f"setting up the reviewer account {email}"
    with (
        httpx.Client(timeout=timeout_s, follow_redirects=True) as http,
        httpx.Client(base_url=url, timeout=timeout_s, follow_redirects=True) as browser,
        _errors(url, action, admin_api_key),
    ):
        admin = LightLabelStudio(base_url=url, api_key=admin_api_key, httpx_client=http)
        exists = any((user.email or "").lower() == email for user in admin.users.list())
        if exists:
            _log_in(browser, email, password)
        else:
            invite = admin.organizations.invites.get_invite_link()
            _sign_up(browser, email, password, str(invite.token))
        token = _current_user_token(browser, email)
        me = LightLabelStudio(base_url=url, api_key=token, httpx_client=http).users.whoami()
    if (me.email or "").lower() != email or me.id is None:
        raise LabelStudioError(
            f"Label Studio at {url} answered as {me.email!r} with the token of {email}"
        )
    return ReviewerAccount(email=email, user_id=int(me.id), api_key=token)


def reviewer_password(admin_api_key: str, email: str) -> str:
    """Recoverable by whoever holds the admin token; useless without it."""
    digest = hmac.new(admin_api_key.encode(), _PASSWORD_CONTEXT + email.encode(), hashlib.sha256)
    return digest.hexdigest()[:40]


def _sign_up(browser: httpx.Client, email: str, password: str, invite_token: str) -> None:
    form = {"email": email, "password": password, "allow_newsletters": "", "how_find_us": ""}
    response = _post_form(browser, f"/user/signup/?token={invite_token}", form)
    if not _signed_in(browser):
        raise LabelStudioError(
            f"Label Studio at {browser.base_url} did not create the reviewer account {email} "
            f"(HTTP {response.status_code} from the sign-up form): "
            f"{_form_error(response.text) or 'no reason given'}"
        )


def _log_in(browser: httpx.Client, email: str, password: str) -> None:
    _post_form(browser, "/user/login/", {"email": email, "password": password})
    if not _signed_in(browser):
        raise LabelStudioError(
            f"Label Studio at {browser.base_url} has an account {email}, but lowtide cannot sign "
            "in to it: it was made by a person, or by lowtide with another admin token. Give the "
            "scripted reviewer another e-mail"
        )


def _post_form(browser: httpx.Client, path: str, form: dict[str, str]) -> httpx.Response:
    """A browser's form submit: the CSRF cookie from the page first, then the POST."""
    browser.get(path)
    csrf = browser.cookies.get("csrftoken", "")
    return browser.post(
        path,
        data={**form, "csrfmiddlewaretoken": csrf},
        headers={"Referer": f"{browser.base_url}{path}", "X-CSRFToken": csrf},
    )


def _signed_in(browser: httpx.Client) -> bool:
    return browser.get("/api/current-user/whoami").status_code == 200


def _current_user_token(browser: httpx.Client, email: str) -> str:
    response = browser.get("/api/current-user/token")
    try:
        body = response.json() if response.status_code == 200 else None
    except ValueError:  # not JSON: not Label Studio's answer
        body = None
    token = body.get("token") if isinstance(body, dict) else None
    if not isinstance(token, str) or not token:
        raise LabelStudioError(
            f"Label Studio at {browser.base_url} gave no API token for {email} "
            f"(HTTP {response.status_code})"
        )
    return token


def _form_error(html: str) -> str:
    """The first error Django rendered into the form, if it is easy to find."""
    marker = 'class="errorlist'
    start = html.find(marker)
    if start < 0:
        return ""
    text = html[start : start + 400].split("<li>", 1)[-1].split("</li>", 1)[0]
    return " ".join(text.split())


@contextmanager
def _errors(url: str, action: str, secret: str) -> Iterator[None]:
    """SDK and transport failures as LabelStudioError, with no token in the message."""
    where = f"Label Studio at {url}"
    try:
        yield
    except ApiError as error:
        kind = LabelStudioAuthError if error.status_code in (401, 403) else LabelStudioError
        detail = str(error.body)[:300].replace(secret, "***")
        hint = (
            ": is LABEL_STUDIO_API_KEY an admin's token of that Label Studio?"
            if kind is LabelStudioAuthError
            else ""
        )
        raise kind(
            f"{where} answered HTTP {error.status_code} while {action}: {detail}{hint}"
        ) from None
    except httpx.TransportError as error:
        raise LabelStudioUnreachable(
            f"cannot reach {where} while {action} ({type(error).__name__}): is it running?"
        ) from None
