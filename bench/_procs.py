"""Memory of process groups, measured as PSS: each shared page counted once, split among the
processes that share it. (RSS counts a shared page in every process that maps it: for one
headless shell it says about 450 MB where PSS says about 75 MB.)"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path


def _stat_fields(pid: str) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group `pgid`."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat_fields(entry)) is not None:
            state, group = fields[0], int(fields[2])
            if group == pgid and state != "Z":
                members.append(int(entry))
    return members


def pss_bytes(pid: int) -> int:
    """PSS of one process from /proc/PID/smaps_rollup; 0 when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def group_pss_bytes(pgid: int) -> int:
    """PSS of every live process of group `pgid`, summed."""
    return sum(pss_bytes(pid) for pid in group_members(pgid))


def pgid_of_marker(marker: str) -> int | None:
    """The process group of the process whose command line contains `marker`."""
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if needle in Path(f"/proc/{entry}/cmdline").read_bytes():
                fields = _stat_fields(entry)
                return int(fields[2]) if fields else None
        except OSError:
            continue
    return None


def kill_groups_mentioning(needle: str) -> list[int]:
    """SIGKILL the process group of every live process whose command line contains `needle`
    (the benchmark's own tmp root: only what this run started); return the groups."""
    groups = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if needle.encode() not in Path(f"/proc/{entry}/cmdline").read_bytes():
                continue
        except OSError:
            continue
        fields = _stat_fields(entry)
        if fields and fields[0] != "Z":
            groups.add(int(fields[2]))
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    return sorted(groups)
