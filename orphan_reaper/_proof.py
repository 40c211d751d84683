"""Proving that a process group is ours. Pure: reads only the snapshot.

A browser process is ours when it runs as our uid, carries the marker switch, has its
--user-data-dir under our state root, and leads its own process group (chrome_launcher starts
every Chrome with setsid, so one killpg reaches exactly its group).

Chrome's child processes (zygotes, GPU, renderers: `--type=...`) carry neither marker nor
profile. A group whose leader is gone is proven ours through its record instead: every live
member must run as our uid and be a child process of the recorded binary, and the record must
name a group led by its own pid.
"""

from __future__ import annotations

import os

from chrome_launcher import PidRecord, marker_instance, user_data_dir

from ._paths import RootPaths
from ._report import SpareReason
from ._scan import ProcInfo

PORT_SWITCH = "--remote-debugging-port"

Doubt = tuple[SpareReason, str]


def is_browser_process(argv: tuple[str, ...] | None) -> bool:
    """A Chrome browser process (not a child) with a DevTools port, or anything that looks so."""
    if not argv:
        return False
    has_port = any(a == PORT_SWITCH or a.startswith(PORT_SWITCH + "=") for a in argv)
    return has_port and not is_chrome_child(argv)


def words(argv: tuple[str, ...]) -> tuple[str, ...]:
    """`argv` as separate words. Chrome's child processes rewrite their command line into one
    space-joined string (/proc/<pid>/cmdline then has a single NUL-terminated entry)."""
    if len(argv) == 1 and " " in argv[0]:
        return tuple(argv[0].split(" "))
    return argv


def _runs(proc: ProcInfo, argv0: str, chrome_path: str) -> bool:
    # Chrome starts some children (the network service) as /proc/self/exe: then the kernel's
    # record of the executable must be the recorded binary.
    if argv0 == chrome_path:
        return True
    return argv0 == "/proc/self/exe" and proc.exe == os.path.realpath(chrome_path)


def is_chrome_child(argv: tuple[str, ...]) -> bool:
    return any(a.startswith("--type=") for a in words(argv))


def browser_doubt(
    proc: ProcInfo, *, uid: int, paths: RootPaths, expected: str | None = None
) -> Doubt | None:
    """Why browser process `proc` is not provably ours (its owner aside), or None."""
    if proc.uid != uid:
        return SpareReason.OTHER_UID, f"runs as uid {proc.uid}, not {uid}"
    argv = proc.argv or ()
    marker = marker_instance(argv)
    if marker is None:
        return SpareReason.NO_MARKER, "no instance marker in its command line"
    if expected is not None and marker != expected:
        return SpareReason.MARKER_MISMATCH, f"its marker says {marker!r}, record {expected!r}"
    profile = user_data_dir(argv)
    if profile is None or not paths.under(profile):
        return SpareReason.FOREIGN_PROFILE, f"--user-data-dir {profile!r} is not under the root"
    if proc.pgid != proc.pid:
        return SpareReason.PGID_MISMATCH, f"not the leader of its group {proc.pgid}"
    return None


def group_doubt(record: PidRecord, members: list[ProcInfo], *, uid: int) -> str | None:
    """Why the leaderless group of `record` is not provably ours, or None."""
    if record.pgid != record.pid:
        return f"the record's pgid {record.pgid} is not its pid {record.pid}"
    for p in members:
        argv = words(p.argv or ())
        if p.uid != uid:
            return f"member {p.pid} runs as uid {p.uid}"
        if not argv or not _runs(p, argv[0], record.chrome_path) or not is_chrome_child(argv):
            return f"member {p.pid} is not a child process of {record.chrome_path!r}"
    return None
