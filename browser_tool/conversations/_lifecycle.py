"""Lifecycle: every step that moves a conversation through its states (see `_conversation`).

Calls begin and end here, browsers are asked of the source and handed back here, and the
clock's decisions (idle, lifetime, forget) are acted on here, each after re-checking the state
it finds at that moment. The manager's public API and the clock are thin callers.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

from chrome_launcher import KillReport, StateLayout

from .._conversation_ids import ConversationId, session_dir_name
from .._duration import format_duration
from .._errors import CloseReason, SessionClosedError, SessionError
from .._metrics import Metrics
from .._settings import Settings
from ..browser import SessionDirs
from ..sources import Browser, SourceFactory
from ._conversation import ActiveCall, Conversation, ConversationState, Due
from ._handoffs import Handoffs
from ._profiles import ProfileRegistry
from ._reports import CleanupReport
from ._storage import apply_pending

log = logging.getLogger("browser_tool.manager")

S = ConversationState


class Lifecycle:
    """The conversations of one manager and the transitions between their states."""

    def __init__(
        self,
        settings: Settings,
        instance_id: str,
        nursery: trio.Nursery,
        metrics: Metrics,
        source_factory: SourceFactory,
    ) -> None:
        self.settings = settings
        self.instance_id = instance_id
        self.metrics = metrics
        self.conversations: dict[str, Conversation] = {}  # made only via `conversation`
        self.closing = False  # the manager is shutting down: no new launches
        self._layout = StateLayout(settings.state_dir)
        self.profiles = ProfileRegistry(self._layout.profiles_dir, instance_id)
        self._nursery = nursery
        self._source = source_factory(settings, instance_id, nursery, self._on_closed, metrics)
        self._changed = trio.Event()
        self._clock_wakes_at = math.inf
        self.handoffs = Handoffs(self.conversations, nursery, metrics, self.poke)  # issue 21
        self._launched = trio.Event()  # set (and replaced) when a conversation gets a browser

    # ---- who waits on what ----------------------------------------------------------------

    def poke(self) -> None:
        """Deadlines moved, or a call ended: wake the clock and the shutdown."""
        self._changed.set()
        self._changed = trio.Event()

    async def wait_for_launch(self) -> None:
        """Sleep until a conversation gets a browser (the watchdog, with nothing to watch)."""
        await self._launched.wait()

    async def wait_for_change(self, until: float = math.inf) -> None:
        """Sleep until the next `poke` or until trio time `until`, whichever comes first. The
        clock says when it wakes anyway (`until`), so a call that ends with a later deadline
        need not wake it."""
        changed = self._changed
        self._clock_wakes_at = min(self._clock_wakes_at, until)
        with trio.move_on_at(until):
            await changed.wait()
        self._clock_wakes_at = math.inf

    def _deadline_moved(self, conv: Conversation) -> None:
        # Poking on every call woke the clock twice per call, and it then walked every
        # conversation: only a deadline sooner than the clock's wake-up (or a shutdown waiting
        # for the calls to end) needs it.
        _, at = conv.due(trio.current_time(), self.settings.max_lifetime)
        if self.closing or at < self._clock_wakes_at:
            self.poke()

    def conversation(self, conversation_id: ConversationId) -> Conversation:
        """The record of `conversation_id`, made on first use."""
        conv = self.conversations.get(conversation_id)
        if conv is None:
            conv = Conversation(
                conversation_id, self.settings.idle_timeout, last_active=trio.current_time()
            )
            self.conversations[conversation_id] = conv
        return conv

    # ---- calls ----------------------------------------------------------------------------

    def begin_call(self, conv: Conversation, scope: trio.CancelScope) -> ActiveCall:
        """NO_BROWSER or READY -> IN_CALL. The caller holds the conversation's turn. (The clock
        needs no wake-up: a conversation in a call is never due.)"""
        return conv.begin_call(scope)

    def end_call(self, conv: Conversation, *, counted: bool = True) -> None:
        """IN_CALL -> READY or NO_BROWSER; any other state was set by a stop and stays. A
        browser past its lifetime ends now, right after the call that outlived it."""
        was_in_call = conv.state is S.IN_CALL
        conv.end_call(trio.current_time(), counted=counted)
        if was_in_call and conv.state is S.READY:
            self.expire(conv, Due.LIFETIME)
        self._deadline_moved(conv)

    def take_note(self, call: ActiveCall, conv: Conversation) -> str | None:
        """Why the browser this call started is new, said once."""
        why = conv.take_lost_because(call)
        if why is None:
            return None
        if conv.profile is not None:  # issue 21: the profile outlived the browser
            return (
                f"Note: the previous browser of this conversation {why}; a fresh browser was "
                f"started on its profile {conv.profile!r}: the earlier page state was lost, its "
                "cookies and storage were kept (as the browser last saved them)."
            )
        return (
            f"Note: the previous browser of this conversation {why}; a fresh browser was "
            "started and the earlier page state, cookies and storage were lost."
        )

    async def browser_for(self, conv: Conversation) -> Browser:
        """The running browser of the conversation whose call this is, launched if needed."""
        call = conv.call
        if conv.deleted or call is None:
            raise SessionClosedError(conv.conversation_id, CloseReason.DELETE)
        browser = conv.browser
        if browser is not None and browser.alive:
            conv.uses(browser)
            return browser
        if browser is not None:  # it died; wait for its task to finish cleaning up
            await self._source.release(browser, CloseReason.CRASH)
            conv.dead_browser_gone(browser)
        if self.closing:
            raise SessionError("The service is shutting down.")
        dirs = self.dirs(conv)
        profile_dir = self.profiles.path(conv.profile) if conv.profile else None
        conv.launching()
        try:
            browser = await self._source.acquire(conv.conversation_id, dirs, profile_dir)
        except BaseException:
            conv.launch_failed()
            if conv.deleted:  # the stopped launch may have written after delete's removal
                await dirs.remove()
            raise
        if not conv.launched(browser):  # stopped (deleted, reset) while it launched
            reason = call.stopped_because or CloseReason.DELETE
            await self._source.release(browser, reason)
            if conv.deleted:
                await dirs.remove()  # the launch wrote into it after kill_session removed it
            raise SessionClosedError(conv.conversation_id, reason)
        if (loaded := await apply_pending(dirs, browser)) is not None:  # issue 21
            conv.note_storage_origins([o["origin"] for o in loaded["origins"]])
        self._launched.set()
        self._launched = trio.Event()
        return browser

    def dirs(self, conv: Conversation) -> SessionDirs:
        """The conversation's dir, created if needed; never for a deleted conversation."""
        if conv.deleted:
            raise SessionClosedError(conv.conversation_id, CloseReason.DELETE)
        dirs = conv.dirs
        if dirs is None or not dirs.root.exists():
            dirs = SessionDirs(self._dir_path(conv.conversation_id)).create(self.instance_id)
            conv.keep_dirs(dirs)
        return dirs

    def _dir_path(self, conversation_id: str) -> Path:
        return self._layout.sessions_dir / session_dir_name(conversation_id)

    # ---- ending browsers and conversations ------------------------------------------------

    def expire(self, conv: Conversation, decision: Due) -> None:
        """Act on the clock's `decision` if it still holds."""
        if not conv.expire(decision, trio.current_time(), self.settings.max_lifetime):
            return  # a call began, the idle timeout moved, the browser died: nothing to do
        if decision is Due.FORGET:
            self._forget(conv)
            return
        self._nursery.start_soon(self.close_browser, conv, CloseReason(decision.value))

    async def close_browser(
        self, conv: Conversation, reason: CloseReason, why: str | None = None
    ) -> CleanupReport:
        """Hand the conversation's browser back (killing it); the conversation lives on. A call
        in flight is stopped first. `why` (the watchdog's) is what the next launching call's
        note says. Never raises."""
        conv.closing(reason)
        kill = await self._release(conv, reason)
        lost = why
        if reason in (CloseReason.IDLE, CloseReason.LIFETIME):
            lost = _lost_because(reason, conv.idle_timeout, self.settings)
        conv.closed(trio.current_time(), lost)
        self.poke()
        return kill

    async def delete(self, conversation_id: ConversationId, reason: CloseReason) -> CleanupReport:
        """Any state -> DELETED: stop its call, kill its browser, delete its files."""
        started = trio.current_time()
        conv = self.conversations.pop(conversation_id, None)
        if conv is None:
            return CleanupReport(conversation_id, existed=False)
        conv.delete(reason)
        report = await self._release(conv, reason)
        self.profiles.release(conv.profile, conversation_id)  # its Chrome is gone: free it
        dirs = conv.dirs or SessionDirs(self._dir_path(conversation_id))
        errors = list(report.errors)
        if error := await dirs.remove():
            errors.append(error)
        self.poke()
        return CleanupReport(
            conversation_id,
            existed=True,
            pid=report.pid,
            browser_killed=report.browser_killed,
            sigkill_needed=report.sigkill_needed,
            survivors=report.survivors,
            files_removed=True,
            duration_s=trio.current_time() - started,
            errors=tuple(errors),
        )

    def start_soon(self, fn: Callable[..., Awaitable[object]], *args: object) -> None:
        """Run `fn(*args)` in the manager's nursery (the watchdog's steps after a call)."""
        self._nursery.start_soon(fn, *args)

    def standby(self) -> list[Browser]:
        """Browsers the source keeps for no conversation yet (a pool's)."""
        return self._source.standby()

    async def close_source(self) -> None:
        """Shutdown: the source ends what it keeps for no conversation. Never raises."""
        await self._source.aclose()

    def stop_calls(self, reason: CloseReason) -> None:
        """Stop every call in flight now (a second shutdown signal)."""
        for conv in self.conversations.values():
            if conv.call is not None:
                conv.call.stop(reason)

    async def _release(self, conv: Conversation, reason: CloseReason) -> CleanupReport:
        browser = conv.browser
        if browser is None:
            return CleanupReport(conv.conversation_id, existed=True)
        kill: KillReport | None = await self._source.release(browser, reason)
        conv.browser_closed(browser)
        self.metrics.inc("browser_tool_kills_total", reason=reason)
        return CleanupReport.from_kill(conv.conversation_id, browser.pid, kill)

    def _forget(self, conv: Conversation) -> None:
        """Drop the record `expire` moved to DELETED, and its files."""
        if self.conversations.get(conv.conversation_id) is conv:
            del self.conversations[conv.conversation_id]
            self.profiles.release(conv.profile, conv.conversation_id)
            if conv.dirs is not None:
                self._nursery.start_soon(_remove_logged, conv.conversation_id, conv.dirs)

    def _on_closed(self, browser: Browser) -> None:
        """A browser the source gave out is gone. Only a crash needs acting on here: every
        other end was asked for by a step above, which does its own bookkeeping. A context
        whose shared Chrome was killed for not answering ends UNRESPONSIVE without a step of
        this conversation's (it is not CLOSING): an end like a crash, counted once already,
        as its Chrome's (issue 22)."""
        conv = self.conversations.get(browser.conversation_id)
        reason = browser.close_reason
        if conv is None or not (
            reason is CloseReason.CRASH
            or (reason is CloseReason.UNRESPONSIVE and conv.state is not S.CLOSING)
        ):
            return
        if conv.crashed(browser):
            if reason is CloseReason.CRASH:
                self.metrics.inc("browser_tool_kills_total", reason=CloseReason.CRASH)
            self.poke()


def _lost_because(reason: CloseReason, idle_timeout: float, settings: Settings) -> str:
    if reason is CloseReason.IDLE:
        return f"was closed because it was idle for {format_duration(idle_timeout)} (idle timeout)"
    return (
        "was closed because it reached its maximum lifetime of "
        f"{format_duration(settings.max_lifetime)}"
    )


async def _remove_logged(conversation_id: str, dirs: SessionDirs) -> None:
    if error := await dirs.remove():
        log.warning("forgetting %s: %s", conversation_id, error)
