"""CDP events and their fan-out to listeners.

The connection's reader hands every event to `EventRouter.publish`, which must never block:
a reader waiting on one slow listener would stall every command answer behind it. So each
listener has a bounded buffer and, when it is full, the newest event is dropped for that
listener alone and counted.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import trio

from .._errors import CdpConnectionError, InvalidInputError

_log = logging.getLogger("browser_tool.cdp")

#: `listen(session_id=ANY_SESSION)` receives events of the browser and of every session.
ANY_SESSION = "*"


@dataclass(frozen=True)
class CdpEvent:
    """One event from the browser.

    `session_id` is None for browser-level events. `typed` is the pycdp_old event object when
    the event parsed, else None; `params` is always the raw dict.
    """

    method: str
    params: dict[str, Any]
    session_id: str | None
    typed: object | None


@dataclass(eq=False)
class _Listener:
    methods: frozenset[str]  # empty: every method
    session_id: str | None
    send_channel: trio.MemorySendChannel[CdpEvent]
    buffer: int
    dropped: int = 0

    def wants(self, event: CdpEvent) -> bool:
        if self.methods and event.method not in self.methods:
            return False
        return self.session_id in (ANY_SESSION, event.session_id)


class EventRouter:
    """The listeners of one connection."""

    def __init__(self) -> None:
        self._listeners: list[_Listener] = []
        self._closed_reason: str | None = None

    @asynccontextmanager
    async def listen(
        self, methods: tuple[str, ...], session_id: str | None, buffer: int
    ) -> AsyncIterator[trio.MemoryReceiveChannel[CdpEvent]]:
        """Subscribe on entry; yield the channel; close it on exit.

        Raises CdpConnectionError on entry if the connection is already closed, and
        InvalidInputError if `buffer` is negative.
        """
        if buffer < 0:
            raise InvalidInputError("buffer", "must be >= 0", buffer)
        if self._closed_reason is not None:
            raise CdpConnectionError(self._closed_reason)
        send_channel, receive_channel = trio.open_memory_channel[CdpEvent](buffer)
        listener = _Listener(frozenset(methods), session_id, send_channel, buffer)
        self._listeners.append(listener)
        try:
            yield receive_channel
        finally:
            if listener in self._listeners:
                self._listeners.remove(listener)
            send_channel.close()
            receive_channel.close()

    def publish(self, event: CdpEvent) -> tuple[int, int]:
        """Offer `event` to every listener that wants it, without blocking.

        Returns (delivered, dropped because a buffer was full).
        """
        delivered = dropped = 0
        for listener in self._listeners:
            if not listener.wants(event):
                continue
            try:
                listener.send_channel.send_nowait(event)
            except trio.WouldBlock:
                dropped += 1
                listener.dropped += 1
                if listener.dropped == 1:
                    _log.warning(
                        "CDP listener for %s is not keeping up (buffer %d): dropping %s "
                        "and later events it has no room for",
                        sorted(listener.methods) or "all events",
                        listener.buffer,
                        event.method,
                    )
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                # The listener closed its own receive side early: it wants nothing more.
                continue
            else:
                delivered += 1
        return delivered, dropped

    def close(self, reason: str) -> None:
        """End every listener's `async for`, and refuse new listeners from now on."""
        self._closed_reason = reason
        for listener in self._listeners:
            listener.send_channel.close()
        self._listeners.clear()
