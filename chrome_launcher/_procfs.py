"""Reading processes from /proc: start times, process groups, command lines, owners.

Pure and synchronous. A process that vanishes between listing and reading is simply skipped:
every reader here returns None (or leaves it out) instead of raising.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
_DEAD_STATES = frozenset("ZXx")


@dataclass(frozen=True)
class ProcStat:
    """The fields of /proc/<pid>/stat that we use."""

    pid: int
    state: str
    ppid: int
    pgid: int
    start_time: (
        int  # field 22: clock ticks after boot; with the boot id, it names a process uniquely
    )

    @property
    def alive(self) -> bool:
        """True unless the process is a zombie or dead (zombies cannot run or hold anything)."""
        return self.state not in _DEAD_STATES


def parse_stat(pid: int, text: str) -> ProcStat:
    """Parse the text of /proc/<pid>/stat. The command name may hold spaces and parentheses."""
    return _proc_stat(pid, split_stat(text))


def split_stat(text: str) -> list[str]:
    """The fields of a stat text from field 3 (state) on: field N is at index N - 3. The command
    name (field 2) may hold spaces and parentheses: the fields start after its last ")"."""
    return text[text.rindex(")") + 2 :].split()


def _proc_stat(pid: int, rest: list[str]) -> ProcStat:
    return ProcStat(
        pid=pid, state=rest[0], ppid=int(rest[1]), pgid=int(rest[2]), start_time=int(rest[19])
    )


def stat_fields(pid: int) -> list[str] | None:
    """`split_stat` of /proc/<pid>/stat, or None when there is no such process."""
    # os.open/os.read: about 3x cheaper than Path.read_text, and the ladder scans all of /proc
    # every few milliseconds while it confirms a group is gone.
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        text = os.read(fd, 4096).decode(errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return split_stat(text)
    except ValueError:  # no ")": not a stat text
        return None


def read_stat(pid: int) -> ProcStat | None:
    """The stat of `pid`, or None when there is no such process."""
    rest = stat_fields(pid)
    if rest is None:
        return None
    try:
        return _proc_stat(pid, rest)
    except (ValueError, IndexError):
        return None


def start_time(pid: int) -> int | None:
    """Kernel start time of `pid` (clock ticks since boot), or None when it is gone."""
    stat = read_stat(pid)
    return stat.start_time if stat else None


def boot_id() -> str:
    """This boot's id; start times from another boot mean nothing."""
    try:
        return (PROC / "sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def all_pids() -> list[int]:
    """Every pid visible in /proc."""
    try:
        return [int(name) for name in os.listdir(PROC) if name.isdigit()]
    except OSError:
        return []


def all_stats() -> list[ProcStat]:
    """The stat of every visible process."""
    stats = []
    for pid in all_pids():
        stat = read_stat(pid)
        if stat is not None:
            stats.append(stat)
    return stats


def live_group_members(pgid: int) -> list[int]:
    """Pids of the live (not zombie) processes whose process group is `pgid`."""
    return [s.pid for s in all_stats() if s.pgid == pgid and s.alive]


def cmdline(pid: int) -> list[str] | None:
    """The argv of `pid`, or None when it is gone or unreadable."""
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def owner_uid(pid: int) -> int | None:
    """The real uid of `pid`, or None when it is gone."""
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def rss_bytes(pid: int) -> int:
    """Resident set size of `pid` in bytes (0 when gone)."""
    try:
        pages = int((PROC / str(pid) / "statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def group_rss_bytes(pgid: int) -> int:
    """Summed RSS of every live process in group `pgid` (shared pages count once per process)."""
    return sum(rss_bytes(pid) for pid in live_group_members(pgid))
