"""The watchdog: what a browser does between calls, found and contained (issue 22).

Three guards, none of which costs a call anything when nothing is wrong:

- A browser that stops answering. When a call times out, `after_call` has the browser probed
  in the background (`Browser.getVersion`, bounded by `unresponsive_probe`); one that does not
  answer is closed as UNRESPONSIVE (no Browser.close, no SIGTERM grace: see
  `ChromeProcess.aclose(hurry=True)`), and the next call starts a fresh one with a note. A busy
  renderer is not a frozen browser: its browser process answers, and the call's own
  terminate-and-keep path (tools/_eval.py) stays.
- A page that burns CPU between calls. `run_watchdog` reads every browser's process group from
  /proc every `watchdog_interval` (one walk of /proc for all of them, in a worker thread); a
  conversation between calls whose browser used more than `idle_cpu_limit` cores on average
  over `idle_cpu_window` has its pages paused (browser/_freeze.py); its next call resumes them
  (`resume_paused`) and its result says so. A quiet page is never touched.
- A browser that holds too much memory between calls. Over `max_browser_memory` MiB (PSS of
  its group, read only once its RSS, which is never less, is over the limit), it is closed as
  MEMORY and the next call starts a fresh one with a note.

Only a conversation between calls is acted on (`between_calls`): READY, no call, its turn free.
A conversation handed over to a person must not be paused: its hold takes the turn or leaves
READY, and `between_calls` is where a hold that does neither plugs in.

In shared-browser mode (`isolation=context`) a process group holds many conversations, so a
context's CPU is read by CDP instead, page by page (`Performance.getMetrics` TaskDuration: its
renderers' main-thread time), one round trip per page per pass, only between calls; the memory
guard leaves contexts alone (docs/decisions.md, issue 22). The probe works the same, on the
context's own connection; a silent context whose shared Chrome is silent too (stopped, or no
answer on its own connection) has that Chrome killed, and each conversation on it is told.
"""

from __future__ import annotations

import collections
import logging
import time
from dataclasses import dataclass, field

import trio

from chrome_launcher import GroupUsage, group_pss_bytes, group_usage, read_stat

from .._duration import format_duration
from .._errors import CloseReason
from ..browser import (
    BrowserSession,
    ContextSession,
    freeze_pages,
    pages_cpu_seconds,
    probe_browser,
    thaw_pages,
)
from ..cdp import CdpSession
from ..sources import Browser
from ..tools import ToolOutput
from ._conversation import ActiveCall, Conversation, ConversationState
from ._lifecycle import Lifecycle

log = logging.getLogger("browser_tool.watchdog")

MIB = 1024 * 1024


def between_calls(conv: Conversation, browser: Browser) -> bool:
    """The conversation idles between calls with `browser`: the only time a guard acts. Never
    while a person holds its browser (issue 21's hand-over: the conversation stays READY with
    its turn free, and the person's page may well use CPU)."""
    return (
        conv.state is ConversationState.READY
        and not conv.handed_over
        and conv.call is None
        and conv.browser is browser
        and browser.alive
        and not conv.turn.locked()
    )


def cpu_over_window(
    samples: collections.deque[tuple[float, float]], now: float, window: float
) -> float | None:
    """Cores used on average over the last `window` seconds, from (time, cpu seconds) samples
    whose newest is at `now`; None while the samples do not cover the window yet. Drops the
    samples that a later one replaces as the window's start."""
    while len(samples) >= 2 and samples[1][0] <= now - window:
        samples.popleft()
    start_t, start_cpu = samples[0]
    if start_t > now - window or now <= start_t:
        return None
    return (samples[-1][1] - start_cpu) / (now - start_t)


@dataclass
class _Track:
    """What the watchdog knows of one conversation's browser since its last call."""

    browser: Browser
    last_active: float
    samples: collections.deque[tuple[float, float]] = field(default_factory=collections.deque)
    perf_on: set[CdpSession] = field(default_factory=set)  # pages read by CDP (contexts)


@dataclass(frozen=True)
class WatchdogStatistics:
    samples: int  # passes over every browser so far
    last_sample_s: float  # how long the last pass took (real time), reading /proc included


class Watchdog:
    """The sampler of one manager. Built by the manager; `run` is its task."""

    def __init__(self, lifecycle: Lifecycle) -> None:
        self._lifecycle = lifecycle
        self._settings = lifecycle.settings
        self._tracks: dict[str, _Track] = {}
        self._samples = 0
        self._last_sample_s = 0.0
        self._sampled = trio.Event()
        lifecycle.metrics.inc("browser_tool_pages_paused_total", 0)  # the series exists at 0

    def statistics(self) -> WatchdogStatistics:
        return WatchdogStatistics(self._samples, self._last_sample_s)

    async def wait_sampled(self, count: int) -> None:
        """Block until at least `count` passes have run (tests wait on this, not on time)."""
        while self._samples < count:
            await self._sampled.wait()

    async def run(self) -> None:
        """Sample every `watchdog_interval` until cancelled; with nothing to watch, sleep until
        a browser is launched."""
        while True:
            if not self._anything_to_watch():
                await self._lifecycle.wait_for_launch()
            # Real time, in a worker thread: CPU seconds from /proc are real, and a virtual
            # clock in tests must not find a deadline of ours every few seconds (trio's
            # autojump clock spends its threshold of real time on each).
            interval = self._settings.watchdog_interval
            await trio.to_thread.run_sync(time.sleep, interval, abandon_on_cancel=True)
            await self.sample()

    def _anything_to_watch(self) -> bool:
        on = self._settings.idle_cpu_limit > 0 or self._settings.max_browser_memory > 0
        return on and any(
            isinstance(conv.browser, BrowserSession)
            for conv in self._lifecycle.conversations.values()
        )

    async def sample(self) -> None:
        """One pass: read every process group, then act on what is over a limit."""
        started = time.monotonic()
        on = self._settings.idle_cpu_limit > 0 or self._settings.max_browser_memory > 0
        watched = {
            conv.conversation_id: (conv, browser)
            for conv in (self._lifecycle.conversations.values() if on else ())
            if isinstance(browser := conv.browser, BrowserSession) and browser.alive
        }
        pgids = {browser.pid for _, browser in watched.values() if not browser.shares_chrome}
        usage = await trio.to_thread.run_sync(group_usage, pgids) if pgids else {}
        by_pages: dict[str, float] = {}  # contexts in a shared Chrome: CPU by their pages
        if self._settings.idle_cpu_limit > 0:
            async with trio.open_nursery() as reads:
                for cid, (conv, browser) in watched.items():
                    if (
                        browser.shares_chrome
                        and conv.paused is None
                        and between_calls(conv, browser)
                    ):
                        reads.start_soon(self._read_pages, cid, browser, by_pages)
        now = time.monotonic()
        for gone in self._tracks.keys() - watched.keys():
            del self._tracks[gone]
        async with trio.open_nursery() as nursery:
            for cid, (conv, browser) in watched.items():
                group = None if browser.shares_chrome else usage.get(browser.pid)
                cpu = group.cpu_seconds if group is not None else by_pages.get(cid)
                self._look_at(nursery, cid, conv, browser, cpu, group, now)
        self._last_sample_s = time.monotonic() - started
        self._samples += 1
        self._sampled.set()
        self._sampled = trio.Event()

    def _look_at(
        self,
        nursery: trio.Nursery,
        cid: str,
        conv: Conversation,
        browser: BrowserSession,
        cpu: float | None,
        group: GroupUsage | None,
        now: float,
    ) -> None:
        track = self._tracks.get(cid)
        if track is None or track.browser is not browser or track.last_active != conv.last_active:
            track = self._tracks[cid] = _Track(browser, conv.last_active)
        if cpu is None or not between_calls(conv, browser):
            track.samples.clear()  # only time between calls counts
            return
        track.samples.append((now, cpu))
        limit_mib = self._settings.max_browser_memory
        if limit_mib and group is not None and group.rss_bytes > limit_mib * MIB:
            # RSS counts shared pages once per process (an idle headless shell: ~450 MB RSS,
            # ~180 MB PSS), so only PSS decides; the CPU guard still looks below.
            nursery.start_soon(self._check_memory, conv, browser, group)
        limit = self._settings.idle_cpu_limit
        window = self._settings.idle_cpu_window
        used = cpu_over_window(track.samples, now, window)
        if limit and used is not None and used > limit and conv.paused is None:
            why = (
                f"used {used:.0%} of a CPU core over {format_duration(window)} while the "
                f"conversation was idle (limit {limit:.0%}, BROWSER_TOOL_IDLE_CPU_LIMIT)"
            )
            nursery.start_soon(self._pause, conv, browser, why)

    async def _read_pages(self, cid: str, browser: BrowserSession, into: dict[str, float]) -> None:
        track = self._tracks.get(cid)
        enabled = track.perf_on if track is not None and track.browser is browser else set()
        cpu = await pages_cpu_seconds(browser.pages(), enabled)
        if cpu is not None:
            into[cid] = cpu

    async def _pause(self, conv: Conversation, browser: Browser, why: str) -> None:
        if not isinstance(browser, BrowserSession) or not between_calls(conv, browser):
            return
        # Holding the turn, so a call that arrives now waits for the pause and then resumes
        # every page it paused (their commands reach each page in order).
        conv.turn.acquire_nowait()
        try:
            if not conv.pause(browser, why):
                return
            paused = await freeze_pages(browser.pages())
        finally:
            conv.turn.release()
        self._lifecycle.metrics.inc("browser_tool_pages_paused_total", paused)
        log.info("%s: paused %d page(s): %s", conv.conversation_id, paused, why)

    async def _check_memory(self, conv: Conversation, browser: Browser, group: GroupUsage) -> None:
        limit = self._settings.max_browser_memory * MIB
        pss = await trio.to_thread.run_sync(group_pss_bytes, group.members)
        if pss <= limit or not between_calls(conv, browser):
            return
        why = (
            f"was closed because its processes held {pss / MIB:.0f} MiB of memory between "
            f"calls, over the limit of {limit // MIB} MiB (BROWSER_TOOL_MAX_BROWSER_MEMORY)"
        )
        log.warning("%s: %s", conv.conversation_id, why)
        await self._lifecycle.close_browser(conv, CloseReason.MEMORY, why)


async def resume_paused(conv: Conversation) -> str | None:
    """At the start of a call: resume the pages the watchdog paused, and say why they were
    paused (None, at the cost of one attribute read, when they were not)."""
    why = conv.take_paused()
    if why is None:
        return None
    browser = conv.browser
    if isinstance(browser, BrowserSession) and browser.alive:
        await thaw_pages(browser.pages())
    return (
        f"Note: the page was paused between calls because it {why}; it was resumed for this "
        "call (its timers and animations did not run while it was paused)."
    )


def after_call(lifecycle: Lifecycle, conv: Conversation, call: ActiveCall, out: ToolOutput) -> None:
    """At the end of a call: one that timed out on a browser has that browser probed, in the
    background (the call answers at its deadline). Costs a string test otherwise."""
    # Every tool says a deadline the same way ("Timeout after 15s ...", ToolContext.timeout_error;
    # "Timeout: ..." for a CDP command's own).
    if out.is_error and out.output.startswith("Timeout") and call.browser is not None:
        lifecycle.start_soon(_probe, lifecycle, conv, call.browser)


async def _probe(lifecycle: Lifecycle, conv: Conversation, browser: Browser) -> None:
    if not isinstance(browser, BrowserSession) or not browser.alive:
        return
    timeout = lifecycle.settings.unresponsive_probe
    answered = await probe_browser(browser.conn, timeout)
    lifecycle.metrics.inc("browser_tool_probes_total", outcome="answered" if answered else "silent")
    if answered:
        return
    if conv.browser is not browser or not browser.alive:
        return  # closed or replaced meanwhile
    stat = read_stat(browser.pid)  # a context's is its shared Chrome's
    stopped = " (its process was stopped: state T)" if stat and stat.state in "tT" else ""
    why = (
        f"stopped answering: after a call timed out it did not answer a probe within "
        f"{format_duration(timeout)}{stopped}, so it was killed"
    )
    if isinstance(browser, ContextSession) and await browser.shared_silent(timeout, stat):
        # The shared Chrome itself: it goes, and every conversation on it is told (a crash).
        log.warning("%s: the shared Chrome (pid %d) %s", conv.conversation_id, browser.pid, why)
        if await browser.shared.close_unresponsive(why):
            lifecycle.metrics.inc("browser_tool_kills_total", reason=CloseReason.UNRESPONSIVE)
        return
    if conv.browser is not browser or not browser.alive:
        return
    log.warning("%s: the browser (pid %d) %s", conv.conversation_id, browser.pid, why)
    await lifecycle.close_browser(conv, CloseReason.UNRESPONSIVE, why)
