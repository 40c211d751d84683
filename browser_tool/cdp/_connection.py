"""A CDP client over one socket: commands matched to answers by id, events fanned out.

Shape (STYLE.md §9), and why:
- One reader task hands every incoming message to `Inbound.dispatch`, which cannot block or
  raise; only a closed socket ends it.
- A command is written by its caller without blocking (`send_nowait`); what the socket does
  not take at once is finished by one writer task. A caller cancelled in the middle of an
  awaited write would leave half a frame on the wire and corrupt the stream for every session;
  this way no caller's timeout or cancellation ever interrupts a write, and the usual command
  costs no task switch.
- One table of pending commands (id -> slot). The caller that adds an entry removes it in
  `finally`, so cancellation leaks nothing; when the socket closes or either task ends, every
  slot fails at once, so no call waits for an answer that cannot come.
"""

from __future__ import annotations

import enum
import itertools
import json
import logging
import math
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import trio

from .._duration import format_duration
from .._errors import CdpCommandError, CdpConnectionError, CdpTimeoutError, InvalidInputError
from .._tasks import raise_sole
from ._events import ANY_SESSION, CdpEvent
from ._inbound import INTERNAL_ERROR, Inbound, PendingCommand
from ._protocol import CdpCommand, ResultParseError, command_request, parse_command_result
from ._statistics import CdpStatistics
from ._transport import CdpTransport, open_websocket_transport

T = TypeVar("T")

DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024

_log = logging.getLogger("browser_tool.cdp")


class _State(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


@dataclass(frozen=True)
class CdpResult(Generic[T]):
    """A command's result: `raw` always; `value` typed by pycdp_old, None if it did not parse."""

    raw: dict[str, Any]
    value: T | None


class CdpConnection:
    """A live CDP connection. Built only by `open_cdp_connection`."""

    def __init__(self, transport: CdpTransport) -> None:
        self._transport = transport
        self._state = _State.OPEN
        self._close_reason: str | None = None
        self._closed = trio.Event()
        self._ids = itertools.count(1)
        self._inbound = Inbound()
        self._results_logged: set[str] = set()
        # Shielded: the reader and writer stop when the connection closes (`_fail_all`), not
        # when an outer scope is cancelled, so they never add a Cancelled to the nursery's
        # group; the owner's cancellation reaches them through `aclose()` in its `finally`.
        self._task_scope = trio.CancelScope(shield=True)
        self._tasks_done = trio.Event()

    @property
    def closed(self) -> bool:
        return self._state is _State.CLOSED

    @property
    def close_reason(self) -> str | None:
        return self._close_reason

    async def wait_closed(self) -> None:
        """Wait until the connection is closed, by either side."""
        await self._closed.wait()

    def statistics(self) -> CdpStatistics:
        return self._inbound.counters.snapshot(pending=len(self._inbound.pending))

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Send a raw command; return its result dict.

        Raises CdpCommandError when Chrome answers with an error; CdpTimeoutError when no answer
        came within `timeout` seconds (None: no limit of ours); CdpConnectionError when the
        connection is closed or closes while waiting, or the session detaches; InvalidInputError
        for params that are not JSON or a negative timeout. On cancellation the command is
        forgotten: nothing leaks, and its late answer is counted and dropped.
        """
        if timeout is not None and not timeout >= 0:
            raise InvalidInputError("timeout", "must be None or a number >= 0", timeout)
        self._check_open()
        command_id = next(self._ids)
        if type(params) is not dict:  # json wants a dict; the usual dict goes as it is
            params = dict(params or {})
        message: dict[str, Any] = {"id": command_id, "method": method, "params": params}
        if session_id is not None:
            message["sessionId"] = session_id
        try:
            text = json.dumps(message, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise InvalidInputError("params", f"must be JSON-serialisable ({exc})", params) from exc
        slot = PendingCommand(method, session_id)
        pending, counters = self._inbound.pending, self._inbound.counters
        pending[command_id] = slot
        try:
            try:
                self._transport.send_nowait(text)
            except CdpConnectionError as exc:
                self._fail_all(exc.reason)
                raise
            counters.commands_sent += 1
            if timeout is None:
                await slot.done.wait()
            else:
                with trio.move_on_after(timeout):
                    await slot.done.wait()
        finally:
            del pending[command_id]
        if not slot.done.is_set():
            counters.commands_timed_out += 1
            limit = math.inf if timeout is None else timeout
            raise CdpTimeoutError(method, limit, format_duration(limit))
        if slot.error is not None:
            counters.commands_failed += 1
            raise slot.error
        counters.commands_ok += 1
        assert slot.result is not None
        return slot.result

    async def execute(
        self, cmd: CdpCommand[T], *, session_id: str | None = None, timeout: float | None = None
    ) -> CdpResult[T]:
        """Run a pycdp_old command builder. Raises and cancels as `send`, and InvalidInputError
        for a builder already run. A result pycdp_old cannot parse is not an error: it returns
        `CdpResult(raw, value=None)`, logged once per method and counted."""
        method, params = command_request(cmd)
        raw = await self.send(method, params, session_id=session_id, timeout=timeout)
        try:
            value = parse_command_result(cmd, raw)
        except ResultParseError as exc:
            self._inbound.counters.results_unparsed += 1
            if method not in self._results_logged:
                self._results_logged.add(method)
                _log.info("CDP result of %s does not parse with pycdp_old (%s)", method, exc)
            return CdpResult(raw, None)
        return CdpResult(raw, value)

    def listen(
        self, *methods: str, session_id: str | None = ANY_SESSION, buffer: int = 1000
    ) -> AbstractAsyncContextManager[trio.MemoryReceiveChannel[CdpEvent]]:
        """Subscribe to events named in `methods` (none: all) of `session_id` (None: browser
        level only; "*": any). Subscribed on entry, so enter before you act. The channel closes
        on exit and when the connection dies, so `async for` ends. A full buffer drops the
        newest event for this listener only, counted. Raises CdpConnectionError on entry if the
        connection is closed, InvalidInputError for a negative buffer."""
        return self._inbound.router.listen(methods, session_id, buffer)

    def session(self, session_id: str) -> CdpSession:
        """A view binding `session_id`. Does not register it (see `register_session`)."""
        return CdpSession(self, session_id)

    def register_session(self, session_id: str) -> CdpSession:
        """Accept the messages of a session learnt of otherwise. Sessions from
        `attach_to_target` and from `Target.attachedToTarget` events are registered already."""
        self._inbound.sessions.add(session_id)
        return CdpSession(self, session_id)

    def forget_session(self, session_id: str) -> None:
        """Drop the session's later messages; its pending commands fail with
        CdpConnectionError. A `Target.detachedFromTarget` event does this by itself."""
        self._inbound.drop_session(session_id, f"session {session_id!r} was forgotten")

    async def attach_to_target(self, target_id: str, *, timeout: float | None = None) -> CdpSession:
        """Attach to a target in flat mode; return its session, registered. Raises and cancels
        as `send`."""
        params = {"targetId": target_id, "flatten": True}
        result = await self.send("Target.attachToTarget", params, timeout=timeout)
        session_id = result.get("sessionId")
        if not isinstance(session_id, str):
            text = "the answer carries no sessionId"
            raise CdpCommandError("Target.attachToTarget", INTERNAL_ERROR, text, result)
        return self.register_session(session_id)

    async def aclose(self) -> None:
        """Close: pending commands fail with CdpConnectionError, listeners end, and the socket
        closes, politely within the close timeout, or at once if the caller is cancelled.
        Idempotent; never raises."""
        self._fail_all("the connection was closed by its owner")
        # The reader must be gone before the transport reads the peer's close frame itself;
        # cancelled, it leaves at its next checkpoint, so this wait is short.
        with trio.CancelScope(shield=True):
            await self._tasks_done.wait()
        await self._transport.aclose()

    def _check_open(self) -> None:
        if self._state is _State.CLOSED:
            raise CdpConnectionError(self._close_reason or "closed")

    def _fail_all(self, reason: str) -> None:
        if self._state is _State.CLOSED:
            return
        self._state, self._close_reason = _State.CLOSED, reason
        failed = self._inbound.fail_all(reason)
        self._task_scope.cancel()
        self._closed.set()
        _log.info("CDP connection closed: %s (%d pending commands failed)", reason, failed)

    async def _run(self) -> None:
        try:
            with self._task_scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._read_loop)
                    nursery.start_soon(self._write_loop)
        finally:
            self._tasks_done.set()

    async def _read_loop(self) -> None:
        try:
            while True:
                self._inbound.dispatch(await self._transport.receive())
        except CdpConnectionError as exc:
            self._fail_all(exc.reason)
        except BaseException as exc:  # our task scope's Cancelled (already failed), or a bug
            self._fail_all(f"the CDP reader stopped ({type(exc).__name__})")
            raise

    async def _write_loop(self) -> None:
        try:
            await self._transport.run_writer()
        except CdpConnectionError as exc:
            self._fail_all(exc.reason)
        except BaseException as exc:
            self._fail_all(f"the CDP writer stopped ({type(exc).__name__})")
            raise


@dataclass(frozen=True)
class CdpSession:
    """One target session of a connection: `send`, `execute` and `listen` with its session id
    bound. Comes from `attach_to_target`, `register_session` or `session`."""

    connection: CdpConnection
    session_id: str

    async def send(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """`CdpConnection.send` on this session."""
        return await self.connection.send(
            method, params, session_id=self.session_id, timeout=timeout
        )

    async def execute(self, cmd: CdpCommand[T], *, timeout: float | None = None) -> CdpResult[T]:
        """`CdpConnection.execute` on this session."""
        return await self.connection.execute(cmd, session_id=self.session_id, timeout=timeout)

    def listen(
        self, *methods: str, buffer: int = 1000
    ) -> AbstractAsyncContextManager[trio.MemoryReceiveChannel[CdpEvent]]:
        """`CdpConnection.listen` on this session's events only."""
        return self.connection.listen(*methods, session_id=self.session_id, buffer=buffer)


@asynccontextmanager
async def open_cdp_connection(
    url: str,
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    connect_timeout: float = 10.0,
    close_timeout: float = 2.0,
) -> AsyncIterator[CdpConnection]:
    """Connect to the DevTools WebSocket at `url`; yield a CdpConnection; close it on exit.

    Raises InvalidInputError for a URL that is not ws://host[:port]/..., and CdpConnectionError
    when the connection cannot be opened (refused, rejected, no handshake within
    connect_timeout). On exit, whether normal, by error or by cancellation, the connection is
    closed as by `aclose()` (a cancelled owner skips the polite close handshake and just
    closes the socket), and what the body raised propagates as itself, never in a group.
    """
    transport_cm = open_websocket_transport(
        url,
        max_message_size=max_message_size,
        connect_timeout=connect_timeout,
        close_timeout=close_timeout,
    )
    async with transport_cm as transport:
        # The body runs inside the nursery of the reader and writer, so trio's strict
        # exception groups wrap what it raises in a group; callers see the exception itself.
        try:
            async with trio.open_nursery() as nursery:
                connection = CdpConnection(transport)
                nursery.start_soon(connection._run)
                try:
                    yield connection
                finally:
                    await connection.aclose()
        except BaseExceptionGroup as group:
            raise_sole(group)
