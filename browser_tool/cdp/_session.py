"""One target session of a connection: the connection's commands and events with its session id
bound. A seam of its own: tools and the page hold a `CdpSession`, never the connection's internals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import trio

from ._commands import CdpResult
from ._events import CdpEvent
from ._protocol import CdpCommand

T = TypeVar("T")


class SessionCarrier(Protocol):
    """What a session needs of its connection (`CdpConnection` is the one in use): commands and
    events addressed by session id. A protocol, so this module does not import the connection
    that builds sessions."""

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = ...,
        *,
        session_id: str | None = ...,
        timeout: float | None = ...,
    ) -> dict[str, Any]: ...

    async def send_batch(
        self,
        commands: Sequence[tuple[str, Mapping[str, Any] | None]],
        *,
        session_id: str | None = ...,
        timeout: float | None = ...,
    ) -> list[dict[str, Any]]: ...

    async def execute(
        self, cmd: CdpCommand[T], *, session_id: str | None = ..., timeout: float | None = ...
    ) -> CdpResult[T]: ...

    def listen(
        self, *methods: str, session_id: str | None = ..., buffer: int = ...
    ) -> AbstractAsyncContextManager[trio.MemoryReceiveChannel[CdpEvent]]: ...


@dataclass(frozen=True)
class CdpSession:
    """One target session of a connection: `send`, `execute` and `listen` with its session id
    bound. Comes from `attach_to_target`, `register_session` or `session`."""

    connection: SessionCarrier
    session_id: str

    async def send(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """`CdpConnection.send` on this session."""
        return await self.connection.send(
            method, params, session_id=self.session_id, timeout=timeout
        )

    async def send_batch(
        self,
        commands: Sequence[tuple[str, Mapping[str, Any] | None]],
        *,
        timeout: float | None = None,
    ) -> list[dict[str, Any]]:
        """`CdpConnection.send_batch` on this session."""
        return await self.connection.send_batch(
            commands, session_id=self.session_id, timeout=timeout
        )

    async def execute(self, cmd: CdpCommand[T], *, timeout: float | None = None) -> CdpResult[T]:
        """`CdpConnection.execute` on this session."""
        return await self.connection.execute(cmd, session_id=self.session_id, timeout=timeout)

    def listen(
        self, *methods: str, buffer: int = 1000
    ) -> AbstractAsyncContextManager[trio.MemoryReceiveChannel[CdpEvent]]:
        """`CdpConnection.listen` on this session's events only."""
        return self.connection.listen(*methods, session_id=self.session_id, buffer=buffer)
