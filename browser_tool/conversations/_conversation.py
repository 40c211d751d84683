"""Conversation: everything the manager keeps for one conversation, and its one explicit state.

    NO_BROWSER ──call──▶ IN_CALL ──launch──▶ LAUNCHING ──up (or failed)──▶ IN_CALL
         ▲                  │ call ends                                      │
         │                  ▼                                                │
         └── closed ◀── CLOSING ◀── idle / lifetime / reset ── READY ◀──────┘ call ends
                                                                  │
    any state ──kill_session (delete, shutdown)──▶ DELETED (final)  └──call──▶ IN_CALL

Every transition is an event method of `Conversation` (`begin_call`, `launching`, `launched`,
`end_call`, `crashed`, `expire`, `closing`, `closed`, `delete`, ...) that checks the state it
finds and moves in one step, through a table that refuses any other move; nobody else writes
its fields. A decision taken on one state (idle, lifetime, crash, delete) that is acted on later
re-checks the state it finds then. IN_CALL and LAUNCHING say a call runs; whether a browser
runs is `has_browser`, one derived answer for every state. Calls of one conversation take
turns (`turn`, a FIFO lock); a lifecycle step never takes a turn, so it can stop a call that
hangs.
"""

from __future__ import annotations

import enum
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import trio

from .._conversation_ids import ConversationId
from .._errors import CloseReason, ConflictError
from ..browser import SessionDirs
from ..sources import Browser
from ._handoff import Handoff


class ConversationState(enum.Enum):
    NO_BROWSER = "no_browser"  # between calls, nothing running
    IN_CALL = "in_call"  # a call runs (with a browser, or one not launched yet)
    LAUNCHING = "launching"  # a call waits for its browser to come up
    READY = "ready"  # between calls, a browser running
    CLOSING = "closing"  # its browser is being killed (idle, lifetime, reset, shutdown)
    DELETED = "deleted"  # final: kill_session ran; nothing may bring it back


_S = ConversationState
_ALLOWED: dict[ConversationState, frozenset[ConversationState]] = {
    _S.NO_BROWSER: frozenset({_S.IN_CALL, _S.DELETED}),
    _S.IN_CALL: frozenset({_S.LAUNCHING, _S.READY, _S.NO_BROWSER, _S.CLOSING, _S.DELETED}),
    _S.LAUNCHING: frozenset({_S.IN_CALL, _S.CLOSING, _S.DELETED}),
    _S.READY: frozenset({_S.IN_CALL, _S.CLOSING, _S.NO_BROWSER, _S.DELETED}),
    _S.CLOSING: frozenset({_S.NO_BROWSER, _S.DELETED}),
    _S.DELETED: frozenset(),
}


class Due(enum.Enum):
    """What the clock finds due for a conversation between calls."""

    IDLE = CloseReason.IDLE  # close its browser: idle for its idle timeout
    LIFETIME = CloseReason.LIFETIME  # close its browser: past `max_lifetime`
    FORGET = "forget"  # no browser, no call for `max_lifetime`: drop the record and its files


class IllegalTransition(AssertionError):
    """A bug: the code tried a transition the state table does not allow."""


@dataclass(eq=False)
class ActiveCall:
    """The call in flight: how to stop it, and why it was stopped."""

    scope: trio.CancelScope
    browser: Browser | None = None  # the browser this call is using
    launched: bool = False  # this call started the conversation's browser
    stopped_because: CloseReason | None = None

    def stop(self, reason: CloseReason) -> None:
        self.stopped_because = self.stopped_because or reason
        self.scope.cancel()


@dataclass(eq=False)
class Conversation:
    """One conversation's record. Built by the lifecycle; changed only by its event methods."""

    conversation_id: ConversationId
    idle_timeout: float
    last_active: float  # trio time a call last ended (or the record was made)
    state: ConversationState = ConversationState.NO_BROWSER
    browser: Browser | None = None  # set from the launch until the browser is closed
    dirs: SessionDirs | None = None
    call: ActiveCall | None = None  # set while a call runs (a stopped one too, until it ends)
    calls: int = 0
    last_error: str | None = None
    # Why the previous browser is gone (crash, idle, lifetime): said once, by the result of
    # the call that starts its successor.
    lost_because: str | None = None
    profile: str | None = None  # the persistent profile it is bound to (issue 21), if any
    # Origins whose localStorage was loaded into its browsers (issue 21): read back with the
    # origins its tabs visited.
    storage_origins: frozenset[str] = frozenset()
    # Why the watchdog paused its browser's pages between calls (issue 22); the next call
    # resumes them and says so.
    paused: str | None = None
    turn: trio.Lock = field(default_factory=trio.Lock)
    # Issue 21: a person holds the browser (or did, until the next call says so): see _handoff.
    handoff: Handoff | None = None
    _changed: trio.Event | None = None  # made only when someone waits (moves are per call)

    def _move(self, to: ConversationState) -> None:
        """Change state; raises IllegalTransition (a bug) if the table forbids it."""
        if to not in _ALLOWED[self.state]:
            raise IllegalTransition(
                f"conversation {self.conversation_id!r}: {self.state.value} -> {to.value}"
            )
        self.state = to
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    # ---- events: each checks the state it finds and moves in one step ---------------------

    def begin_call(self, scope: trio.CancelScope) -> ActiveCall:
        """NO_BROWSER or READY -> IN_CALL (the caller holds the turn)."""
        self._move(_S.IN_CALL)
        self.call = ActiveCall(scope)
        return self.call

    def end_call(self, now: float, *, counted: bool) -> None:
        """IN_CALL -> READY or NO_BROWSER; any other state was set by a stop and stays."""
        self.call = None
        self.calls += counted
        self.last_active = now
        if self.state is _S.IN_CALL:
            self._move(_S.READY if self.browser is not None else _S.NO_BROWSER)

    def uses(self, browser: Browser) -> None:
        """The call in flight uses the conversation's running `browser`."""
        if self.call is None or browser is not self.browser:
            raise IllegalTransition(f"conversation {self.conversation_id!r}: not its call's")
        self.call.browser = browser

    def dead_browser_gone(self, browser: Browser) -> None:
        """A browser found dead (its crash already noted, or not yet) is forgotten."""
        if self.browser is browser:
            self.browser = None
            self.paused = None

    def launching(self) -> None:
        """IN_CALL -> LAUNCHING: the call asks for a browser."""
        self._move(_S.LAUNCHING)

    def launch_failed(self) -> None:
        """LAUNCHING -> IN_CALL (the call reports the failure); a stop's state stays."""
        if self.state is _S.LAUNCHING:
            self._move(_S.IN_CALL)

    def launched(self, browser: Browser) -> bool:
        """LAUNCHING -> IN_CALL with `browser`; False (nothing changed) when the launch was
        stopped meanwhile (deleted, reset, shut down): the caller hands `browser` back."""
        if self.state is not _S.LAUNCHING or self.call is None:
            return False
        self.browser = self.call.browser = browser
        self.call.launched = True
        self._move(_S.IN_CALL)
        return True

    def crashed(self, browser: Browser) -> bool:
        """`browser` died on its own: forget it, say why once, stop the call using it. False
        when it is not (or no longer) this conversation's browser."""
        if self.browser is not browser:
            return False
        self.browser = None
        self.paused = None
        self.lost_because = browser.lost_because()
        self._end_handoff("the browser crashed", "browser_gone")
        if self.state is _S.READY:
            self._move(_S.NO_BROWSER)
        if self.call is not None and self.call.browser is browser:
            self.call.stop(CloseReason.CRASH)
        return True

    def expire(self, decision: Due, now: float, max_lifetime: float) -> bool:
        """Act on the clock's `decision` if it still holds: READY -> CLOSING (idle, lifetime)
        or NO_BROWSER -> DELETED (forget). False when a call began, the idle timeout moved or
        the browser died meanwhile."""
        due, _ = self.due(now, max_lifetime)
        if due is not decision:
            return False
        self._move(_S.DELETED if decision is Due.FORGET else _S.CLOSING)
        return True

    def closing(self, reason: CloseReason) -> None:
        """Its browser is to be closed for `reason`: stop the call; READY or IN_CALL with a
        browser -> CLOSING (an expiry already moved it)."""
        if self.call is not None:
            self.call.stop(reason)
        self._end_handoff(f"the browser was closed ({reason})", "browser_gone")
        if self.browser is not None and self.state in (_S.READY, _S.IN_CALL):
            self._move(_S.CLOSING)

    def browser_closed(self, browser: Browser | None) -> None:
        """The browser handed back for closing is gone."""
        if browser is not None and self.browser is browser:
            self.browser = None
            self.paused = None

    def closed(self, now: float, lost_because: str | None) -> None:
        """CLOSING -> NO_BROWSER; `lost_because` is said by the next launching call."""
        if self.state is _S.CLOSING:
            self._move(_S.NO_BROWSER)
        if lost_because is not None:
            self.lost_because = lost_because
        self.last_active = now

    def delete(self, reason: CloseReason) -> None:
        """Any state -> DELETED (final); the call in flight (and a hand-over) is stopped."""
        self._move(_S.DELETED)
        self._end_handoff(f"the conversation ended ({reason})", "deleted")
        if self.call is not None:
            self.call.stop(reason)

    def hand_over(self, handoff: Handoff) -> None:
        """A person gets the browser: calls wait and the idle clock stops until it is over."""
        if self.deleted or self.handed_over:
            raise IllegalTransition(f"conversation {self.conversation_id!r}: hand-over refused")
        self.handoff = handoff

    def handed_back(self, now: float) -> None:
        """The hand-over is over: the idle clock starts again from `now`."""
        self.last_active = now

    def _end_handoff(self, why: str, event: str) -> None:
        if self.handoff is not None:
            self.handoff.end(why, trio.current_time(), event=event)

    def take_handoff_note(self) -> str | None:
        """What the ended hand-over did, said once (by the call that runs after it)."""
        handoff = self.handoff
        if handoff is None or not handoff.over:
            return None
        self.handoff = None
        return handoff.note()

    def moved_here(self) -> None:
        """It was moved here from another instance: unless a browser runs for it here, the
        call that starts one says the earlier state is gone."""
        if self.state is _S.NO_BROWSER and self.lost_because is None:
            self.lost_because = (
                "was on another instance of this service, which stopped or could not be reached"
            )

    def pause(self, browser: Browser, why: str) -> bool:
        """The watchdog is about to pause `browser`'s pages (it holds the turn): only READY with
        that browser, not paused already. False: nothing changed, leave the pages alone."""
        if self.state is not _S.READY or self.browser is not browser or self.paused is not None:
            return False
        self.paused = why
        return True

    def take_paused(self) -> str | None:
        """Why its pages were paused, once: the call that resumes them says it."""
        why, self.paused = self.paused, None
        return why

    def reset_done(self) -> None:
        """A reset was asked for: the next call needs no note about the lost browser."""
        self.lost_because = None

    def take_lost_because(self, call: ActiveCall) -> str | None:
        """Why the browser `call` launched is new, said once (None when it launched none)."""
        if not call.launched:
            return None
        why, self.lost_because = self.lost_because, None
        return why

    def bind_profile(self, name: str) -> bool:
        """Bind it to persistent profile `name`, before its first call. False when it is bound
        to `name` already (nothing to do). Raises ConflictError as `check_binding`."""
        if self.profile == name:
            return False
        self.check_binding(name)
        self.profile = name
        return True

    def check_binding(self, name: str) -> None:
        """Raises ConflictError when it cannot be bound to `name`: it is bound to another
        profile, or has had a call or a browser (its browser would not be the profile's)."""
        if self.profile is not None and self.profile != name:
            raise ConflictError(
                "conversation_bound",
                f"Conversation {self.conversation_id!r} is bound to profile {self.profile!r}; "
                "a binding lasts as long as the conversation (delete it to bind it anew).",
            )
        if self.state is not _S.NO_BROWSER or self.calls or self.has_call:
            raise ConflictError(
                "conversation_started",
                f"Conversation {self.conversation_id!r} has already been used: bind a profile "
                "before its first call (or delete the conversation and bind it then).",
            )

    def note_storage_origins(self, origins: list[str]) -> None:
        """A storage state with localStorage of `origins` was loaded into its browser."""
        self.storage_origins = self.storage_origins | frozenset(origins)

    def keep_dirs(self, dirs: SessionDirs) -> None:
        self.dirs = dirs

    def set_idle_timeout(self, value: float, now: float) -> None:
        """A new idle timeout, counted from `now`."""
        self.idle_timeout = value
        self.last_active = now

    def note_error(self, text: str) -> None:
        self.last_error = text[:200]

    async def wait_until_settled(self) -> None:
        """Wait while the browser is being closed (a call that arrives then gets a new one)."""
        while self.state is ConversationState.CLOSING:
            if self._changed is None:
                self._changed = trio.Event()
            await self._changed.wait()

    @property
    def deleted(self) -> bool:
        return self.state is ConversationState.DELETED

    @property
    def has_browser(self) -> bool:
        """A browser was launched for it and has not been closed or found dead."""
        return self.browser is not None

    @property
    def handed_over(self) -> bool:
        """A person holds the browser (issue 21): nothing may freeze, reap or drive it."""
        return self.handoff is not None and not self.handoff.over

    @property
    def has_call(self) -> bool:
        return self.call is not None

    def idle_for(self, now: float) -> float:
        return 0.0 if self.has_call or self.handed_over else now - self.last_active

    def due(self, now: float, max_lifetime: float) -> tuple[Due | None, float]:
        """What the clock should do now (a `Due`, or None), and the trio
        time at which to look again when nothing is due.

        Only a conversation between calls is ever due: the idle clock never runs during a call,
        and a browser's lifetime ends after the call that outlives it. A conversation with no
        browser and no call for `max_lifetime` is forgotten with its files.
        """
        if self.handed_over:
            return None, math.inf  # the idle clock waits for the person; the end pokes it
        browser = self.browser
        if self.state is ConversationState.READY and browser is not None and browser.alive:
            life_at = browser.started_at + max_lifetime
            idle_at = self.last_active + self.idle_timeout
            if life_at <= now:
                return Due.LIFETIME, now
            if idle_at <= now:
                return Due.IDLE, now
            return None, min(idle_at, life_at)
        if self.state is ConversationState.NO_BROWSER and not self.has_call:
            forget_at = self.last_active + max_lifetime
            return (Due.FORGET, now) if forget_at <= now else (None, forget_at)
        if self.has_call:
            # Its next deadline is an idle timeout after the call ends, or later: looking again
            # then (not never) lets the call's end leave the clock asleep (issue 23: the clock
            # woke once per call when calls came back to back).
            return None, now + self.idle_timeout
        return None, math.inf


@asynccontextmanager
async def take_turn(conv: Conversation) -> AsyncIterator[None]:
    """Hold the conversation's turn (FIFO). A free turn is taken without the scheduling pass
    `trio.Lock` makes even when nobody waits: one pass less on every call. (When it is free
    nobody waits for it: trio hands a released lock straight to the next waiter.)"""
    if conv.turn.locked():
        await conv.turn.acquire()
    else:
        conv.turn.acquire_nowait()
    try:
        yield
    finally:
        conv.turn.release()
