"""Taking a snapshot of everything the reaper decides on: processes, records, sessions, locks,
tmp dirs. Synchronous, read-only, never raises, and never creates the state dir.

The snapshot is plain data so that the decision (`_plan.py`) is a pure function of it.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from chrome_launcher import (
    RecordEntry,
    StateLayout,
    all_stats,
    boot_id,
    cmdline,
    owner_uid,
    read_records,
)

from ._owner_file import read_session_owner


@dataclass(frozen=True)
class ProcInfo:
    """One process as the reaper saw it. `uid`/`argv` are None when unreadable (or vanished)."""

    pid: int
    pgid: int
    start_time: int
    alive: bool  # False for zombies: they hold a pid but run nothing
    uid: int | None
    argv: tuple[str, ...] | None
    exe: str | None = None  # /proc/<pid>/exe: children Chrome starts as /proc/self/exe need it


@dataclass(frozen=True)
class SessionDirInfo:
    """A dir under sessions/: its owner instance from `.instance`, or why there is none."""

    path: Path
    owner: str | None
    problem: str | None = None


@dataclass(frozen=True)
class LockInfo:
    """An instance lock file. `empty`: no pid written yet, so `acquire` may be in progress."""

    path: Path
    age: float
    empty: bool


@dataclass(frozen=True)
class Snapshot:
    """Everything one sweep decides on, read at one moment."""

    root: Path  # the state root as given
    root_forms: tuple[str, ...]  # its absolute and its resolved spelling
    uid: int
    boot_id: str
    system_tmp: str  # where chrome_launcher puts a TMPDIR too long for <root>/tmp/
    processes: tuple[ProcInfo, ...] = ()
    records: tuple[RecordEntry, ...] = ()
    sessions: tuple[SessionDirInfo, ...] = ()
    locks: tuple[LockInfo, ...] = ()
    tmp_dirs: tuple[Path, ...] = ()
    ages: Mapping[Path, float] = field(default_factory=dict)  # tmp dirs, temp record files
    errors: tuple[tuple[str, str], ...] = ()  # (path, message): listings that failed


def _proc_info() -> list[ProcInfo]:
    found = []
    for stat in all_stats():
        argv = cmdline(stat.pid)
        found.append(
            ProcInfo(
                pid=stat.pid,
                pgid=stat.pgid,
                start_time=stat.start_time,
                alive=stat.alive,
                uid=owner_uid(stat.pid),
                argv=tuple(argv) if argv is not None else None,
                exe=_exe(stat.pid),
            )
        )
    return found


def _exe(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


def _list(path: Path, errors: list[tuple[str, str]]) -> list[Path]:
    try:
        return [path / name for name in sorted(os.listdir(path))]
    except FileNotFoundError:
        return []
    except OSError as exc:
        errors.append((str(path), f"cannot list: {exc.strerror or exc}"))
        return []


def _age(path: Path, now: float) -> float | None:
    try:
        return now - path.lstat().st_mtime
    except OSError:
        return None


def _session(path: Path) -> SessionDirInfo:
    owner, problem = read_session_owner(path)
    return SessionDirInfo(path, owner, problem)


def _lock(path: Path, now: float) -> LockInfo | None:
    try:
        st = path.lstat()
    except OSError:
        return None
    return LockInfo(path, now - st.st_mtime, st.st_size == 0)


def _root_forms(root: Path) -> tuple[str, ...]:
    forms = [os.path.normpath(os.path.abspath(root))]
    real = os.path.realpath(root)
    if real not in forms:
        forms.append(real)
    return tuple(forms)


def take_snapshot(layout: StateLayout) -> Snapshot:
    """Read the process table and the state root. Never raises; creates nothing."""
    now = time.time()
    errors: list[tuple[str, str]] = []
    records = read_records(layout.pids_dir)
    ages: dict[Path, float] = {}
    for entry in records:
        if entry.record is None and (age := _age(entry.path, now)) is not None:
            ages[entry.path] = age
    sessions = [_session(p) for p in _list(layout.sessions_dir, errors) if p.is_dir()]
    locks = []
    for path in _list(layout.instances_dir, errors):
        if path.name.endswith(".lock") and (info := _lock(path, now)) is not None:
            locks.append(info)
    tmp_dirs = []
    for path in _list(layout.tmp_dir, errors):
        if (age := _age(path, now)) is not None:
            tmp_dirs.append(path)
            ages[path] = age
    # The reads are not atomic, and need not be: everything of a live instance is spared
    # whatever we read, a dead instance starts nothing new, and a tmp dir created a few ms
    # before its record is protected by its age.
    return Snapshot(
        root=layout.root,
        root_forms=_root_forms(layout.root),
        uid=os.getuid(),
        boot_id=boot_id(),
        system_tmp=tempfile.gettempdir(),
        processes=tuple(_proc_info()),
        records=tuple(records),
        sessions=tuple(sessions),
        locks=tuple(locks),
        tmp_dirs=tuple(tmp_dirs),
        ages=ages,
        errors=tuple(errors),
    )
