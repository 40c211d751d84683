"""ChromeProcess: the handle of one running Chrome, built only by `launch_chrome`.

Two small tasks run in the nursery given to `launch_chrome`: one drains Chrome's stderr into a
bounded tail (an undrained pipe would block Chrome once 64 KiB of logging piles up) and spots the
DevTools endpoint line; one watches the leader's pidfd so owners can wait for a crash. Both end
on their own when the group dies, and `aclose()` ends them anyway.
"""

from __future__ import annotations

import collections
import contextlib
import enum
import os
import select
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path

import trio

from ._binary import ChromeBinary
from ._endpoint import parse_listening_line
from ._kill import KillReport, KillTarget, KillTiming, kill_ladder
from ._registry import PidRecord

_TAIL_LINES = 40
_MAX_LINE = 2000


class ChromeState(enum.Enum):
    STARTING = "starting"
    READY = "ready"
    CLOSING = "closing"
    CLOSED = "closed"


@dataclass(frozen=True)
class LaunchInfo:
    """Facts about one launch."""

    argv: tuple[str, ...]
    binary: ChromeBinary
    launch_seconds: float  # spawn to endpoint known


class ChromeProcess:
    """One running Chrome and its process group. `aclose()` kills it; a second call is a no-op."""

    def __init__(
        self,
        record: PidRecord,
        record_path: Path,
        stderr_fd: int,
        death_link_fds: tuple[int, ...],
        timing: KillTiming,
    ) -> None:
        self.record = record
        self.record_path = record_path
        self.ws_url: str | None = None
        self.info: LaunchInfo | None = None
        self.state = ChromeState.STARTING
        self._stderr = trio.lowlevel.FdStream(stderr_fd)
        self._death_link_fds = death_link_fds
        self._timing = timing
        self._tail: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        self._endpoint_seen = trio.Event()
        self._stderr_closed = trio.Event()
        self._exited = trio.Event()
        self._report: KillReport | None = None
        self._close_lock = trio.Lock()
        self._pidfd: int | None = None
        self._exit_poll = select.poll()

    @property
    def pid(self) -> int:
        return self.record.pid

    @property
    def pgid(self) -> int:
        return self.record.pgid

    @property
    def browser_dir(self) -> Path:
        return Path(self.record.browser_dir)

    @property
    def profile_dir(self) -> Path:
        return Path(self.record.profile_dir)

    @property
    def exited(self) -> bool:
        """True once the browser process has exited (crash, close, or kill).

        Also polls the leader's pidfd, not only the exit watcher: a process killed a moment ago
        is a zombie before the watcher task has run, and a caller about to use it must not be
        fooled. (A zero-timeout poll costs about a microsecond; reading /proc cost 30-50 us, on
        every call of every conversation.)
        """
        if not self._exited.is_set() and self._pidfd is not None and self._exit_poll.poll(0):
            self._exited.set()
        return self._exited.is_set()

    async def wait_exited(self) -> None:
        """Block until the browser process exits."""
        await self._exited.wait()

    async def wait_endpoint_line(self) -> None:
        """Block until Chrome prints its `DevTools listening on ws://...` line."""
        await self._endpoint_seen.wait()

    def stderr_tail(self, lines: int = 20) -> str:
        """The last `lines` lines Chrome wrote to stderr."""
        return "\n".join(list(self._tail)[-lines:])

    def start_watchers(self, nursery: trio.Nursery) -> None:
        # Our unreaped child: its pid cannot be reused, so the pidfd names this very process.
        # It turns readable when the leader exits (a crash, Browser.close, or the ladder) and
        # stays open until aclose, so `exited` can poll it.
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except ProcessLookupError:
            self._exited.set()
        else:
            self._exit_poll.register(self._pidfd, select.POLLIN)
        nursery.start_soon(self._drain_stderr)
        nursery.start_soon(self._watch_exit)

    async def _drain_stderr(self) -> None:
        pending = b""
        try:
            while chunk := await self._stderr.receive_some(65536):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for raw in lines:
                    self._add_line(raw)
                pending = pending[-_MAX_LINE:]
        except (trio.ClosedResourceError, trio.BrokenResourceError, OSError):
            pass
        finally:
            if pending:
                self._add_line(pending)
            self._stderr_closed.set()

    def _add_line(self, raw: bytes) -> None:
        line = raw[:_MAX_LINE].decode(errors="replace").rstrip("\r")
        if not line:
            return
        self._tail.append(line)
        if self.ws_url is None and (url := parse_listening_line(line)):
            self.ws_url = url
            self._endpoint_seen.set()

    async def _watch_exit(self) -> None:
        if self._pidfd is not None:
            with contextlib.suppress(trio.ClosedResourceError):  # aclose closed it
                await trio.lowlevel.wait_readable(self._pidfd)
        self._exited.set()

    def _kill_target(self) -> KillTarget:
        return KillTarget(
            pid=self.pid,
            pgid=self.pgid,
            start_time=self.record.start_time,
            is_child=True,
            dirs=(self.browser_dir, Path(self.record.tmp_dir)),
            record_path=self.record_path,
        )

    async def aclose(
        self, *, polite: Callable[[], Awaitable[object]] | None = None, hurry: bool = False
    ) -> KillReport:
        """Run the kill ladder once and return its report; later calls return the same report.

        Never raises. Shielded from cancellation (every step has its own deadline).
        `polite` is an optional coroutine function sending Browser.close over CDP. `hurry`
        skips the SIGTERM grace: for a Chrome that stopped answering, which would not act on
        SIGTERM either (its handler runs on the thread that no longer answers).
        """
        with trio.CancelScope(shield=True):
            async with self._close_lock:
                if self._report is None:
                    self.state = ChromeState.CLOSING
                    timing = replace(self._timing, term_grace=0.0) if hurry else self._timing
                    self._report = await kill_ladder(
                        self._kill_target(), timing=timing, polite=polite
                    )
                    self._exited.set()
                    self._release_fds()
                    await self._close_stderr()
                    self.state = ChromeState.CLOSED
                report = self._report
        return report

    def _release_fds(self) -> None:
        if self._pidfd is not None:
            self._exit_poll.unregister(self._pidfd)
            trio.lowlevel.notify_closing(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        for fd in self._death_link_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._death_link_fds = ()

    async def _close_stderr(self) -> None:
        # The group is dead, so EOF is near; wait briefly so the tail is complete.
        with trio.move_on_after(0.5):
            await self._stderr_closed.wait()
        await self._stderr.aclose()
