"""The plan a sweep executes: kill steps, cleanup steps, and what it spares.

Steps share one id space so a cleanup can wait for the steps it depends on (a session dir is
deleted only once every Chrome and record inside it is gone).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ._report import ErrorEntry, SpareEntry

Dirs = tuple[tuple[str, Path], ...]  # (kind, path): kind names it in the report


@dataclass(frozen=True)
class KillStep:
    """Kill one process group with the ladder, then delete its dirs and record."""

    id: int
    pid: int
    pgid: int
    start_time: int
    instance_id: str
    what: str  # "recorded", "group" (leader gone, members left) or "unrecorded" (marker only)
    record_path: Path | None
    dirs: Dirs


@dataclass(frozen=True)
class CleanupStep:
    """Delete `dirs`, then (only if they all went) `files`; skipped if a `blocked_by` failed."""

    id: int
    what: str  # "stale_record", "bad_record", "session", "tmp", "lock"
    reason: str
    dirs: Dirs = ()
    files: Dirs = ()
    blocked_by: tuple[int, ...] = ()


@dataclass(frozen=True)
class Plan:
    """Everything one sweep will do (or, in a dry run, would do)."""

    kills: tuple[KillStep, ...] = ()
    cleanups: tuple[CleanupStep, ...] = ()
    spared: tuple[SpareEntry, ...] = ()
    errors: tuple[ErrorEntry, ...] = ()
