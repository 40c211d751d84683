"""Planting real orphans: a helper process plays a service (instance lock, a session dir owned
by it, N Chromes launched in parallel in one trio nursery), prints one JSON line, and waits
forever; `plant()` starts it, reads the line and SIGKILLs it by its pid. With the death link
off its Chromes then keep running, re-parented: orphans. With it on, they die with it.

As a script: python plant_orphans.py STATE_DIR INSTANCE_ID COUNT DEATH_LINK(0|1) CHROME_PATH
prints {"pids": [...], "records": [...], "session_dir": "..."}.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import trio

from chrome_launcher import (
    ChromeProcess,
    InstanceLock,
    LaunchOptions,
    PidRecord,
    StateLayout,
    boot_id,
    launch_chrome,
    live_group_members,
    make_private_dir,
    write_record,
)
from orphan_reaper import write_session_owner


@dataclass(frozen=True)
class Planted:
    """What the dead helper left behind: each Chrome's pid (= its pgid) and record."""

    pids: tuple[int, ...]
    records: tuple[Path, ...]
    session_dir: Path


async def plant(
    state_dir: Path, instance_id: str, count: int, chrome_path: str, *, death_link: bool = False
) -> Planted:
    """Run the helper until its Chromes are up, then SIGKILL it. Raises AssertionError when the
    helper exits without reporting (its stderr is inherited, so the reason is in the output)."""
    argv = [sys.executable, __file__, str(state_dir), instance_id, str(count)]
    argv += ["1" if death_link else "0", chrome_path]
    helper = await trio.lowlevel.open_process(argv, stdout=-1)
    assert helper.stdout is not None
    try:
        line = b""
        with trio.fail_after(30 + count * 3):
            while not line.endswith(b"\n"):
                chunk = await helper.stdout.receive_some()
                assert chunk, f"plant_orphans exited early with status {helper.poll()}"
                line += chunk
    finally:
        helper.kill()  # SIGKILL, by its pid: no cleanup of any kind runs in the helper
        with trio.CancelScope(shield=True):
            await helper.wait()
            await helper.stdout.aclose()
    info = json.loads(line)
    return Planted(
        tuple(info["pids"]), tuple(Path(p) for p in info["records"]), Path(info["session_dir"])
    )


@contextlib.asynccontextmanager
async def killed_after(pgids: list[int]) -> AsyncIterator[list[int]]:
    """On the way out, SIGKILL any of `pgids` (groups the test planted) still alive: a failing
    test must not leave orphans for the next one. Adds nothing when the reaper did its job."""
    try:
        yield pgids
    finally:
        for pgid in pgids:
            if live_group_members(pgid):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pgid, signal.SIGKILL)


def unused_pid() -> int:
    """A pid no process can have: above the kernel's pid_max."""
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


def plant_stale_record(layout: StateLayout, token: str, instance: str = "dead-1") -> Path:
    """A record of a Chrome long gone (a pid above pid_max), with its browser dir and TMPDIR
    on disk under sessions/s1/ (owned by `instance`), as a crashed service leaves them.
    Returns the record path."""
    session = make_private_dir(layout.sessions_dir / "s1")
    write_session_owner(session, instance)
    browser_dir = make_private_dir(session / f"chrome-{token}")
    make_private_dir(browser_dir / "profile")
    (browser_dir / "profile" / "Cookies").write_text("x")
    tmp_dir = make_private_dir(layout.chrome_tmp_dir(token))
    record = PidRecord(
        pid=unused_pid(),
        pgid=unused_pid(),
        start_time=12345,
        boot_id=boot_id(),
        uid=os.getuid(),
        instance_id=instance,
        chrome_path="/usr/lib/chromium/chromium-headless-shell",
        browser_dir=str(browser_dir),
        tmp_dir=str(tmp_dir),
        session_dir=str(session),
        created_at=time.time(),
    )
    return write_record(layout.pids_dir, record)


async def _serve(
    state_dir: Path, instance_id: str, count: int, death_link: bool, chrome_path: str
) -> None:
    lock = InstanceLock.acquire(StateLayout(state_dir), instance_id)
    session_dir = make_private_dir(state_dir / "sessions" / instance_id)
    write_session_owner(session_dir, lock.instance_id)
    options = LaunchOptions(
        state_dir=state_dir,
        instance_id=lock.instance_id,
        session_dir=session_dir,
        chrome_path=chrome_path,
        death_link=death_link,
        launch_timeout=60.0,  # N at once on a small machine
    )
    chromes: list[ChromeProcess] = []
    async with trio.open_nursery() as nursery:

        async def launch_one() -> None:
            chromes.append(await launch_chrome(options, nursery))

        async with trio.open_nursery() as launches:
            for _ in range(count):
                launches.start_soon(launch_one)
        line = {
            "pids": [c.pid for c in chromes],
            "records": [str(c.record_path) for c in chromes],
            "session_dir": str(session_dir),
        }
        print(json.dumps(line), flush=True)
        await trio.sleep_forever()


if __name__ == "__main__":
    args = sys.argv[1:]
    trio.run(_serve, Path(args[0]), args[1], int(args[2]), args[3] == "1", args[4])
