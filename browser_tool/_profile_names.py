"""Persistent profile names (issue 21): what is accepted. A name becomes a directory under
`<state_dir>/profiles/`, so it is a plain dir name: no '/', no leading '.' (never '.', '..' or
hidden), at most 64 characters."""

from __future__ import annotations

import re

from ._errors import InvalidInputError

PROFILE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
VALID_PROFILE_NAME = re.compile(PROFILE_NAME_PATTERN)


def validate_profile_name(value: object) -> str:
    """`value` if it is a valid profile name (a plain dir name: no '/', no leading '.', so
    never '.', '..' or a hidden file); else raises InvalidInputError naming the rule."""
    if not isinstance(value, str) or not VALID_PROFILE_NAME.fullmatch(value):
        raise InvalidInputError(
            "profile",
            f"must match {PROFILE_NAME_PATTERN} (1-64 letters, digits, '.', '_', '-'; "
            "starting with a letter or digit)",
            value,
        )
    return value
