"""The state root: where every profile, PID record, instance lock and session dir lives.

    <state_dir>/                0700
        instances/<id>.lock     flock held by a running service (see _instance.py)
        pids/<pid>-<start>.json one PID record per Chrome (see _registry.py)
        sessions/<name>/        one dir per conversation (owned by browser_tool)
            chrome-<token>/     per Chrome: its profile/; goes with the browser
        tmp/<token>/            per Chrome: its TMPDIR; goes with the browser
        profiles/<name>/        a persistent profile (opt-in, owned by browser_tool): the
                                --user-data-dir of the Chromes bound to it; nothing here deletes it

Chrome's TMPDIR is kept apart and short because full Chromium puts its ProcessSingleton socket
there (TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket) and a unix socket path is limited
to 107 bytes: under a deep session dir it aborted with "Socket path too long". If even
<state_dir>/tmp/<token> is too long, the system temp dir is used (see `chrome_tmp_dir`).

A test or a second service with its own state root can never touch another's processes: the
reaper only looks at records under its root and Chromes whose profile lies under it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# 107 bytes for the socket path, minus "/org.chromium.Chromium.XXXXXX/SingletonSocket".
_MAX_TMPDIR_LEN = 60


def default_state_dir() -> Path:
    """`$BROWSER_TOOL_STATE_DIR`, else `$XDG_STATE_HOME/browser-tool`, else ~/.local/state/..."""
    explicit = os.environ.get("BROWSER_TOOL_STATE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "browser-tool"


def make_private_dir(path: Path) -> Path:
    """Create `path` (and parents) and make it 0700. Raises OSError."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


@dataclass(frozen=True)
class StateLayout:
    """The paths inside one state root."""

    root: Path

    @property
    def pids_dir(self) -> Path:
        return self.root / "pids"

    @property
    def instances_dir(self) -> Path:
        return self.root / "instances"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def tmp_dir(self) -> Path:
        return self.root / "tmp"

    @property
    def profiles_dir(self) -> Path:
        """Persistent profiles, one dir per name; made on first use, not by `create`."""
        return self.root / "profiles"

    def chrome_tmp_dir(self, token: str) -> Path:
        """A TMPDIR for one Chrome, short enough for its singleton socket path."""
        inside = self.tmp_dir / token
        if len(str(inside)) <= _MAX_TMPDIR_LEN:
            return inside
        return Path(tempfile.gettempdir()) / f"browser-tool-{os.getuid()}-{token}"

    def lock_path(self, instance_id: str) -> Path:
        return self.instances_dir / f"{instance_id}.lock"

    def create(self) -> StateLayout:
        """Create the root and its subdirs, all 0700. Raises OSError."""
        for path in (
            self.root,
            self.pids_dir,
            self.instances_dir,
            self.sessions_dir,
            self.tmp_dir,
        ):
            make_private_dir(path)
        return self


def remove_tree(path: Path) -> list[str]:
    """Delete `path` and everything under it; return what could not be deleted (a missing
    path is fine). Never raises: cleanup reports, it does not fail."""
    failures: list[str] = []

    def note(failed: str, exc: BaseException) -> None:
        if not isinstance(exc, FileNotFoundError):
            failures.append(f"could not delete {failed!r}: {exc}")

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=lambda _f, failed, exc: note(failed, exc))
    else:
        shutil.rmtree(path, onerror=lambda _f, failed, info: note(failed, info[1]))
    return failures
