"""What the reader does with each incoming CDP message.

Answers go to the command waiting for their id; events of the browser or of a registered
session go to the listeners; everything else is counted and dropped. Nothing here blocks or
raises: one odd message (bad JSON, an unknown session, an event pycdp_old cannot parse) must
never stop the reader, since every session on the connection depends on it.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from .._errors import (
    CdpCommandError,
    CdpConnectionError,
    CdpError,
    CdpSessionDetachedError,
    CdpTargetCrashedError,
)
from ._commands import PendingCommand
from ._events import CdpEvent, EventRouter
from ._protocol import parse_event
from ._statistics import CdpCounters

_log = logging.getLogger("browser_tool.cdp")

INTERNAL_ERROR = -32603  # JSON-RPC "internal error": for answers we cannot read
# Answers to these carry a new session id. It is registered before the next message is read,
# or the session's first events could arrive before the caller wakes up and be dropped.
_ATTACH_METHODS = frozenset({"Target.attachToTarget", "Target.attachToBrowserTarget"})


class Inbound:
    """The pending-command table, the registered sessions and the listeners of one
    connection, and the routing of incoming messages between them."""

    def __init__(self) -> None:
        self.pending: dict[int, PendingCommand] = {}
        self.sessions: set[str] = set()
        self.router = EventRouter()
        self.counters = CdpCounters()

    def fail_all(self, reason: str) -> int:
        """Fail every pending command with CdpConnectionError(reason) and end every listener.
        Returns how many commands were failed."""
        self.router.close(reason)
        return sum(slot.settle(error=CdpConnectionError(reason)) for slot in self.pending.values())

    def drop_session(self, session_id: str, reason: str, *, detached: bool = False) -> None:
        """Drop the session's later messages; fail its pending commands (with
        CdpSessionDetachedError when Chrome detached it, else CdpConnectionError)."""
        self.sessions.discard(session_id)
        error = CdpSessionDetachedError if detached else CdpConnectionError
        self._fail_session(session_id, error(reason))

    def _fail_session(self, session_id: str, error: CdpError) -> None:
        for slot in self.pending.values():
            if slot.session_id == session_id:
                slot.settle(error=error)

    def dispatch(self, data: str | bytes) -> None:
        try:
            message = json.loads(data)
        except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, deep nesting
            self._drop_invalid("not JSON", data)
            return
        if not isinstance(message, dict):
            self._drop_invalid("not an object", data)
            return
        session_id = message.get("sessionId")
        if session_id is not None and not isinstance(session_id, str):
            self._drop_invalid("bad sessionId", data)
        elif "id" in message:
            self._dispatch_answer(message, session_id)
        elif session_id is not None and session_id not in self.sessions:
            self._drop_unknown_session(session_id, message)
        elif not isinstance(method := message.get("method"), str):
            self._drop_invalid("neither an answer nor an event", data)
        elif not isinstance(params := message.get("params", {}), dict):
            self._drop_invalid("params is not an object", data)
        else:
            self._dispatch_event(CdpEvent(method, params, session_id, parse_event(method, params)))

    # An answer is matched by id even when its session is not registered: the id proves a
    # caller asked for it on purpose.
    def _dispatch_answer(self, message: dict[str, Any], session_id: str | None) -> None:
        command_id = message["id"]
        if not isinstance(command_id, int) or isinstance(command_id, bool):
            self._drop_invalid("bad id", message)
            return
        slot = self.pending.get(command_id)
        if slot is None or slot.done.is_set():
            if session_id is not None and session_id not in self.sessions:
                self._drop_unknown_session(session_id, message)
            else:
                self.counters.unknown_response_ids += 1
                _log.debug("dropped a CDP answer nobody waits for (id %d)", command_id)
            return
        error, result = message.get("error"), message.get("result")
        if error is not None:
            slot.settle(error=_command_error(slot.method, error))
        elif not isinstance(result, dict):
            self._drop_invalid("an answer without a result object", message)
            text = f"malformed answer: {message!r:.200}"
            slot.settle(error=CdpCommandError(slot.method, INTERNAL_ERROR, text))
        else:
            if slot.method in _ATTACH_METHODS and isinstance(result.get("sessionId"), str):
                self.sessions.add(result["sessionId"])
            slot.settle(result=result)

    def _dispatch_event(self, event: CdpEvent) -> None:
        self.counters.events_received += 1
        if event.typed is None:
            self.counters.events_unparsed += 1
        # Track flat-mode sessions as Chrome reports them, before any listener hears of it,
        # so their first messages are not dropped and calls on a dead session do not hang.
        child = event.params.get("sessionId")
        if isinstance(child, str) and event.method == "Target.attachedToTarget":
            self.sessions.add(child)
        elif isinstance(child, str) and event.method == "Target.detachedFromTarget":
            self.drop_session(child, f"session {child!r} detached from its target", detached=True)
        elif event.method == "Inspector.targetCrashed" and event.session_id is not None:
            # A crashed renderer answers nothing: its callers learn of it now, from the one
            # place every answer passes, instead of each racing a crash watch of its own.
            reason = f"the target of session {event.session_id!r} crashed"
            self._fail_session(event.session_id, CdpTargetCrashedError(reason))
        delivered, dropped = self.router.publish(event)
        self.counters.events_delivered += delivered
        self.counters.events_dropped_overflow += dropped

    def _drop_invalid(self, what: str, data: object) -> None:
        self.counters.invalid_messages += 1
        _log.debug("dropped an invalid CDP message (%s): %.200r", what, data)

    def _drop_unknown_session(self, session_id: str, message: dict[str, Any]) -> None:
        self.counters.unknown_session_messages += 1
        _log.debug("dropped a CDP message of unknown session %r: %.200r", session_id, message)


def _command_error(method: str, error: object) -> CdpCommandError:
    if not isinstance(error, dict):
        return CdpCommandError(method, INTERNAL_ERROR, f"malformed error answer: {error!r:.200}")
    code = error.get("code")
    return CdpCommandError(
        method,
        code if isinstance(code, int) else INTERNAL_ERROR,
        str(error.get("message", "no message")),
        error.get("data"),
    )
