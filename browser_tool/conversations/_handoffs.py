"""Handoffs: the hand-overs of one manager (issue 21): opened for a conversation with a running
browser, claimed by the person's page, driven through the live view, and ended.

A hand-over ends once, whichever comes first: the person presses Done, its time (ttl) runs out,
the conversation is deleted (`Conversation.delete`), the service stops (`end_all`), or the
browser goes away. Then the conversation's idle clock starts again and its next call's result
says what happened (`Conversation.take_handoff_note`). The screencast runs only while a page
holds the hand-over. The live view's HTTP door is `server/_live_view.py`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

import trio

from .._conversation_ids import ConversationId
from .._errors import CdpError, HandoffError
from .._metrics import Metrics
from .._tasks import first_of
from ..browser import BrowserSession, Frame, Screencast, live_input_commands
from ._conversation import Conversation
from ._handoff import DEFAULT_TTL, REFUSED, Handoff, check_ttl

log = logging.getLogger("browser_tool.handoff")

LIVE_PATH = "/v1/conversations/{}/live"  # the live view page; its token goes in the fragment
_COMMAND_TIMEOUT = 5.0
_COUNTER = "browser_tool_human_handoffs_total"


@dataclass(frozen=True)
class HandoffTicket:
    """What opening a hand-over gives its caller: the link for the person (it holds the
    token: give it to that person only), how long it is valid, and why it was asked for."""

    conversation_id: str
    url: str
    reason: str
    expires_in_s: float

    def to_json(self) -> dict[str, object]:
        return {
            "conversation_id": self.conversation_id,
            "url": self.url,
            "reason": self.reason,
            "expires_in_s": self.expires_in_s,
        }


@dataclass(frozen=True)
class LiveState:
    """What the person's page shows besides the picture."""

    reason: str
    url: str
    expires_in_s: float

    def to_json(self) -> dict[str, object]:
        return {"reason": self.reason, "url": self.url, "expires_in_s": self.expires_in_s}


class Handoffs:
    """Built by the lifecycle; `base_url` is set by the HTTP service that serves the page."""

    def __init__(
        self,
        conversations: Mapping[str, Conversation],
        nursery: trio.Nursery,
        metrics: Metrics,
        poke: Callable[[], None],
    ) -> None:
        self.base_url: str | None = None
        self._conversations = conversations
        self._nursery = nursery
        self._metrics = metrics
        self._poke = poke
        self._casts: dict[Handoff, Screencast] = {}
        self._last: dict[str, Handoff] = {}  # its page is told why it ended, after the note too

    def serve_at(self, base_url: str) -> None:
        """The HTTP service serves the live view at `base_url` (no trailing slash needed)."""
        self.base_url = base_url.rstrip("/")

    # ---- opening --------------------------------------------------------------------------

    async def hand_over(
        self,
        conversation_id: ConversationId,
        reason: str,
        ttl: float,
        get_browser: Callable[[str], Awaitable[object]],
    ) -> HandoffTicket:
        """Open a hand-over, launching the conversation's browser first if it has none.
        Raises InvalidInputError (ttl), HandoffError ("unserved", "busy") before any launch,
        and what `get_browser` raises."""
        self._check_can_open(self._conversations.get(conversation_id), ttl)
        await get_browser(conversation_id)
        conv = self._conversations.get(conversation_id)
        if conv is None:
            raise HandoffError("ended", "The conversation was deleted meanwhile.")
        return self.open(conv, reason, ttl)

    def _check_can_open(self, conv: Conversation | None, ttl: float) -> None:
        check_ttl(ttl)
        if self.base_url is None:
            raise HandoffError(
                "unserved",
                "A hand-over needs the live view, which only a running `browser-tool serve` "
                "(or `browser-tool mcp --http`) serves; this process serves no HTTP (a one-shot "
                "call, MCP over stdio, or the Python API). Ask the user to do the step some "
                "other way, or run the service.",
            )
        if conv is not None and conv.handoff is not None and not conv.handoff.over:
            raise HandoffError(
                "busy",
                "A person already holds this conversation's browser (reason: "
                f"{conv.handoff.reason!r}); wait for them to press Done, or for the link to "
                "expire.",
            )

    def open(self, conv: Conversation, reason: str, ttl: float = DEFAULT_TTL) -> HandoffTicket:
        """Hand `conv`'s running browser to a person: its calls wait from now on. Raises
        InvalidInputError (ttl) and HandoffError ("unserved", "busy", "ended": no browser)."""
        self._check_can_open(conv, ttl)
        if conv.deleted:
            raise HandoffError("ended", "The conversation was deleted.")
        browser = _browser(conv)  # running and Chrome-backed: the live view can drive it
        now = trio.current_time()
        handoff, token = Handoff.offer(conv.conversation_id, reason.strip(), ttl, now)
        conv.hand_over(handoff)
        self._last = {c: h for c, h in self._last.items() if c in self._conversations}
        self._last[conv.conversation_id] = handoff
        self._metrics.inc(_COUNTER, event="offered")
        self._nursery.start_soon(self._expire, conv, handoff, browser)
        log.info("conversation %s handed to a person for %.0f s", conv.conversation_id, ttl)
        url = f"{self.base_url}{LIVE_PATH.format(conv.conversation_id)}#{token}"
        return HandoffTicket(conv.conversation_id, url, handoff.reason, ttl)

    # ---- the person's page ----------------------------------------------------------------

    def claim(self, conversation_id: str, token: str) -> tuple[str, LiveState]:
        """Spend the link's token: the page's own secret and what it shows (else refused)."""
        conv, handoff = self._current(conversation_id)
        secret = handoff.claim(token, trio.current_time())
        self._metrics.inc(_COUNTER, event="opened")
        browser = conv.browser
        if not isinstance(browser, BrowserSession) or not browser.alive:
            why = "the browser was gone when the link was opened"
            self._end(conv, handoff, why, event="browser_gone")
            raise HandoffError("ended", "The browser of this hand-over is gone.")
        cast = self._casts[handoff] = Screencast()
        self._nursery.start_soon(self._cast, conv, handoff, browser, cast)
        log.info("conversation %s: the hand-over link was opened", conversation_id)
        return secret, self._state(conv, handoff)

    def state(self, conversation_id: str, secret: str | None) -> LiveState:
        conv, handoff, _ = self._page(conversation_id, secret)
        return self._state(conv, handoff)

    async def frame(
        self, conversation_id: str, secret: str | None, after: int, wait: float
    ) -> tuple[Frame, LiveState] | None:
        """The newest frame once it is newer than `after`, or None after `wait` seconds.
        Raises HandoffError ("refused"; "ended" when the hand-over ends meanwhile)."""
        conv, handoff, cast = self._page(conversation_id, secret)
        with trio.move_on_after(wait):
            winner = await first_of(frame=lambda: cast.wait_newer(after), over=handoff.ended.wait)
            if winner == "over":
                raise _ended(handoff)
            assert cast.frame is not None
            return cast.frame, self._state(conv, handoff)
        return None

    async def send_input(self, conversation_id: str, secret: str | None, batch: object) -> int:
        """Forward a batch of the person's input (see `browser/_live_input.py`) to the current
        tab; the number of events sent. Raises InvalidInputError (sends nothing then),
        HandoffError, and CdpError when the page does not take it."""
        conv, _, _ = self._page(conversation_id, secret)
        commands = live_input_commands(batch)
        session = _browser(conv).page.session
        for method, params in commands:
            await session.send(method, params, timeout=_COMMAND_TIMEOUT)
        return len(commands)

    async def done(self, conversation_id: str, secret: str | None) -> None:
        """The person pressed Done: the conversation is the model's again."""
        conv, handoff, _ = self._page(conversation_id, secret)
        url = await _current_url(conv)
        self._end(conv, handoff, "the person pressed Done", url, event="done")

    # ---- ending ---------------------------------------------------------------------------

    def end_all(self, why: str) -> None:
        """End every open hand-over now (the service stops)."""
        for conv in list(self._conversations.values()):
            if conv.handoff is not None and not conv.handoff.over:
                self._end(conv, conv.handoff, why, _known_url(conv), event="shutdown")

    async def _expire(self, conv: Conversation, handoff: Handoff, browser: BrowserSession) -> None:
        with trio.move_on_at(handoff.expires_at):
            gone = await first_of(over=handoff.ended.wait, gone=browser.wait_closed)
            if gone == "gone":  # crashed, reset or closed before or while a person held it
                why = "the browser went away (crashed, reset or closed)"
                self._end(conv, handoff, why, event="browser_gone")
        if not handoff.over:
            url = await _current_url(conv)
            self._end(conv, handoff, "its time (ttl) ran out", url, event="expired")
        # Every end is counted here, once, whoever ended it (this registry, or the
        # conversation's own delete, close and crash events).
        self._metrics.inc(_COUNTER, event=handoff.end_event)
        self._casts.pop(handoff, None)

    async def _cast(
        self, conv: Conversation, handoff: Handoff, browser: BrowserSession, cast: Screencast
    ) -> None:
        # The cast ends by itself only when the browser does; `_expire` says so then.
        await first_of(cast=lambda: cast.run(browser), over=handoff.ended.wait)

    def _end(
        self, conv: Conversation, handoff: Handoff, why: str, url: str = "", *, event: str
    ) -> None:
        now = trio.current_time()
        if handoff.end(why, now, url, event=event):
            conv.handed_back(now)
            self._poke()
            log.info("conversation %s: the hand-over ended: %s", conv.conversation_id, why)

    # ---- lookups --------------------------------------------------------------------------

    def _current(self, conversation_id: str) -> tuple[Conversation, Handoff]:  # open or over
        conv, handoff = self._conversations.get(conversation_id), self._last.get(conversation_id)
        if conv is None or handoff is None:
            raise HandoffError("refused", REFUSED)
        return conv, handoff

    def _page(
        self, conversation_id: str, secret: str | None
    ) -> tuple[Conversation, Handoff, Screencast]:
        conv, handoff = self._current(conversation_id)
        cast = self._casts.get(handoff)
        if cast is None or not handoff.admits(secret, trio.current_time()):
            ended = handoff.was_held_by(secret)  # its own page hears why (410), others nothing
            raise _ended(handoff) if ended else HandoffError("refused", REFUSED)
        return conv, handoff, cast

    def _state(self, conv: Conversation, handoff: Handoff) -> LiveState:
        remaining = max(0.0, handoff.expires_at - trio.current_time())
        return LiveState(handoff.reason, _known_url(conv), remaining)


async def wait_handed_back(conv: Conversation, deadline: float) -> str | None:
    """For a call of `conv`: wait until no person holds its browser, at most until trio time
    `deadline`; None then, or the error that says who holds it and why."""
    handoff = conv.handoff
    if handoff is None or handoff.over:
        return None
    log.info(
        "conversation %s: a call waits for the person holding its browser", handoff.conversation_id
    )
    if await handoff.wait_over(deadline):
        return None
    return handoff.busy_message()


def _ended(handoff: Handoff) -> HandoffError:
    why = handoff.end_reason or "its time (ttl) ran out"  # its own end may not have run yet
    return HandoffError("ended", f"The hand-over is over: {why}. You can close this page.")


def _browser(conv: Conversation) -> BrowserSession:
    browser = conv.browser
    if not isinstance(browser, BrowserSession) or not browser.alive:
        raise HandoffError(
            "ended",
            "The conversation's browser is not running (it crashed, or was reset or closed).",
        )
    return browser


def _known_url(conv: Conversation) -> str:
    browser = conv.browser
    return browser.page.console.page_url if isinstance(browser, BrowserSession) else ""


async def _current_url(conv: Conversation) -> str:
    """The current tab's address from its history (same-document moves included), or the
    last one navigated to when the page does not answer."""
    browser = conv.browser
    if not isinstance(browser, BrowserSession) or not browser.alive:
        return ""
    with contextlib.suppress(CdpError, KeyError, IndexError, TypeError):
        history = await browser.page.session.send(
            "Page.getNavigationHistory", timeout=_COMMAND_TIMEOUT
        )
        return str(history["entries"][history["currentIndex"]]["url"])
    return _known_url(conv)
