"""browser: one browser for one conversation: its Chrome, its CDP connection, its page, console
buffer, dialogs, popups, downloads and crash handling; its workers, with their logs, where each
response came from, the service worker registry and offline mode. In shared-browser mode, its
context in a Chrome that conversations share.

Imports the `cdp` layer and the foundation modules; nothing above.
"""

from ._console import CONSOLE_CONTEXTS, ConsoleEntry, exception_text
from ._context_session import ContextSession, run_context_session
from ._dirs import SessionDirs
from ._downloads import Download, download_params
from ._network_log import SOURCES as NETWORK_SOURCES
from ._notes import BROWSER_CRASHED_DURING_CALL, PAGE_CRASHED_DURING_CALL
from ._page import Page, PageState
from ._service_workers import ServiceWorkerRegistration, ServiceWorkerVersion
from ._session import BrowserSession, run_browser_session
from ._shared_browser import SharedBrowser, run_shared_browser
from ._workers import Worker

__all__ = [
    "BROWSER_CRASHED_DURING_CALL",
    "CONSOLE_CONTEXTS",
    "NETWORK_SOURCES",
    "PAGE_CRASHED_DURING_CALL",
    "BrowserSession",
    "ConsoleEntry",
    "ContextSession",
    "Download",
    "Page",
    "PageState",
    "ServiceWorkerRegistration",
    "ServiceWorkerVersion",
    "SessionDirs",
    "SharedBrowser",
    "Worker",
    "download_params",
    "exception_text",
    "run_browser_session",
    "run_context_session",
    "run_shared_browser",
]
