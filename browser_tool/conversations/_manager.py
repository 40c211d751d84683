"""BrowserSessionManager: one browser per conversation, and a lifecycle that never leaks.

Calls of one conversation run one at a time; different conversations run in parallel. A
conversation's browser comes from the browser source on its first call, exactly once however
many first calls race. It ends when the conversation is deleted (`kill_session`), after
`idle_timeout` without calls (the idle clock runs only between calls), when older than
`max_lifetime` (between calls), when it crashes, or when the manager closes; then the next call
gets a fresh browser and its result says why the old state is gone.

This module is the public API; the states and their transitions live in `_conversation` and
`_lifecycle`, the clock in `_clock`; browsers come from `sources` (the layer below).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from chrome_launcher import InstanceLock, StateLayout, group_rss_bytes
from orphan_reaper import ReapReport, reap_orphans

from .._conversation_ids import validate_conversation_id
from .._errors import CloseReason, InvalidInputError, SessionClosedError, ToolError
from .._metrics import Metrics
from .._profile_names import validate_profile_name
from .._settings import Settings
from .._tasks import raise_sole
from ..browser import BrowserSession, StorageState, parse_storage_state
from ..sources import LaunchSource, PoolSource, SharedSource, SourceFactory
from ..tools import ToolOutput, find_tool, prepare_input
from ._calls import run_call, tool_body
from ._clock import run_clock
from ._conversation import ConversationState, take_turn
from ._handoff import DEFAULT_TTL
from ._handoffs import HandoffTicket
from ._lifecycle import Lifecycle
from ._persistence import bind_profile, load_state, read_state
from ._profiles import ProfileInfo
from ._reports import POOLED, CleanupReport, SessionInfo
from ._watchdog import Watchdog

log = logging.getLogger("browser_tool.manager")


class BrowserSessionManager:
    """Built only by `open_session_manager`."""

    def __init__(
        self,
        settings: Settings,
        lock: InstanceLock,
        nursery: trio.Nursery,
        source_factory: SourceFactory | None = None,
    ) -> None:
        self.settings = settings
        self.instance_id = lock.instance_id
        self.metrics = Metrics()
        if source_factory is None:
            if settings.isolation == "context":
                source_factory = SharedSource
            else:
                source_factory = PoolSource if settings.pool_size > 0 else LaunchSource
        self.working_dir = Path.cwd()
        self.startup_reap: ReapReport | None = None
        self._lifecycle = Lifecycle(
            settings, self.instance_id, nursery, self.metrics, source_factory
        )
        self.handoffs = self._lifecycle.handoffs  # issue 21: the live view's side of hand-overs
        self.watchdog = Watchdog(self._lifecycle)  # its task: `run_watchdog`

    async def call_tool(self, conversation_id: str, name: str, tool_input: object) -> ToolOutput:
        """Run tool `name` for `conversation_id`.

        Raises InvalidInputError for a bad conversation id and UnknownToolError (a subclass)
        for an unknown tool. Everything else, invalid tool input included, comes back as a
        ToolOutput with `is_error` set, since the model must see it. The input's timeout bounds
        the call from the moment it gets its turn, the browser's launch included.
        """
        cid = validate_conversation_id(conversation_id)
        tool = find_tool(name)
        started = trio.current_time()
        try:
            args, timeout = prepare_input(
                tool, tool_input, self.settings.default_timeout, self.settings.max_timeout
            )
        except (InvalidInputError, ToolError) as exc:
            return self._count(name, ToolOutput.error(str(exc)), started)
        if self._lifecycle.closing:
            return self._count(name, ToolOutput.error("The service is shutting down."), started)
        conv = self._lifecycle.conversation(cid)
        try:
            async with take_turn(conv):
                deadline = trio.current_time() + timeout
                body = tool_body(self._lifecycle, tool, args, timeout, deadline, self.working_dir)
                asks = tool.name == "browser_request_human"  # not to wait for whom it asks for
                output = await run_call(self._lifecycle, conv, body, deadline, asks_person=asks)
        except trio.Cancelled:  # its caller gave up (a client hung up): still a call, failed
            self._count(name, ToolOutput.error("cancelled by the caller"), started)
            raise
        return self._count(name, output, started)

    async def get_or_create(self, conversation_id: str) -> BrowserSession:
        """The conversation's browser, launched on first use (once, however many race).

        Raises InvalidInputError for a bad id, BrowserLaunchError when Chrome won't start and
        SessionClosedError when the conversation is deleted or shut down meanwhile.
        """
        cid = validate_conversation_id(conversation_id)
        conv = self._lifecycle.conversation(cid)
        async with conv.turn:
            await conv.wait_until_settled()
            with trio.CancelScope() as scope:
                call = self._lifecycle.begin_call(conv, scope)
                try:
                    browser = await self._lifecycle.browser_for(conv)
                    if not isinstance(browser, BrowserSession):
                        raise TypeError(f"{type(browser).__name__} is not a BrowserSession")
                    return browser
                finally:
                    self._lifecycle.end_call(conv, counted=False)
        raise SessionClosedError(conversation_id, call.stopped_because or "closed")

    async def hand_over(
        self, conversation_id: str, reason: str = "", ttl: float = DEFAULT_TTL
    ) -> HandoffTicket:
        """Hand the conversation's browser to a person for at most `ttl` seconds (issue 21),
        launching it first if needed: its calls wait until the person is done. Raises
        InvalidInputError, HandoffError (see `Handoffs.hand_over`) and what `get_or_create`
        raises."""
        cid = validate_conversation_id(conversation_id)
        return await self.handoffs.hand_over(cid, reason, ttl, self.get_or_create)

    async def kill_session(
        self, conversation_id: str, reason: CloseReason = CloseReason.DELETE
    ) -> CleanupReport:
        """End the conversation's browser and delete its files. Idempotent; never raises.

        A call in flight fails at once with a clear error. This is what delete hooks call.
        """
        try:
            cid = validate_conversation_id(conversation_id)
        except InvalidInputError as exc:
            return CleanupReport(conversation_id, existed=False, errors=(str(exc),))
        return await self._lifecycle.delete(cid, reason)

    async def reset_session(self, conversation_id: str) -> CleanupReport:
        """Close the browser and clear the conversation's downloads; the next call starts clean."""
        validate_conversation_id(conversation_id)
        conv = self._lifecycle.conversations.get(conversation_id)
        if conv is None:
            return CleanupReport(conversation_id, existed=False)
        report = await self._lifecycle.close_browser(conv, CloseReason.RESET)
        conv.reset_done()
        if conv.dirs is not None and not conv.deleted:
            await conv.dirs.clear_downloads()
        return report

    def note_moved_here(self, conversation_id: str) -> None:
        """A proxy moved the conversation here from another instance that could not take it:
        unless this instance runs a browser for it already, the result of the call that starts
        one says the earlier state is gone. Raises InvalidInputError for a bad id."""
        cid = validate_conversation_id(conversation_id)
        self._lifecycle.conversation(cid).moved_here()

    def keepalive(self, conversation_id: str, idle_timeout: float) -> float:
        """Set the conversation's idle timeout (clamped to settings); return what was set."""
        cid = validate_conversation_id(conversation_id)
        if not idle_timeout > 0:
            raise InvalidInputError(
                "idle_timeout_s", "must be a number greater than 0", idle_timeout
            )
        value = min(float(idle_timeout), self.settings.max_idle_timeout)
        conv = self._lifecycle.conversation(cid)
        conv.set_idle_timeout(value, trio.current_time())
        self._lifecycle.poke()
        return value

    # ---- issue 21: persistent profiles and storage state (see `_persistence`) -----------

    def bind_profile(self, conversation_id: str, profile: str) -> str:
        """Bind the conversation to persistent profile `profile` (created if new) before its
        first call: its Chrome then runs on `<state_dir>/profiles/<profile>/`, which outlives
        it. Binding again to the same profile is a no-op. Returns the profile's name.

        Raises InvalidInputError (a bad id or name) and ConflictError: the profile is held by
        another live conversation (named), the conversation was used or is bound elsewhere,
        or isolation is `context` (conversations share one Chrome, which has one profile).
        """
        return bind_profile(self._lifecycle, validate_conversation_id(conversation_id), profile)

    async def list_profiles(self) -> list[ProfileInfo]:
        """Every persistent profile of the state root, with who holds it."""
        return await self._lifecycle.profiles.list()

    async def delete_profile(self, profile: str) -> bool:
        """Delete a persistent profile; False when there is none. Raises InvalidInputError
        for a bad name and ConflictError while a conversation (or a process) uses it."""
        return await self._lifecycle.profiles.delete(validate_profile_name(profile))

    async def storage_state(self, conversation_id: str) -> StorageState:
        """The cookies and localStorage its browser holds (Playwright's storage_state shape),
        or the state kept for its next launch. Raises InvalidInputError, ConflictError (no
        browser runs), SessionClosedError and SessionError (the browser did not answer)."""
        return await read_state(self._lifecycle, validate_conversation_id(conversation_id))

    async def load_storage_state(self, conversation_id: str, state: object) -> str:
        """Load a storage state into the conversation: now ("applied") when its browser runs,
        else at its next launch ("pending"). Adds: same-named cookies and localStorage keys
        are replaced, nothing is cleared. Raises as `storage_state`, and InvalidInputError
        naming the field of `state` that breaks the shape."""
        cid = validate_conversation_id(conversation_id)
        return await load_state(self._lifecycle, cid, parse_storage_state(state))

    def list_sessions(self) -> list[SessionInfo]:
        """A snapshot of every conversation that has a browser or is in a call."""
        now = trio.current_time()
        infos = []
        for conv in self._lifecycle.conversations.values():
            browser = conv.browser
            if browser is None and not conv.has_call:
                continue
            idle = conv.idle_for(now)
            infos.append(
                SessionInfo(
                    conversation_id=conv.conversation_id,
                    pid=browser.pid if browser else None,
                    state=(browser.state.value if browser else "starting"),
                    age_s=(now - browser.started_at) if browser else 0.0,
                    idle_s=idle,
                    idle_left_s=max(0.0, conv.idle_timeout - idle),
                    calls=conv.calls,
                    last_error=conv.last_error,
                    rss_bytes=group_rss_bytes(browser.pid) if browser else 0,
                    shared=browser.shares_chrome if browser else False,
                    profile=conv.profile,
                    handoff=handoff.info(now)
                    if (handoff := conv.handoff) and not handoff.over
                    else None,
                )
            )
        for browser in self._lifecycle.standby():  # launched ahead, for no conversation yet
            infos.append(
                SessionInfo(
                    conversation_id=browser.conversation_id,
                    pid=browser.pid,
                    state=POOLED,
                    age_s=now - browser.started_at,
                    idle_s=0.0,
                    idle_left_s=0.0,
                    calls=0,
                    last_error=None,
                    rss_bytes=group_rss_bytes(browser.pid),
                )
            )
        return infos

    def conversation_state(self, conversation_id: str) -> ConversationState | None:
        """The conversation's lifecycle state, or None when the manager keeps no record."""
        conv = self._lifecycle.conversations.get(conversation_id)
        return conv.state if conv is not None else None

    def _count(self, tool: str, output: ToolOutput, started: float) -> ToolOutput:
        self.metrics.inc("browser_tool_tool_calls_total", tool=tool)
        if output.is_error:
            self.metrics.inc("browser_tool_tool_errors_total", tool=tool)
        self.metrics.observe(
            "browser_tool_tool_call_seconds", trio.current_time() - started, tool=tool
        )
        return output

    async def run_clock(self) -> None:
        """Kill idle and over-age browsers at their exact deadlines; forget old conversations."""
        await run_clock(self._lifecycle)

    async def run_watchdog(self) -> None:
        """Probe browsers after timed-out calls, pause pages that burn CPU between calls, close
        browsers over the memory limit (see `_watchdog`)."""
        await self.watchdog.run()

    async def aclose(self) -> None:
        """Stop taking calls, let in-flight calls finish within `call_grace`, then close every
        session in parallel within `shutdown_timeout` and delete their files. Never raises."""
        lifecycle = self._lifecycle
        lifecycle.closing = True
        self.handoffs.end_all("the service is shutting down")
        with trio.CancelScope(shield=True):
            with trio.move_on_after(self.settings.call_grace):
                while any(conv.has_call for conv in lifecycle.conversations.values()):
                    await lifecycle.wait_for_change()
            with trio.move_on_after(self.settings.shutdown_timeout):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(lifecycle.close_source)
                    for conv in list(lifecycle.conversations.values()):
                        reason = CloseReason.SHUTDOWN
                        nursery.start_soon(lifecycle.delete, conv.conversation_id, reason)
            lifecycle.profiles.close()

    def skip_call_grace(self) -> None:
        """A second shutdown signal: stop in-flight calls now."""
        self._lifecycle.stop_calls(CloseReason.SHUTDOWN)


@asynccontextmanager
async def open_session_manager(
    settings: Settings | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    source_factory: SourceFactory | None = None,
) -> AsyncIterator[BrowserSessionManager]:
    """Take the instance lock, sweep orphans (unless disabled), run the clock, yield the
    manager; on exit close every session (see `BrowserSessionManager.aclose`) and release the
    lock. Raises InstanceLockError if the state dir cannot be used. `source_factory` chooses
    where browsers come from (tests put a stand-in there); by default `settings.isolation`
    does, and in process mode a pool when `settings.pool_size` > 0."""
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
                manager = BrowserSessionManager(settings, lock, nursery, source_factory)
                manager.startup_reap = startup_reap
                _count_startup_reap(manager.metrics, startup_reap)
                nursery.start_soon(manager.run_clock)
                nursery.start_soon(manager.run_watchdog)
                try:
                    yield manager
                finally:
                    await manager.aclose()
                    nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # The body runs inside our nursery; give callers their own exception back.
            raise_sole(group)
    finally:
        lock.release()


def _count_startup_reap(metrics: Metrics, report: ReapReport | None) -> None:
    """Count the start-up sweep's decisions once (zeros when it did not run, so the series
    exist); the orphans it killed are kills with reason "reaper"."""
    outcomes = {
        "killed": len(report.killed) if report else 0,
        "spared": len(report.spared) if report else 0,
        "removed": len(report.removed) if report else 0,
        "error": len(report.errors) if report else 0,
    }
    for outcome, count in outcomes.items():
        metrics.inc("browser_tool_reaper_total", count, outcome=outcome)
    metrics.inc("browser_tool_kills_total", outcomes["killed"], reason=CloseReason.REAPER)
