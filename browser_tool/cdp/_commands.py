"""A command on its way: its JSON text, its slot in the pending table, and what its ended
wait amounts to (a result, or the error to raise), counted once."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import trio

from .._duration import format_duration
from .._errors import CdpError, CdpTimeoutError, InvalidInputError
from ._statistics import CdpCounters

T = TypeVar("T")


@dataclass(frozen=True)
class CdpResult(Generic[T]):
    """A command's result: `raw` always; `value` typed by pycdp_old, None if it did not parse."""

    raw: dict[str, Any]
    value: T | None


@dataclass(eq=False)
class PendingCommand:
    """A command waiting for its answer: `done` is set once `result` or `error` is."""

    method: str
    session_id: str | None
    done: trio.Event = field(default_factory=trio.Event)
    result: dict[str, Any] | None = None
    error: CdpError | None = None

    def settle(self, result: dict[str, Any] | None = None, error: CdpError | None = None) -> bool:
        if self.done.is_set():
            return False
        self.result, self.error = result, error
        self.done.set()
        return True


def encode_command(
    command_id: int, method: str, params: Mapping[str, Any] | None, session_id: str | None
) -> str:
    """The command as JSON text. Raises InvalidInputError for params that are not JSON."""
    if type(params) is not dict:  # json wants a dict; the usual dict goes as it is
        params = dict(params or {})
    message: dict[str, Any] = {"id": command_id, "method": method, "params": params}
    if session_id is not None:
        message["sessionId"] = session_id
    try:
        return json.dumps(message, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError("params", f"must be JSON-serialisable ({exc})", params) from exc


def command_outcome(
    slot: PendingCommand, timeout: float | None, counters: CdpCounters
) -> dict[str, Any]:
    """The result of an ended wait for `slot`, counted; raises CdpTimeoutError when no answer
    came, or the error the answer (or the connection) settled it with."""
    if not slot.done.is_set():
        counters.commands_timed_out += 1
        limit = math.inf if timeout is None else timeout
        raise CdpTimeoutError(slot.method, limit, format_duration(limit))
    if slot.error is not None:
        counters.commands_failed += 1
        raise slot.error
    counters.commands_ok += 1
    assert slot.result is not None
    return slot.result
