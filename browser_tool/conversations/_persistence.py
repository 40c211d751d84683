"""What may outlive a conversation's browser, opt-in (issue 21): its binding to a persistent
profile, and its storage state read or loaded. The manager's API for both calls these.

Storage state is read and loaded in the conversation's turn, as a call without a tool: it
waits for the call in flight, the idle clock does not run meanwhile, and a delete stops it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

import trio

from .._conversation_ids import ConversationId
from .._errors import CdpError, ConflictError, SessionClosedError, SessionError
from .._profile_names import validate_profile_name
from ..browser import BrowserSession, StorageState, read_storage_state, write_storage_state
from ._conversation import Conversation, take_turn
from ._lifecycle import Lifecycle
from ._storage import keep_pending, read_pending

T = TypeVar("T")


def bind_profile(lifecycle: Lifecycle, cid: ConversationId, profile: object) -> str:
    """See `BrowserSessionManager.bind_profile`."""
    name = validate_profile_name(profile)
    if lifecycle.settings.isolation == "context":
        raise ConflictError(
            "profiles_unavailable",
            "Profiles apply in process mode only: with BROWSER_TOOL_ISOLATION=context, "
            "conversations share one Chrome as browser contexts, and a context cannot have a "
            "persistent profile of its own (carry a login over with the storage state instead).",
        )
    if lifecycle.closing:
        raise ConflictError("shutting_down", "The service is shutting down.")
    conv = lifecycle.conversation(cid)
    if conv.profile == name:
        return name
    conv.check_binding(name)  # before the claim, which makes the profile's dir
    lifecycle.profiles.claim(name, cid)
    conv.bind_profile(name)  # no await since the check: it holds
    return name


async def read_state(lifecycle: Lifecycle, cid: ConversationId) -> StorageState:
    """See `BrowserSessionManager.storage_state`."""
    async with _turn(lifecycle, lifecycle.conversations.get(cid), cid) as conv:
        if conv.browser is None or not conv.browser.alive:
            pending = read_pending(conv.dirs)
            if pending is not None:
                return pending
            raise ConflictError(
                "no_browser",
                f"Conversation {cid!r} has no running browser (it starts with the first tool "
                "call), so it holds no storage state to read.",
            )
        origins = conv.storage_origins
        return await _in_call(lifecycle, conv, lambda b: read_storage_state(b, origins))


async def load_state(lifecycle: Lifecycle, cid: ConversationId, state: StorageState) -> str:
    """See `BrowserSessionManager.load_storage_state`."""
    async with _turn(lifecycle, lifecycle.conversation(cid), cid) as conv:
        if conv.browser is None or not conv.browser.alive:
            keep_pending(lifecycle.dirs(conv), state)
            return "pending"
        await _in_call(lifecycle, conv, lambda b: write_storage_state(b, state))
        conv.note_storage_origins([o["origin"] for o in state["origins"]])
        return "applied"


@asynccontextmanager
async def _turn(
    lifecycle: Lifecycle, conv: Conversation | None, cid: ConversationId
) -> AsyncIterator[Conversation]:
    """The conversation's turn, once a closing browser is gone; refuses a deleted one."""
    if lifecycle.closing:
        raise ConflictError("shutting_down", "The service is shutting down.")
    if conv is None:
        raise ConflictError(
            "no_browser", f"Conversation {cid!r} has no running browser here (nor a record)."
        )
    async with take_turn(conv):
        await conv.wait_until_settled()
        if conv.deleted:
            raise SessionClosedError(cid, "delete")
        yield conv


async def _in_call(
    lifecycle: Lifecycle,
    conv: Conversation,
    body: Callable[[BrowserSession], Awaitable[T]],
) -> T:
    """Run `body` on the conversation's running browser as a call (not counted as a tool
    call). Raises SessionClosedError when a delete or crash stops it, SessionError when the
    browser does not answer."""
    with trio.CancelScope() as scope:
        call = lifecycle.begin_call(conv, scope)
        try:
            browser = await lifecycle.browser_for(conv)
            if not isinstance(browser, BrowserSession):
                raise TypeError(f"{type(browser).__name__} is not a BrowserSession")
            return await body(browser)
        except CdpError as exc:
            raise SessionError(f"The browser did not answer: {exc}") from exc
        finally:
            lifecycle.end_call(conv, counted=False)
    raise SessionClosedError(conv.conversation_id, call.stopped_because or "closed")
