"""What tests share to check and build things: leftovers under a state root, live processes
that mention a test's tmp path, the end of a process group, test settings, the fake Chrome
scripts."""

from __future__ import annotations

import os
import time
from pathlib import Path

import trio

from browser_tool import Settings
from chrome_launcher import all_stats, live_group_members

LAYOUT_DIRS = {"pids", "instances", "sessions", "tmp", "profiles"}


def _mentions(pid: int, needle: bytes) -> bool:
    for name in ("cmdline", "environ"):
        try:
            if needle in Path(f"/proc/{pid}/{name}").read_bytes():
                return True
        except OSError:
            pass
    return False


def live_processes_mentioning(needle: str) -> list[int]:
    """Pids of live (not zombie) processes whose argv or environment contains `needle`."""
    raw = needle.encode()
    me = os.getpid()
    return [s.pid for s in all_stats() if s.alive and s.pid != me and _mentions(s.pid, raw)]


def leftover_files(state_dir: Path) -> list[Path]:
    """Everything under `state_dir` except its empty layout dirs."""
    if not state_dir.exists():
        return []
    found = []
    for path in state_dir.rglob("*"):
        rel = path.relative_to(state_dir)
        if path.is_dir() and len(rel.parts) == 1 and rel.parts[0] in LAYOUT_DIRS:
            continue
        found.append(path)
    return found


async def wait_group_gone(pgid: int, *, within: float) -> bool:
    """Wait up to `within` real seconds for process group `pgid` to have no live member.

    The kernel gives no event for the death of a process we did not spawn, so this polls /proc;
    it uses the real clock because death is real-time even under a fake trio clock. One empty
    scan is not proof: a member that forks and dies between the listing of /proc and the read
    of its stat leaves a child the scan never saw. So the group is gone when the kernel knows
    no process in it (killpg 0), or when two scans a poll apart both find no live member (the
    second lists any such child; zombies nobody reaps keep killpg 0 answering).
    """
    deadline = time.monotonic() + within
    empty_scans = 0
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass  # a member of another uid: the scan decides
        empty_scans = 0 if live_group_members(pgid) else empty_scans + 1
        if empty_scans >= 2:
            return True
        if time.monotonic() > deadline:
            return False
        await trio.sleep(0.02)


FAKE_CHROME = Path(__file__).parent / "fake_chrome"


def make_settings(state_dir: Path, **changes: object) -> Settings:
    """Settings for a test: its own state root; everything else default unless changed."""
    return Settings(state_dir=state_dir, **changes)  # type: ignore[arg-type]
