"""PoolSource: Chromes launched ahead (`BROWSER_TOOL_POOL_SIZE`), so a new conversation's first
call does not wait for a launch.

Each pooled Chrome is launched exactly as `LaunchSource` launches one (own process group, PID
record, death link, reaper marker), into a slot dir of its own under `sessions/` that carries
the instance's `.instance` file, so the orphan reaper removes it like any session dir. A new
conversation's first call takes the oldest live one: the browser is renamed to the
conversation, its downloads are pointed at the conversation's own `downloads/` (one
`Browser.setDownloadBehavior`), and its lifetime starts then. The conversation's files
(downloads, screenshots, outputs) live in its own dir as always; the browser's profile stays in
the slot, which goes with the browser. A pooled Chrome is never given to a second conversation
(it is killed when the first is done with it), never handed out dead (`alive` is checked, and
one that dies in the pool is dropped at once), and killed at shutdown. The pool refills in the
background, shortly after the last hand-out (so a launch does not land on top of the first call
it was meant to speed up), every missing slot at once: after a burst of new conversations the
pool is full again after one launch's time, not after one launch per slot. A first call that
finds no ready browser but a pooled launch under way (that no other call waits for) waits for
that one rather than starting a second Chrome beside it.
"""

from __future__ import annotations

import collections
import logging
import math
import secrets
from dataclasses import dataclass
from pathlib import Path

import trio

from chrome_launcher import KillReport, StateLayout

from .._errors import BrowserLaunchError, CdpError, CloseReason
from ..browser import BrowserSession, SessionDirs, download_params, run_browser_session
from ._seam import Browser, LaunchSource, SourceBase

log = logging.getLogger("browser_tool.pool")

POOL_SLOT_PREFIX = "pool-"  # a slot dir's name; never a conversation's (see session_dir_name)
_HAND_OVER_TIMEOUT = 5.0
# A replacement is launched this long after the last hand-out: a launch's own work (spawn,
# files, ~150 ms of CPU over Chrome's processes) would otherwise land on top of the first
# call it was meant to speed up (here it added ~13 ms to the hand-over on 2 cores).
_REFILL_DELAY = 0.5
_RETRY_AFTER = (1.0, 2.0, 5.0, 10.0, 30.0)  # seconds to wait after 1, 2, ... failed launches


@dataclass(frozen=True)
class PoolStatistics:
    """The pool at one moment: its size, the browsers ready, the launches under way, and the
    most launches ever under way at once."""

    size: int
    ready: int
    launching: int
    most_launching: int


class PoolSource(SourceBase):
    """`settings.pool_size` Chromes kept ready; a `BrowserSource` (see `_seam`)."""

    def _start(self) -> None:
        settings, nursery = self._settings, self._nursery
        self._size = settings.pool_size
        # Launched only when none is ready; conversations' crashes are reported through us.
        self._launcher = LaunchSource(
            settings, self._instance_id, nursery, self._browser_closed, self._metrics
        )
        self._sessions_dir = StateLayout(settings.state_dir).sessions_dir
        self._ready: collections.deque[BrowserSession] = collections.deque()
        self._handed_out: set[Browser] = set()
        self._slots_left: dict[Browser, trio.Event] = {}  # set once its slot is gone
        self._closing = False
        self._handed_out_at = -math.inf
        self._launching = 0
        self._claims = 0  # callers waiting for a launch under way
        self._most_launching = 0
        self._failures = 0
        self._retry_at = -math.inf
        self._changed = trio.Event()
        self._filled = trio.Event()
        nursery.start_soon(self._refill)

    async def acquire(
        self, conversation_id: str, dirs: SessionDirs, profile_dir: Path | None = None
    ) -> BrowserSession:
        if profile_dir is not None:  # a pooled Chrome runs on a fresh profile: launch one
            return await self._launcher.acquire(conversation_id, dirs, profile_dir)
        while True:
            while self._ready:
                browser = self._ready.popleft()
                self._handed_out_at = trio.current_time()
                self._poke()
                if not browser.alive:
                    continue  # its own task is cleaning it up
                if await self._hand_over(browser, conversation_id, dirs):
                    return browser
            if self._closing or self._launching <= self._claims:
                return await self._launcher.acquire(conversation_id, dirs)
            # A pooled launch is under way that no other caller waits for: it is further along
            # than a launch started now, and a second Chrome starting beside it would slow both
            # (a service's first call often comes while its first spare is starting).
            self._claims += 1
            try:
                await self._changed.wait()
            finally:
                self._claims -= 1

    async def release(self, browser: Browser, reason: CloseReason) -> KillReport | None:
        report = await browser.aclose(reason)
        if (slot_left := self._slots_left.get(browser)) is not None:
            with trio.CancelScope(shield=True):
                await slot_left.wait()  # the slot dir (the profile's parent) is gone too
        return report

    def statistics(self) -> PoolStatistics:
        return PoolStatistics(self._size, len(self._ready), self._launching, self._most_launching)

    def standby(self) -> list[Browser]:
        return list[Browser](self._ready)

    async def wait_filled(self) -> None:
        """Return once every slot of the pool holds a ready browser (tests, benchmarks)."""
        while len(self._ready) < self._size:
            self._filled = trio.Event()
            await self._filled.wait()

    async def aclose(self) -> None:
        self._closing = True
        self._poke()
        ready, self._ready = list(self._ready), collections.deque()
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for browser in ready:
                    nursery.start_soon(self.release, browser, CloseReason.SHUTDOWN)

    async def _hand_over(
        self, browser: BrowserSession, conversation_id: str, dirs: SessionDirs
    ) -> bool:
        """Make `browser` the conversation's; False (and the browser killed) when it fails.
        Cancelled, the browser is killed: it must never go back to the pool."""
        browser.conversation_id = conversation_id
        browser.page.downloads_dir = dirs.downloads
        self._handed_out.add(browser)
        try:
            await browser.conn.send(
                "Browser.setDownloadBehavior",
                download_params(browser.page.downloads_dir, browser.page.in_context),
                timeout=_HAND_OVER_TIMEOUT,
            )
        except CdpError as exc:
            log.warning("a pooled browser (pid %d) failed its hand-over: %s", browser.pid, exc)
            await self.release(browser, CloseReason.CRASH)
            return False
        except BaseException:
            await self.release(browser, CloseReason.RESET)
            raise
        browser.started_at = trio.current_time()  # its lifetime is the conversation's
        self._metrics.inc("browser_tool_handovers_total", source="pool")
        return True

    def _browser_closed(self, browser: Browser) -> None:
        if isinstance(browser, BrowserSession) and browser in self._ready:
            self._ready.remove(browser)  # died in the pool: never handed out, replaced
            self._poke()
        if browser in self._handed_out or browser not in self._slots_left:
            self._handed_out.discard(browser)
            self._on_closed(browser)

    def _poke(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def _missing(self) -> int:
        return 0 if self._closing else self._size - len(self._ready) - self._launching

    async def _refill(self) -> None:
        while True:
            while self._missing() <= 0:
                await self._changed.wait()
            await trio.sleep_until(max(self._handed_out_at + _REFILL_DELAY, self._retry_at))
            # Every missing slot at once: Chrome's start is mostly waiting (the processes
            # start, the endpoint appears), so launches in parallel overlap well.
            for _ in range(max(self._missing(), 0)):
                self._launching += 1
                self._most_launching = max(self._most_launching, self._launching)
                self._nursery.start_soon(self._launch_one)

    async def _launch_one(self) -> None:
        slot_left = trio.Event()
        try:
            browser = await self._nursery.start(self._run_pooled, slot_left)
        except BrowserLaunchError as exc:
            self._launching -= 1
            self._metrics.inc("browser_tool_launches_total", outcome="error")
            delay = _RETRY_AFTER[min(self._failures, len(_RETRY_AFTER) - 1)]
            self._failures += 1
            self._retry_at = trio.current_time() + delay
            log.warning("pool: a launch failed (retrying in %.0f s): %s", delay, exc)
            self._poke()
            return
        except BaseException:
            self._launching -= 1
            raise
        self._launching -= 1
        self._failures = 0
        self._metrics.inc("browser_tool_launches_total", outcome="ok")
        self._slots_left[browser] = slot_left
        if self._closing:
            self._nursery.start_soon(self.release, browser, CloseReason.SHUTDOWN)
            return
        self._ready.append(browser)
        self._poke()
        log.info(
            "pool: a browser is ready (pid %d; %d of %d)", browser.pid, len(self._ready), self._size
        )
        if len(self._ready) >= self._size:
            self._filled.set()

    async def _run_pooled(
        self,
        slot_left: trio.Event,
        *,
        task_status: trio.TaskStatus[BrowserSession] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """One pooled Chrome, from its slot dir's creation to its removal (then `slot_left`
        is set). Raises BrowserLaunchError before `started` when the launch fails (nothing is
        left behind)."""
        name = POOL_SLOT_PREFIX + secrets.token_hex(4)
        slot = SessionDirs(self._sessions_dir / name)
        try:
            slot.create(self._instance_id)
            await run_browser_session(
                name,
                self._settings,
                slot,
                self._instance_id,
                self._browser_closed,
                task_status=task_status,
            )
        except OSError as exc:
            raise BrowserLaunchError(f"Could not create the pool slot {name}: {exc}") from exc
        finally:
            if problem := await slot.remove():
                log.warning("pool: %s", problem)
            slot_left.set()
            for browser, event in list(self._slots_left.items()):
                if event is slot_left:
                    del self._slots_left[browser]
