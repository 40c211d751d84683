"""Shared fixtures. The autouse `state_dir` fails any test that leaves a live process
it started (found by its test-unique tmp path in the process's argv or environment, which every
Chrome and helper we start carries) or a file under its state root."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import trio

from browser_tool import BrowserSessionManager, Settings, open_session_manager
from chrome_launcher import CHROMIUM, HEADLESS_SHELL, live_group_members
from chrome_launcher._procfs import all_stats, cmdline
from fixtures_site import FixtureServer, running_fixtures

LAYOUT_DIRS = {"pids", "instances", "sessions", "tmp"}


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


@pytest.fixture(autouse=True)
def state_dir() -> Iterator[Path]:
    """A state root of this test's own, so nothing here can touch another's processes.

    Short on purpose (/tmp/bt-XXXXXXXX): real deployments have short roots too, and the check
    after the test finds this test's processes by this path in their argv or environment.
    After the test: no live process may mention it and no file may be left under it.
    """
    root = Path(tempfile.mkdtemp(prefix="bt-", dir="/tmp"))
    try:
        yield root / "state"
        _check_nothing_left(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _check_nothing_left(root: Path) -> None:
    leaked = live_processes_mentioning(str(root))
    for pid in leaked:
        # Clean up so one leak does not cascade into other tests; then fail this one.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL) if os.getpgid(pid) == pid else os.kill(
                pid, signal.SIGKILL
            )
    details = [f"{pid}: {' '.join((cmdline(pid) or ['?'])[:3])}" for pid in leaked]
    assert not leaked, f"test left live processes behind: {details}"
    files = leftover_files(root / "state")
    shown = [str(f) for f in files[:10]] + (
        [f"... and {len(files) - 10} more"] if len(files) > 10 else []
    )
    assert not files, f"test left files under its state root: {shown}"


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


@pytest.fixture(params=[HEADLESS_SHELL, CHROMIUM], ids=["headless-shell", "chromium"])
def chrome_path(request: pytest.FixtureRequest) -> str:
    """Each real Chrome binary in turn. Missing Chrome fails the test: it never skips."""
    path = str(request.param)
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"{path} is missing: run `make test` as root, or apt-get install "
            "chromium-headless-shell chromium"
        )
    return path


@pytest.fixture
def headless_shell() -> str:
    """Debian's headless shell, the default binary. Missing fails the test; it never skips."""
    if not os.access(HEADLESS_SHELL, os.X_OK):
        pytest.fail(f"{HEADLESS_SHELL} is missing: apt-get install chromium-headless-shell")
    return HEADLESS_SHELL


FAKE_CHROME = Path(__file__).parent / "fake_chrome"


@pytest.fixture(scope="session")
def site() -> Iterator[FixtureServer]:
    """The local fixture pages (127.0.0.1, port 0), shared by the whole run."""
    with running_fixtures() as server:
        yield server


def make_settings(state_dir: Path, **changes: object) -> Settings:
    """Settings for a test: its own state root; everything else default unless changed."""
    return Settings(state_dir=state_dir, **changes)  # type: ignore[arg-type]


@pytest.fixture
async def manager(state_dir: Path, headless_shell: str) -> AsyncIterator[BrowserSessionManager]:
    """A session manager on the test's state root, closed (every Chrome killed) after the test."""
    async with open_session_manager(make_settings(state_dir)) as m:
        yield m
