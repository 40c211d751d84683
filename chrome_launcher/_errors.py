"""The exceptions of chrome_launcher, in one tree.

    LauncherError                  root: everything chrome_launcher raises on purpose
    ├── ChromeNotFoundError        no usable Chrome binary (`tried`: every path looked at)
    ├── LaunchError                Chrome did not come up (`returncode`, `stderr_tail`)
    │   └── LaunchTimeoutError     no DevTools endpoint within the launch timeout (`timeout`)
    ├── RegistryError              a PID record could not be written (`path`)
    └── InstanceLockError          the instance lock could not be taken (`path`)

The kill ladder never raises: it returns a KillReport whose `errors` say what went wrong.
"""

from __future__ import annotations

from collections.abc import Sequence


class LauncherError(Exception):
    """Root of every error chrome_launcher raises on purpose."""


class ChromeNotFoundError(LauncherError):
    """No usable Chrome binary was found; `tried` lists every path looked at."""

    def __init__(self, tried: Sequence[str]) -> None:
        self.tried = tuple(tried)
        super().__init__(
            "No usable Chrome found; tried: "
            + ", ".join(repr(p) for p in self.tried)
            + ". Install Debian's chromium-headless-shell (or chromium), or set BROWSER_TOOL_CHROME"
            " to a Chrome binary that is not a shell wrapper."
        )


class LaunchError(LauncherError):
    """Chrome did not start; `stderr_tail` holds its last lines of output."""

    def __init__(
        self, message: str, *, returncode: int | None = None, stderr_tail: str = ""
    ) -> None:
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        text = message
        if returncode is not None:
            text += f" (exit status {returncode})"
        if stderr_tail:
            text += "\nChrome's stderr (last lines):\n" + stderr_tail
        super().__init__(text)


class LaunchTimeoutError(LaunchError):
    """Chrome announced no DevTools endpoint within `timeout` seconds."""

    def __init__(self, timeout: float, *, stderr_tail: str = "") -> None:
        self.timeout = timeout
        super().__init__(
            f"Chrome announced no DevTools endpoint within {timeout:g}s;"
            " its process group was killed",
            stderr_tail=stderr_tail,
        )


class RegistryError(LauncherError):
    """A PID record could not be written."""

    def __init__(self, path: object, reason: str) -> None:
        self.path = path
        super().__init__(f"Could not write PID record {str(path)!r}: {reason}")


class InstanceLockError(LauncherError):
    """The instance lock could not be taken."""

    def __init__(self, path: object, reason: str) -> None:
        self.path = path
        super().__init__(f"Could not take instance lock {str(path)!r}: {reason}")
