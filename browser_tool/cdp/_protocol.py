"""The one door to pycdp_old: command builders, typed results, typed events.

pycdp_old is generated from an older protocol than the Chromium we drive (DESIGN.md §3): it
lacks domains, commands and events, its enums miss new values, and some results and events it
knows no longer parse. So everything here degrades to "no typed value" instead of raising: a
stale type must never fail a call whose raw result is fine, nor kill the connection's reader.
No other module of the repo imports pycdp_old; they use `cdp` from here.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any, TypeAlias, TypeVar

from pycdp_old import cdp
from pycdp_old.cdp.util import parse_json_event

from .._errors import InvalidInputError, ResultParseError

__all__ = [
    "CdpCommand",
    "ResultParseError",
    "cdp",
    "command_request",
    "parse_command_result",
    "parse_event",
]

T = TypeVar("T")

#: What pycdp_old's command builders return: yields the request, receives the result dict,
#: returns the typed value.
CdpCommand: TypeAlias = Generator[dict[str, Any], dict[str, Any], T]

_log = logging.getLogger("browser_tool.cdp")

# Methods already logged as unparsable, so a Chrome that sends thousands of `Loopback`
# Network events logs the fact once per process, not once per event.
_logged_event_methods: set[str] = set()


def command_request(cmd: CdpCommand[Any]) -> tuple[str, dict[str, Any]]:
    """Start a pycdp_old command builder; return its `(method, params)`.

    Raises InvalidInputError if `cmd` was already started (a builder runs once). Errors the
    builder itself raises (an argument of the wrong type) propagate: they are caller bugs.
    """
    try:
        request = next(cmd)
    except StopIteration:
        raise InvalidInputError("cmd", "a fresh pycdp command, not one already executed") from None
    return str(request["method"]), dict(request.get("params", {}))


def parse_command_result(cmd: CdpCommand[T], raw: dict[str, Any]) -> T:
    """Feed `raw` (a command's result dict) to the builder started by `command_request`.

    Returns the typed value (None for commands that return nothing). Raises ResultParseError
    when pycdp_old cannot parse it, and never anything else.
    """
    try:
        cmd.send(raw)
    except StopIteration as done:
        value: T = done.value
        return value
    # The parsers are generated code: a removed field is a KeyError, a new enum value a
    # ValueError, a changed shape a TypeError or AttributeError. All mean "did not parse".
    except Exception as exc:
        raise ResultParseError(f"{type(exc).__name__}: {exc}") from exc
    cmd.close()
    raise ResultParseError("the command builder asked for more than one result")


def parse_event(method: str, params: dict[str, Any]) -> object | None:
    """Return the pycdp_old event object for an event, or None when the event is unknown to
    pycdp_old or does not parse (logged once per method). Never raises."""
    try:
        event: object = parse_json_event({"method": method, "params": params})
        return event
    # Same reasoning as in parse_command_result: any failure of generated code is "no type".
    except Exception as exc:
        if method not in _logged_event_methods:
            _logged_event_methods.add(method)
            if isinstance(exc, KeyError) and exc.args == (method,):
                _log.debug("CDP event %s is unknown to pycdp_old; delivered raw", method)
            else:
                _log.info(
                    "CDP event %s does not parse with pycdp_old (%s: %s); delivered raw",
                    method,
                    type(exc).__name__,
                    exc,
                )
        return None
