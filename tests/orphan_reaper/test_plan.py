"""The reaper rule as a pure function: synthetic snapshots (processes, records, session dirs,
tmp dirs, locks) and a liveness oracle in, a plan out. No process, no file, no clock; every case
of DESIGN.md §3's rule and each spare reason is checked here, fast. Real processes are in
test_orphan_reaper_chrome.py."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import orphan_reaper
from chrome_launcher import MARKER_SWITCH, PidRecord, RecordEntry
from orphan_reaper import (
    KillEntry,
    LockInfo,
    Plan,
    ProcInfo,
    ReapReport,
    RemoveEntry,
    SessionDirInfo,
    Snapshot,
    SpareEntry,
    SpareReason,
    plan_sweep,
)

ROOT = "/st"
UID = 1000
BOOT = "boot-1"
CHROME = "/usr/lib/chromium/chromium-headless-shell"


def profile_of(token: str, session: str = "s1") -> str:
    return f"{ROOT}/sessions/{session}/chrome-{token}/profile"


def chrome(
    pid: int,
    *,
    start: int = 100,
    uid: int = UID,
    instance: str | None = "dead-1",
    profile: str | None = None,
    pgid: int | None = None,
) -> ProcInfo:
    argv = [CHROME, "--remote-debugging-port=0", f"--user-data-dir={profile or profile_of('t')}"]
    if instance is not None:
        argv.append(f"{MARKER_SWITCH}={instance}")
    return ProcInfo(pid, pgid or pid, start, True, uid, (*argv, "about:blank"))


def child(pid: int, pgid: int, *, start: int = 101, binary: str = CHROME) -> ProcInfo:
    # As Chrome shows its children in /proc: the whole command line rewritten into one string.
    argv = (f"{binary} --type=renderer --remote-debugging-port=0 --no-sandbox",)
    return ProcInfo(pid, pgid, start, True, UID, argv)


def stranger(pid: int, *, start: int = 999, pgid: int = 1) -> ProcInfo:
    return ProcInfo(pid, pgid, start, True, UID, ("sleep", "600"))


def record(
    pid: int,
    *,
    start: int = 100,
    instance: str = "dead-1",
    boot: str = BOOT,
    uid: int = UID,
    token: str = "t",
    browser_dir: str | None = None,
    tmp_dir: str | None = None,
    pgid: int | None = None,
) -> RecordEntry:
    rec = PidRecord(
        pid=pid,
        pgid=pgid or pid,
        start_time=start,
        boot_id=boot,
        uid=uid,
        instance_id=instance,
        chrome_path=CHROME,
        browser_dir=browser_dir or f"{ROOT}/sessions/s1/chrome-{token}",
        tmp_dir=tmp_dir or f"{ROOT}/tmp/{token}",
        session_dir=f"{ROOT}/sessions/s1",
        created_at=0.0,
    )
    return RecordEntry(Path(ROOT, "pids", rec.file_name), rec)


def snapshot(
    processes: Sequence[ProcInfo] = (),
    records: Sequence[RecordEntry] = (),
    *,
    sessions: Sequence[SessionDirInfo] = (),
    locks: Sequence[LockInfo] = (),
    tmp_dirs: Sequence[tuple[str, float]] = (),
    ages: dict[Path, float] | None = None,
) -> Snapshot:
    all_ages = dict(ages or {})
    all_ages.update({Path(p): age for p, age in tmp_dirs})
    return Snapshot(
        root=Path(ROOT),
        root_forms=(ROOT,),
        uid=UID,
        boot_id=BOOT,
        system_tmp="/tmp",
        processes=tuple(processes),
        records=tuple(records),
        sessions=tuple(sessions),
        locks=tuple(locks),
        tmp_dirs=tuple(Path(p) for p, _ in tmp_dirs),
        ages=all_ages,
    )


def alive(*ids: str) -> Callable[[str], bool]:
    return lambda instance_id: instance_id in ids


def plan(snap: Snapshot, *live: str, exclude: str | None = None) -> Plan:
    return plan_sweep(snap, is_alive=alive(*live), exclude_instance=exclude)


def reasons(p: Plan) -> list[tuple[str, SpareReason, int | None]]:
    return [(s.what, s.reason, s.pid) for s in p.spared]


def cleaned(p: Plan) -> list[tuple[str, list[str]]]:
    return [(c.what, [str(x) for _, x in (*c.dirs, *c.files)]) for c in p.cleanups]


# -- processes and records ----------------------------------------------------------------


def test_a_recorded_orphan_of_a_dead_instance_is_killed_with_its_dirs_and_record() -> None:
    entry = record(10)
    p = plan(snapshot([chrome(10), child(11, 10), child(12, 10)], [entry]))
    [kill] = p.kills
    assert (kill.pid, kill.pgid, kill.start_time, kill.what) == (10, 10, 100, "recorded")
    assert kill.record_path == entry.path
    assert [(k, str(d)) for k, d in kill.dirs] == [
        ("browser_dir", f"{ROOT}/sessions/s1/chrome-t"),
        ("tmp_dir", f"{ROOT}/tmp/t"),
    ]
    assert p.spared == ()
    assert p.cleanups == ()


def test_a_live_owner_spares_its_record_and_process_once() -> None:
    p = plan(snapshot([chrome(10, instance="live-1")], [record(10, instance="live-1")]), "live-1")
    assert p.kills == ()
    assert p.cleanups == ()
    assert reasons(p) == [("record", SpareReason.OWNER_ALIVE, 10)]


def test_a_live_owners_record_whose_process_is_gone_is_its_own_business() -> None:
    p = plan(snapshot([], [record(10, instance="live-1")]), "live-1")
    assert p.cleanups == ()
    assert reasons(p) == [("record", SpareReason.OWNER_ALIVE, 10)]


def test_the_sweeping_instance_never_touches_its_own() -> None:
    p = plan(
        snapshot([chrome(10), chrome(20, profile=profile_of("u"))], [record(10)]), exclude="dead-1"
    )
    assert p.kills == ()
    assert reasons(p) == [
        ("record", SpareReason.OWN_INSTANCE, 10),
        ("process", SpareReason.OWN_INSTANCE, 20),
    ]


@pytest.mark.parametrize(
    ("proc", "reason"),
    [
        (chrome(10, uid=0), SpareReason.OTHER_UID),
        (chrome(10, instance=None), SpareReason.NO_MARKER),
        (chrome(10, profile="/elsewhere/chrome-t/profile"), SpareReason.FOREIGN_PROFILE),
        (chrome(10, profile=f"{ROOT}/../elsewhere/chrome-t/profile"), SpareReason.FOREIGN_PROFILE),
        (chrome(10, profile=f"{ROOT}"), SpareReason.FOREIGN_PROFILE),
        (chrome(10, instance="live-1"), SpareReason.OWNER_ALIVE),
        (chrome(10, pgid=3), SpareReason.PGID_MISMATCH),
    ],
    ids=["other-uid", "no-marker", "foreign", "dotdot", "root-itself", "owner-alive", "not-leader"],
)
def test_an_unrecorded_browser_that_is_not_provably_ours_is_spared(
    proc: ProcInfo, reason: SpareReason
) -> None:
    p = plan(snapshot([proc]), "live-1")
    assert p.kills == ()
    assert reasons(p) == [("process", reason, 10)]


@pytest.mark.parametrize(
    ("proc", "reason"),
    [
        (chrome(10, uid=0), SpareReason.OTHER_UID),
        (chrome(10, instance=None), SpareReason.NO_MARKER),
        (chrome(10, instance="dead-2"), SpareReason.MARKER_MISMATCH),
        (chrome(10, profile="/elsewhere/chrome-t/profile"), SpareReason.FOREIGN_PROFILE),
        (chrome(10, pgid=3), SpareReason.PGID_MISMATCH),
    ],
    ids=["other-uid", "no-marker", "other-marker", "foreign", "not-leader"],
)
def test_a_recorded_process_that_is_not_provably_ours_is_spared_and_its_record_kept(
    proc: ProcInfo, reason: SpareReason
) -> None:
    p = plan(snapshot([proc], [record(10)]))
    assert p.kills == ()
    assert p.cleanups == ()  # the record stays: we cannot prove its process is gone
    assert reasons(p) == [("process", reason, 10)]


def test_a_record_for_another_uid_is_kept_and_its_pid_judged_on_its_own() -> None:
    p = plan(snapshot([chrome(10, uid=0)], [record(10, uid=0)]))
    assert (p.kills, p.cleanups) == ((), ())
    assert reasons(p) == [
        ("record", SpareReason.OTHER_UID, 10),
        ("process", SpareReason.OTHER_UID, 10),
    ]
    p = plan(snapshot([chrome(10)], [record(10, uid=0)]))
    assert [(k.what, k.record_path) for k in p.kills] == [("unrecorded", None)]


def test_a_reused_pid_is_spared_and_the_record_dropped() -> None:
    entry = record(10, start=50)
    p = plan(snapshot([stranger(10, start=999, pgid=10)], [entry]))
    assert p.kills == ()
    assert reasons(p) == [("process", SpareReason.START_TIME_MISMATCH, 10)]
    assert cleaned(p) == [
        ("stale_record", [f"{ROOT}/sessions/s1/chrome-t", f"{ROOT}/tmp/t", str(entry.path)])
    ]
    assert p.cleanups[0].reason == "its pid now names another process"


def test_a_reused_pid_that_is_one_of_our_orphans_is_killed_through_its_marker() -> None:
    p = plan(snapshot([chrome(10, start=999, profile=profile_of("u"))], [record(10, start=50)]))
    [kill] = p.kills
    assert (kill.what, kill.start_time, kill.record_path) == ("unrecorded", 999, None)
    assert p.spared == ()  # no contradictory "start_time_mismatch" for the pid we kill
    assert [c.what for c in p.cleanups] == ["stale_record"]


def test_a_record_from_another_boot_is_stale_even_when_pid_and_start_match() -> None:
    p = plan(snapshot([stranger(10, start=100, pgid=10)], [record(10, boot="boot-0")]))
    assert p.kills == ()
    assert [c.what for c in p.cleanups] == ["stale_record"]


def test_a_record_whose_process_is_gone_is_removed_with_its_dirs() -> None:
    entry = record(10)
    p = plan(snapshot([], [entry]))
    assert cleaned(p) == [
        ("stale_record", [f"{ROOT}/sessions/s1/chrome-t", f"{ROOT}/tmp/t", str(entry.path)])
    ]
    assert p.cleanups[0].reason == "process gone"


def test_a_leaderless_group_of_its_chrome_children_is_killed_through_the_record() -> None:
    entry = record(10)
    p = plan(snapshot([child(11, 10), child(12, 10, start=150)], [entry]))
    [kill] = p.kills
    assert (kill.what, kill.pid, kill.pgid, kill.record_path) == ("group", 10, 10, entry.path)
    assert p.spared == ()


def test_a_zombie_leader_with_live_children_is_killed_through_the_record() -> None:
    zombie = ProcInfo(10, 10, 100, False, UID, None)
    split_argv = ProcInfo(12, 10, 101, True, UID, (CHROME, "--type=zygote"))
    p = plan(snapshot([zombie, child(11, 10), split_argv], [record(10)]))
    assert [k.what for k in p.kills] == ["group"]


@pytest.mark.parametrize(
    "member",
    [
        ProcInfo(11, 10, 101, True, UID, ("sleep", "600")),
        child(11, 10, binary="/usr/bin/other"),
        ProcInfo(11, 10, 101, True, 0, (CHROME, "--type=renderer")),
        ProcInfo(11, 10, 101, True, UID, (CHROME, "--no-type")),
    ],
    ids=["not-chrome", "other-binary", "other-uid", "not-a-child"],
)
def test_a_leaderless_group_that_is_not_provably_ours_is_spared(member: ProcInfo) -> None:
    p = plan(snapshot([child(12, 10), member], [record(10)]))
    assert p.kills == ()
    assert p.cleanups == ()  # the record stays
    assert [(s.what, s.reason, s.pgid) for s in p.spared] == [
        ("group", SpareReason.UNPROVEN_GROUP, 10)
    ]


DELETED = CHROME + " (deleted)"


@pytest.mark.parametrize(
    ("member", "proven"),
    [
        # A fork of the browser stopped before it became a child: the browser's command line.
        (chrome(11, pgid=10, start=101), True),
        (chrome(11, pgid=10, start=101, instance="other-1"), False),
        (chrome(11, pgid=10, start=101, instance=None), False),
        # A child rewriting its command line: /proc/<pid>/cmdline is empty for a moment.
        (ProcInfo(11, 10, 101, True, UID, ("",), CHROME), True),
        (ProcInfo(11, 10, 101, True, UID, (), CHROME), True),
        (ProcInfo(11, 10, 101, True, UID, ("",), "/usr/bin/python3"), False),
        (ProcInfo(11, 10, 101, True, UID, ("",), None), False),
        # After a package upgrade replaced the binary under a running child.
        (ProcInfo(11, 10, 101, True, UID, ("/proc/self/exe --type=utility",), DELETED), True),
    ],
    ids=["fork", "fork-other-marker", "fork-no-marker", "empty-argv", "no-argv",
         "empty-argv-other-exe", "empty-argv-no-exe", "deleted-binary"],
)  # fmt: skip
def test_members_caught_between_fork_and_exec_are_proven_by_binary_and_marker(
    member: ProcInfo, proven: bool
) -> None:
    p = plan(snapshot([child(12, 10), member], [record(10)]))
    assert [k.what for k in p.kills] == (["group"] if proven else []), p.spared


def test_members_older_than_the_record_are_not_its_group() -> None:
    p = plan(snapshot([ProcInfo(11, 10, 50, True, UID, ("sleep",))], [record(10)]))
    assert p.kills == ()
    assert [c.what for c in p.cleanups] == ["stale_record"]


def test_a_group_id_that_names_a_newer_leader_means_the_recorded_group_is_gone() -> None:
    newer = chrome(10, start=500, instance="live-1")
    p = plan(snapshot([newer, child(11, 10, start=501)], [record(10)]), "live-1")
    assert p.kills == ()
    assert [c.what for c in p.cleanups] == ["stale_record"]
    assert ("process", SpareReason.OWNER_ALIVE, 10) in reasons(p)


def test_an_unrecorded_marked_orphan_is_killed_with_the_dirs_its_profile_implies() -> None:
    p = plan(snapshot([chrome(10, profile=profile_of("abc1"))]))
    [kill] = p.kills
    assert (kill.what, kill.record_path, kill.instance_id) == ("unrecorded", None, "dead-1")
    assert [str(d) for _, d in kill.dirs] == [
        f"{ROOT}/sessions/s1/chrome-abc1",
        f"{ROOT}/tmp/abc1",
        f"/tmp/browser-tool-{UID}-abc1",
    ]


@pytest.mark.parametrize("recorded", [True, False], ids=["recorded", "unrecorded"])
def test_a_marked_member_of_a_group_being_killed_dies_with_it(recorded: bool) -> None:
    # A forked helper that kept its parent's argv: marker, profile and all, but not a leader.
    member = chrome(9, pgid=10, start=150)
    p = plan(
        snapshot([member, chrome(10)], [record(10)] if recorded else [],
                 sessions=[session("s1", "dead-1")]),
    )  # fmt: skip
    assert [(k.pid, k.pgid) for k in p.kills] == [(10, 10)]
    assert p.spared == ()
    assert [c.what for c in p.cleanups] == ["session"]


def test_an_unrecorded_orphan_with_an_odd_profile_is_killed_but_no_dir_deleted() -> None:
    p = plan(snapshot([chrome(10, profile=f"{ROOT}/sessions/s1/profile")]))
    [kill] = p.kills
    assert kill.dirs == ()


def test_chrome_children_are_reached_through_their_group_never_on_their_own() -> None:
    unrewritten = ProcInfo(
        13, 999, 5, True, UID, (CHROME, "--type=renderer", "--remote-debugging-port=0")
    )
    p = plan(snapshot([child(11, 10), child(12, 999), unrewritten]))
    assert p == Plan()


def test_a_record_cannot_make_the_reaper_delete_outside_the_root() -> None:
    entry = record(10, browser_dir="/etc/chrome-x", tmp_dir=f"{ROOT}/../etc")
    p = plan(snapshot([], [entry]))
    assert cleaned(p) == [("stale_record", [str(entry.path)])]
    assert sorted((s.reason, s.path) for s in p.spared) == [
        (SpareReason.UNSAFE_PATH, "/etc/chrome-x"),
        (SpareReason.UNSAFE_PATH, f"{ROOT}/../etc"),
    ]


@pytest.mark.parametrize(
    ("browser_dir", "tmp_dir", "kept"),
    [
        (f"{ROOT}/sessions", f"{ROOT}/tmp", []),
        (f"{ROOT}/sessions/s1/chrome-t", f"/tmp/browser-tool-{UID}-t", ["browser_dir", "tmp_dir"]),
        (f"{ROOT}/sessions/s1/chrome-t", f"/tmp/browser-tool-{UID}-other", ["browser_dir"]),
        (f"{ROOT}/sessions/s1/chrome-t", f"{ROOT}/tmp/a/b", ["browser_dir"]),
    ],
    ids=["layout-dirs", "fallback-tmp", "fallback-other-token", "nested-tmp"],
)
def test_only_chrome_dirs_and_their_tmpdirs_are_deletable(
    browser_dir: str, tmp_dir: str, kept: list[str]
) -> None:
    p = plan(snapshot([], [record(10, browser_dir=browser_dir, tmp_dir=tmp_dir)]))
    assert [kind for kind, _ in p.cleanups[0].dirs] == kept


# -- bad records --------------------------------------------------------------------------


def test_unreadable_records_are_removed_and_the_sweep_goes_on() -> None:
    torn = RecordEntry(Path(ROOT, "pids", "1-2.json"), None, "unreadable record: Expecting ','")
    good = record(10)
    p = plan(snapshot([chrome(10)], [torn, good]))
    assert cleaned(p) == [("bad_record", [str(torn.path)])]
    assert p.cleanups[0].reason == torn.error
    assert [k.pid for k in p.kills] == [10]


def test_a_registry_that_cannot_be_listed_is_an_error_not_a_removal() -> None:
    entry = RecordEntry(Path(ROOT, "pids"), None, "cannot list registry: Permission denied")
    p = plan(snapshot([], [entry]))
    assert p.cleanups == ()
    assert [(e.what, e.path) for e in p.errors] == [("registry", f"{ROOT}/pids")]


@pytest.mark.parametrize(("age", "removed"), [(5.0, False), (601.0, True)])
def test_a_temp_record_file_is_left_while_its_write_may_be_in_progress(
    age: float, removed: bool
) -> None:
    path = Path(ROOT, "pids", ".1-2.json.tmp")
    entry = RecordEntry(path, None, "leftover temp file of an interrupted write")
    p = plan(snapshot([], [entry], ages={path: age}))
    assert bool(p.cleanups) is removed
    assert bool(p.spared) is not removed


# -- sessions, tmp dirs, locks ------------------------------------------------------------


def session(name: str, owner: str | None) -> SessionDirInfo:
    return SessionDirInfo(
        Path(ROOT, "sessions", name), owner, None if owner else "no .instance file"
    )


def test_a_dead_instances_session_goes_after_the_kills_inside_it() -> None:
    p = plan(snapshot([chrome(10)], [record(10)], sessions=[session("s1", "dead-1")]))
    [kill] = p.kills
    [cleanup] = p.cleanups
    assert (cleanup.what, cleanup.blocked_by) == ("session", (kill.id,))
    assert cleanup.id != kill.id


def test_a_session_waits_for_stale_record_cleanups_inside_it() -> None:
    p = plan(snapshot([], [record(10)], sessions=[session("s1", "dead-1")]))
    stale, sess = p.cleanups
    assert (stale.what, sess.what, sess.blocked_by) == ("stale_record", "session", (stale.id,))


def test_sessions_that_are_not_provably_dead_and_unused_stay() -> None:
    kept = record(10, uid=0)  # kept: recorded for another uid
    p = plan(
        snapshot(
            [],
            [kept],
            sessions=[
                session("s1", "dead-1"),
                session("s2", None),
                session("s3", "live-1"),
                session("s4", "dead-1"),
            ],
        ),
        "live-1",
    )
    assert [(s.what, s.reason, s.path) for s in p.spared if s.what == "session"] == [
        ("session", SpareReason.IN_USE, f"{ROOT}/sessions/s1"),
        ("session", SpareReason.NO_OWNER_FILE, f"{ROOT}/sessions/s2"),
        ("session", SpareReason.OWNER_ALIVE, f"{ROOT}/sessions/s3"),
    ]
    assert cleaned(p) == [("session", [f"{ROOT}/sessions/s4"])]


def test_a_spared_process_keeps_its_session_and_tmp_dir() -> None:
    proc = chrome(10, instance="live-1", profile=profile_of("k", session="s9"))
    p = plan(
        snapshot(
            [proc],
            sessions=[session("s9", "dead-1")],  # .instance lies; the process proves use
            tmp_dirs=[(f"{ROOT}/tmp/k", 9999.0)],
        ),
        "live-1",
    )
    assert p.cleanups == ()
    assert [(s.what, s.reason) for s in p.spared] == [
        ("process", SpareReason.OWNER_ALIVE),
        ("session", SpareReason.IN_USE),
        ("tmp", SpareReason.IN_USE),
    ]


def test_tmp_dirs_go_when_unreferenced_and_old() -> None:
    p = plan(
        snapshot(
            [chrome(10, instance="live-1")],
            [record(10, instance="live-1", token="kept"), record(20, token="gone")],
            tmp_dirs=[
                (f"{ROOT}/tmp/kept", 9999.0),
                (f"{ROOT}/tmp/gone", 9999.0),  # deleted by the stale record's cleanup
                (f"{ROOT}/tmp/young", 599.0),
                (f"{ROOT}/tmp/old", 601.0),
            ],
        ),
        "live-1",
    )
    assert cleaned(p) == [
        (
            "stale_record",
            [f"{ROOT}/sessions/s1/chrome-gone", f"{ROOT}/tmp/gone", f"{ROOT}/pids/20-100.json"],
        ),
        ("tmp", [f"{ROOT}/tmp/old"]),
    ]
    assert [(s.what, s.reason, s.path) for s in p.spared if s.what == "tmp"] == [
        ("tmp", SpareReason.IN_USE, f"{ROOT}/tmp/kept"),
        ("tmp", SpareReason.TOO_YOUNG, f"{ROOT}/tmp/young"),
    ]


def test_locks_of_dead_instances_go_and_the_others_stay() -> None:
    def lock(name: str, age: float = 100.0, empty: bool = False) -> LockInfo:
        return LockInfo(Path(ROOT, "instances", f"{name}.lock"), age, empty)

    p = plan(
        snapshot(
            locks=[
                lock("dead-1"),
                lock("live-1"),
                lock("me"),
                lock("new-1", age=1.0, empty=True),
                lock("crashed-1", age=61.0, empty=True),
            ]
        ),
        "live-1",
        exclude="me",
    )
    assert cleaned(p) == [
        ("lock", [f"{ROOT}/instances/dead-1.lock"]),
        ("lock", [f"{ROOT}/instances/crashed-1.lock"]),
    ]
    assert [(s.reason, s.path) for s in p.spared] == [
        (SpareReason.OWNER_ALIVE, f"{ROOT}/instances/live-1.lock"),
        (SpareReason.OWN_INSTANCE, f"{ROOT}/instances/me.lock"),
        (SpareReason.TOO_YOUNG, f"{ROOT}/instances/new-1.lock"),
    ]


def test_liveness_is_asked_once_per_instance() -> None:
    asked: list[str] = []

    def oracle(instance_id: str) -> bool:
        asked.append(instance_id)
        return False

    snap = snapshot(
        [chrome(10), chrome(20, profile=profile_of("u"))],
        [record(10), record(30, token="v")],
        sessions=[session("s1", "dead-1")],
        locks=[LockInfo(Path(ROOT, "instances", "dead-1.lock"), 100.0, False)],
    )
    plan_sweep(snap, is_alive=oracle)
    assert asked == ["dead-1"]


def test_step_ids_are_unique_across_kills_and_cleanups() -> None:
    snap = snapshot(
        [chrome(10), chrome(20, profile=profile_of("u"))],
        [record(10), record(30, token="v")],
        sessions=[session("s1", "dead-1")],
        tmp_dirs=[(f"{ROOT}/tmp/old", 9999.0)],
    )
    p = plan(snap)
    ids = [k.id for k in p.kills] + [c.id for c in p.cleanups]
    assert sorted(ids) == list(range(len(ids)))


# -- the report ---------------------------------------------------------------------------


def _kill_entry(gone: bool, done: bool = True) -> KillEntry:
    return KillEntry(1, 1, 5, "dead-1", "recorded", "/st/pids/1-5.json", done, gone, "sigkill")


def test_the_exit_code_says_whether_every_orphan_is_gone() -> None:
    assert ReapReport("/st", False).exit_code == 0
    assert ReapReport("/st", False, killed=(_kill_entry(True),)).exit_code == 0
    assert ReapReport("/st", False, killed=(_kill_entry(False),)).exit_code == 1
    assert ReapReport("/st", True, killed=(_kill_entry(False, done=False),)).exit_code == 0


def test_the_report_round_trips_through_json_and_has_one_line_per_decision() -> None:
    report = ReapReport(
        "/st",
        False,
        killed=(_kill_entry(True), _kill_entry(False)),
        spared=(SpareEntry("process", SpareReason.NO_MARKER, "no marker", pid=7, pgid=7),),
        removed=(RemoveEntry("lock", "/st/instances/a.lock", "dead", True),),
        duration=0.5,
    )
    data = json.loads(report.to_json())
    assert data["exit_code"] == 1
    assert data["spared"] == [
        {"what": "process", "reason": "no_marker", "detail": "no marker", "pid": 7, "pgid": 7,
         "path": None}
    ]  # fmt: skip
    assert data["killed"][1]["gone"] is False
    assert json.loads(report.spared[0].to_json())["reason"] == "no_marker"
    lines = report.summary_lines()
    assert len(lines) == 5
    assert lines[1].startswith("SURVIVED")
    assert lines[-1].startswith("totals: killed 2 (1 survived), spared 1, removed 1, errors 0")


def test_exported_members() -> None:
    assert sorted(orphan_reaper.__all__) == [
        "CleanupStep",
        "ErrorEntry",
        "KillEntry",
        "KillStep",
        "LockInfo",
        "Plan",
        "ProcInfo",
        "ReapReport",
        "RemoveEntry",
        "SESSION_OWNER_FILE",
        "SessionDirInfo",
        "Snapshot",
        "SpareEntry",
        "SpareReason",
        "TMP_MIN_AGE",
        "plan_sweep",
        "read_session_owner",
        "reap_orphans",
        "reap_orphans_sync",
        "take_snapshot",
        "write_session_owner",
    ]
    for name in orphan_reaper.__all__:
        assert getattr(orphan_reaper, name) is not None


@pytest.mark.parametrize(
    ("exe", "proven"), [(CHROME, True), ("/usr/bin/python3", False), (None, False)]
)
def test_a_child_started_as_proc_self_exe_is_proven_by_its_executable(
    exe: str | None, proven: bool
) -> None:
    from orphan_reaper._proof import group_doubt

    entry = record(4000)
    assert entry.record is not None
    network_service = ProcInfo(
        4001, 4000, 150, True, UID, ("/proc/self/exe --type=utility --utility-sub-type=net",), exe
    )
    doubt = group_doubt(entry.record, [network_service], uid=UID)
    assert (doubt is None) == proven, doubt
