"""browser: one browser for one conversation: its Chrome, its CDP connection, its page, console
buffer, dialogs, popups, downloads and crash handling; its workers, with their logs, where each
response came from, the service worker registry and offline mode.

Imports the `cdp` layer and the foundation modules; nothing above.
"""

from ._console import CONSOLE_CONTEXTS, exception_text
from ._dirs import SessionDirs
from ._network_log import SOURCES as NETWORK_SOURCES
from ._page import Download, Page
from ._service_workers import ServiceWorkerRegistration, ServiceWorkerVersion
from ._session import BrowserSession, run_browser_session
from ._workers import Worker

__all__ = [
    "CONSOLE_CONTEXTS",
    "NETWORK_SOURCES",
    "BrowserSession",
    "Download",
    "Page",
    "ServiceWorkerRegistration",
    "ServiceWorkerVersion",
    "SessionDirs",
    "Worker",
    "exception_text",
    "run_browser_session",
]
