"""reap_orphans on a real state root with no Chrome: bad and stale records, session dirs, tmp
dirs and locks. Stale records name a pid above the kernel's pid_max, so no process can ever
match them; ages are set with os.utime, never waited for. Every test leaves the state root
empty (the conftest checks)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
import trio

from chrome_launcher import InstanceLock, StateLayout, make_private_dir
from orphan_reaper import (
    SESSION_OWNER_FILE,
    ReapReport,
    SpareReason,
    read_session_owner,
    reap_orphans,
    write_session_owner,
)
from tests.support.checks import leftover_files
from tests.support.plant_orphans import plant_stale_record


def make_old(path: Path, age: float = 3600.0) -> None:
    then = time.time() - age
    os.utime(path, (then, then))


def removed(report: ReapReport) -> list[tuple[str, str]]:
    return sorted((r.what, r.path) for r in report.removed)


async def test_torn_garbage_and_unknown_field_records_are_removed_and_the_sweep_goes_on(
    state_dir: Path,
) -> None:
    layout = StateLayout(state_dir).create()
    good = plant_stale_record(layout, "aa11")
    data = json.loads(good.read_text())
    torn = layout.pids_dir / "1-2.json"
    torn.write_text(good.read_text()[:40])
    garbage = layout.pids_dir / "3-4.json"
    garbage.write_bytes(b"\xff\x00 not json at all")
    unknown = layout.pids_dir / "5-6.json"
    unknown.write_text(json.dumps({**data, "colour": "red"}))
    not_a_file = make_private_dir(layout.pids_dir / "7-8.json")

    report = await reap_orphans(state_dir)

    assert removed(report) == sorted(
        [
            ("bad_record", str(torn)),
            ("bad_record", str(garbage)),
            ("bad_record", str(unknown)),
            ("record", str(good)),
            ("browser_dir", str(layout.sessions_dir / "s1" / "chrome-aa11")),
            ("tmp_dir", str(layout.tmp_dir / "aa11")),
            ("session", str(layout.sessions_dir / "s1")),
        ]
    )
    reasons = {r.path: r.reason for r in report.removed}
    assert "unknown fields ['colour']" in reasons[str(unknown)]
    assert "unreadable record" in reasons[str(torn)]
    # A directory where a record should be cannot be unlinked: an error, not a crash.
    assert [(e.what, e.path) for e in report.errors] == [("bad_record", str(not_a_file))]
    assert report.exit_code == 0
    not_a_file.rmdir()
    assert leftover_files(state_dir) == []


async def test_a_missing_state_dir_is_an_empty_sweep_and_is_not_created(state_dir: Path) -> None:
    for dry_run in (True, False):
        report = await reap_orphans(state_dir, dry_run=dry_run)
        assert (report.killed, report.removed, report.errors) == ((), (), ())
        # Other Chromes on this machine may be reported, never as anything of ours.
        assert all(s.what == "process" for s in report.spared)
        assert all(str(state_dir) not in s.detail for s in report.spared)
        assert report.exit_code == 0
        assert not await trio.Path(state_dir).exists()


async def test_dry_run_changes_nothing_then_a_real_run_cleans(state_dir: Path) -> None:
    layout = StateLayout(state_dir).create()
    record = plant_stale_record(layout, "bb22")
    (layout.instances_dir / "dead-1.lock").write_text("123\n")
    before = sorted(leftover_files(state_dir))

    dry = await reap_orphans(state_dir, dry_run=True)

    assert sorted(leftover_files(state_dir)) == before
    assert dry.dry_run
    assert all(not r.done for r in dry.removed)
    assert ("record", str(record)) in removed(dry)
    assert ("lock", str(layout.instances_dir / "dead-1.lock")) in removed(dry)
    assert dry.summary_lines()[-1].endswith("(dry run: nothing changed)")

    real = await reap_orphans(state_dir)

    assert all(r.done for r in real.removed)
    assert removed(real) == removed(dry)
    assert leftover_files(state_dir) == []


async def test_session_dirs_go_only_when_their_owner_is_provably_dead(state_dir: Path) -> None:
    layout = StateLayout(state_dir).create()
    dead = make_private_dir(layout.sessions_dir / "dead")
    write_session_owner(dead, "dead-1")
    (dead / "notes.txt").write_text("x")
    anonymous = make_private_dir(layout.sessions_dir / "anonymous")
    lying = make_private_dir(layout.sessions_dir / "lying")
    (lying / SESSION_OWNER_FILE).write_text("not a valid id!\n")
    with InstanceLock.acquire(layout, "live-1") as lock:
        live = make_private_dir(layout.sessions_dir / "live")
        write_session_owner(live, lock.instance_id)

        report = await reap_orphans(state_dir)

        assert removed(report) == [("session", str(dead))]
        spared = sorted((s.what, s.reason, s.path) for s in report.spared if s.path)
        assert spared == sorted(
            [
                ("session", SpareReason.NO_OWNER_FILE, str(anonymous)),
                ("session", SpareReason.NO_OWNER_FILE, str(lying)),
                ("session", SpareReason.OWNER_ALIVE, str(live)),
                ("lock", SpareReason.OWNER_ALIVE, str(lock.path)),
            ]
        )
        assert live.exists()
    for path in (anonymous, lying, live):
        shutil.rmtree(path)
    assert leftover_files(state_dir) == []


async def test_tmp_dirs_go_when_no_record_names_them_for_ten_minutes(state_dir: Path) -> None:
    layout = StateLayout(state_dir).create()
    old = make_private_dir(layout.tmp_dir / "0ld0")
    (old / "scratch").write_text("x")
    make_old(old, 601.0)
    young = make_private_dir(layout.tmp_dir / "y0un9")
    make_old(young, 5.0)

    report = await reap_orphans(state_dir)

    assert removed(report) == [("tmp_dir", str(old))]
    [spare] = [s for s in report.spared if s.path]
    assert (spare.reason, spare.path) == (SpareReason.TOO_YOUNG, str(young))
    young.rmdir()


async def test_locks_of_dead_instances_go_and_live_and_own_ones_stay(state_dir: Path) -> None:
    layout = StateLayout(state_dir).create()
    dead = layout.lock_path("dead-1")
    dead.write_text("1\n")
    mine = layout.lock_path("me-1")
    mine.write_text("2\n")
    with InstanceLock.acquire(layout, "live-1") as lock:
        report = await reap_orphans(state_dir, exclude_instance="me-1")

        assert removed(report) == [("lock", str(dead))]
        assert sorted((s.reason, s.path) for s in report.spared if s.path) == [
            (SpareReason.OWN_INSTANCE, str(mine)),
            (SpareReason.OWNER_ALIVE, str(lock.path)),
        ]
    mine.unlink()


async def test_a_record_cannot_make_the_reaper_delete_outside_the_root(state_dir: Path) -> None:
    layout = StateLayout(state_dir).create()
    record_path = plant_stale_record(layout, "cc33")
    outside = make_private_dir(state_dir.parent / "outside" / "chrome-cc33")
    (outside / "precious").write_text("x")
    data = json.loads(record_path.read_text())
    data["browser_dir"] = str(outside)
    data["tmp_dir"] = str(layout.tmp_dir / ".." / ".." / "outside")
    record_path.write_text(json.dumps(data))

    report = await reap_orphans(state_dir)

    assert (outside / "precious").exists()
    assert sorted((s.reason, s.path) for s in report.spared if s.what == "dir") == sorted(
        [
            (SpareReason.UNSAFE_PATH, str(outside)),
            (SpareReason.UNSAFE_PATH, data["tmp_dir"]),
        ]
    )
    assert ("record", str(record_path)) in removed(report)
    # Its real dirs, no longer named: the dead owner's session goes; the young tmp dir stays.
    assert ("session", str(layout.sessions_dir / "s1")) in removed(report)
    assert [s.reason for s in report.spared if s.what == "tmp"] == [SpareReason.TOO_YOUNG]
    shutil.rmtree(layout.tmp_dir / "cc33")
    assert leftover_files(state_dir) == []


@pytest.mark.parametrize("grace", [-1.0, float("nan")])
async def test_a_negative_grace_is_refused(state_dir: Path, grace: float) -> None:
    with pytest.raises(ValueError, match="grace"):
        await reap_orphans(state_dir, grace=grace)


def test_the_session_owner_file_is_written_atomically_and_read_back(state_dir: Path) -> None:
    session = make_private_dir(state_dir / "sessions" / "s1")
    path = write_session_owner(session, "abc-1")
    assert path.read_text() == "abc-1\n"
    assert read_session_owner(session) == ("abc-1", None)
    assert sorted(p.name for p in session.iterdir()) == [SESSION_OWNER_FILE]
    with pytest.raises(ValueError, match="not a valid instance id"):
        write_session_owner(session, "../x")
    path.write_text("")
    owner, problem = read_session_owner(session)
    assert owner is None
    assert problem is not None
    assert "no valid instance id" in problem
    shutil.rmtree(state_dir)
