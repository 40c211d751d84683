"""orphan_reaper: kill the Chrome process groups that dead browser-tool instances left behind,
and clean up their PID records, profiles, session dirs, tmp dirs and locks.

The rule (DESIGN.md §3): kill a process group only if it runs as our uid, carries our marker
with a profile under this state root, its owning instance is dead (its lock can be taken), and,
for a PID record, its kernel start time and boot id match. Everything else is left alone and
reported. Uses only chrome_launcher's public names.
"""

from ._owner_file import SESSION_OWNER_FILE, read_session_owner, write_session_owner
from ._plan import TMP_MIN_AGE, plan_sweep
from ._reap import reap_orphans, reap_orphans_sync
from ._report import ErrorEntry, KillEntry, ReapReport, RemoveEntry, SpareEntry, SpareReason
from ._scan import LockInfo, ProcInfo, SessionDirInfo, Snapshot, take_snapshot
from ._steps import CleanupStep, KillStep, Plan

__all__ = [
    "SESSION_OWNER_FILE",
    "TMP_MIN_AGE",
    "CleanupStep",
    "ErrorEntry",
    "KillEntry",
    "KillStep",
    "LockInfo",
    "Plan",
    "ProcInfo",
    "ReapReport",
    "RemoveEntry",
    "SessionDirInfo",
    "Snapshot",
    "SpareEntry",
    "SpareReason",
    "plan_sweep",
    "read_session_owner",
    "reap_orphans",
    "reap_orphans_sync",
    "take_snapshot",
    "write_session_owner",
]
