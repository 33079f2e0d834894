"""What the commands and the loop share about the services: the Label Studio client, the
message for a missing token, and the one message for Redis being out of reach."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import redis

from annotation.config import AnnotationConfig
from lowtide.errors import UserError
from rl.masking import mask_text, mask_url
from rl.visible_text import cut_line, visible_line
from sampling.config import QueueConfig

SHOWN_ERROR_CHARS = 200  # of what Redis answered: one line
MISSING_KEY = (
    "LABEL_STUDIO_API_KEY is not set: `lowtide up` writes it to .env, or set it (or "
    "LABEL_STUDIO_API_KEY_FILE) to the token under Account & Settings in Label Studio"
)


def require_api_key(annotation: AnnotationConfig) -> None:
    if annotation.api_key is None:
        raise UserError(MISSING_KEY)


def label_studio_client(annotation: AnnotationConfig):
    """A LabelStudioClient (the SDK is imported here, not when the command line starts)."""
    from annotation.labelstudio import LabelStudioClient

    require_api_key(annotation)
    return LabelStudioClient.from_config(annotation)


@contextmanager
def redis_errors(queue: QueueConfig, doing: str = "") -> Iterator[None]:
    """A Redis failure inside becomes one line: where, what kind, and what to do."""
    try:
        yield
    except redis.RedisError as error:
        url = queue.redis_url.get_secret_value()
        while_doing = f" while {doing}" if doing else ""
        raise UserError(
            f"Redis at {mask_url(url)} {_redis_problem(url, error, while_doing)}"
        ) from None


def _redis_problem(url: str, error: redis.RedisError, while_doing: str) -> str:
    """What went wrong and what to do: a server that answers but refuses the password, or
    answers with an error, is reachable, and starting one would not help."""
    kind = type(error).__name__
    said = cut_line(visible_line(mask_text(str(error))), SHOWN_ERROR_CHARS)
    if isinstance(error, redis.AuthenticationError):  # before ConnectionError: a subclass
        if urlsplit(url).password is None:
            return (f"wants a password ({kind}){while_doing}: put it in REDIS_URL, between "
                    "`redis://:` and `@`")  # fmt: skip
        return (f"refuses the password in REDIS_URL ({kind}: {said}){while_doing}: set the "
                "server's password there (none, for a server without one)")  # fmt: skip
    if isinstance(error, redis.ResponseError):  # NOPERM, OOM, READONLY, MISCONF, ...
        return f"answered with an error ({kind}: {said}){while_doing}"
    return (f"is not reachable ({kind}){while_doing}: start it (`lowtide up`) or set "
            "REDIS_URL / queue.redis_url")  # fmt: skip
