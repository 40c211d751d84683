"""BrowserSessionManager: one browser per conversation, and a lifecycle that never leaks.

Calls of one conversation run one at a time (a lock per conversation); different conversations
run in parallel. A conversation's browser is launched by its first call, exactly once however
many first calls race. It ends when the conversation is deleted (`kill_session`), after
`idle_timeout` without calls (the idle clock runs only between calls), when older than
`max_lifetime` (between calls), when it crashes, or when the manager closes; then the next call
starts a fresh browser and its result says why the old state is gone.

The reaper is one task that sleeps until the earliest deadline, or until a call starts or ends
and deadlines move; so nobody overstays, and virtual-time tests see exact times.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from chrome_launcher import InstanceLock, StateLayout, group_rss_bytes
from orphan_reaper import ReapReport, reap_orphans

from ._conversation_ids import session_dir_name, validate_conversation_id
from ._duration import format_duration
from ._errors import (
    BrowserLaunchError,
    InvalidInputError,
    SessionClosedError,
    SessionError,
    ToolError,
)
from ._metrics import Metrics
from ._reports import CleanupReport, SessionInfo
from ._settings import Settings
from .browser import BrowserSession, SessionDirs, SessionState, run_browser_session
from .tools import ToolContext, ToolOutput, find_tool, prepare_input, run_tool

log = logging.getLogger("browser_tool.manager")


@dataclass(eq=False)
class _Slot:
    """Everything the manager keeps for one conversation."""

    conversation_id: str
    idle_timeout: float
    call_lock: trio.Lock = field(default_factory=trio.Lock)
    launch_lock: trio.Lock = field(default_factory=trio.Lock)
    session: BrowserSession | None = None
    dirs: SessionDirs | None = None
    in_call: int = 0
    calls: int = 0
    last_active: float = 0.0  # trio time a call last ended (or the slot was made)
    last_error: str | None = None
    note: str | None = None  # why the next browser is new, for the next result
    expire_after_call: str | None = None
    call_scope: trio.CancelScope | None = None
    call_session: BrowserSession | None = None  # the browser the call in flight is using
    stop_reason: str | None = None
    deleted: bool = False


class BrowserSessionManager:
    """Built only by `open_session_manager`."""

    def __init__(self, settings: Settings, lock: InstanceLock, nursery: trio.Nursery) -> None:
        self.settings = settings
        self.instance_id = lock.instance_id
        self.metrics = Metrics()
        self.working_dir = Path.cwd()
        self.startup_reap: ReapReport | None = None
        self._layout = StateLayout(settings.state_dir)
        self._nursery = nursery
        self._slots: dict[str, _Slot] = {}
        self._changed = trio.Event()
        self._closing = False

    # ---- the public API -------------------------------------------------------------------

    async def call_tool(self, conversation_id: str, name: str, tool_input: object) -> ToolOutput:
        """Run tool `name` for `conversation_id`.

        Raises InvalidInputError for a bad conversation id and UnknownToolError (a subclass)
        for an unknown tool. Everything else, invalid tool input included, comes back as a
        ToolOutput with `is_error` set, since the model must see it.
        """
        validate_conversation_id(conversation_id)
        tool = find_tool(name)
        started = trio.current_time()
        try:
            args, timeout = prepare_input(
                tool, tool_input, self.settings.default_timeout, self.settings.max_timeout
            )
        except (InvalidInputError, ToolError) as exc:
            return self._count(name, ToolOutput.error(str(exc)), started)
        if self._closing:
            return self._count(name, ToolOutput.error("The service is shutting down."), started)
        slot = self._slot(conversation_id)
        try:
            async with slot.call_lock:
                if slot.deleted:
                    return self._count(
                        name,
                        ToolOutput.error("The conversation was deleted; the call was not run."),
                        started,
                    )
                output = await self._run_in_slot(slot, tool, args, timeout)
        except trio.Cancelled:  # its caller gave up (a client hung up): still a call, failed
            self._count(name, ToolOutput.error("cancelled by the caller"), started)
            raise
        return self._count(name, output, started)

    async def get_or_create(self, conversation_id: str) -> BrowserSession:
        """The conversation's browser, launched on first use (once, however many race).

        Raises InvalidInputError for a bad id, BrowserLaunchError when Chrome won't start and
        SessionClosedError when the conversation is deleted meanwhile.
        """
        validate_conversation_id(conversation_id)
        return await self._browser_for_call(self._slot(conversation_id))

    async def kill_session(self, conversation_id: str, reason: str = "delete") -> CleanupReport:
        """End the conversation's browser and delete its files. Idempotent; never raises.

        A call in flight fails at once with a clear error. This is what delete hooks call.
        """
        started = trio.current_time()
        try:
            validate_conversation_id(conversation_id)
        except InvalidInputError as exc:
            return CleanupReport(conversation_id, existed=False, errors=(str(exc),))
        slot = self._slots.pop(conversation_id, None)
        if slot is None:
            return CleanupReport(conversation_id, existed=False)
        slot.deleted = True
        report = await self._stop_browser(slot, reason)
        errors = list(report.errors)
        dirs = slot.dirs or SessionDirs(
            self._layout.sessions_dir / session_dir_name(conversation_id)
        )
        if error := dirs.remove():
            errors.append(error)
        self._changed.set()
        return CleanupReport(
            conversation_id,
            existed=True,
            pid=report.pid,
            browser_killed=report.browser_killed,
            survivors=report.survivors,
            files_removed=True,
            duration_s=trio.current_time() - started,
            errors=tuple(errors),
        )

    async def reset_session(self, conversation_id: str) -> CleanupReport:
        """Close the browser and clear the conversation's downloads; the next call starts clean."""
        validate_conversation_id(conversation_id)
        slot = self._slots.get(conversation_id)
        if slot is None:
            return CleanupReport(conversation_id, existed=False)
        report = await self._stop_browser(slot, "reset")
        slot.note = None
        if slot.dirs is not None:
            shutil.rmtree(slot.dirs.downloads, ignore_errors=True)
            slot.dirs.downloads.mkdir(mode=0o700, exist_ok=True)
        return report

    def keepalive(self, conversation_id: str, idle_timeout: float) -> float:
        """Set the conversation's idle timeout (clamped to settings); return what was set."""
        validate_conversation_id(conversation_id)
        if not idle_timeout > 0:
            raise InvalidInputError(
                "idle_timeout_s", "must be a number greater than 0", idle_timeout
            )
        value = min(float(idle_timeout), self.settings.max_idle_timeout)
        slot = self._slot(conversation_id)
        slot.idle_timeout = value
        slot.last_active = trio.current_time()
        self._changed.set()
        return value

    def list_sessions(self) -> list[SessionInfo]:
        """A snapshot of every conversation that has a browser or is in a call."""
        now = trio.current_time()
        infos = []
        for slot in self._slots.values():
            session = slot.session
            if session is None and not slot.in_call:
                continue
            idle = 0.0 if slot.in_call else now - slot.last_active
            infos.append(
                SessionInfo(
                    conversation_id=slot.conversation_id,
                    pid=session.pid if session else None,
                    state=(session.state.value if session else "starting"),
                    age_s=(now - session.started_at) if session else 0.0,
                    idle_s=idle,
                    idle_left_s=max(0.0, slot.idle_timeout - idle),
                    calls=slot.calls,
                    last_error=slot.last_error,
                    rss_bytes=group_rss_bytes(session.pid) if session else 0,
                )
            )
        return infos

    def statistics(self) -> dict[str, Any]:
        sessions = self.list_sessions()
        by_state: dict[str, int] = {}
        for info in sessions:
            by_state[info.state] = by_state.get(info.state, 0) + 1
        return {"sessions": len(sessions), "by_state": by_state, "instance_id": self.instance_id}

    # ---- calls ----------------------------------------------------------------------------

    async def _run_in_slot(
        self, slot: _Slot, tool: Any, args: dict[str, Any], timeout: float
    ) -> ToolOutput:
        ctx = ToolContext(slot.conversation_id, self.settings, self.working_dir, self, slot)
        slot.in_call += 1
        slot.stop_reason = None
        self._changed.set()
        try:
            with trio.CancelScope() as scope:
                slot.call_scope = scope
                output = await run_tool(ctx, tool, args, timeout)
            if scope.cancelled_caught:
                output = ToolOutput.error(_stopped_message(slot.stop_reason or "closed"))
        finally:
            slot.call_scope = slot.call_session = None
            slot.in_call -= 1
            slot.calls += 1
            slot.last_active = trio.current_time()
            self._changed.set()
        notes = []
        if slot.note:
            notes.append(slot.note)
            slot.note = None
        if slot.session is not None:
            notes += slot.session.page.take_notes()
        output = output.with_notes(notes)
        slot.last_error = output.output[:200] if output.is_error else slot.last_error
        if slot.expire_after_call and slot.session is not None:
            reason, slot.expire_after_call = slot.expire_after_call, None
            self._nursery.start_soon(self._expire, slot, reason)
        return output

    async def _browser_for_call(self, slot: _Slot) -> BrowserSession:
        async with slot.launch_lock:
            if slot.deleted:
                raise SessionClosedError(slot.conversation_id, slot.stop_reason or "delete")
            session = slot.session
            if session is not None and session.alive:
                slot.call_session = session
                return session
            if session is not None:  # died; its task is cleaning up
                await session.aclose("crash")
            if self._closing:
                raise SessionError("The service is shutting down.")
            dirs = self._dirs_for(slot)
            try:
                session = await self._nursery.start(
                    run_browser_session,
                    slot.conversation_id,
                    self.settings,
                    dirs,
                    self.instance_id,
                    self._on_closed,
                )
            except BaseExceptionGroup as group:
                self._changed.set()
                launch_errors = [e for e in group.exceptions if isinstance(e, BrowserLaunchError)]
                self.metrics.inc("browser_tool_launches_total", outcome="error")
                if launch_errors:
                    raise launch_errors[0] from None
                raise
            except BrowserLaunchError:
                self._changed.set()
                self.metrics.inc("browser_tool_launches_total", outcome="error")
                raise
            self.metrics.inc("browser_tool_launches_total", outcome="ok")
            if slot.deleted:  # deleted while launching, with no call to cancel
                await session.aclose(slot.stop_reason or "delete")
                dirs.remove()  # the launch wrote into it after kill_session removed it
                raise SessionClosedError(slot.conversation_id, slot.stop_reason or "delete")
            slot.session = slot.call_session = session
            self._changed.set()
            return session  # type: ignore[no-any-return]

    def _dirs_for(self, slot: _Slot) -> SessionDirs:
        if slot.deleted:
            raise SessionClosedError(slot.conversation_id, slot.stop_reason or "delete")
        if slot.dirs is None or not slot.dirs.root.exists():
            root = self._layout.sessions_dir / session_dir_name(slot.conversation_id)
            slot.dirs = SessionDirs(root).create(self.instance_id)
        return slot.dirs

    def _slot(self, conversation_id: str) -> _Slot:
        slot = self._slots.get(conversation_id)
        if slot is None:
            slot = _Slot(
                conversation_id, self.settings.idle_timeout, last_active=trio.current_time()
            )
            self._slots[conversation_id] = slot
        return slot

    def _count(self, tool: str, output: ToolOutput, started: float) -> ToolOutput:
        self.metrics.inc("browser_tool_tool_calls_total", tool=tool)
        if output.is_error:
            self.metrics.inc("browser_tool_tool_errors_total", tool=tool)
        self.metrics.observe(
            "browser_tool_tool_call_seconds", trio.current_time() - started, tool=tool
        )
        return output

    # ---- ending sessions -----------------------------------------------------------------

    async def _stop_browser(self, slot: _Slot, reason: str) -> CleanupReport:
        slot.stop_reason = reason
        if slot.call_scope is not None:
            slot.call_scope.cancel()
        session, slot.session = slot.session, None
        if session is None:
            return CleanupReport(slot.conversation_id, existed=True)
        kill = await session.aclose(reason)
        self.metrics.inc("browser_tool_kills_total", reason=reason)
        self._changed.set()
        return CleanupReport.from_kill(slot.conversation_id, session.pid, kill)

    def _on_closed(self, session: BrowserSession) -> None:
        """Called by a session's task once its Chrome is gone, whatever the reason."""
        slot = self._slots.get(session.conversation_id)
        if session.close_reason != "crash" or slot is None or slot.session is not session:
            return
        slot.session = None
        status = session.report.exit_status if session.report else None
        slot.note = (
            f"Note: the previous browser of this conversation crashed (exit status {status}); "
            "a fresh browser was started and the earlier page state, cookies and storage were lost."
        )
        self.metrics.inc("browser_tool_kills_total", reason="crash")
        if slot.call_scope is not None and slot.call_session is session:
            slot.stop_reason = "crash"
            slot.call_scope.cancel()
        self._changed.set()

    async def _expire(self, slot: _Slot, reason: str) -> None:
        if slot.session is None:
            return
        if slot.in_call:
            slot.expire_after_call = reason
            return
        await self._stop_browser(slot, reason)
        slot.last_active = trio.current_time()
        if reason == "idle":
            why = f"it was idle for {format_duration(slot.idle_timeout)} (idle timeout)"
        else:
            why = (
                f"it reached its maximum lifetime of {format_duration(self.settings.max_lifetime)}"
            )
        slot.note = (
            f"Note: the previous browser of this conversation was closed because {why}; a fresh "
            "browser was started and the earlier page state, cookies and storage were lost."
        )

    async def run_reaper(self) -> None:
        """Kill idle and over-age sessions at their exact deadlines, and forget conversations
        that have had no browser and no call for `max_lifetime` (their files go with them, so
        a service that runs for a year without delete hooks does not fill its disk)."""
        while True:
            now = trio.current_time()
            next_deadline = float("inf")
            for slot in list(self._slots.values()):
                session = slot.session
                if slot.in_call:
                    continue
                if session is None:
                    if slot.launch_lock.locked():
                        continue  # a launch in progress; it sets _changed when done
                    forget_at = slot.last_active + self.settings.max_lifetime
                    if forget_at <= now:
                        self._forget(slot)
                    else:
                        next_deadline = min(next_deadline, forget_at)
                    continue
                if session.state is not SessionState.READY:
                    continue
                idle_at = slot.last_active + slot.idle_timeout
                life_at = session.started_at + self.settings.max_lifetime
                if life_at <= now:
                    self._nursery.start_soon(self._expire, slot, "lifetime")
                elif idle_at <= now:
                    self._nursery.start_soon(self._expire, slot, "idle")
                else:
                    next_deadline = min(next_deadline, idle_at, life_at)
            self._changed = trio.Event()
            with trio.move_on_at(next_deadline):
                await self._changed.wait()

    def _forget(self, slot: _Slot) -> None:
        if self._slots.get(slot.conversation_id) is slot:
            del self._slots[slot.conversation_id]
            if slot.dirs is not None and (error := slot.dirs.remove()):
                log.warning("forgetting %s: %s", slot.conversation_id, error)

    async def aclose(self) -> None:
        """Stop taking calls, let in-flight calls finish within `call_grace`, then close every
        session in parallel within `shutdown_timeout` and delete their files. Never raises."""
        self._closing = True
        with trio.CancelScope(shield=True):
            with trio.move_on_after(self.settings.call_grace):
                while any(slot.in_call for slot in self._slots.values()):
                    self._changed = trio.Event()
                    await self._changed.wait()
            with trio.move_on_after(self.settings.shutdown_timeout):
                async with trio.open_nursery() as nursery:
                    for conversation_id in list(self._slots):
                        nursery.start_soon(self.kill_session, conversation_id, "shutdown")

    def skip_call_grace(self) -> None:
        """A second shutdown signal: stop in-flight calls now."""
        for slot in self._slots.values():
            if slot.call_scope is not None:
                slot.stop_reason = "shutdown"
                slot.call_scope.cancel()


def _stopped_message(reason: str) -> str:
    if reason == "crash":
        return (
            "The browser crashed during the call; its state is lost. "
            "The next call starts a fresh browser."
        )
    return f"The browser session was closed ({reason}) while the call ran; the call was stopped."


@asynccontextmanager
async def open_session_manager(
    settings: Settings | None = None, *, environ: Mapping[str, str] | None = None
) -> AsyncIterator[BrowserSessionManager]:
    """Take the instance lock, sweep orphans (unless disabled), run the reaper, yield the
    manager; on exit close every session (see `BrowserSessionManager.aclose`) and release the
    lock. Raises InstanceLockError if the state dir cannot be used."""
    settings = settings or Settings.from_env(environ)
    layout = StateLayout(settings.state_dir).create()
    lock = InstanceLock.acquire(layout)
    try:
        startup_reap = None
        if settings.reap_on_start:
            startup_reap = await reap_orphans(settings.state_dir, exclude_instance=lock.instance_id)
            for line in startup_reap.summary_lines():
                log.info("start-up orphan sweep: %s", line)
        try:
            async with trio.open_nursery() as nursery:
                manager = BrowserSessionManager(settings, lock, nursery)
                manager.startup_reap = startup_reap
                if startup_reap is not None:
                    for outcome, entries in (
                        ("killed", startup_reap.killed),
                        ("spared", startup_reap.spared),
                        ("removed", startup_reap.removed),
                        ("error", startup_reap.errors),
                    ):
                        manager.metrics.inc(
                            "browser_tool_reaper_total", len(entries), outcome=outcome
                        )
                nursery.start_soon(manager.run_reaper)
                try:
                    yield manager
                finally:
                    await manager.aclose()
                    nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # The body runs inside our nursery; give callers their own exception back.
            if len(group.exceptions) != 1:
                raise
            raise group.exceptions[0] from None
    finally:
        lock.release()
