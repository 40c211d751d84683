"""The `.instance` file of a session dir: which instance owns it.

The service writes it when it creates a session dir; the reaper removes a session dir only when
this file names a dead instance. It is written atomically (temp file + rename): a torn write
could leave a prefix of the id, itself a valid id of an instance that never ran (so "dead"),
and the reaper would delete a live session.
"""

from __future__ import annotations

import os
from pathlib import Path

from chrome_launcher import is_valid_instance_id

SESSION_OWNER_FILE = ".instance"


def write_session_owner(session_dir: Path, instance_id: str) -> Path:
    """Write `<session_dir>/.instance` naming `instance_id`, atomically. Raises ValueError for
    an invalid id and OSError when the file cannot be written."""
    if not is_valid_instance_id(instance_id):
        raise ValueError(f"not a valid instance id: {instance_id!r}")
    path = session_dir / SESSION_OWNER_FILE
    tmp = session_dir / f"{SESSION_OWNER_FILE}.{os.getpid()}.tmp"
    try:
        tmp.write_text(instance_id + "\n")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def read_session_owner(session_dir: Path) -> tuple[str | None, str | None]:
    """(owner instance id, None), or (None, why there is none). Never raises."""
    try:
        text = (session_dir / SESSION_OWNER_FILE).read_text()
    except FileNotFoundError:
        return None, f"no {SESSION_OWNER_FILE} file"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"unreadable {SESSION_OWNER_FILE}: {exc}"
    owner = text.strip()
    if not is_valid_instance_id(owner):
        return None, f"{SESSION_OWNER_FILE} holds no valid instance id: {owner[:60]!r}"
    return owner, None
