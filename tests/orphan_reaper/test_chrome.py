"""reap_orphans against real Chromium: orphans planted by a helper process that launched them
with the death link off and was then SIGKILLed by its pid. Readiness is the helper's JSON line;
death is confirmed through /proc (`wait_group_gone`, real time). Decoys that must survive are in
test_orphan_reaper_decoys.py."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
import trio
import trio.testing

from chrome_launcher import live_group_members, read_stat
from orphan_reaper import SpareReason, reap_orphans
from tests.support.checks import FAKE_CHROME, leftover_files, wait_group_gone
from tests.support.plant_orphans import killed_after, plant

pytestmark = pytest.mark.chrome


def _ours(state_dir: Path) -> list[Path]:
    """The files the launcher and the helper made (not what Chrome writes inside them)."""
    found = []
    for path in leftover_files(state_dir):
        parts = path.relative_to(state_dir).parts
        if len(parts) <= (2 if parts[0] == "tmp" else 3):
            found.append(path)
    return sorted(found)


def _alive(pid: int) -> bool:
    stat = read_stat(pid)
    return stat is not None and stat.alive


async def test_orphans_are_killed_and_everything_of_their_instance_removed(
    state_dir: Path, headless_shell: str
) -> None:
    planted = await plant(state_dir, "dead-1", 2, headless_shell)
    async with killed_after(list(planted.pids)):
        for pid in planted.pids:
            assert len(live_group_members(pid)) >= 3, "the orphan is not running"
            stat = read_stat(pid)
            assert stat is not None
            assert stat.ppid != os.getpid()  # re-parented: nobody of ours will reap it

        report = await reap_orphans(state_dir)

        assert sorted(k.pid for k in report.killed) == sorted(planted.pids)
        assert all(k.gone and k.done and k.what == "recorded" for k in report.killed)
        assert all("sigterm" in k.summary for k in report.killed)
        for pid in planted.pids:
            assert live_group_members(pid) == []
        kinds = sorted(r.what for r in report.removed)
        assert kinds == sorted(["record", "browser_dir", "tmp_dir"] * 2 + ["session", "lock"])
        assert report.errors == ()
        assert report.exit_code == 0
        assert leftover_files(state_dir) == []

        again = await reap_orphans(state_dir)
        assert (again.killed, again.removed, again.errors) == ((), (), ())


async def test_dry_run_changes_nothing_and_a_real_run_then_cleans(
    state_dir: Path, headless_shell: str
) -> None:
    planted = await plant(state_dir, "dead-1", 1, headless_shell)
    async with killed_after(list(planted.pids)):
        files_before = _ours(state_dir)
        assert len(files_before) == 6  # record, lock, tmp dir, session, .instance, chrome-*

        dry = await reap_orphans(state_dir, dry_run=True)

        assert [(k.pid, k.done, k.gone) for k in dry.killed] == [(planted.pids[0], False, False)]
        assert all(_alive(pid) for pid in planted.pids)
        assert _ours(state_dir) == files_before
        assert all(r.done is False for r in dry.removed)
        assert dry.exit_code == 0

        real = await reap_orphans(state_dir)

        assert [(k.pid, k.gone) for k in real.killed] == [(planted.pids[0], True)]
        assert sorted((r.what, r.path) for r in real.removed) == sorted(
            (r.what, r.path) for r in dry.removed
        )
        assert leftover_files(state_dir) == []


async def test_a_dead_service_takes_its_chromes_along_and_the_reaper_only_tidies(
    state_dir: Path, headless_shell: str
) -> None:
    planted = await plant(state_dir, "svc-1", 2, headless_shell, death_link=True)
    async with killed_after(list(planted.pids)):
        for pid in planted.pids:
            assert await wait_group_gone(pid, within=5.0), "Chrome outlived its service"

        report = await reap_orphans(state_dir)

        assert report.killed == ()
        kinds = sorted(r.what for r in report.removed)
        assert kinds == sorted(["record", "browser_dir", "tmp_dir"] * 2 + ["session", "lock"])
        assert {r.reason for r in report.removed if r.what == "record"} == {"process gone"}
        assert leftover_files(state_dir) == []


async def test_a_group_whose_leader_died_is_killed_through_its_record(
    state_dir: Path, headless_shell: str
) -> None:
    [pid] = (await plant(state_dir, "dead-1", 1, headless_shell)).pids
    async with killed_after([pid]):
        # Stop the children so they cannot notice the leader's death and exit on their own:
        # the reaper must find them, prove them ours through the record, and kill them.
        children = [p for p in live_group_members(pid) if p != pid]
        assert children
        for child in children:
            os.kill(child, signal.SIGSTOP)
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5.0
        while _alive(pid):
            assert time.monotonic() < deadline, "the leader survived SIGKILL"
            await trio.sleep(0.01)  # no event for the death of a process we did not spawn

        report = await reap_orphans(state_dir)

        assert [(k.pid, k.what, k.gone) for k in report.killed] == [(pid, "group", True)], (
            report.to_json()
        )
        assert live_group_members(pid) == []
        assert leftover_files(state_dir) == []


async def test_twenty_orphans_are_all_killed(state_dir: Path, headless_shell: str) -> None:
    planted = await plant(state_dir, "dead-1", 20, headless_shell)
    async with killed_after(list(planted.pids)):
        assert len(planted.pids) == 20
        assert all(_alive(pid) for pid in planted.pids)
        started = time.monotonic()

        report = await reap_orphans(state_dir)

        elapsed = time.monotonic() - started
        print(f"reaped 20 orphans in {elapsed:.2f}s")
        assert sorted(k.pid for k in report.killed) == sorted(planted.pids)
        assert all(k.gone for k in report.killed)
        assert all(live_group_members(pid) == [] for pid in planted.pids)
        assert leftover_files(state_dir) == []


async def test_a_starting_service_never_touches_its_own_instance(
    state_dir: Path, headless_shell: str
) -> None:
    [pid] = (await plant(state_dir, "me-1", 1, headless_shell)).pids
    async with killed_after([pid]):
        report = await reap_orphans(state_dir, exclude_instance="me-1")

        assert report.killed == ()
        assert report.removed == ()
        assert {s.reason for s in report.spared if s.path} == {
            SpareReason.OWN_INSTANCE,
            SpareReason.IN_USE,
        }
        assert _alive(pid)

        report = await reap_orphans(state_dir)

        assert [k.pid for k in report.killed] == [pid]
        assert leftover_files(state_dir) == []


async def test_grace_is_how_long_sigterm_gets_before_sigkill(
    state_dir: Path, mock_clock: trio.testing.MockClock
) -> None:
    # A fake Chrome that ignores SIGTERM: only SIGKILL, after the grace period, ends it.
    stubborn = str(FAKE_CHROME / "stubborn.py")
    [pid] = (await plant(state_dir, "dead-1", 1, stubborn)).pids
    async with killed_after([pid]):
        mock_clock.autojump_threshold = 0  # from here on, waiting costs no real time
        virtual = trio.current_time()

        report = await reap_orphans(state_dir, grace=30.0)

        [kill] = report.killed
        assert kill.gone
        assert "SIGKILL needed" in kill.summary
        assert trio.current_time() - virtual >= 30.0
        assert live_group_members(pid) == []
        assert leftover_files(state_dir) == []
