"""browser: one browser for one conversation: its Chrome, its CDP connection, its page, console
buffer, dialogs, popups, downloads and crash handling; or, in shared-browser mode, its context in
a Chrome that conversations share.

Imports the `cdp` layer and the foundation modules; nothing above.
"""

from ._context_session import ContextSession, run_context_session
from ._dirs import SessionDirs
from ._page import Download, Page, exception_text
from ._session import BrowserSession, run_browser_session
from ._shared_browser import SharedBrowser, run_shared_browser

__all__ = [
    "BrowserSession",
    "ContextSession",
    "Download",
    "Page",
    "SessionDirs",
    "SharedBrowser",
    "exception_text",
    "run_browser_session",
    "run_context_session",
    "run_shared_browser",
]
