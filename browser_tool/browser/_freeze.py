"""Pausing a browser's pages between calls, resuming them, and asking a browser whether it
still answers: the few CDP steps the manager's watchdog takes.

What stops a busy page on headless shell 156 (measured from /proc, a page burning ~1 core with
a `requestAnimationFrame` loop and a `setInterval`; docs/decisions.md, issue 22):

- `Page.setWebLifecycleState {state: "frozen"}`: the group's CPU drops to ~0; timers, frames
  and loading tasks stop. DevTools hides the page before freezing it, and `"active"` unfreezes
  it but leaves it hidden (`document.visibilityState` stays "hidden", so
  `requestAnimationFrame` never runs again): `Emulation.setFocusEmulationEnabled` shows it
  again, so a thaw sends both.
- A synchronous loop (`while (true) {}`) runs on regardless of the freeze:
  `Runtime.terminateExecution` after the freeze stops it (nothing new starts on a frozen page).
- Not used: `Emulation.setCPUThrottlingRate` (100x: no drop at all), `Debugger.pause` (drops
  to ~0 but enables the debugger domain, and a compositor animation runs on),
  `Emulation.setScriptExecutionDisabled` (drops, but `requestAnimationFrame` does not come back
  when script is enabled again).
"""

from __future__ import annotations

import contextlib

import trio

from .._errors import CdpError
from ..cdp import CdpConnection, CdpSession
from ._page import Page

# A step on one page is waited for this long: the command is on the wire at once, and a page
# that does not answer is not ours to wait on (the probe decides about its browser).
_STEP_TIMEOUT = 2.0

_Steps = tuple[tuple[str, dict[str, object]], ...]
_FREEZE: _Steps = (
    ("Page.setWebLifecycleState", {"state": "frozen"}),
    ("Runtime.terminateExecution", {}),
)
_THAW: _Steps = (
    ("Page.setWebLifecycleState", {"state": "active"}),
    ("Emulation.setFocusEmulationEnabled", {"enabled": True}),
)


async def freeze_pages(pages: list[Page]) -> int:
    """Pause every page of `pages`; return how many took the pause. Never raises (a page being
    replaced after a crash, or one that fails the command, is left as it is)."""
    return sum([await _steps(page, _FREEZE) for page in pages])


async def thaw_pages(pages: list[Page]) -> int:
    """Resume every page of `pages` that `freeze_pages` paused; return how many answered.
    Never raises."""
    return sum([await _steps(page, _THAW) for page in pages])


async def _steps(page: Page, steps: _Steps) -> bool:
    with trio.move_on_after(_STEP_TIMEOUT), contextlib.suppress(CdpError):
        session = page.session
        for method, params in steps:
            await session.send(method, params)
        return True
    return False


async def pages_cpu_seconds(pages: list[Page], enabled: set[CdpSession]) -> float | None:
    """CPU seconds the renderers of `pages` spent on their main threads so far, by CDP
    (`Performance.getMetrics` TaskDuration, in thread ticks): the measure for a context in a
    shared Chrome, whose process group is not its own. `enabled` holds the page sessions that
    already have the Performance domain on (one `Performance.enable` per page session). None
    when a page did not answer within the step's bound. Never raises."""
    total = 0.0
    with trio.move_on_after(_STEP_TIMEOUT):
        try:
            for page in pages:
                session = page.session
                if session not in enabled:
                    await session.send("Performance.enable", {"timeDomain": "threadTicks"})
                    enabled.add(session)
                metrics = (await session.send("Performance.getMetrics"))["metrics"]
                total += sum(m["value"] for m in metrics if m.get("name") == "TaskDuration")
        except (CdpError, KeyError, TypeError):
            return None
        return total
    return None


async def probe_browser(conn: CdpConnection, timeout: float) -> bool:
    """Whether the browser at the other end of `conn` answers `Browser.getVersion` within
    `timeout` seconds (a command its browser process handles itself, whatever its pages do).
    Never raises: a closed connection does not answer."""
    with trio.move_on_after(timeout):
        try:
            await conn.send("Browser.getVersion")
        except CdpError:
            return not conn.closed  # it answered, with an error: it is alive
        return True
    return False
