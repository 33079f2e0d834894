"""Label Studio accounts for machine reviewers, each with its own API token.

A scripted reviewer must never annotate as the account a person uses: `completed_by` is how
machine and human reviews are told apart later. Label Studio 1.23 has no admin API that sets a
password or hands out another user's token (`POST /api/users/` makes a user who cannot log in),
so an account is made the way a person joins: the organisation's invite link (read with the
admin token), the sign-up form, then `GET /api/current-user/token` in that session; the requests
themselves are the Label Studio client's (annotation/labelstudio.py, `AccountPages`).

The password is derived from the admin token and the e-mail (HMAC), so any process holding the
admin token can log in as the account again to read its token: nothing else is stored.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from annotation.labelstudio import AccountPages, LabelStudioError, account_errors

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
        AccountPages(url, admin_api_key, timeout_s) as pages,
        account_errors(url, action, admin_api_key),
    ):
        if pages.has_user(email):
            pages.log_in(email, password)
        else:
            pages.sign_up(email, password, pages.invite_token())
        token = pages.current_user_token(email)
        me_email, me_id = pages.whoami(token)
    if me_email.lower() != email or me_id is None:
        raise LabelStudioError(
            f"Label Studio at {url} answered as {me_email!r} with the token of {email}"
        )
    return ReviewerAccount(email=email, user_id=int(me_id), api_key=token)


def reviewer_password(admin_api_key: str, email: str) -> str:
    """Recoverable by whoever holds the admin token; useless without it."""
    digest = hmac.new(admin_api_key.encode(), _PASSWORD_CONTEXT + email.encode(), hashlib.sha256)
    return digest.hexdigest()[:40]
