"""Storage state: a browser's cookies and localStorage, in the JSON shape Playwright's
`storage_state` uses, so users can bring theirs:

    {"cookies": [{"name", "value", "domain", "path", "expires", "httpOnly", "secure",
                  "sameSite"}],
     "origins": [{"origin": "https://example.com", "localStorage": [{"name", "value"}]}]}

Cookies come and go over the browser connection (`Storage.getCookies`/`setCookies`, with the
conversation's `browserContextId` in context mode). localStorage has no browser-wide CDP
command: `DOMStorage` reads and writes an origin's only through a frame of that origin. So, as
Playwright does, a scratch page of the browser's own (a background target in the conversation's
context, no opener, so it is never taken for a tab or a popup) visits each origin with every
request intercepted (`Fetch`) and answered with an empty document: nothing reaches the network,
the page is a first-party document of that origin, and its script reads or sets
`localStorage`. Which origins: every origin in the history and frames of the browser's tabs,
plus the ones the caller names (those loaded earlier); origins without items are left out.
Writing adds: cookies of the same name, domain and path are replaced, localStorage keys set;
nothing else is cleared.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

import trio

from .._errors import CdpCommandError, CdpError, InvalidInputError, SessionError
from .._tasks import raise_sole
from ..cdp import CdpConnection, CdpEvent, CdpSession
from ._session import BrowserSession
from ._storage_shape import MAX_ORIGINS, StorageState, cookie_from_cdp, cookie_to_cdp, normal_origin

_STEP_TIMEOUT = 10.0
_EMPTY_PAGE = {
    "responseCode": 200,
    "responseHeaders": [{"name": "content-type", "value": "text/html"}],
    "body": "",
}


async def read_storage_state(
    browser: BrowserSession, more_origins: Iterable[str] = ()
) -> StorageState:
    """The cookies and localStorage of `browser` (see the module docstring for which origins).
    Raises CdpError or SessionError when the browser does not answer."""
    in_context = browser.page.in_context
    result = await browser.conn.send("Storage.getCookies", in_context, timeout=_STEP_TIMEOUT)
    cookies = [cookie_from_cdp(c) for c in result.get("cookies", []) if isinstance(c, dict)]
    origins = sorted({*(await _visited_origins(browser)), *more_origins})[:MAX_ORIGINS]
    found = []
    if origins:
        async with _scratch_page(browser.conn, in_context) as scratch:
            for origin in origins:
                items = await scratch.run(origin, _READ)
                if isinstance(items, list) and items:
                    pairs = [{"name": str(k), "value": str(v)} for k, v in items]
                    found.append({"origin": origin, "localStorage": pairs})
    return {"cookies": cookies, "origins": found}


async def write_storage_state(browser: BrowserSession, state: StorageState) -> None:
    """Load `state` (from `parse_storage_state`) into `browser`. Raises InvalidInputError for a
    cookie Chrome refuses, CdpError or SessionError when the browser does not answer."""
    in_context = browser.page.in_context
    if state["cookies"]:
        params = {"cookies": [cookie_to_cdp(c) for c in state["cookies"]], **in_context}
        try:
            await browser.conn.send("Storage.setCookies", params, timeout=_STEP_TIMEOUT)
        except CdpCommandError as exc:
            raise InvalidInputError("cookies", f"Chrome refused them: {exc.cdp_message}") from None
    with_items = [o for o in state["origins"] if o["localStorage"]]
    if with_items:
        async with _scratch_page(browser.conn, in_context) as scratch:
            for entry in with_items:
                pairs = [[i["name"], i["value"]] for i in entry["localStorage"]]
                await scratch.run(entry["origin"], f"({_WRITE})({json.dumps(pairs)})")


_READ = "JSON.stringify(Object.entries(localStorage))"
_WRITE = "(pairs) => { for (const [k, v] of pairs) localStorage.setItem(k, v); return '[]'; }"


async def _visited_origins(browser: BrowserSession) -> set[str]:
    """The http(s) origins of every tab's history entries and current frames."""
    urls: list[str] = []
    for page in browser.pages():
        try:
            session = page.session
            history = await session.send("Page.getNavigationHistory", timeout=_STEP_TIMEOUT)
            tree = await session.send("Page.getFrameTree", timeout=_STEP_TIMEOUT)
        except CdpError:
            continue  # a crashed or closing tab: what it saw is gone with it
        urls += [str(e.get("url", "")) for e in history.get("entries", []) if isinstance(e, dict)]
        urls += _frame_urls(tree.get("frameTree", {}))
    return {o for url in urls if (o := normal_origin(url)) is not None}


def _frame_urls(node: dict[str, Any]) -> list[str]:
    frame = node.get("frame", {})
    urls = [str(frame.get("url", ""))] if isinstance(frame, dict) else []
    for child in node.get("childFrames", []) or []:
        if isinstance(child, dict):
            urls += _frame_urls(child)
    return urls


class _Scratch:
    """The scratch page: visits an origin (every request answered with an empty document) and
    runs a script there."""

    def __init__(self, session: CdpSession, paused: trio.MemoryReceiveChannel[CdpEvent]) -> None:
        self._session = session
        self._paused = paused

    async def run(self, origin: str, expression: str) -> object:
        """Visit `origin` and return what `expression` (a JSON text) evaluates to there.
        Raises CdpError, or SessionError when the page or its script fails or is too slow."""
        try:
            with trio.fail_after(_STEP_TIMEOUT):
                await self._visit(origin)
                result = await self._session.send(
                    "Runtime.evaluate", {"expression": expression, "returnByValue": True}
                )
        except trio.TooSlowError:
            raise SessionError(f"The scratch page got no answer from {origin} in time") from None
        if "exceptionDetails" in result:
            detail = (result["exceptionDetails"].get("exception") or {}).get("description")
            raise SessionError(f"localStorage of {origin} could not be used: {detail}")
        text = (result.get("result") or {}).get("value")
        return json.loads(text) if isinstance(text, str) else None

    async def _visit(self, origin: str) -> None:
        try:
            async with (
                self._session.listen("Page.loadEventFired") as loads,
                trio.open_nursery() as nursery,
            ):
                nursery.start_soon(self._answer_requests)
                await self._session.send("Page.navigate", {"url": origin + "/"})
                async for _ in loads:
                    break
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:  # the nursery's: what it stands for, alone
            raise_sole(group)

    async def _answer_requests(self) -> None:
        async for event in self._paused:
            request_id = event.params.get("requestId")
            # A request the page gave up meanwhile cannot be answered: nothing to do.
            with contextlib.suppress(CdpCommandError):
                await self._session.send(
                    "Fetch.fulfillRequest", {"requestId": request_id, **_EMPTY_PAGE}
                )


@asynccontextmanager
async def _scratch_page(conn: CdpConnection, in_context: dict[str, str]) -> AsyncIterator[_Scratch]:
    """A background page in the conversation's context whose requests never leave Chrome;
    closed on exit (also when cancelled)."""
    created = await conn.send(
        "Target.createTarget",
        {"url": "about:blank", "background": True, **in_context},
        timeout=_STEP_TIMEOUT,
    )
    target_id = str(created.get("targetId", ""))
    try:
        session = await conn.attach_to_target(target_id, timeout=_STEP_TIMEOUT)
        async with session.listen("Fetch.requestPaused") as paused:
            await session.send_batch(
                [
                    ("Page.enable", None),
                    ("Fetch.enable", {"patterns": [{"urlPattern": "*"}]}),
                ],
                timeout=_STEP_TIMEOUT,
            )
            yield _Scratch(session, paused)
    finally:
        # A browser that is gone or closing takes the page with it (CdpError).
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(_STEP_TIMEOUT),
            contextlib.suppress(CdpError),
        ):
            await conn.send("Target.closeTarget", {"targetId": target_id}, timeout=_STEP_TIMEOUT)
