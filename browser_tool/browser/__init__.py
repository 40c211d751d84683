"""browser: one browser for one conversation: its Chrome, its CDP connection, its tabs (each a
page with its console buffer, dialogs and crash handling), downloads; each page's workers,
with their logs, where each response came from, the service worker registry and offline mode.
In shared-browser mode, its context in a Chrome that conversations share.

Imports the `cdp` layer and the foundation modules; nothing above.
"""

from ._action_watch import ActionWatch, watch_action
from ._actionable import ActionTarget, resolve_actionable
from ._ax_tree import Snapshot, SnapshotNode
from ._console import CONSOLE_CONTEXTS, ConsoleEntry, exception_text
from ._context_session import ContextSession, run_context_session
from ._dirs import SessionDirs
from ._downloads import Download, download_params, place_download
from ._freeze import freeze_pages, pages_cpu_seconds, probe_browser, thaw_pages
from ._input import (
    NAMED_KEYS,
    KeyPress,
    canonical_modifier,
    insert_text,
    key_events,
    modifier_bits,
    mouse_click,
    mouse_move,
    parse_key,
    press_key,
    select_all,
    type_char,
)
from ._live_input import live_input_commands
from ._network_log import SOURCES as NETWORK_SOURCES
from ._notes import BROWSER_CRASHED_DURING_CALL, PAGE_CRASHED_DURING_CALL, TAB_CLOSED_DURING_CALL
from ._page import Page, PageState
from ._refs import ElementHandle, RefTable, resolve_ref
from ._screencast import Frame, Screencast
from ._service_workers import ServiceWorkerRegistration, ServiceWorkerVersion
from ._session import BrowserSession, run_browser_session
from ._shared_browser import SharedBrowser, run_shared_browser
from ._snapshot import capture_snapshot
from ._storage_shape import StorageState, normal_origin, parse_storage_state
from ._storage_state import read_storage_state, write_storage_state
from ._tabs import Tabs
from ._workers import Worker

__all__ = [
    "BROWSER_CRASHED_DURING_CALL",
    "CONSOLE_CONTEXTS",
    "NAMED_KEYS",
    "NETWORK_SOURCES",
    "PAGE_CRASHED_DURING_CALL",
    "TAB_CLOSED_DURING_CALL",
    "ActionTarget",
    "ActionWatch",
    "BrowserSession",
    "ConsoleEntry",
    "ContextSession",
    "Download",
    "ElementHandle",
    "Frame",
    "KeyPress",
    "Page",
    "PageState",
    "RefTable",
    "Screencast",
    "ServiceWorkerRegistration",
    "ServiceWorkerVersion",
    "SessionDirs",
    "SharedBrowser",
    "Snapshot",
    "SnapshotNode",
    "StorageState",
    "Tabs",
    "Worker",
    "canonical_modifier",
    "capture_snapshot",
    "download_params",
    "exception_text",
    "freeze_pages",
    "insert_text",
    "key_events",
    "live_input_commands",
    "modifier_bits",
    "mouse_click",
    "mouse_move",
    "normal_origin",
    "pages_cpu_seconds",
    "parse_key",
    "parse_storage_state",
    "place_download",
    "press_key",
    "probe_browser",
    "read_storage_state",
    "resolve_actionable",
    "resolve_ref",
    "run_browser_session",
    "run_context_session",
    "run_shared_browser",
    "select_all",
    "thaw_pages",
    "type_char",
    "watch_action",
    "write_storage_state",
]
