"""Spawning Chrome in its own session and process group, with the death-link pipe on fds 3/4.

`subprocess` cannot put pipe ends on fds 3 and 4 without `preexec_fn`, which is unsafe with
threads; `os.posix_spawn` with dup2 file actions and `setsid=True` does it with no thread hazard.

Every fd the service keeps is close-on-exec (Python's default), so no other child inherits the
death link: when this process dies, however it dies, the kernel closes our ends, Chrome reads
EOF on fd 3 and exits. With the death link off (tests that need real orphans), fds 3/4 are not
set up and --remote-debugging-pipe must not be passed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Child-side fds are moved above this number first, so that no dup2 target (0-4) is also a
# source: dup2(fd, fd) would be a no-op that leaves close-on-exec set, and Chrome would start
# without its pipe.
_HIGH_FD = 10


@dataclass(frozen=True)
class Spawned:
    """A freshly spawned Chrome: its pid (= pgid) and the fds the service keeps."""

    pid: int
    stderr_fd: int  # read end of Chrome's stderr
    death_link_fds: tuple[int, ...]  # our ends of the pipe; closing them makes Chrome exit


def _high_cloexec(fd: int) -> int:
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _HIGH_FD)
    os.close(fd)
    return new


def spawn(argv: Sequence[str], env: Mapping[str, str], *, death_link: bool) -> Spawned:
    """Start `argv` as the leader of a new session and process group. Raises OSError."""
    opened: list[int] = []
    keep: list[int] = []
    try:
        devnull = _high_cloexec(os.open(os.devnull, os.O_RDWR))
        opened.append(devnull)
        err_r, err_w = (_high_cloexec(fd) for fd in os.pipe())
        opened += [err_r, err_w]
        actions: list[tuple[int, int, int]] = [
            (os.POSIX_SPAWN_DUP2, devnull, 0),
            (os.POSIX_SPAWN_DUP2, devnull, 1),
            (os.POSIX_SPAWN_DUP2, err_w, 2),
        ]
        if death_link:
            # Chrome reads commands from fd 3 and writes replies to fd 4. We never send any; the
            # pipe is there only so that its closing ends Chrome.
            to_chrome_r, to_chrome_w = (_high_cloexec(fd) for fd in os.pipe())
            from_chrome_r, from_chrome_w = (_high_cloexec(fd) for fd in os.pipe())
            opened += [to_chrome_r, to_chrome_w, from_chrome_r, from_chrome_w]
            actions += [
                (os.POSIX_SPAWN_DUP2, to_chrome_r, 3),
                (os.POSIX_SPAWN_DUP2, from_chrome_w, 4),
            ]
            keep = [to_chrome_w, from_chrome_r]
        pid = os.posix_spawn(argv[0], list(argv), dict(env), file_actions=actions, setsid=True)
    except BaseException:
        for fd in opened:
            os.close(fd)
        raise
    for fd in opened:
        if fd not in keep and fd != err_r:
            os.close(fd)
    return Spawned(pid=pid, stderr_fd=err_r, death_link_fds=tuple(keep))


def close_fds(fds: Sequence[int]) -> None:
    """Close fds, ignoring ones already closed."""
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
