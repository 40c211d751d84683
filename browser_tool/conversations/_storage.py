"""A conversation's storage state waiting for its browser (issue 21, part 3).

Loaded before the conversation has a browser, a storage state is kept in its dir as
`storage-state.json` (0600: it holds cookies, logins included) and loaded into the browser its
next call launches, before the tool runs; the file is then removed. Written atomically (a temp
file renamed), so a crash never leaves half a state to load.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from .._errors import CdpError, InvalidInputError, SessionError
from ..browser import (
    BrowserSession,
    SessionDirs,
    StorageState,
    parse_storage_state,
    write_storage_state,
)
from ..sources import Browser

PENDING_FILE = "storage-state.json"


def pending_path(dirs: SessionDirs) -> Path:
    return dirs.root / PENDING_FILE


def keep_pending(dirs: SessionDirs, state: StorageState) -> None:
    """Keep `state` for the next launch (0600, atomic), added to one kept already, as a load
    into a running browser adds. Raises SessionError when it cannot."""
    kept = read_pending(dirs)
    if kept is not None:
        state = parse_storage_state(merged(kept, state))  # the bounds hold for the sum
    path = pending_path(dirs)
    tmp = path.with_name(f".{PENDING_FILE}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, json.dumps(state).encode())
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise SessionError(f"Could not keep the storage state: {exc.strerror or exc}") from exc


def merged(old: StorageState, new: StorageState) -> StorageState:
    """`new` loaded over `old`: cookies of the same name, domain and path and localStorage keys
    of the same origin are replaced, nothing is removed."""
    cookies = {(c["name"], c["domain"], c["path"]): c for c in old["cookies"] + new["cookies"]}
    origins: dict[str, dict[str, str]] = {}
    for entry in old["origins"] + new["origins"]:
        items = origins.setdefault(entry["origin"], {})
        items.update((i["name"], i["value"]) for i in entry["localStorage"])
    return {
        "cookies": list(cookies.values()),
        "origins": [
            {"origin": o, "localStorage": [{"name": k, "value": v} for k, v in items.items()]}
            for o, items in origins.items()
        ],
    }


def read_pending(dirs: SessionDirs | None) -> StorageState | None:
    """The state kept for the next launch, or None."""
    if dirs is None:
        return None
    try:
        return parse_storage_state(json.loads(pending_path(dirs).read_text()))
    except (OSError, ValueError):
        return None


async def apply_pending(dirs: SessionDirs, browser: Browser) -> StorageState | None:
    """Load the kept state into the just-launched `browser` and drop the file; return what
    was loaded (None: nothing was kept). Raises SessionError when the browser refuses it."""
    state = read_pending(dirs)
    if state is None or not isinstance(browser, BrowserSession):
        return None
    try:
        await write_storage_state(browser, state)
    except (CdpError, InvalidInputError, SessionError) as exc:
        raise SessionError(f"The storage state could not be loaded (dropped): {exc}") from exc
    finally:  # loaded or refused, once: a browser that is up stays, and is not re-loaded
        with contextlib.suppress(OSError):
            pending_path(dirs).unlink()
    return state
