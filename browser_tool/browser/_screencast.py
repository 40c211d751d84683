"""Screencast: the live picture of a browser's current tab (CDP `Page.startScreencast`), kept as
its newest JPEG frame for a person's live view (issue 21).

Chrome sends a frame when the picture changes and waits for each frame's ack before it sends
more, so a viewer that polls slowly costs nothing: only the newest frame is kept, every frame
is acked at once. The cast follows the current tab (`browser.page`, which a crash or a tab
switch replaces) and ends when the browser's connection does.
"""

from __future__ import annotations

import base64
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

import trio

from .._errors import BrowserToolError, CdpError
from ._session import BrowserSession

log = logging.getLogger("browser_tool.screencast")

_FRAME = "Page.screencastFrame"
_COMMAND_TIMEOUT = 5.0
# How often a cast looks whether the current tab changed (a tab switch sends it no event).
_TAB_CHECK = 1.0


@dataclass(frozen=True)
class Frame:
    """One picture: `seq` counts up from 1; `width` x `height` are the page's viewport in CSS
    pixels (what input coordinates are in), whatever the JPEG's own size."""

    seq: int
    jpeg: bytes
    width: int
    height: int


class Screencast:
    """The newest frame of one browser's current tab, while `run` runs."""

    def __init__(self, quality: int = 70) -> None:
        self.frame: Frame | None = None
        self.quality = quality
        self._changed = trio.Event()

    async def wait_newer(self, seq: int) -> Frame:
        """The newest frame once its `seq` is over `seq` (at once if it is already)."""
        while self.frame is None or self.frame.seq <= seq:
            await self._changed.wait()
        return self.frame

    def _keep(self, jpeg: bytes, width: int, height: int) -> None:
        seq = self.frame.seq + 1 if self.frame is not None else 1
        self.frame = Frame(seq, jpeg, width, height)
        self._changed.set()
        self._changed = trio.Event()

    async def run(self, browser: BrowserSession) -> None:
        """Cast the current tab until the browser's connection closes (or cancelled). Never
        raises a BrowserToolError: a cast that cannot go on just ends."""
        while browser.alive:
            page = browser.page
            try:
                await page.wait_usable()
                session = page.session
                async with session.listen(_FRAME, buffer=8) as frames:
                    width, height = page.viewport
                    params = {
                        "format": "jpeg",
                        "quality": self.quality,
                        "maxWidth": width,
                        "maxHeight": height,
                    }
                    await session.send("Page.startScreencast", params, timeout=_COMMAND_TIMEOUT)
                    try:
                        while browser.page is page and page.session is session:
                            with trio.move_on_after(_TAB_CHECK):
                                event = await frames.receive()
                                ack = {"sessionId": event.params.get("sessionId")}
                                await session.send(
                                    "Page.screencastFrameAck", ack, timeout=_COMMAND_TIMEOUT
                                )
                                self._keep_event(event.params, width, height)
                    finally:
                        with trio.CancelScope(shield=True), contextlib.suppress(CdpError):
                            with trio.move_on_after(0.5):
                                await session.send("Page.stopScreencast")
            # BrowserToolError: CdpError, or a ToolError when no page replaced a crashed one.
            except (BrowserToolError, trio.EndOfChannel, trio.ClosedResourceError) as exc:
                log.debug("the screencast stops: %r", exc)
                if not browser.alive or browser.page is page:
                    return  # else the tab changed while its cast failed: cast the new one

    def _keep_event(self, params: dict[str, Any], width: int, height: int) -> None:
        meta = params.get("metadata") or {}
        try:
            jpeg = base64.b64decode(str(params.get("data", "")), validate=True)
            width = round(float(meta.get("deviceWidth") or width))
            height = round(float(meta.get("deviceHeight") or height))
        except (ValueError, TypeError):
            log.debug("a screencast frame did not decode; skipped")
            return
        self._keep(jpeg, width, height)
