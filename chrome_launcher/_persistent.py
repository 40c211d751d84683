"""A persistent profile: a --user-data-dir that outlives the Chrome running on it.

Chrome marks a profile in use with `SingletonLock`, `SingletonSocket` and `SingletonCookie`
(symlinks in the profile dir; full Chromium makes them, the headless shell does not) and writes
`DevToolsActivePort` there at each start. A Chrome killed with SIGKILL leaves all four behind:
the next Chrome on the profile may then refuse to start ("profile in use by another process")
or, worse, our launcher could read the old port from a stale `DevToolsActivePort`. So before
each launch on a persistent profile we prove no live process runs on it (any process whose
command line names it as its --user-data-dir, ours or not, of any instance) and only then
remove those files. A live one is never touched here: the launch fails and names it (the
orphan reaper kills it if it is an orphan of ours).

Pure apart from reading /proc and the profile dir; no trio.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import _procfs
from ._argv import user_data_dir
from ._errors import LaunchError
from ._state import make_private_dir

STALE_FILES = ("SingletonLock", "SingletonSocket", "SingletonCookie", "DevToolsActivePort")


def processes_on_profile(profile_dir: Path) -> list[int]:
    """Pids of live processes whose --user-data-dir is `profile_dir` (compared normalised)."""
    want = os.path.normpath(str(profile_dir))
    found = []
    for stat in _procfs.all_stats():
        if not stat.alive:
            continue
        argv = _procfs.cmdline(stat.pid)
        named = user_data_dir(argv or ())
        if named is not None and os.path.normpath(named) == want:
            found.append(stat.pid)
    return found


def prepare_persistent_profile(profile_dir: Path) -> list[str]:
    """Create `profile_dir` (0700) if needed and remove the stale marks of a dead Chrome;
    return the names removed. Raises LaunchError when a live process runs on it, or the dir
    cannot be made ready."""
    if users := processes_on_profile(profile_dir):
        raise LaunchError(
            f"The profile {str(profile_dir)!r} is in use by a running process (pid "
            f"{', '.join(map(str, users))}); it was not started by this conversation. If it "
            "is an orphan of an earlier run, `orphan-reaper` (or the next start-up) ends it."
        )
    removed = []
    try:
        make_private_dir(profile_dir)
        for name in STALE_FILES:
            path = profile_dir / name
            # A symlink whose target is gone is still there: lexists, not exists.
            if os.path.lexists(path):
                path.unlink()
                removed.append(name)
    except OSError as exc:
        raise LaunchError(f"Could not prepare the profile {str(profile_dir)!r}: {exc}") from exc
    return removed
