"""The Label Studio client the commands share, and the one message for a missing token."""

from __future__ import annotations

from annotation.config import AnnotationConfig
from annotation.labelstudio import LabelStudioClient
from lowtide.errors import UserError

MISSING_KEY = (
    "LABEL_STUDIO_API_KEY is not set: `lowtide up` writes it to .env, or set it (or "
    "LABEL_STUDIO_API_KEY_FILE) to the token under Account & Settings in Label Studio"
)


def require_api_key(annotation: AnnotationConfig) -> None:
    if annotation.api_key is None:
        raise UserError(MISSING_KEY)


def label_studio_client(annotation: AnnotationConfig) -> LabelStudioClient:
    require_api_key(annotation)
    return LabelStudioClient.from_config(annotation)
