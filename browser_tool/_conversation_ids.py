"""Conversation ids: what is accepted, and the directory name each one gets."""

from __future__ import annotations

import hashlib
import re

from ._errors import InvalidInputError

CONVERSATION_ID_PATTERN = r"^[A-Za-z0-9._:-]{1,128}$"
_VALID = re.compile(CONVERSATION_ID_PATTERN)
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def validate_conversation_id(value: object) -> str:
    """Return `value` if it is a valid conversation id; else raise InvalidInputError."""
    if not isinstance(value, str) or not _VALID.fullmatch(value):
        raise InvalidInputError(
            "conversation_id",
            f"must match {CONVERSATION_ID_PATTERN} (1-128 letters, digits, '.', '_', ':', '-')",
            value,
        )
    return value


def session_dir_name(conversation_id: str) -> str:
    """A directory name for `conversation_id`: readable, short, and never '.', '..' or a path.

    Ids like '..' or 'a:b' are valid, so the name is a sanitised prefix plus a hash of the
    whole id, which keeps distinct ids apart ('a.b' and 'a_b' differ in the hash).
    """
    digest = hashlib.sha256(conversation_id.encode()).hexdigest()[:12]
    prefix = _UNSAFE.sub("_", conversation_id)[:32]
    return f"{prefix}-{digest}"
