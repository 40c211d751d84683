"""Duration strings as the agent writes them in tool inputs ("15s", "500ms", "1m30s").

The syntax is a subset of Go's `time.ParseDuration`, because that is what tool schemas show
models: one or more `<number><unit>` parts, units `ms`, `s`, `m`, `h`, no sign. Microseconds
and nanoseconds are left out on purpose: no tool timeout is that short, and a model that
writes "500us" most likely meant something else, so it gets a clear error instead.
"""

from __future__ import annotations

import math
import re

from ._errors import InvalidInputError

__all__ = ["format_duration", "parse_duration"]

_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
# "ms" comes before "m" so that "500ms" is not read as 500 minutes followed by junk.
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)")
_WHOLE = re.compile(rf"(?:{_PART.pattern})+")
# Longer than any sane duration; keeps a hostile megabyte-long input from being scanned.
_MAX_TEXT = 64


def parse_duration(text: object, *, field: str = "timeout", maximum: float = 600.0) -> float:
    """Return the number of seconds `text` ("15s", "500ms", "1.5s", "2m", "1m30s") stands for.

    Leading and trailing whitespace is ignored. Raises `InvalidInputError` naming `field` when
    `text` is not a string, is empty, has a sign, lacks a unit or uses an unknown one, or is
    zero or above `maximum` seconds.
    """
    rule = (
        f'a duration like "15s" or "500ms", greater than 0 and at most '
        f"{format_duration(maximum)}; got {text!r}"
    )
    if not isinstance(text, str):
        raise InvalidInputError(field, rule, text)
    stripped = text.strip()
    if len(stripped) > _MAX_TEXT or _WHOLE.fullmatch(stripped) is None:
        raise InvalidInputError(field, rule, text)
    seconds = sum(float(number) * _UNIT_SECONDS[unit] for number, unit in _PART.findall(stripped))
    if not (0.0 < seconds <= maximum) or not math.isfinite(seconds):
        raise InvalidInputError(field, rule, text)
    return seconds


def format_duration(seconds: float) -> str:
    """Render `seconds` the way `parse_duration` reads it: "15s", "500ms", "1.5s", "2m", "1m30s".

    Exact to the microsecond; below one second the unit is milliseconds. Never raises for a
    finite number (a negative one gets a leading "-"); infinities and NaN come back as-is.
    """
    if not math.isfinite(seconds):
        return f"{seconds}s"
    if seconds < 0:
        return "-" + format_duration(-seconds)
    micros = round(seconds * 1_000_000)
    if micros == 0:
        return "0s"
    if micros < 1_000_000:
        return _decimal(micros, 1_000) + "ms"
    hours, rest = divmod(micros, 3_600_000_000)
    minutes, rest = divmod(rest, 60_000_000)
    parts = []
    if hours:
        parts.append(f"{hours}h")
    if minutes:
        parts.append(f"{minutes}m")
    if rest:
        parts.append(_decimal(rest, 1_000_000) + "s")
    return "".join(parts)


def _decimal(value: int, unit: int) -> str:
    # Integer arithmetic, so 59.999999s never rounds up to "60s" the way "%g" would.
    whole, fraction = divmod(value, unit)
    if not fraction:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{fraction:0{digits}d}".rstrip("0")
