"""What process groups use, read from /proc: CPU time, resident and proportional memory.

Pure and synchronous, like `_procfs`. One `group_usage` pass reads every process's stat once
and sums by process group, so watching a hundred browsers costs one walk of /proc, not a hundred.
PSS (`group_pss_bytes`) is dearer (the kernel walks the page tables of each process): callers
read it only for a group whose RSS, always at least its PSS, is over their limit.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass

from ._procfs import all_pids, stat_fields

_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")
_DEAD_STATES = frozenset("ZXx")


@dataclass(frozen=True)
class GroupUsage:
    """One process group at one moment."""

    pgid: int
    cpu_seconds: float  # user + system time of its live members, summed
    rss_bytes: int  # summed RSS of its live members (shared pages count once per member)
    members: tuple[int, ...]  # pids of its live members
    leader_state: str  # the leader's /proc state ("S", "R", "T" when stopped), "" when gone


@dataclass(frozen=True)
class _Sample:
    pid: int
    state: str
    pgid: int
    cpu_ticks: int
    rss_pages: int


def _read(pid: int) -> _Sample | None:
    rest = stat_fields(pid)
    if rest is None:
        return None
    try:
        # rest[N - 3] is field N of proc(5): 3 state, 5 pgrp, 14 utime, 15 stime, 24 rss.
        return _Sample(pid, rest[0], int(rest[2]), int(rest[11]) + int(rest[12]), int(rest[21]))
    except (ValueError, IndexError):
        return None


def group_usage(pgids: Collection[int]) -> dict[int, GroupUsage]:
    """The usage of each of `pgids` that has a live member, in one walk of /proc."""
    wanted = set(pgids)
    found: dict[int, list[_Sample]] = {}
    for pid in all_pids():
        sample = _read(pid)
        if sample is not None and sample.pgid in wanted and sample.state not in _DEAD_STATES:
            found.setdefault(sample.pgid, []).append(sample)
    return {pgid: _summed(pgid, samples) for pgid, samples in found.items()}


def _summed(pgid: int, samples: list[_Sample]) -> GroupUsage:
    leader = [s.state for s in samples if s.pid == pgid]
    return GroupUsage(
        pgid=pgid,
        cpu_seconds=sum(s.cpu_ticks for s in samples) / _TICKS,
        rss_bytes=sum(s.rss_pages for s in samples) * _PAGE,
        members=tuple(s.pid for s in samples),
        leader_state=leader[0] if leader else "",
    )


def pss_bytes(pid: int) -> int:
    """Proportional set size of `pid` (shared pages split among their users), 0 when gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return 0
    return 0


def group_pss_bytes(members: Collection[int]) -> int:
    """Summed PSS of `members` (a `GroupUsage.members`): what the group costs the host."""
    return sum(pss_bytes(pid) for pid in members)
