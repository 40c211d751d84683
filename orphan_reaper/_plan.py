"""The reaper rule as a pure function: a snapshot and an instance-liveness oracle in, a plan out.

A process group is killed only when ALL hold: it runs as our uid; it is provably ours (see
`_proof.py`: our marker and a profile under this root, or for a leaderless group, its record);
the owning instance is dead (its lock can be taken) and is not the one running the sweep; and,
for a PID record, the live process has the recorded kernel start time and boot id (pids are
reused; the pair is not). Anything else is spared, with a reason.

A record whose process is long gone is removed with its dirs, but only when its instance is
dead: a live instance's records are its own business.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from chrome_launcher import PidRecord, RecordEntry, marker_instance, user_data_dir

from ._paths import RootPaths, norm
from ._proof import browser_doubt, group_doubt, is_browser_process
from ._report import ErrorEntry, SpareEntry, SpareReason
from ._scan import ProcInfo, Snapshot
from ._steps import CleanupStep, Dirs, KillStep, Plan
from ._tidy import Refs, plan_tidy

TMP_MIN_AGE = 600.0  # a launch creates its TMPDIR a few ms before its record


def plan_sweep(
    snap: Snapshot,
    *,
    is_alive: Callable[[str], bool],
    exclude_instance: str | None = None,
    tmp_min_age: float = TMP_MIN_AGE,
) -> Plan:
    """Decide every kill, removal and spare for `snap`. Pure apart from calling `is_alive`
    (at most once per instance id). Never raises for bad data."""
    return _Planner(snap, is_alive, exclude_instance, tmp_min_age).run()


class _Planner:
    def __init__(
        self,
        snap: Snapshot,
        is_alive: Callable[[str], bool],
        exclude_instance: str | None,
        tmp_min_age: float,
    ) -> None:
        self.snap = snap
        self.paths = RootPaths(snap.root_forms, snap.system_tmp, snap.uid)
        self.is_alive = is_alive
        self.exclude = exclude_instance
        self.tmp_min_age = tmp_min_age
        self.by_pid = {p.pid: p for p in snap.processes}
        self.recorded = {(e.record.pid, e.record.start_time) for e in snap.records if e.record}
        self.liveness: dict[str, bool] = {}
        self.handled: set[int] = set()  # pids decided through a record
        self.kept: set[str] = set()  # paths still in use after the sweep
        self.pending: list[tuple[int, str]] = []  # (step id, path) deleted by that step
        self.mismatched: list[SpareEntry] = []
        self.kills: list[KillStep] = []
        self.cleanups: list[CleanupStep] = []
        self.spared: list[SpareEntry] = []
        self.errors = [ErrorEntry("scan", message, path) for path, message in snap.errors]

    def run(self) -> Plan:
        for entry in self.snap.records:
            if entry.record is None:
                self._bad_record(entry)
            else:
                self._record(entry.path, entry.record)
        candidates = [
            p
            for p in self.snap.processes
            if p.alive and p.pid not in self.handled and is_browser_process(p.argv)
        ]
        # Leaders first: a member of a group that is being killed dies with it and is not
        # judged on its own (it would be spared as a non-leader and keep its dirs "in use").
        for proc in sorted(candidates, key=lambda p: (p.pid != p.pgid, p.pid)):
            if proc.pgid not in {k.pgid for k in self.kills}:
                self._process(proc)
        killed = {k.pid for k in self.kills}
        self.spared += [s for s in self.mismatched if s.pid not in killed]
        cleanups, spared = plan_tidy(
            self.snap,
            owner=self._owner,
            refs=Refs(frozenset(self.kept), tuple(self.pending)),
            first_id=self._next_id(),
            tmp_min_age=self.tmp_min_age,
        )
        return Plan(
            tuple(self.kills),
            tuple(self.cleanups + cleanups),
            tuple(self.spared + spared),
            tuple(self.errors),
        )

    def _next_id(self) -> int:
        return len(self.kills) + len(self.cleanups)

    def _owner(self, instance_id: str) -> SpareReason | None:
        """None when `instance_id` is provably dead and not ours; else why it is spared."""
        if instance_id == self.exclude:
            return SpareReason.OWN_INSTANCE
        if instance_id not in self.liveness:
            self.liveness[instance_id] = self.is_alive(instance_id)
        return SpareReason.OWNER_ALIVE if self.liveness[instance_id] else None

    def _spare(
        self,
        what: str,
        why: tuple[SpareReason, str],
        *,
        pid: int | None = None,
        pgid: int | None = None,
        path: str | None = None,
    ) -> None:
        self.spared.append(SpareEntry(what, why[0], why[1], pid, pgid, path))

    def _keep(self, record: PidRecord) -> None:
        self.kept.update(norm(p) for p in (record.session_dir, record.browser_dir, record.tmp_dir))

    def _record_dirs(self, path: Path, record: PidRecord) -> Dirs:
        dirs, refused = self.paths.record_dirs(record)
        for bad in refused:
            why = SpareReason.UNSAFE_PATH, f"named by {path.name}, but not ours to delete"
            self._spare("dir", why, path=bad)
        return dirs

    def _add_kill(self, record: PidRecord, what: str, path: Path) -> None:
        step_id = self._next_id()
        self.kills.append(
            KillStep(
                step_id,
                record.pid,
                record.pgid,
                record.start_time,
                record.instance_id,
                what,
                path,
                self._record_dirs(path, record),
            )
        )
        refs = (record.session_dir, record.browser_dir, record.tmp_dir)
        self.pending += [(step_id, norm(r)) for r in refs]

    # -- records ---------------------------------------------------------------------------

    def _record(self, path: Path, record: PidRecord) -> None:
        leader = self.by_pid.get(record.pid)
        same_boot = record.boot_id == self.snap.boot_id
        matches = same_boot and leader is not None and leader.start_time == record.start_time
        if (owner := self._owner(record.instance_id)) is not None:
            self._keep(record)
            if matches:
                self.handled.add(record.pid)
            why = owner, f"instance {record.instance_id!r} is alive or running this sweep"
            self._spare("record", why, pid=record.pid, path=str(path))
        elif not same_boot:
            self._stale(path, record, f"recorded in another boot ({record.boot_id})")
        elif record.uid != self.snap.uid:
            self._keep(record)
            why = SpareReason.OTHER_UID, f"recorded for uid {record.uid}"
            self._spare("record", why, pid=record.pid, path=str(path))
        elif matches and leader is not None and leader.alive:
            self._live_leader(path, record, leader)
        else:
            reason = "process gone"
            if leader is not None and leader.alive:
                reason = "its pid now names another process"
                self._note_mismatch(path, record, leader)
            self._leaderless(path, record, reason)

    def _live_leader(self, path: Path, record: PidRecord, leader: ProcInfo) -> None:
        self.handled.add(leader.pid)
        doubt = browser_doubt(
            leader, uid=self.snap.uid, paths=self.paths, expected=record.instance_id
        )
        if doubt is None and record.pgid != leader.pgid:
            doubt = SpareReason.PGID_MISMATCH, f"pgid {leader.pgid}, record says {record.pgid}"
        if doubt is not None:
            self._keep(record)
            self._spare("process", doubt, pid=leader.pid, pgid=leader.pgid, path=str(path))
        else:
            self._add_kill(record, "recorded", path)

    def _note_mismatch(self, path: Path, record: PidRecord, proc: ProcInfo) -> None:
        if (proc.pid, proc.start_time) in self.recorded:
            return  # another record names this process; that one decides
        detail = f"started at tick {proc.start_time}; {path.name} says {record.start_time}"
        self.mismatched.append(
            SpareEntry("process", SpareReason.START_TIME_MISMATCH, detail, proc.pid, proc.pgid)
        )

    def _leaderless(self, path: Path, record: PidRecord, reason: str) -> None:
        """The recorded leader is gone: kill what is left of its group, or drop the record."""
        group_leader = self.by_pid.get(record.pgid)
        reused = group_leader is not None and group_leader.start_time != record.start_time
        members = [
            p
            for p in self.snap.processes
            if p.alive and p.pgid == record.pgid and p.start_time >= record.start_time
        ]
        # The kernel never hands out a pid while a group of that id has members, so when the
        # group id names a newer process, the recorded group is empty.
        if (record.pgid == record.pid and reused) or not members:
            self._stale(path, record, reason)
            return
        if (doubt := group_doubt(record, members, uid=self.snap.uid)) is not None:
            self._keep(record)
            self._spare(
                "group", (SpareReason.UNPROVEN_GROUP, doubt), pgid=record.pgid, path=str(path)
            )
            return
        self.handled.update(p.pid for p in members)
        self._add_kill(record, "group", path)

    def _stale(self, path: Path, record: PidRecord, reason: str) -> None:
        step_id = self._next_id()
        dirs = self._record_dirs(path, record)
        self.cleanups.append(
            CleanupStep(step_id, "stale_record", reason, dirs, files=(("record", path),))
        )
        refs = (record.session_dir, record.browser_dir, record.tmp_dir)
        self.pending += [(step_id, norm(r)) for r in refs]

    def _bad_record(self, entry: RecordEntry) -> None:
        error = entry.error or "unreadable record"
        if entry.path == self.snap.root / "pids":
            self.errors.append(ErrorEntry("registry", error, str(entry.path)))
            return
        name = entry.path.name
        in_flight = name.startswith(".") and name.endswith(".tmp")
        if in_flight and self.snap.ages.get(entry.path, 0.0) < self.tmp_min_age:
            why = SpareReason.TOO_YOUNG, "temp file of a record write that may be in progress"
            self._spare("record", why, path=str(entry.path))
            return
        step = CleanupStep(
            self._next_id(), "bad_record", error, files=(("bad_record", entry.path),)
        )
        self.cleanups.append(step)

    # -- browser processes without a record ------------------------------------------------

    def _process(self, proc: ProcInfo) -> None:
        argv = proc.argv or ()
        marker = marker_instance(argv)
        profile = user_data_dir(argv) or ""
        doubt = browser_doubt(proc, uid=self.snap.uid, paths=self.paths)
        if doubt is None and marker is not None and (owner := self._owner(marker)) is not None:
            doubt = owner, f"instance {marker!r} is alive or running this sweep"
        if doubt is not None or marker is None:
            if self.paths.under(profile):
                self.kept.add(norm(profile))
                self.kept.update(norm(p) for _, p in self.paths.derived_dirs(profile))
            doubt = doubt or (SpareReason.NO_MARKER, "no instance marker in its command line")
            self._spare("process", doubt, pid=proc.pid, pgid=proc.pgid)
            return
        step_id = self._next_id()
        dirs = self.paths.derived_dirs(profile)
        self.kills.append(
            KillStep(
                step_id, proc.pid, proc.pgid, proc.start_time, marker, "unrecorded", None, dirs
            )
        )
        self.pending.append((step_id, norm(profile)))
        self.pending += [(step_id, norm(p)) for _, p in dirs]
