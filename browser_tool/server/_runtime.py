"""Running a front end as a service: the calls in flight, and the stop that signals ask for.

The first SIGTERM or SIGINT stops new work (the listener closes, new requests get 503, new
MCP calls an error), gives the calls in flight `call_grace` to finish, then the front end leaves
`open_session_manager`, which kills every session in parallel within `shutdown_timeout`.
A second signal skips what is left of the grace: the calls in flight are stopped at once and
answer with an error, so their clients still get a reply.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import trio

from .._tasks import first_of

if TYPE_CHECKING:
    from ..conversations import BrowserSessionManager

log = logging.getLogger("browser_tool.service")

SHUTDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT)

# After the grace (or a second signal) the calls in flight are stopped; this is how long they
# get to send the error reply that says so before their connections are cut.
_REPLY_FLUSH = 1.0


class InFlight:
    """Counts the requests in flight, so a shutdown can wait for them to end."""

    def __init__(self) -> None:
        self.count = 0
        self._idle = trio.Event()
        self._idle.set()

    @contextmanager
    def track(self) -> Iterator[None]:
        self.count += 1
        if self.count == 1:
            self._idle = trio.Event()
        try:
            yield
        finally:
            self.count -= 1
            if self.count == 0:
                self._idle.set()

    async def wait_idle(self) -> None:
        while self.count:
            await self._idle.wait()


class Shutdown:
    """The stop state of one service process: requested by the first signal (or by the front
    end itself, e.g. at the end of stdin), hurried by the second."""

    def __init__(self) -> None:
        self.requested = trio.Event()
        self.hurried = trio.Event()
        self.manager: BrowserSessionManager | None = None

    @property
    def stopping(self) -> bool:
        return self.requested.is_set()

    def request(self, why: str) -> None:
        """Ask for a stop; asking again stops the calls in flight at once."""
        if not self.requested.is_set():
            log.info("%s: stopping; calls in flight get their grace period", why)
            self.requested.set()
            return
        log.info("%s again: stopping the calls in flight now", why)
        self.hurried.set()
        if self.manager is not None:
            self.manager.skip_call_grace()

    async def watch_signals(self, signals: AsyncIterator[int]) -> None:
        """Turn each delivered signal into `request`. Runs until cancelled."""
        async for signum in signals:
            self.request(signal.Signals(signum).name)

    async def drain(self, inflight: InFlight, grace: float) -> None:
        """Wait for the requests in flight to end: at most `grace` seconds, less on a second
        signal. Whatever still runs then is stopped and gets a moment to send its reply."""
        with trio.move_on_after(grace):
            await first_of(idle=inflight.wait_idle, hurried=self.hurried.wait)
        if inflight.count and self.manager is not None:
            log.info("stopping %d call(s) still in flight", inflight.count)
            self.manager.skip_call_grace()
        with trio.move_on_after(_REPLY_FLUSH):
            await inflight.wait_idle()
