"""Instance liveness: a running service holds an exclusive flock on instances/<id>.lock.

PIDs prove nothing (they are reused); a lock does: the kernel drops it however the holder dies.
So if anyone can take an instance's lock, that instance is dead, and its Chromes are orphans.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from pathlib import Path

from ._errors import InstanceLockError
from ._state import StateLayout

MARKER_SWITCH = "--browser-tool-instance"


def new_instance_id() -> str:
    """A fresh id for one run of a service: unique, short, safe in a file name and a switch."""
    return f"{os.getpid()}-{secrets.token_hex(6)}"


def is_valid_instance_id(instance_id: str) -> bool:
    return bool(instance_id) and all(c.isalnum() or c in "-_" for c in instance_id)


class InstanceLock:
    """The exclusive lock that says "instance `instance_id` is alive". Built by `acquire`."""

    def __init__(self, path: Path, fd: int, instance_id: str) -> None:
        self.path = path
        self.instance_id = instance_id
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, layout: StateLayout, instance_id: str | None = None) -> InstanceLock:
        """Create and lock instances/<id>.lock. Raises InstanceLockError."""
        instance_id = instance_id or new_instance_id()
        if not is_valid_instance_id(instance_id):
            raise InstanceLockError(instance_id, "instance ids are letters, digits, '-' and '_'")
        path = layout.lock_path(instance_id)
        try:
            layout.create()
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise InstanceLockError(path, exc.strerror or str(exc)) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise InstanceLockError(path, "already held by a live instance") from exc
        # A reaper may have unlinked the file between our open and our flock (it looked dead):
        # then we would hold a lock nobody can see. Check that the path is still our file.
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            raise InstanceLockError(path, "the lock file was removed while being taken; retry")
        os.write(fd, f"{os.getpid()}\n".encode())
        return cls(path, fd, instance_id)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Remove the lock file and drop the lock. Idempotent; never raises."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        # Unlink while still holding the lock, so nobody sees a dead-looking file we still own.
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)
        os.close(fd)

    def __enter__(self) -> InstanceLock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def instance_is_alive(layout: StateLayout, instance_id: str) -> bool:
    """True when some process holds instance `instance_id`'s lock.

    A missing lock file means dead. Never raises: an unreadable lock counts as alive, since
    the reaper must never kill what it cannot prove is orphaned.
    """
    if not is_valid_instance_id(instance_id):
        return True
    path = layout.lock_path(instance_id)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
