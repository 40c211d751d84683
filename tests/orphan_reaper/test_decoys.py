"""Decoys the reaper must never touch, each next to what makes it look like an orphan: a
record naming a live stranger, real Chromes with a DevTools port that are not provably ours
(no marker, a profile outside the root, a live owner, another uid). Every test asserts the
decoy was seen and judged (a spare entry with its pid and reason), that it is alive after the
sweep, and then kills it itself, by its pid or pgid. Readiness of a decoy Chrome is its
"DevTools listening" line."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
import trio

from chrome_launcher import (
    MARKER_SWITCH,
    InstanceLock,
    LaunchOptions,
    PidRecord,
    StateLayout,
    boot_id,
    launch_chrome,
    make_private_dir,
    read_stat,
    write_record,
)
from orphan_reaper import ReapReport, SpareReason, reap_orphans, write_session_owner
from tests.support.checks import leftover_files, wait_group_gone

pytestmark = pytest.mark.chrome


def spared(report: ReapReport, pid: int) -> list[SpareReason]:
    return [s.reason for s in report.spared if s.pid == pid]


def assert_alive(pid: int, start_time: int) -> None:
    stat = read_stat(pid)
    assert stat is not None
    assert stat.alive
    assert stat.start_time == start_time


def start_time_of(pid: int) -> int:
    stat = read_stat(pid)
    assert stat is not None
    return stat.start_time


@contextlib.asynccontextmanager
async def decoy_chrome(
    argv: Sequence[str], env: dict[str, str] | None = None
) -> AsyncIterator[trio.Process]:
    """A Chrome we start ourselves, in its own group, killed by its pgid on the way out."""
    proc = await trio.lowlevel.open_process(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    assert proc.stderr is not None
    try:
        seen = b""
        with trio.fail_after(30):
            while b"DevTools listening on" not in seen:
                chunk = await proc.stderr.receive_some()
                assert chunk, f"decoy Chrome exited: {seen.decode(errors='replace')[-2000:]}"
                seen += chunk
        yield proc
    finally:
        with trio.CancelScope(shield=True):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            await proc.stderr.aclose()
            assert await wait_group_gone(proc.pid, within=5.0)


async def test_a_record_naming_an_unrelated_live_process_spares_it(state_dir: Path) -> None:
    layout = StateLayout(state_dir).create()
    # Its own group, and a record start time *before* its real one: the group rule
    # (pgid == record's, started no earlier) would match it if the reaper trusted the pid.
    sleeper = await trio.lowlevel.open_process(["sleep", "600"], start_new_session=True)
    try:
        real_start = start_time_of(sleeper.pid)
        session = make_private_dir(layout.sessions_dir / "s1")
        write_session_owner(session, "dead-1")
        browser_dir = make_private_dir(session / "chrome-5eed")
        record_path = write_record(
            layout.pids_dir,
            PidRecord(
                pid=sleeper.pid,
                pgid=sleeper.pid,
                start_time=real_start - 1,
                boot_id=boot_id(),
                uid=os.getuid(),
                instance_id="dead-1",
                chrome_path="/usr/lib/chromium/chromium-headless-shell",
                browser_dir=str(browser_dir),
                tmp_dir=str(make_private_dir(layout.chrome_tmp_dir("5eed"))),
                session_dir=str(session),
                created_at=time.time(),
            ),
        )

        report = await reap_orphans(state_dir)

        assert spared(report, sleeper.pid) == [SpareReason.START_TIME_MISMATCH]
        assert report.killed == ()
        assert_alive(sleeper.pid, real_start)
        reasons = {r.path: r.reason for r in report.removed}
        assert reasons[str(record_path)] == "its pid now names another process"
        assert leftover_files(state_dir) == []
    finally:
        sleeper.kill()
        await sleeper.wait()


@pytest.mark.parametrize(
    ("marker", "reason"),
    [(False, SpareReason.NO_MARKER), (True, SpareReason.FOREIGN_PROFILE)],
    ids=["no-marker", "marked-foreign-profile"],
)
async def test_a_chrome_whose_profile_is_not_under_the_root_is_spared(
    state_dir: Path, headless_shell: str, marker: bool, reason: SpareReason
) -> None:
    StateLayout(state_dir).create()
    foreign = make_private_dir(state_dir.parent / "foreign" / "chrome-f0re" / "profile")
    argv = [headless_shell, "--no-sandbox", "--remote-debugging-port=0"]
    argv += [f"--user-data-dir={foreign}", "--disable-gpu", "about:blank"]
    if marker:
        argv.append(f"{MARKER_SWITCH}=dead-1")  # a dead instance: only the profile protects it
    async with decoy_chrome(argv) as chrome:
        start = start_time_of(chrome.pid)

        report = await reap_orphans(state_dir)

        assert spared(report, chrome.pid) == [reason]
        assert report.killed == ()
        assert_alive(chrome.pid, start)


async def test_a_chrome_whose_instance_holds_its_lock_is_spared(
    state_dir: Path, headless_shell: str
) -> None:
    layout = StateLayout(state_dir).create()
    session = make_private_dir(layout.sessions_dir / "live")
    with InstanceLock.acquire(layout, "live-1") as lock:
        write_session_owner(session, lock.instance_id)
        async with trio.open_nursery() as nursery:
            chrome = await launch_chrome(
                LaunchOptions(
                    state_dir=state_dir,
                    instance_id=lock.instance_id,
                    session_dir=session,
                    chrome_path=headless_shell,
                    death_link=False,  # nothing but the lock says it is alive
                ),
                nursery,
            )
            try:
                report = await reap_orphans(state_dir)

                assert spared(report, chrome.pid) == [SpareReason.OWNER_ALIVE]
                assert sorted((s.what, s.reason) for s in report.spared if s.path) == [
                    ("lock", SpareReason.OWNER_ALIVE),
                    ("record", SpareReason.OWNER_ALIVE),
                    ("session", SpareReason.OWNER_ALIVE),
                    ("tmp", SpareReason.IN_USE),  # its TMPDIR, named by the kept record
                ]
                assert (report.killed, report.removed) == ((), ())
                assert_alive(chrome.pid, chrome.record.start_time)
                assert chrome.record_path.exists()
                assert chrome.profile_dir.exists()
            finally:
                await chrome.aclose()
    shutil.rmtree(session)


def _can_run_as_nobody() -> tuple[int, int] | str:
    """(uid, gid) of nobody when this test can start processes as nobody, else why not."""
    if os.geteuid() != 0:
        return "not running as root: cannot start a process of another uid"
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return "setpriv is not installed (util-linux)"
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        return "no user 'nobody'"
    ids = [f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]
    probe = subprocess.run([setpriv, *ids, "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return f"setpriv cannot run as nobody: {probe.stderr.decode(errors='replace')}"
    return nobody.pw_uid, nobody.pw_gid


async def test_a_chrome_of_another_uid_is_spared(state_dir: Path, headless_shell: str) -> None:
    ids = _can_run_as_nobody()
    # A chrome-marked test never skips: where it cannot run (not root, no setpriv), it fails and
    # says why, so a run that did not check the other-uid rule cannot look green.
    if isinstance(ids, str):
        pytest.fail(f"cannot run the other-uid decoy: {ids}")
    uid, gid = ids
    layout = StateLayout(state_dir).create()
    # Everything about it says "ours" except its uid: marker of a dead instance, a chrome-*
    # profile under our root. nobody needs to traverse the 0700 root to use that profile.
    for path in (state_dir.parent, state_dir, layout.sessions_dir):
        os.chmod(path, 0o711)
    session = make_private_dir(layout.sessions_dir / "other")
    write_session_owner(session, "dead-1")
    home = make_private_dir(session / "home")
    profile = make_private_dir(session / "chrome-0ther" / "profile")
    for path in (session, home, profile.parent, profile):
        os.chown(path, uid, gid)
    argv = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", headless_shell]
    argv += ["--no-sandbox", "--remote-debugging-port=0", f"--user-data-dir={profile}"]
    argv += ["--disable-gpu", "--disable-dev-shm-usage", f"{MARKER_SWITCH}=dead-1", "about:blank"]
    env = {"HOME": str(home), "TMPDIR": str(home), "PATH": os.environ.get("PATH", "/usr/bin")}
    async with decoy_chrome(argv, env) as chrome:
        stat = read_stat(chrome.pid)
        assert stat is not None
        assert stat.pgid == chrome.pid  # setpriv exec'd Chrome: the decoy leads its group

        report = await reap_orphans(state_dir)

        assert spared(report, chrome.pid) == [SpareReason.OTHER_UID]
        assert report.killed == ()
        assert_alive(chrome.pid, stat.start_time)
        assert profile.exists()
        # Its session names a dead owner but a spared process uses it: it stays.
        assert [s.reason for s in report.spared if s.path == str(session)] == [SpareReason.IN_USE]
    shutil.rmtree(session)
    for path in (state_dir.parent, state_dir, layout.sessions_dir):
        os.chmod(path, 0o700)
