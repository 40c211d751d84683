"""browser: one browser for one conversation: its Chrome, its CDP connection, its page, console
buffer, dialogs, popups, downloads and crash handling; its workers, with their logs, where each
response came from, the service worker registry and offline mode. In shared-browser mode, its
context in a Chrome that conversations share.

Imports the `cdp` layer and the foundation modules; nothing above.
"""

from ._console import CONSOLE_CONTEXTS, exception_text
from ._context_session import ContextSession, run_context_session
from ._dirs import SessionDirs
from ._network_log import SOURCES as NETWORK_SOURCES
from ._page import Download, Page
from ._service_workers import ServiceWorkerRegistration, ServiceWorkerVersion
from ._session import BrowserSession, run_browser_session
from ._shared_browser import SharedBrowser, run_shared_browser
from ._workers import Worker

__all__ = [
    "CONSOLE_CONTEXTS",
    "NETWORK_SOURCES",
    "BrowserSession",
    "ContextSession",
    "Download",
    "Page",
    "ServiceWorkerRegistration",
    "ServiceWorkerVersion",
    "SessionDirs",
    "SharedBrowser",
    "Worker",
    "exception_text",
    "run_browser_session",
    "run_context_session",
    "run_shared_browser",
]
