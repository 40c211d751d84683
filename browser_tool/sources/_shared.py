"""SharedSource: a browser context per conversation, in Chromes that conversations share
(`BROWSER_TOOL_ISOLATION=context`).

Each conversation gets a context of its own (cookies, storage, cache, service workers,
permissions, downloads) in a shared Chrome that holds at most `contexts_per_browser` of them;
beyond that another Chrome starts. Conversations fill the oldest Chrome with room first, so
as few Chromes run as the load needs. A Chrome left with no conversation is closed after
`shared_browser_linger`.

A new conversation should not wait for a renderer to start: each Chrome with room keeps one
spare context, made ahead of time (its tab attached, its events subscribed), that the next
conversation claims; a new spare is made behind it.

When a Chrome dies, every context in it reports a crash (see `_context_session`), so each
conversation gets a fresh context in a live Chrome on its next call, told why.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import trio

from chrome_launcher import KillReport, StateLayout

from .._errors import BrowserLaunchError, CdpError, CloseReason
from .._tasks import first_of
from ..browser import (
    BrowserSession,
    ContextSession,
    SessionDirs,
    SharedBrowser,
    run_context_session,
    run_shared_browser,
)
from ._seam import Browser, SourceBase

log = logging.getLogger("browser_tool.shared")

# A spare is made this long after the one before it was claimed: starting its renderer costs
# tens of milliseconds of CPU, which the claiming conversation's first call needs more.
SPARE_DELAY = 0.15


@dataclass(eq=False)
class _Host:
    """One shared Chrome as the source sees it, from before its launch to after its end."""

    started: trio.Event = field(default_factory=trio.Event)
    browser: SharedBrowser | None = None
    error: BrowserLaunchError | None = None
    members: set[BrowserSession] = field(default_factory=set)
    reserved: int = 0  # conversations waiting for a context here
    spare: ContextSession | None = None
    making_spare: bool = False
    _changed: trio.Event = field(default_factory=trio.Event)

    @property
    def load(self) -> int:
        return len(self.members) + self.reserved

    def poke(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def wait_changed(self) -> None:
        await self._changed.wait()

    @property
    def usable(self) -> bool:
        return self.error is None and (self.browser is None or self.browser.alive)


class SharedSource(SourceBase):
    """BrowserSource over shared Chromes. Every task runs in the manager's nursery."""

    def _start(self) -> None:
        self._layout = StateLayout(self._settings.state_dir)
        self._hosts: list[_Host] = []

    def shared_browsers(self) -> list[SharedBrowser]:
        """The shared Chromes running now."""
        return [h.browser for h in self._hosts if h.browser is not None and h.browser.alive]

    async def acquire(
        self, conversation_id: str, dirs: SessionDirs, profile_dir: Path | None = None
    ) -> BrowserSession:
        if profile_dir is not None:  # the manager refuses the binding first; never reached
            raise BrowserLaunchError(
                "Profiles apply in process mode only: in context mode (BROWSER_TOOL_ISOLATION="
                "context) conversations share one Chrome, and a Chrome has one profile."
            )
        # A Chrome that dies between being chosen and giving out a context is not the
        # conversation's fault: one more try, in another Chrome.
        for attempt in (1, 2):
            host = self._choose()
            host.reserved += 1
            host.poke()
            try:
                session = await self._context_in(host)
                # A member before it stops being reserved: the host never looks empty.
                host.members.add(session)
            except BrowserLaunchError:
                if attempt == 2 or host.error is not None or host.browser is None:
                    raise
                continue
            finally:
                host.reserved -= 1
                host.poke()
                self._refill(host)
            try:
                await session.claim(conversation_id, dirs.downloads)
            except BaseException as exc:
                await session.aclose(CloseReason.RESET)
                if isinstance(exc, CdpError):
                    raise BrowserLaunchError(
                        f"The shared browser (pid {session.pid}) did not answer: {exc}"
                    ) from exc
                raise
            self._metrics.inc("browser_tool_handovers_total", source="context")
            return session
        raise AssertionError("unreachable")

    async def release(self, browser: Browser, reason: CloseReason) -> KillReport | None:
        return await browser.aclose(reason)

    def standby(self) -> list[Browser]:
        return []  # spare contexts hold no Chrome of their own; shared Chromes are listed apart

    async def aclose(self) -> None:
        """Close every shared Chrome now, lingering ones included (their contexts are gone)."""
        for host in list(self._hosts):
            self._forget(host)
            if host.browser is not None:
                await host.browser.aclose(CloseReason.SHUTDOWN)

    # ---- choosing and starting Chromes ----------------------------------------------------

    def _choose(self) -> _Host:
        cap = self._settings.contexts_per_browser
        for host in self._hosts:
            if host.usable and host.load < cap:
                return host
        host = _Host()
        self._hosts.append(host)
        self._nursery.start_soon(self._run_host, host)
        return host

    async def _run_host(self, host: _Host) -> None:
        """Launch the host's Chrome, then wait for its end and forget it."""
        root = self._layout.sessions_dir / f"shared-browser-{secrets.token_hex(4)}"
        try:
            host.browser = await self._nursery.start(
                run_shared_browser, self._settings, self._instance_id, root
            )
        except BrowserLaunchError as error:
            self._forget(host)
            host.error = error
            self._metrics.inc("browser_tool_shared_browser_launches_total", outcome="error")
            log.warning("%s", error)
            return
        except BaseException:
            self._forget(host)
            raise
        finally:
            host.started.set()
        browser = host.browser
        self._metrics.inc("browser_tool_shared_browser_launches_total", outcome="ok")
        self._count_browsers()
        try:
            await first_of(
                closed=browser.wait_closed, empty=partial(self._close_when_empty, host, browser)
            )
        finally:
            self._forget(host)
            reason = browser.close_reason or CloseReason.SHUTDOWN
            self._metrics.inc("browser_tool_shared_browser_ends_total", reason=reason)
            self._count_browsers()

    async def _close_when_empty(self, host: _Host, browser: SharedBrowser) -> None:
        """Close the Chrome once it has stayed empty for `shared_browser_linger`."""
        while True:
            if host.load > 0:
                await host.wait_changed()
                continue
            with trio.move_on_after(self._settings.shared_browser_linger) as timer:
                await host.wait_changed()
            if timer.cancelled_caught and host.load == 0:
                self._forget(host)  # from now on nobody can choose it
                await browser.aclose(CloseReason.LINGER)
                return

    def _forget(self, host: _Host) -> None:
        if host in self._hosts:
            self._hosts.remove(host)

    def _count_browsers(self) -> None:
        self._metrics.set_gauge("browser_tool_shared_browsers", len(self.shared_browsers()))

    # ---- contexts -------------------------------------------------------------------------

    async def _context_in(self, host: _Host) -> ContextSession:
        """A context in `host`'s Chrome: its spare if it has one, else a new one. Raises
        BrowserLaunchError."""
        await host.started.wait()
        if host.error is not None:
            raise BrowserLaunchError(str(host.error))
        spare, host.spare = host.spare, None
        if spare is not None and spare.alive:
            return spare
        return await self._new_context(host)

    async def _new_context(self, host: _Host) -> ContextSession:
        browser = host.browser
        if browser is None or not browser.alive:
            raise BrowserLaunchError("The shared browser ended before it could make a context.")

        def closed(session: BrowserSession) -> None:
            self._context_closed(host, session)

        session: ContextSession = await browser.nursery.start(
            run_context_session, browser, self._settings, closed
        )
        if not session.alive:  # its Chrome died at once; its end was reported already
            raise BrowserLaunchError("The shared browser ended while it made a context.")
        return session

    def _refill(self, host: _Host) -> None:
        """Make the host a spare context in the background, if it has room and none."""
        browser = host.browser
        if (
            host.spare is not None
            or host.making_spare
            or browser is None
            or not browser.alive
            or host.load >= self._settings.contexts_per_browser
        ):
            return
        host.making_spare = True
        self._nursery.start_soon(self._make_spare, host)

    async def _make_spare(self, host: _Host) -> None:
        try:
            await trio.sleep(SPARE_DELAY)
            spare = await self._new_context(host)
        except BrowserLaunchError as exc:
            log.info("no spare context: %s", exc)
            return
        finally:
            host.making_spare = False
        if host in self._hosts and host.spare is None:
            host.spare = spare
        else:
            await spare.aclose(CloseReason.RESET)

    def _context_closed(self, host: _Host, session: BrowserSession) -> None:
        host.members.discard(session)
        if host.spare is session:
            host.spare = None
        host.poke()
        self._on_closed(session)
