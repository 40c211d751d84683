"""ToolContext: what one tool call may reach, and nothing more.

A tool reaches its conversation only through the small `ConversationAccess` interface, whose
object the manager binds to one conversation before the call: no tool input names a session, a
pid or a port, and a call in flight when its conversation is deleted cannot bring it back.
The caller's timeout bounds the whole call, the browser's launch included: `deadline` is the
trio time by which the call must be done.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import trio

from .._duration import format_duration
from .._errors import ToolError
from .._settings import Settings
from ..browser import BrowserSession, PageState, SessionDirs

# In the conversation's dir: how many refs its browsers issued (kept across browser restarts).
REFS_ISSUED_FILE = ".refs-issued"


class ConversationAccess(Protocol):
    """The one conversation a call belongs to, as the manager lends it to the call."""

    @property
    def conversation_id(self) -> str: ...

    async def browser(self) -> BrowserSession:
        """The conversation's browser, launched on first use. Raises BrowserLaunchError, or
        SessionClosedError once the conversation was deleted. Cancelled during a launch, the
        half-started browser is killed."""
        ...

    def existing_browser(self) -> BrowserSession | None:
        """The conversation's browser if one is running; never launches one."""
        ...

    def dirs(self) -> SessionDirs:
        """The conversation's dir (created if needed), without launching a browser. Raises
        SessionClosedError once the conversation was deleted."""
        ...

    def request_handoff(self, reason: str) -> str:
        """Hand the running browser to a person (issue 21) and return the live view's link;
        the conversation's later calls wait until they are done. Raises HandoffError when no
        HTTP service serves the live view here, or a hand-over is open already."""
        ...


@dataclass(frozen=True)
class ToolContext:
    """One call's view: its settings, its timeout and deadline, and its conversation."""

    settings: Settings
    working_dir: Path
    timeout: float  # seconds, as the caller gave it (or the default)
    deadline: float  # trio time: the whole call, launch included, ends by then
    conversation: ConversationAccess

    @property
    def conversation_id(self) -> str:
        return self.conversation.conversation_id

    def timeout_error(self, what: str) -> ToolError:
        """The one error for a call that ran out of its deadline: "Timeout after <the caller's
        timeout> <what>", e.g. `ctx.timeout_error("taking the screenshot")` gives "Timeout
        after 15s taking the screenshot". A `what` that starts with ":" follows the duration
        directly ("Timeout after 15s: the browser did not start ..."). Every tool raises this
        for its deadline (`raise ctx.timeout_error(...)`), so the wording stays one."""
        separator = "" if what.startswith(":") else " "
        return ToolError(f"Timeout after {format_duration(self.timeout)}{separator}{what}")

    async def browser(self) -> BrowserSession:
        """The conversation's browser, launched on first use within the call's deadline.

        Raises ToolError when the launch does not finish by the deadline (the half-started
        browser is killed) or a crashed page is not replaced by then, BrowserLaunchError when
        Chrome will not start, and SessionClosedError once the conversation was deleted.
        """
        warm = self.conversation.existing_browser()
        if warm is not None and warm.page.state is PageState.READY and warm.page.refs.continues:
            # Nothing to wait for (the browser runs, its page is attached): no deadline scopes,
            # which were most of a warm call's time here (issue 23).
            return await self.conversation.browser()
        with trio.move_on_at(self.deadline) as scope:
            browser = await self.conversation.browser()
        if not scope.cancelled_caught:
            # A page being replaced after a crash is waited for within the same deadline.
            with trio.move_on_at(self.deadline):
                await browser.page.wait_usable()
                if not browser.page.refs.continues:  # once per page: see RefTable
                    browser.page.refs.continue_after(self.dirs().root / REFS_ISSUED_FILE)
                return browser
            raise self.timeout_error(
                ": the page crashed and its "
                "replacement was not ready within the call's timeout; the call was not run. "
                "Retry the call."
            )
        raise self.timeout_error(
            ": the browser did not start within "
            "the call's timeout; the launch was stopped and the call was not run. Retry with a "
            "longer timeout."
        )

    def existing_browser(self) -> BrowserSession | None:
        """The conversation's browser if one is running; never launches one."""
        return self.conversation.existing_browser()

    def dirs(self) -> SessionDirs:
        """The conversation's dir (created if needed). Raises SessionClosedError once the
        conversation was deleted."""
        return self.conversation.dirs()
