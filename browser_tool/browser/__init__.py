"""browser: one browser for one conversation: its Chrome, its CDP connection, its page, console
buffer, dialogs, popups, downloads and crash handling.

Imports the `cdp` layer and the foundation modules; nothing above.
"""

from ._console import ConsoleEntry, exception_text
from ._dirs import SessionDirs
from ._downloads import Download
from ._notes import BROWSER_CRASHED_DURING_CALL, PAGE_CRASHED_DURING_CALL
from ._page import Page
from ._session import BrowserSession, run_browser_session

__all__ = [
    "BROWSER_CRASHED_DURING_CALL",
    "PAGE_CRASHED_DURING_CALL",
    "BrowserSession",
    "ConsoleEntry",
    "Download",
    "Page",
    "SessionDirs",
    "exception_text",
    "run_browser_session",
]
