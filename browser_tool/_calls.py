"""One tool call in its conversation's turn: its context, its end, and the notes its result
carries (why the browser is new, what the page did meanwhile)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from ._conversation import Conversation
from ._errors import CloseReason
from ._lifecycle import Lifecycle
from .browser import BROWSER_CRASHED_DURING_CALL, BrowserSession, SessionDirs
from .tools import Tool, ToolContext, ToolOutput, run_tool


async def run_call(
    lifecycle: Lifecycle,
    conv: Conversation,
    tool: Tool,
    args: dict[str, Any],
    timeout: float,
    working_dir: Path,
) -> ToolOutput:
    """Run a validated call of `tool` in `conv`, whose turn the caller holds. Its timeout
    bounds the call from here on, the browser's launch included. A call stopped by a lifecycle
    step (delete, reset, crash, shutdown) answers with an error that says why."""
    await conv.wait_until_settled()
    if conv.deleted:
        return ToolOutput.error("The conversation was deleted; the call was not run.")
    with trio.CancelScope() as scope:
        call = lifecycle.begin_call(conv, scope)
        try:
            ctx = ToolContext(
                lifecycle.settings,
                working_dir,
                timeout,
                trio.current_time() + timeout,
                CallAccess(lifecycle, conv),
            )
            output = await run_tool(ctx, tool, args)
        finally:
            lifecycle.end_call(conv)
    if scope.cancelled_caught:
        output = ToolOutput.error(_stopped_message(call.stopped_because))
    notes = [note] if (note := lifecycle.take_note(call, conv)) else []
    if (browser := conv.browser or call.browser) is not None:
        notes += browser.page.take_notes()  # what the page did: dialogs, popups, a crash
    if output.is_error:
        conv.last_error = output.output[:200]
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

    async def browser(self) -> BrowserSession:
        return await self._lifecycle.browser_for(self._conv)

    def existing_browser(self) -> BrowserSession | None:
        browser = self._conv.browser
        return browser if browser is not None and browser.alive else None

    def dirs(self) -> SessionDirs:
        return self._lifecycle.dirs(self._conv)


def _stopped_message(reason: CloseReason | None) -> str:
    if reason is CloseReason.CRASH:
        return BROWSER_CRASHED_DURING_CALL
    why = reason or "closed"
    return f"The browser session was closed ({why}) while the call ran; the call was stopped."
