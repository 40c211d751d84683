"""launch_chrome: spawn, record, discover the endpoint; on any failure, kill and explain."""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from . import _procfs
from ._argv import ArgvSpec, build_argv
from ._binary import find_chrome
from ._endpoint import parse_active_port_file
from ._errors import LaunchError, LaunchTimeoutError, RegistryError
from ._kill import KillTarget, KillTiming, kill_ladder
from ._persistent import prepare_persistent_profile
from ._process import ChromeProcess, ChromeState, LaunchInfo
from ._registry import PidRecord, write_record
from ._spawn import Spawned, close_fds, spawn
from ._state import StateLayout, make_private_dir

log = logging.getLogger("chrome_launcher")

# DevToolsActivePort is the fallback for a Chrome whose stderr line we miss; it appears about
# 3 ms after the line, so a slow poll costs nothing on the fast path.
_PORT_FILE_POLL = 0.05


@dataclass(frozen=True)
class LaunchOptions:
    """Everything one launch depends on."""

    state_dir: Path
    instance_id: str
    session_dir: Path  # the owner's dir for this Chrome; ours goes inside it as chrome-<token>/
    # A persistent profile (--user-data-dir) that outlives this Chrome: never deleted by the
    # kill ladder or the reaper; stale lock files of a dead Chrome are removed before the
    # launch (see _persistent.py). None: a fresh profile in chrome-<token>/profile.
    profile_dir: Path | None = None
    chrome_path: str | None = None  # None: $BROWSER_TOOL_CHROME, then Debian's binaries
    launch_timeout: float = 20.0
    death_link: bool = True
    window_size: tuple[int, int] = (1280, 720)
    sandbox: bool | None = None  # None: off when running as root (Chrome refuses it there)
    extra_args: Sequence[str] = field(default_factory=tuple)
    extra_env: Mapping[str, str] = field(default_factory=dict)
    kill_timing: KillTiming = field(default_factory=KillTiming)


def _argv_for(options: LaunchOptions, profile_dir: Path) -> tuple[list[str], LaunchInfo]:
    binary = find_chrome(options.chrome_path)
    sandbox = options.sandbox if options.sandbox is not None else os.geteuid() != 0
    argv = build_argv(
        ArgvSpec(
            binary=binary,
            profile_dir=str(profile_dir),
            instance_id=options.instance_id,
            window_size=options.window_size,
            sandbox=sandbox,
            extra_args=tuple(options.extra_args),
        )
    )
    if not options.death_link:
        argv.remove("--remote-debugging-pipe")
    return argv, LaunchInfo(argv=tuple(argv), binary=binary, launch_seconds=0.0)


async def launch_chrome(options: LaunchOptions, nursery: trio.Nursery) -> ChromeProcess:
    """Start Chrome in its own process group and return once its DevTools endpoint is known.

    The PID record is written right after spawn, before anything else can fail. Chrome's stderr
    drain and exit watch run in `nursery`, which must outlive the returned process (close the
    process with `aclose()` before the nursery ends).

    Raises ChromeNotFoundError, LaunchError (Chrome exited; carries its stderr tail and exit
    status) or LaunchTimeoutError. On any failure, and on cancellation, the group is killed and
    its files removed before the exception propagates.
    """
    layout = StateLayout(options.state_dir)
    token = secrets.token_hex(4)
    browser_dir = options.session_dir / f"chrome-{token}"
    profile_dir = options.profile_dir or browser_dir / "profile"
    tmp_dir = layout.chrome_tmp_dir(token)
    argv, info = _argv_for(options, profile_dir)
    if options.profile_dir is not None:
        prepare_persistent_profile(options.profile_dir)
    try:
        layout.create()
        for path in (options.session_dir, browser_dir, profile_dir, tmp_dir):
            make_private_dir(path)
    except OSError as exc:
        _remove_tree(browser_dir)
        _remove_tree(tmp_dir)
        raise LaunchError(
            f"Could not create Chrome's dirs for {str(browser_dir)!r}: {exc}"
        ) from exc
    env = {**os.environ, **options.extra_env, "TMPDIR": str(tmp_dir)}
    started = trio.current_time()
    try:
        spawned = spawn(argv, env, death_link=options.death_link)
    except OSError as exc:
        _remove_tree(browser_dir)
        _remove_tree(tmp_dir)
        raise LaunchError(f"Could not start {argv[0]!r}: {exc.strerror or exc}") from exc
    try:
        chrome = _record(spawned, options, info, browser_dir, tmp_dir)
    except BaseException:
        # Without a record nobody could reap this Chrome after a crash of ours: kill it now.
        target = KillTarget(spawned.pid, spawned.pid, 0, is_child=True, dirs=(browser_dir, tmp_dir))
        await kill_ladder(target, timing=options.kill_timing)
        close_fds([spawned.stderr_fd, *spawned.death_link_fds])
        raise
    chrome.start_watchers(nursery)
    try:
        await _wait_endpoint(chrome, options.launch_timeout)
    except BaseException as exc:
        report = await chrome.aclose()
        if isinstance(exc, LaunchTimeoutError):
            raise LaunchTimeoutError(
                options.launch_timeout, stderr_tail=chrome.stderr_tail()
            ) from None
        if isinstance(exc, _ChromeExited):
            raise LaunchError(
                "Chrome exited before announcing its DevTools endpoint",
                returncode=report.exit_status,
                stderr_tail=chrome.stderr_tail(),
            ) from None
        raise
    chrome.info = LaunchInfo(
        argv=info.argv, binary=info.binary, launch_seconds=trio.current_time() - started
    )
    chrome.state = ChromeState.READY
    log.info(
        "launched Chrome pid=%d in %.0f ms: %s",
        chrome.pid,
        chrome.info.launch_seconds * 1e3,
        chrome.ws_url,
    )
    return chrome


def _record(
    spawned: Spawned, options: LaunchOptions, info: LaunchInfo, browser_dir: Path, tmp_dir: Path
) -> ChromeProcess:
    """Write the PID record of a just-spawned Chrome. Raises LaunchError."""
    layout = StateLayout(options.state_dir)
    record = PidRecord(
        pid=spawned.pid,
        pgid=spawned.pid,  # setsid: the leader's pid is the group and session id
        start_time=_procfs.start_time(spawned.pid) or 0,  # unreaped: /proc/<pid> exists
        boot_id=_procfs.boot_id(),
        uid=os.getuid(),
        instance_id=options.instance_id,
        chrome_path=info.binary.path,
        browser_dir=str(browser_dir),
        tmp_dir=str(tmp_dir),
        session_dir=str(options.session_dir),
        created_at=time.time(),
        user_data_dir=str(options.profile_dir) if options.profile_dir is not None else "",
    )
    try:
        record_path = write_record(layout.pids_dir, record)
    except RegistryError as exc:
        raise LaunchError(str(exc)) from exc
    return ChromeProcess(
        record, record_path, spawned.stderr_fd, spawned.death_link_fds, options.kill_timing
    )


class _ChromeExited(LaunchError):
    pass


async def _wait_endpoint(chrome: ChromeProcess, timeout: float) -> None:
    """Race the stderr line, the DevToolsActivePort file, Chrome's exit and the deadline."""
    outcome = ""
    async with trio.open_nursery() as race:

        def finish(what: str) -> None:
            nonlocal outcome
            outcome = outcome or what
            race.cancel_scope.cancel()

        async def from_stderr() -> None:
            await chrome.wait_endpoint_line()
            finish("endpoint")

        async def from_port_file() -> None:
            port_file = chrome.profile_dir / "DevToolsActivePort"
            while True:
                await trio.sleep(_PORT_FILE_POLL)
                try:
                    url = parse_active_port_file(port_file.read_text())
                except OSError:
                    continue
                if url:
                    chrome.ws_url = chrome.ws_url or url
                    finish("endpoint")
                    return

        async def exit_watch() -> None:
            await chrome.wait_exited()
            finish("exited")

        async def deadline() -> None:
            await trio.sleep(timeout)
            finish("timeout")

        for task in (from_stderr, from_port_file, exit_watch, deadline):
            race.start_soon(task)
    if outcome == "exited":
        raise _ChromeExited("Chrome exited")
    if outcome == "timeout":
        raise LaunchTimeoutError(timeout)


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
