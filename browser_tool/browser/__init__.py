"""browser: one browser for one conversation: its Chrome, its CDP connection, its page, console
buffer, dialogs, popups, downloads and crash handling.

Imports the `cdp` layer and the foundation modules; nothing above.
"""

from ._dirs import SessionDirs
from ._page import Download, Page, exception_text
from ._session import BrowserSession, run_browser_session

__all__ = [
    "BrowserSession",
    "Download",
    "Page",
    "SessionDirs",
    "exception_text",
    "run_browser_session",
]
