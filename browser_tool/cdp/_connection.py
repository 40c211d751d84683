"""A CDP client over one socket: commands matched to answers by id, events fanned out.

Shape (STYLE.md §9), and why:
- One reader task hands every incoming message to `Inbound.dispatch`, which cannot block or
  raise; only a closed socket ends it.
- A caller writes its command without blocking (`send_nowait`); a rest the socket did not take
  is finished by the writer task. So no caller's cancellation ever cuts a frame in half (which
  would corrupt the stream for every session), and a command costs no task switch.
- One table of pending commands (id -> slot). The caller that adds an entry removes it in
  `finally`, so cancellation leaks nothing; when the socket closes or either task ends, every
  slot fails at once, so no call waits for an answer that cannot come.
"""

from __future__ import annotations

import enum
import itertools
import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

import trio

from .._errors import CdpCommandError, CdpConnectionError, CdpError, InvalidInputError
from ._commands import CdpResult, PendingCommand, command_outcome, encode_command
from ._events import ANY_SESSION, CdpEvent
from ._inbound import INTERNAL_ERROR, Inbound
from ._protocol import CdpCommand, ResultParseError, command_request, parse_command_result
from ._session import CdpSession
from ._statistics import CdpStatistics
from ._transport import CdpTransport

T = TypeVar("T")

DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024

_log = logging.getLogger("browser_tool.cdp")


class _State(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


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
        self._check_send(timeout)
        command_id = next(self._ids)
        text = encode_command(command_id, method, params, session_id)
        slot = PendingCommand(method, session_id)
        pending = self._inbound.pending
        pending[command_id] = slot
        try:
            self._write(text)
            if timeout is None:
                await slot.done.wait()
            else:
                with trio.move_on_after(timeout):
                    await slot.done.wait()
        finally:
            del pending[command_id]
        return command_outcome(slot, timeout, self._inbound.counters)

    async def send_batch(
        self,
        commands: Sequence[tuple[str, Mapping[str, Any] | None]],
        *,
        session_id: str | None = None,
        timeout: float | None = None,
    ) -> list[dict[str, Any]]:
        """Send every (method, params) of `commands` at once, without waiting for answers in
        between (Chrome works on them meanwhile), and return their results in order.

        Raises as `send` for the first command (in order) that failed, once every answer came
        or `timeout` passed; sends nothing when one is invalid. Cancels as `send`."""
        self._check_send(timeout)
        encoded = [(next(self._ids), method, params) for method, params in commands]
        texts = [encode_command(cid, method, params, session_id) for cid, method, params in encoded]
        pending = self._inbound.pending
        slots: list[tuple[int, PendingCommand]] = []
        try:
            for (command_id, method, _), text in zip(encoded, texts, strict=True):
                slot = PendingCommand(method, session_id)
                pending[command_id] = slot
                slots.append((command_id, slot))
                self._write(text)
            with trio.move_on_after(math.inf if timeout is None else timeout):
                for _, slot in slots:
                    await slot.done.wait()
        finally:
            for command_id, _ in slots:
                del pending[command_id]
        errors: list[CdpError] = []
        results: list[dict[str, Any]] = []
        for _, slot in slots:
            try:
                results.append(command_outcome(slot, timeout, self._inbound.counters))
            except CdpError as exc:
                errors.append(exc)
        if errors:
            raise errors[0]
        return results

    def _check_send(self, timeout: float | None) -> None:
        if timeout is not None and not timeout >= 0:
            raise InvalidInputError("timeout", "must be None or a number >= 0", timeout)
        if self._state is _State.CLOSED:
            raise CdpConnectionError(self._close_reason or "closed")

    def _write(self, text: str) -> None:
        try:
            self._transport.send_nowait(text)
        except CdpConnectionError as exc:
            self._fail_all(exc.reason)
            raise
        self._inbound.counters.commands_sent += 1

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

    def _fail_all(self, reason: str) -> None:
        if self._state is _State.CLOSED:
            return
        self._state, self._close_reason = _State.CLOSED, reason
        failed = self._inbound.fail_all(reason)
        self._task_scope.cancel()
        self._closed.set()
        _log.info("CDP connection closed: %s (%d pending commands failed)", reason, failed)

    async def run(self) -> None:
        """The reader and the writer, until the connection closes (open_cdp_connection's)."""
        try:
            with self._task_scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._guard, "reader", self._read_loop)
                    nursery.start_soon(self._guard, "writer", self._transport.run_writer)
        finally:
            self._tasks_done.set()

    async def _read_loop(self) -> None:
        while True:
            self._inbound.dispatch(await self._transport.receive())

    async def _guard(self, what: str, loop: Callable[[], Awaitable[None]]) -> None:
        try:
            await loop()
        except CdpConnectionError as exc:
            self._fail_all(exc.reason)
        except BaseException as exc:  # our task scope's Cancelled (already failed), or a bug
            self._fail_all(f"the CDP {what} stopped ({type(exc).__name__})")
            raise
