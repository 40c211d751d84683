"""chrome_launcher with real processes: fake Chrome scripts for the failure paths (they are
deterministic), real Chromium for launch and close, and a helper process killed with SIGKILL for
the death link. Every test checks that the group, the profile dir and the PID record are gone."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
import trio
import trio.testing

from chrome_launcher import (
    ChromeProcess,
    KillTarget,
    LaunchError,
    LaunchOptions,
    LaunchTimeoutError,
    kill_ladder,
    live_group_members,
    read_records,
)
from chrome_launcher._procfs import read_stat
from tests.support.checks import FAKE_CHROME, wait_group_gone

pytestmark = pytest.mark.chrome

HELPER = Path(__file__).parents[1] / "support" / "launch_and_wait.py"


def _options(state_dir: Path, chrome_path: str, **changes: object) -> LaunchOptions:
    return LaunchOptions(
        state_dir=state_dir,
        instance_id="test-1",
        session_dir=state_dir / "sessions" / "s1",
        chrome_path=chrome_path,
        **changes,  # type: ignore[arg-type]
    )


def _assert_gone(chrome: ChromeProcess) -> None:
    assert live_group_members(chrome.pgid) == []
    assert not chrome.browser_dir.exists()
    assert not chrome.record_path.exists()


async def test_real_chrome_launches_in_its_own_group_with_a_record(
    state_dir: Path, chrome_path: str
) -> None:
    async with trio.open_nursery() as nursery:
        chrome = await launch_chrome_for_test(state_dir, chrome_path, nursery)
        try:
            stat = read_stat(chrome.pid)
            assert stat is not None
            assert stat.pgid == chrome.pid
            assert os.getsid(chrome.pid) == chrome.pid
            assert chrome.ws_url
            assert chrome.ws_url.startswith("ws://127.0.0.1:")
            [entry] = read_records(state_dir / "pids")
            assert entry.record == chrome.record
            assert entry.record.start_time == stat.start_time
            assert oct(chrome.profile_dir.stat().st_mode & 0o777) == "0o700"
            assert len(live_group_members(chrome.pgid)) >= 3
        finally:
            report = await chrome.aclose()
        assert report.survivors == 0
        assert report.clean, report
        _assert_gone(chrome)
        assert await chrome.aclose() is report  # a second close is a no-op
    (state_dir / "sessions" / "s1").rmdir()


async def launch_chrome_for_test(
    state_dir: Path, chrome_path: str, nursery: trio.Nursery, **changes: object
) -> ChromeProcess:
    from chrome_launcher import launch_chrome

    return await launch_chrome(_options(state_dir, chrome_path, **changes), nursery)


async def test_chrome_that_exits_at_once_raises_with_its_stderr(state_dir: Path) -> None:
    started = time.monotonic()
    async with trio.open_nursery() as nursery:
        with pytest.raises(LaunchError) as info:
            await launch_chrome_for_test(
                state_dir, str(FAKE_CHROME / "exits_with_error.py"), nursery
            )
    assert time.monotonic() - started < 1.0
    assert "cannot open shared object libnss3.so" in str(info.value)
    assert info.value.returncode == 1
    assert "libnss3" in info.value.stderr_tail
    assert list((state_dir / "pids").iterdir()) == []
    assert list((state_dir / "sessions" / "s1").iterdir()) == []
    (state_dir / "sessions" / "s1").rmdir()


async def test_chrome_that_never_announces_times_out_and_is_killed(
    state_dir: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with trio.open_nursery() as nursery:
        start = trio.current_time()
        with pytest.raises(LaunchTimeoutError) as info:
            await launch_chrome_for_test(
                state_dir, str(FAKE_CHROME / "never_announces.py"), nursery, launch_timeout=20.0
            )
        # The launch wait is ours: exactly the timeout, then the ladder (whose polite and SIGTERM
        # steps are on the same virtual clock).
        assert trio.current_time() - start >= 20.0
    assert "20s" in str(info.value)
    assert list((state_dir / "pids").iterdir()) == []
    (state_dir / "sessions" / "s1").rmdir()


async def test_ladder_kills_a_stubborn_chrome_and_its_grandchild(state_dir: Path) -> None:
    async with trio.open_nursery() as nursery:
        chrome = await launch_chrome_for_test(state_dir, str(FAKE_CHROME / "stubborn.py"), nursery)
        tail = chrome.stderr_tail()
        grandchild = int(tail.split("grandchild=")[1].split()[0])
        assert read_stat(grandchild) is not None
        report = await chrome.aclose()
    assert report.sigterm_sent
    assert report.sigkill_needed
    assert report.steps[:2] == ("sigterm", "sigkill")
    assert report.exit_status == -signal.SIGKILL
    assert report.survivors == 0
    stat = read_stat(grandchild)
    assert stat is None or not stat.alive
    _assert_gone(chrome)
    (state_dir / "sessions" / "s1").rmdir()


async def test_cancelled_launch_still_kills_the_group(state_dir: Path) -> None:
    async with trio.open_nursery() as nursery:
        with trio.move_on_after(0.3):
            await launch_chrome_for_test(
                state_dir, str(FAKE_CHROME / "never_announces.py"), nursery
            )
    assert list((state_dir / "pids").iterdir()) == []
    (state_dir / "sessions" / "s1").rmdir()


@pytest.mark.parametrize("death_link", [True], ids=["death-link"])
async def test_sigkill_of_the_owner_takes_chrome_down(
    state_dir: Path, headless_shell: str, death_link: bool
) -> None:
    helper = await trio.lowlevel.open_process(
        [
            sys.executable,
            str(HELPER),
            str(state_dir),
            "owner-1",
            "1" if death_link else "0",
            headless_shell,
        ],
        stdout=-1,
    )
    assert helper.stdout is not None
    line = b""
    while not line.endswith(b"\n"):
        chunk = await helper.stdout.receive_some()
        assert chunk, "helper exited before launching Chrome"
        line += chunk
    info = json.loads(line)
    pgid = int(info["pid"])
    assert live_group_members(pgid)
    helper.kill()
    await helper.wait()
    await helper.stdout.aclose()
    assert await wait_group_gone(pgid, within=5.0), "Chrome outlived its owner (death link)"
    # The owner died without cleaning up: its record, dirs and lock stay for the reaper, whose
    # job this is; here the test plays the reaper with the same ladder.
    [entry] = read_records(state_dir / "pids")
    assert entry.record is not None
    assert str(entry.path) == info["record"]
    record = entry.record
    report = await kill_ladder(
        KillTarget(
            record.pid,
            record.pgid,
            record.start_time,
            is_child=False,
            dirs=(Path(record.browser_dir), Path(record.tmp_dir), Path(record.session_dir)),
            record_path=entry.path,
        )
    )
    assert report.clean
    assert not report.sigkill_needed
    (state_dir / "instances" / "owner-1.lock").unlink()
