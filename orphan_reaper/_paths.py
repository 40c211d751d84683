"""Which paths the reaper may delete, whatever a record says.

Only under the state root, and a profile only as a `chrome-<token>` dir; a TMPDIR only directly
under <root>/tmp/ or as chrome_launcher's fallback in the system temp dir
(`browser-tool-<uid>-<token>`, used when <root>/tmp/<token> is too long for Chrome's socket).
Paths are compared after lexical normalisation against both spellings of the root (as given and
resolved), so `..` cannot climb out and a symlinked root still matches.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from chrome_launcher import PidRecord

from ._steps import Dirs

BROWSER_DIR_PREFIX = "chrome-"


def norm(path: str | Path) -> str:
    return os.path.normpath(str(path))


def within(path: str, base: str) -> bool:
    """True when normalized `path` is `base` or lies under it."""
    return path == base or path.startswith(base.rstrip("/") + "/")


@dataclass(frozen=True)
class RootPaths:
    """Path rules for one state root."""

    forms: tuple[str, ...]  # the root's absolute and resolved spellings
    system_tmp: str
    uid: int

    def under(self, path: str) -> bool:
        """True when `path` lies strictly under the root."""
        p = norm(path)
        return any(p != form and within(p, form) for form in self.forms)

    def browser_dir_ok(self, path: str) -> bool:
        return os.path.basename(norm(path)).startswith(BROWSER_DIR_PREFIX) and self.under(path)

    def tmp_dir_ok(self, path: str, uid: int, browser_dir: str) -> bool:
        p = norm(path)
        if os.path.dirname(p) in {os.path.join(form, "tmp") for form in self.forms}:
            return True
        token = os.path.basename(norm(browser_dir))[len(BROWSER_DIR_PREFIX) :]
        fallback = os.path.join(norm(self.system_tmp), f"browser-tool-{uid}-{token}")
        return bool(token) and p == fallback

    def record_dirs(self, record: PidRecord) -> tuple[Dirs, tuple[str, ...]]:
        """(deletable dirs of `record`, the ones it names that we refuse to delete)."""
        dirs: list[tuple[str, Path]] = []
        refused: list[str] = []
        if self.browser_dir_ok(record.browser_dir):
            dirs.append(("browser_dir", Path(record.browser_dir)))
        else:
            refused.append(record.browser_dir)
        if self.tmp_dir_ok(record.tmp_dir, record.uid, record.browser_dir):
            dirs.append(("tmp_dir", Path(record.tmp_dir)))
        else:
            refused.append(record.tmp_dir)
        return tuple(dirs), tuple(refused)

    def derived_dirs(self, profile: str) -> Dirs:
        """The dirs of a Chrome without a record, from its profile <...>/chrome-<token>/profile."""
        browser_dir = os.path.dirname(norm(profile))
        token = os.path.basename(browser_dir)[len(BROWSER_DIR_PREFIX) :]
        if not (token.isalnum() and self.browser_dir_ok(browser_dir)):
            return ()
        return (
            ("browser_dir", Path(browser_dir)),
            ("tmp_dir", Path(self.forms[0], "tmp", token)),
            ("tmp_dir", Path(self.system_tmp, f"browser-tool-{self.uid}-{token}")),
        )
