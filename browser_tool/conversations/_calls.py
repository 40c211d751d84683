"""One tool call in its conversation's turn: its context, its end, and the notes its result
carries (why the browser is new, what the page did meanwhile)."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio

from .._errors import CloseReason
from ..browser import BROWSER_CRASHED_DURING_CALL, BrowserSession, SessionDirs
from ..sources import Browser
from ..tools import Tool, ToolContext, ToolOutput, run_tool
from ._conversation import Conversation
from ._handoffs import wait_handed_back
from ._lifecycle import Lifecycle
from ._watchdog import after_call, resume_paused

CallBody = Callable[["CallAccess"], Awaitable[ToolOutput]]


def tool_body(
    lifecycle: Lifecycle,
    tool: Tool,
    args: dict[str, Any],
    timeout: float,
    deadline: float,
    working_dir: Path,
) -> CallBody:
    """The body of a call of `tool`: its timeout bounds the call from the moment the
    conversation's turn was taken (`deadline`), the browser's launch (and a wait for a person
    holding the browser) included."""

    async def body(access: CallAccess) -> ToolOutput:
        ctx = ToolContext(lifecycle.settings, working_dir, timeout, deadline, access)
        return await run_tool(ctx, tool, args)

    return body


async def run_call(
    lifecycle: Lifecycle,
    conv: Conversation,
    body: CallBody,
    deadline: float = math.inf,
    *,
    asks_person: bool = False,
) -> ToolOutput:
    """Run one call (`body`, a tool's in production) in `conv`, whose turn the caller holds.
    A call stopped by a lifecycle step (delete, reset, crash, shutdown) answers with an error
    that says why. While a person holds the browser (issue 21), the call waits for them until
    trio time `deadline`, and then fails saying so; a call that `asks_person` (for one: the
    hand-over tool) does not wait, and is told the hand-over is open already."""
    await conv.wait_until_settled()
    handed_back = None
    if conv.handoff is not None:  # a person holds, or held, the browser
        if asks_person and conv.handed_over:  # a second request: no wait, nothing to add
            return ToolOutput.error(conv.handoff.already_open_message(trio.current_time()))
        if (busy := await wait_handed_back(conv, deadline)) is not None:
            return ToolOutput.error(busy)
        handed_back = conv.take_handoff_note()
        await conv.wait_until_settled()  # the hand-over may have ended with a close (reset)
    if conv.deleted:
        return ToolOutput.error("The conversation was deleted; the call was not run.")
    resumed = None
    with trio.CancelScope() as scope:
        call = lifecycle.begin_call(conv, scope)
        try:
            if conv.paused is not None:  # the watchdog paused its pages between calls
                resumed = await resume_paused(conv)
            output = await body(CallAccess(lifecycle, conv))
        finally:
            lifecycle.end_call(conv)
    if scope.cancelled_caught:
        output = ToolOutput.error(_stopped_message(call.stopped_because))
    after_call(lifecycle, conv, call, output)  # a timeout: is the browser still there?
    notes = [note] if (note := lifecycle.take_note(call, conv)) else []
    if handed_back is not None:
        notes.insert(0, handed_back)
    notes += [resumed] if resumed else []
    if (browser := conv.browser or call.browser) is not None:
        notes += browser.take_notes()  # what the page did: dialogs, popups, a crash
    if output.is_error:
        conv.note_error(output.output)
    return output.with_notes(notes)


class CallAccess:
    """What one call may reach of its conversation (tools.ConversationAccess): bound to the
    record, not the id, so a call in flight when the conversation is deleted cannot revive it."""

    def __init__(self, lifecycle: Lifecycle, conv: Conversation) -> None:
        self._lifecycle = lifecycle
        self._conv = conv

    @property
    def conversation_id(self) -> str:
        return self._conv.conversation_id

    async def acquire(self) -> Browser:
        """The conversation's running browser, launched if needed (whatever the source)."""
        return await self._lifecycle.browser_for(self._conv)

    async def browser(self) -> BrowserSession:
        """For tools, which drive the page: the browser as the Chrome-backed session."""
        return _session(await self.acquire())

    def existing_browser(self) -> BrowserSession | None:
        browser = self._conv.browser
        return _session(browser) if browser is not None and browser.alive else None

    def dirs(self) -> SessionDirs:
        return self._lifecycle.dirs(self._conv)

    def request_handoff(self, reason: str) -> str:
        """Hand the browser to a person (issue 21): the live view's URL."""
        return self._lifecycle.handoffs.open(self._conv, reason).url


def _session(browser: Browser) -> BrowserSession:
    if not isinstance(browser, BrowserSession):
        raise TypeError(f"tools need a Chrome-backed browser, not {type(browser).__name__}")
    return browser


def _stopped_message(reason: CloseReason | None) -> str:
    if reason is CloseReason.CRASH:
        return BROWSER_CRASHED_DURING_CALL
    why = reason or "closed"
    return f"The browser session was closed ({why}) while the call ran; the call was stopped."
