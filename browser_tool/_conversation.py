"""Conversation: everything the manager keeps for one conversation, and its one explicit state.

    NO_BROWSER ──call──▶ IN_CALL ──launch──▶ LAUNCHING ──up (or failed)──▶ IN_CALL
         ▲                  │ call ends                                      │
         │                  ▼                                                │
         └── closed ◀── CLOSING ◀── idle / lifetime / reset ── READY ◀──────┘ call ends
                                                                  │
    any state ──kill_session (delete, shutdown)──▶ DELETED (final)  └──call──▶ IN_CALL

Every transition goes through `move`, which refuses any the table does not allow, so a
decision taken on one state (idle, lifetime, crash, delete) that is acted on later re-checks
the state it finds then. Calls of one conversation take turns (`turn`, a FIFO lock); a
lifecycle step never takes a turn, so it can stop a call that hangs.
"""

from __future__ import annotations

import enum
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import trio

from ._errors import CloseReason
from ._sources import Browser
from .browser import SessionDirs


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
    """One conversation's record. Built by the manager; its state changes only via `move`."""

    conversation_id: str
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
    turn: trio.Lock = field(default_factory=trio.Lock)
    _changed: trio.Event | None = None  # made only when someone waits (moves are per call)

    def move(self, to: ConversationState) -> None:
        """Change state; raises IllegalTransition (a bug) if the table forbids it."""
        if to not in _ALLOWED[self.state]:
            raise IllegalTransition(
                f"conversation {self.conversation_id!r}: {self.state.value} -> {to.value}"
            )
        self.state = to
        if self._changed is not None:
            self._changed.set()
            self._changed = None

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
    def has_call(self) -> bool:
        return self.call is not None

    def idle_for(self, now: float) -> float:
        return 0.0 if self.has_call else now - self.last_active

    def due(self, now: float, max_lifetime: float) -> tuple[Due | None, float]:
        """What the clock should do now (a `Due`, or None), and the trio
        time at which to look again when nothing is due.

        Only a conversation between calls is ever due: the idle clock never runs during a call,
        and a browser's lifetime ends after the call that outlives it. A conversation with no
        browser and no call for `max_lifetime` is forgotten with its files.
        """
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
