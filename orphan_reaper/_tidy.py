"""Tidying the state root: session dirs, tmp dirs and lock files of dead instances.

Decided after the kills, because what is still in use depends on them: a session dir goes only
when its `.instance` names a dead instance and no kept record or spared process uses it, and
only after every kill or cleanup of a Chrome inside it succeeded. A session dir without a
readable `.instance` is left alone: we cannot prove whose it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ._paths import norm, within
from ._report import SpareEntry, SpareReason
from ._scan import LockInfo, Snapshot
from ._steps import CleanupStep, Dirs

LOCK_MIN_AGE = 60.0
Owner = Callable[[str], SpareReason | None]  # None: the instance is provably dead


@dataclass(frozen=True)
class Refs:
    """Paths (normalized) that the kill decisions keep or hand to a step."""

    kept: frozenset[str] = frozenset()  # still in use after the sweep
    pending: tuple[tuple[int, str], ...] = ()  # (step id, path) deleted by that step


@dataclass
class _Tidy:
    owner: Owner
    refs: Refs
    next_id: int
    tmp_min_age: float
    cleanups: list[CleanupStep] = field(default_factory=list)
    spared: list[SpareEntry] = field(default_factory=list)

    def add(
        self,
        what: str,
        reason: str,
        *,
        dirs: Dirs = (),
        files: Dirs = (),
        blocked_by: tuple[int, ...] = (),
    ) -> None:
        self.cleanups.append(CleanupStep(self.next_id, what, reason, dirs, files, blocked_by))
        self.next_id += 1

    def session(self, path: Path, owner: str | None, problem: str | None) -> None:
        if owner is None:
            self.spared.append(
                SpareEntry("session", SpareReason.NO_OWNER_FILE, problem or "", path=str(path))
            )
            return
        if (reason := self.owner(owner)) is not None:
            detail = f"owned by instance {owner!r}"
            self.spared.append(SpareEntry("session", reason, detail, path=str(path)))
            return
        p = norm(path)
        if any(within(ref, p) for ref in self.refs.kept):
            detail = "a kept record or a spared process uses it"
            self.spared.append(SpareEntry("session", SpareReason.IN_USE, detail, path=str(path)))
            return
        blocked = tuple(sorted({sid for sid, ref in self.refs.pending if within(ref, p)}))
        self.add(
            "session",
            f"its instance {owner!r} is dead",
            dirs=(("session", path),),
            blocked_by=blocked,
        )

    def tmp_dir(self, path: Path, age: float) -> None:
        p = norm(path)
        if p in self.refs.kept:
            detail = "TMPDIR of a kept record or a spared process"
            self.spared.append(SpareEntry("tmp", SpareReason.IN_USE, detail, path=str(path)))
            return
        if any(ref == p for _, ref in self.refs.pending):
            return  # deleted with its Chrome or its record
        if age < self.tmp_min_age:
            detail = f"no record names it, but it is only {age:.0f}s old"
            self.spared.append(SpareEntry("tmp", SpareReason.TOO_YOUNG, detail, path=str(path)))
            return
        self.add("tmp", f"no record names it for {age:.0f}s", dirs=(("tmp_dir", path),))

    def lock(self, lock: LockInfo) -> None:
        path, instance_id = lock.path, lock.path.name.removesuffix(".lock")
        if lock.empty and lock.age < LOCK_MIN_AGE:
            # InstanceLock.acquire creates the file, then flocks it, then writes its pid: an
            # empty young file may be one whose flock is a moment away. Unlinking it now would
            # leave that service holding a lock nobody can see.
            detail = f"no pid in it yet and only {lock.age:.0f}s old: acquire may be in progress"
            self.spared.append(SpareEntry("lock", SpareReason.TOO_YOUNG, detail, path=str(path)))
            return
        if (reason := self.owner(instance_id)) is not None:
            detail = f"instance {instance_id!r}"
            self.spared.append(SpareEntry("lock", reason, detail, path=str(path)))
            return
        self.add("lock", f"instance {instance_id!r} is dead", files=(("lock", path),))


def plan_tidy(
    snap: Snapshot, *, owner: Owner, refs: Refs, first_id: int, tmp_min_age: float
) -> tuple[list[CleanupStep], list[SpareEntry]]:
    """Cleanups and spares for the session dirs, tmp dirs and locks of `snap`."""
    tidy = _Tidy(owner, refs, first_id, tmp_min_age)
    for session in snap.sessions:
        tidy.session(session.path, session.owner, session.problem)
    for path in snap.tmp_dirs:
        tidy.tmp_dir(path, snap.ages.get(path, 0.0))
    for lock in snap.locks:
        tidy.lock(lock)
    return tidy.cleanups, tidy.spared
