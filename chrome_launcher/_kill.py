"""The kill ladder: polite close -> SIGTERM to the group -> grace -> SIGKILL to the group -> reap
-> confirm no live process of the group is left -> delete the browser dir -> remove the record.

It never raises to its caller: every step tolerates ProcessLookupError, errors are collected in
the report, and the whole ladder runs shielded from cancellation with its own bounded deadlines,
so a cancelled caller still gets its Chrome killed.

Why the group always gets a SIGKILL, even when the browser process exited politely: when it
exits, other members of its group (zygotes, GPU, utility, renderers) may still be running for a
moment. Why the leader is reaped only after that SIGKILL: an unreaped leader keeps its pid (the
group id) from being reused, so the signal cannot reach a stranger.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from . import _procfs
from ._registry import remove_record
from ._state import remove_tree

log = logging.getLogger("chrome_launcher.kill")


@dataclass(frozen=True)
class KillTiming:
    """Deadlines of the ladder, in seconds."""

    polite_timeout: float = 2.0  # Browser.close and the browser's own exit after it
    term_grace: float = 2.0  # after SIGTERM, before SIGKILL
    confirm_timeout: float = 5.0  # after SIGKILL, for every member of the group to die
    poll_interval: float = 0.01  # group members have no exit signal we can wait on


@dataclass(frozen=True)
class KillTarget:
    """What the ladder kills and cleans up."""

    pid: int
    pgid: int
    start_time: int
    is_child: bool  # our own child: reap it with waitpid
    dirs: tuple[Path, ...] = ()  # deleted once the group is confirmed gone
    record_path: Path | None = None


@dataclass(frozen=True)
class KillReport:
    """What the ladder did. `survivors` == 0 means the group is confirmed gone."""

    pid: int
    pgid: int
    steps: tuple[str, ...]
    sigterm_sent: bool
    sigkill_needed: bool  # some member of the group was still alive when SIGKILL was sent
    survivors: int
    exit_status: int | None  # the leader's returncode when we reaped it (negative: signal)
    duration: float
    errors: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return self.survivors == 0 and not self.errors


def leader_alive(target: KillTarget) -> bool:
    stat = _procfs.read_stat(target.pid)
    return stat is not None and stat.alive and stat.start_time == target.start_time


async def _wait_leader_exit(target: KillTarget, timeout: float) -> bool:
    """Wait up to `timeout` for the leader to exit; True when it has."""
    try:
        pidfd = os.pidfd_open(target.pid)
    except ProcessLookupError:
        return True
    try:
        # Opening the pidfd first and checking identity after means the fd names our process.
        if not leader_alive(target):
            return True
        with trio.move_on_after(timeout):
            await trio.lowlevel.wait_readable(pidfd)
        return not leader_alive(target)
    finally:
        trio.lowlevel.notify_closing(pidfd)
        os.close(pidfd)


def _signal_group(pgid: int, sig: signal.Signals, errors: list[str]) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass
    except PermissionError as exc:
        errors.append(f"{sig.name} to group {pgid}: {exc.strerror}")


async def _reap(target: KillTarget, deadline: float, poll: float, errors: list[str]) -> int | None:
    while True:
        try:
            pid, status = os.waitpid(target.pid, os.WNOHANG)  # noqa: ASYNC222 (WNOHANG never blocks)
        except ChildProcessError:
            return None
        if pid:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            errors.append(f"pid {target.pid} did not exit after SIGKILL; not reaped")
            return None
        await trio.sleep(poll)


def _stragglers(target: KillTarget) -> list[int]:
    # Members of the group started before the leader cannot be Chrome's: only count ours.
    return [
        s.pid
        for s in _procfs.all_stats()
        if s.pgid == target.pgid and s.alive and s.start_time >= target.start_time
    ]


async def _confirm_gone(target: KillTarget, deadline: float, poll: float) -> int:
    while members := _stragglers(target):
        if time.monotonic() > deadline:
            return len(members)
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        await trio.sleep(poll)
    return 0


async def kill_ladder(
    target: KillTarget,
    *,
    timing: KillTiming = KillTiming(),
    polite: Callable[[], Awaitable[object]] | None = None,
) -> KillReport:
    """Kill `target`'s whole process group and clean up after it. Never raises.

    Runs shielded: cancelling the caller does not stop the ladder (each step is bounded).
    """
    with trio.CancelScope(shield=True):
        start = time.monotonic()
        steps: list[str] = []
        errors: list[str] = []
        sigterm_sent = False
        if polite is not None and leader_alive(target):
            steps.append("browser_close")
            with trio.move_on_after(timing.polite_timeout) as scope:
                try:
                    await polite()
                except Exception as exc:  # the polite step is best-effort by definition
                    log.debug("polite close of pid %d failed: %r", target.pid, exc)
                await _wait_leader_exit(target, timing.polite_timeout)
            if scope.cancelled_caught:
                steps.append("browser_close_timeout")
        if leader_alive(target):
            steps.append("sigterm")
            sigterm_sent = True
            _signal_group(target.pgid, signal.SIGTERM, errors)
            # A stopped process (SIGSTOP, a debugger) acts on SIGTERM only once continued.
            _signal_group(target.pgid, signal.SIGCONT, errors)
            await _wait_leader_exit(target, timing.term_grace)
        sigkill_needed = bool(_stragglers(target))
        steps.append("sigkill")
        _signal_group(target.pgid, signal.SIGKILL, errors)
        # Death after SIGKILL happens in real time, so these waits use the real clock (a fake
        # trio clock in tests must not declare survivors before the kernel had a chance).
        deadline = time.monotonic() + timing.confirm_timeout
        exit_status = None
        if target.is_child:
            exit_status = await _reap(target, deadline, timing.poll_interval, errors)
            steps.append("reap")
        survivors = await _confirm_gone(target, deadline, timing.poll_interval)
        steps.append("confirm")
        if survivors:
            errors.append(f"{survivors} process(es) of group {target.pgid} survived SIGKILL")
            log.error("kill ladder: %d survivors in group %d", survivors, target.pgid)
        else:
            for path in target.dirs:
                # A profile is thousands of files (~150 ms): keep it off the event loop.
                errors += await trio.to_thread.run_sync(remove_tree, path)
            if target.dirs:
                steps.append("remove_dirs")
            if target.record_path is not None:
                if error := remove_record(target.record_path):
                    errors.append(error)
                steps.append("remove_record")
        report = KillReport(
            pid=target.pid,
            pgid=target.pgid,
            steps=tuple(steps),
            sigterm_sent=sigterm_sent,
            sigkill_needed=sigkill_needed,
            survivors=survivors,
            exit_status=exit_status,
            duration=time.monotonic() - start,
            errors=tuple(errors),
        )
    return report
