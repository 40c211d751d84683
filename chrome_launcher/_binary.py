"""Finding the Chrome binary.

Order: the explicit path (setting / $BROWSER_TOOL_CHROME), then Debian's headless shell, then
Debian's full chromium. Never /usr/bin/chromium or /usr/bin/chromium-headless-shell: both are
shell wrappers that do not exec, so a signal to their pid would miss Chrome.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ._errors import ChromeNotFoundError

HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell"
CHROMIUM = "/usr/lib/chromium/chromium"
DEFAULT_CANDIDATES = (HEADLESS_SHELL, CHROMIUM)


@dataclass(frozen=True)
class ChromeBinary:
    """A Chrome executable and whether it is the headless shell (which needs no --headless)."""

    path: str
    headless_shell: bool


def _is_executable_file(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def classify(path: str) -> ChromeBinary:
    return ChromeBinary(path, headless_shell="headless-shell" in os.path.basename(path))


def find_chrome(explicit: str | None = None) -> ChromeBinary:
    """The Chrome to launch. Raises ChromeNotFoundError listing every path tried."""
    explicit = explicit or os.environ.get("BROWSER_TOOL_CHROME") or None
    candidates = (explicit,) if explicit else DEFAULT_CANDIDATES
    for path in candidates:
        if _is_executable_file(path):
            return classify(path)
    raise ChromeNotFoundError(candidates)
