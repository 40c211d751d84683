"""Persistent profiles: named Chrome profiles under `<state_dir>/profiles/<name>/`, opt-in.

A conversation bound to a profile (before its first call) runs its Chrome with that dir as its
--user-data-dir, so cookies, storage and logins outlive the browser: idle reaping, deletion of
the conversation, kill paths and restarts of the service leave the dir alone (see
chrome_launcher's `_persistent.py` for the stale lock files a killed Chrome leaves there).

A profile is claimed by one live conversation at a time, from its binding until the
conversation is deleted or forgotten, or the manager closes. The claim is an exclusive `flock`
on `<name>/.browser-tool-holder`, held all that time, whose text names the holder: a second
conversation of this manager, or of another service on the same state root, is refused with
the holder's name; a service that died drops its locks with it (the kernel releases them), so
no claim outlives its holder. Deleting a profile takes the same lock first.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from chrome_launcher import make_private_dir, processes_on_profile

from .._errors import ConflictError
from .._profile_names import VALID_PROFILE_NAME, validate_profile_name

HOLDER_FILE = ".browser-tool-holder"


@dataclass(frozen=True)
class ProfileInfo:
    """One profile as `GET /v1/profiles` lists it."""

    name: str
    held_by: str | None  # the conversation holding it ("instance X" when another service's)
    size_bytes: int
    modified_at: float  # wall clock: the profile dir's last change

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "in_use": self.held_by is not None,
            "held_by": self.held_by,
            "size_bytes": self.size_bytes,
            "modified_at": self.modified_at,
        }


@dataclass(frozen=True)
class _Claim:
    conversation_id: str
    fd: int


class ProfileRegistry:
    """The profiles of one state root and the claims this manager holds on them."""

    def __init__(self, profiles_dir: Path, instance_id: str) -> None:
        self.profiles_dir = profiles_dir
        self._instance_id = instance_id
        self._claims: dict[str, _Claim] = {}

    def path(self, name: str) -> Path:
        return self.profiles_dir / validate_profile_name(name)

    def holder(self, name: str) -> str | None:
        """Who holds `name` (a conversation of ours, or another service's), or None."""
        if (claim := self._claims.get(name)) is not None:
            return claim.conversation_id
        if not self.path(name).is_dir():
            return None
        fd = self._try_lock(name)
        if fd is None:
            return self._foreign_holder(name)
        os.close(fd)
        return None

    def claim(self, name: str, conversation_id: str) -> Path:
        """Claim profile `name` (created if new) for `conversation_id`; return its dir. A second
        claim by the same conversation is a no-op. Raises ConflictError naming the holder."""
        path = self.path(name)
        claim = self._claims.get(name)
        if claim is not None:
            if claim.conversation_id != conversation_id:
                raise _busy(name, f"conversation {claim.conversation_id!r}")
            return path
        try:
            make_private_dir(self.profiles_dir)  # (mkdir gives parents the umask's mode)
            make_private_dir(path)
        except OSError as exc:
            raise ConflictError("profile_unusable", f"Profile {name!r}: {exc}") from exc
        fd = self._try_lock(name)
        if fd is None:
            raise _busy(name, self._foreign_holder(name) or "another service")
        holder = f"conversation {conversation_id!r} of instance {self._instance_id}"
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, holder.encode(), 0)
        except OSError as exc:
            os.close(fd)
            raise ConflictError("profile_unusable", f"Profile {name!r}: {exc}") from exc
        self._claims[name] = _Claim(conversation_id, fd)
        return path

    def release(self, name: str | None, conversation_id: str) -> None:
        """`conversation_id` is done with `name` (deleted, forgotten). Never raises."""
        claim = self._claims.get(name or "")
        if claim is not None and claim.conversation_id == conversation_id:
            del self._claims[name or ""]
            os.close(claim.fd)

    def close(self) -> None:
        """The manager is closing: drop every claim."""
        for claim in self._claims.values():
            os.close(claim.fd)
        self._claims.clear()

    async def list(self) -> list[ProfileInfo]:
        """Every profile, with its holder and size (read in a worker thread)."""
        infos = []
        for name in sorted(_names(self.profiles_dir)):
            path = self.profiles_dir / name
            size = await trio.to_thread.run_sync(_tree_size, path)
            with contextlib.suppress(OSError):
                infos.append(ProfileInfo(name, self.holder(name), size, path.stat().st_mtime))
        return infos

    async def delete(self, name: str) -> bool:
        """Delete profile `name` and everything in it; False when there is none. Raises
        ConflictError while a conversation (or a live process) uses it."""
        path = self.path(name)
        if not path.is_dir():
            return False
        if (claim := self._claims.get(name)) is not None:
            raise _busy(name, f"conversation {claim.conversation_id!r}", doing="deleted")
        fd = self._try_lock(name)
        if fd is None:
            raise _busy(name, self._foreign_holder(name) or "another service", doing="deleted")
        try:
            if users := processes_on_profile(path):
                raise _busy(name, f"a running process (pid {users[0]})", doing="deleted")
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(_remove, path)
        finally:
            os.close(fd)
        return True

    def _try_lock(self, name: str) -> int | None:
        """An fd holding the exclusive lock of `name` (its dir must exist), or None when someone
        else holds it. Raises ConflictError when the holder file cannot be opened."""
        try:
            fd = os.open(
                self.path(name) / HOLDER_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600
            )
        except OSError as exc:
            raise ConflictError("profile_unusable", f"Profile {name!r}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except OSError as exc:
            os.close(fd)
            raise ConflictError("profile_unusable", f"Profile {name!r}: {exc}") from exc
        return fd

    def _foreign_holder(self, name: str) -> str | None:
        try:
            text = (self.path(name) / HOLDER_FILE).read_text()[:300]
        except OSError:
            return None
        return text or "another service"


def _busy(name: str, holder: str, *, doing: str = "used") -> ConflictError:
    return ConflictError(
        "profile_in_use",
        f"Profile {name!r} is in use by {holder}: a profile is used by one live conversation "
        f"at a time, so it cannot be {doing} now. Delete that conversation "
        "(DELETE /v1/conversations/{id}) or use another profile.",
    )


def _names(profiles_dir: Path) -> list[str]:
    try:
        return [n for n in os.listdir(profiles_dir) if VALID_PROFILE_NAME.fullmatch(n)]
    except OSError:
        return []


def _tree_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def _remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
