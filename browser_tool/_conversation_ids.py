"""Conversation ids: what is accepted, and the directory name each one gets."""

from __future__ import annotations

import hashlib
import re

from ._errors import InvalidInputError

CONVERSATION_ID_PATTERN = r"^[A-Za-z0-9._:-]{1,128}$"
_VALID = re.compile(CONVERSATION_ID_PATTERN)
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class ConversationId(str):
    """A conversation id that passed `validate_conversation_id`, its only maker. The first door
    a call meets (the HTTP or MCP front end, the CLI, or the manager's public API for an
    in-process caller) checks the text once; what it hands on is this type, which the doors
    behind it and the layers below take without checking again."""

    __slots__ = ()


def validate_conversation_id(value: object) -> ConversationId:
    """Return `value` as a ConversationId if it is a valid conversation id (one already is: it
    is not checked again); else raise InvalidInputError."""
    if isinstance(value, ConversationId):
        return value
    if not isinstance(value, str) or not _VALID.fullmatch(value):
        raise InvalidInputError(
            "conversation_id",
            f"must match {CONVERSATION_ID_PATTERN} (1-128 letters, digits, '.', '_', ':', '-')",
            value,
        )
    return ConversationId(value)


def session_dir_name(conversation_id: str) -> str:
    """A directory name for `conversation_id`: readable, short, and never '.', '..' or a path.

    Ids like '..' or 'a:b' are valid, so the name is a sanitised prefix plus a hash of the
    whole id, which keeps distinct ids apart ('a.b' and 'a_b' differ in the hash).
    """
    digest = hashlib.sha256(conversation_id.encode()).hexdigest()[:12]
    prefix = _UNSAFE.sub("_", conversation_id)[:32]
    return f"{prefix}-{digest}"
