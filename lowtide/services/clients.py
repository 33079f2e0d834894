"""What the commands and the loop share about the services: the Label Studio client, the
message for a missing token, and the one message for Redis being out of reach."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis

from annotation.config import AnnotationConfig
from lowtide.errors import UserError
from rl.masking import mask_url
from sampling.config import QueueConfig

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
        url = mask_url(queue.redis_url.get_secret_value())
        while_doing = f" while {doing}" if doing else ""
        raise UserError(
            f"Redis at {url} is not reachable ({type(error).__name__}){while_doing}: start it "
            "(`lowtide up`) or set REDIS_URL / queue.redis_url"
        ) from None
