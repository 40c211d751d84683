"""Proving that a process group is ours. Pure: reads only the snapshot.

A browser process is ours when it runs as our uid, carries the marker switch, has its
--user-data-dir under our state root, and leads its own process group (chrome_launcher starts
every Chrome with setsid, so one killpg reaches exactly its group).

Chrome's child processes (zygotes, GPU, renderers: `--type=...`) carry neither marker nor
profile. A group whose leader is gone is proven ours through its record instead: every live
member must run as our uid and the recorded binary, and be a Chrome child (or, caught in the
moment of its birth, a fork of the browser carrying the record's marker, or a process with an
empty command line); the record must name a group led by its own pid.
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


def _runs_binary(proc: ProcInfo, argv0: str | None, chrome_path: str) -> bool:
    """Whether `proc` runs the recorded binary: by its argv[0], or by the kernel's record of its
    executable (children Chrome starts as /proc/self/exe; a child caught between fork and exec or
    while rewriting its command line). After a package upgrade the kernel says "(deleted)"."""
    if argv0 == chrome_path:
        return True
    real = os.path.realpath(chrome_path)
    return proc.exe in (real, real + " (deleted)")


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
        if p.uid != uid:
            return f"member {p.pid} runs as uid {p.uid}"
        if (why := _member_doubt(p, record)) is not None:
            return f"member {p.pid} {why}"
    return None


def _member_doubt(proc: ProcInfo, record: PidRecord) -> str | None:
    """Why live member `proc` of a leaderless group is not provably a process of `record`'s
    Chrome. A member is one of: a child (`--type=...`); a fork of the browser not yet turned
    into a child (the browser's own command line, so the record's marker); a process whose
    command line is empty for a moment (being rewritten). All must run the recorded binary."""
    argv = words(proc.argv or ())
    if not _runs_binary(proc, argv[0] if argv else None, record.chrome_path):
        shown = " ".join(argv[:2])[:120]
        return f"is not a child process of {record.chrome_path!r} (runs {proc.exe!r}: {shown!r})"
    if not argv or not argv[0] or is_chrome_child(argv):
        return None
    marker = marker_instance(argv)
    if marker != record.instance_id:
        return f"looks like a browser with marker {marker!r}, not the record's child"
    return None
