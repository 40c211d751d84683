"""What a sweep decided and did: frozen entries, one report, JSON and a human summary.

Every decision is an entry: a process group killed, a thing spared (with a reason from a closed
set), a path removed, or an error. In a dry run the same entries say what *would* happen
(`done=False`) and nothing is changed.
"""

from __future__ import annotations

import enum
import json
from dataclasses import asdict, dataclass
from typing import Any


class SpareReason(enum.StrEnum):
    """Why something was left alone. A closed set: tests and dashboards may match on it."""

    OTHER_UID = "other_uid"  # runs as (or was recorded for) another user
    NO_MARKER = "no_marker"  # has --remote-debugging-port but no instance marker: not ours
    FOREIGN_PROFILE = "foreign_profile"  # marked, but its --user-data-dir is outside this root
    OWNER_ALIVE = "owner_alive"  # its instance holds its lock (or its liveness is unprovable)
    OWN_INSTANCE = "own_instance"  # belongs to the instance running this sweep
    START_TIME_MISMATCH = "start_time_mismatch"  # the recorded pid now names another process
    MARKER_MISMATCH = "marker_mismatch"  # the process's marker names another instance
    PGID_MISMATCH = "pgid_mismatch"  # not the leader of the recorded (or its own) group
    UNPROVEN_GROUP = "unproven_group"  # leader gone; the group's members are not provably ours
    NO_OWNER_FILE = "no_owner_file"  # a session dir with no readable .instance
    IN_USE = "in_use"  # a dir still used by a kept record or process, or a kill that failed
    TOO_YOUNG = "too_young"  # a tmp dir or temp record too young to be an orphan's
    UNSAFE_PATH = "unsafe_path"  # a record names a dir outside the state root: not deleted


class _Entry:
    """JSON forms shared by the report's entries (frozen dataclasses)."""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = asdict(self)  # type: ignore[call-overload]  # subclasses are dataclasses
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


@dataclass(frozen=True)
class KillEntry(_Entry):
    """A process group killed (or, in a dry run, that would be)."""

    pid: int
    pgid: int
    start_time: int
    instance_id: str
    what: str  # "recorded": leader + record; "group": leader gone, members left; "unrecorded"
    record_path: str | None
    done: bool  # False in a dry run
    gone: bool  # the whole group is confirmed gone (False in a dry run)
    summary: str  # the ladder's steps and timing, or "would kill"
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class SpareEntry(_Entry):
    """Something left alone, and why."""

    what: str  # "process", "record", "session", "tmp", "lock", "dir"
    reason: SpareReason
    detail: str
    pid: int | None = None
    pgid: int | None = None
    path: str | None = None


@dataclass(frozen=True)
class RemoveEntry(_Entry):
    """A path removed (or, in a dry run, that would be)."""

    what: str  # "record", "bad_record", "browser_dir", "tmp_dir", "session", "lock"
    path: str
    reason: str
    done: bool


@dataclass(frozen=True)
class ErrorEntry(_Entry):
    """Something the sweep could not do. Errors are reported, never raised."""

    what: str
    message: str
    path: str | None = None


@dataclass(frozen=True)
class ReapReport:
    """Every decision of one sweep over one state root."""

    state_dir: str
    dry_run: bool
    killed: tuple[KillEntry, ...] = ()
    spared: tuple[SpareEntry, ...] = ()
    removed: tuple[RemoveEntry, ...] = ()
    errors: tuple[ErrorEntry, ...] = ()
    duration: float = 0.0

    @property
    def survivors(self) -> tuple[KillEntry, ...]:
        """Kills that were attempted and left a live process behind."""
        return tuple(k for k in self.killed if k.done and not k.gone)

    @property
    def exit_code(self) -> int:
        """0 when every qualifying orphan is gone (or, in a dry run, always), else 1."""
        return 1 if self.survivors else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "state_dir": self.state_dir,
            "dry_run": self.dry_run,
            "duration": self.duration,
            "exit_code": self.exit_code,
            "killed": [k.to_dict() for k in self.killed],
            "spared": [s.to_dict() for s in self.spared],
            "removed": [r.to_dict() for r in self.removed],
            "errors": [e.to_dict() for e in self.errors],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    def summary_lines(self) -> list[str]:
        """One line per decision, then a totals line."""
        lines = [_kill_line(k) for k in self.killed]
        lines += [_spare_line(s) for s in self.spared]
        lines += [_remove_line(r) for r in self.removed]
        lines += [f"{'error':<11}{e.what} {e.path or ''}: {e.message}" for e in self.errors]
        verb = "would kill" if self.dry_run else "killed"
        totals = (
            f"totals: {verb} {len(self.killed)} ({len(self.survivors)} survived),"
            f" spared {len(self.spared)}, {'would remove' if self.dry_run else 'removed'}"
            f" {len(self.removed)}, errors {len(self.errors)} in {self.duration:.2f}s"
            f" [{self.state_dir}]"
        )
        if self.dry_run:
            totals += " (dry run: nothing changed)"
        return [*lines, totals]


def _kill_line(k: KillEntry) -> str:
    verb = "killed" if k.gone else "SURVIVED"
    if not k.done:
        verb = "would kill"
    text = (
        f"{verb:<11}pid {k.pid} pgid {k.pgid} ({k.what} Chrome of dead instance"
        f" {k.instance_id!r}): {k.summary}"
    )
    if k.errors:
        text += " errors: " + "; ".join(k.errors)
    return text


def _spare_line(s: SpareEntry) -> str:
    where = f"pid {s.pid}" if s.pid is not None else (s.path or "")
    if s.pid is None and s.pgid is not None:
        where = f"pgid {s.pgid}"
    return f"{'spared':<11}{s.what} {where}: {s.reason.value} ({s.detail})"


def _remove_line(r: RemoveEntry) -> str:
    verb = "removed" if r.done else "would rm"
    return f"{verb:<11}{r.what} {r.path} ({r.reason})"
