"""browser_tool: browser tools for AI agent runtimes, one headless Chrome per conversation.

The public names are re-exported here; front ends and other packages use nothing else.

Layers, top to bottom. A module imports its own layer and the layers below it, never one above;
another subpackage only through its `__init__`; no `_private` name of another module; no import
circle, type-only imports included (tests/browser_tool/test_layers.py reads this map).

    cli          cli/
    server       server/
    manager      conversations/
    sources      sources/
    tools        tools/
    browser      browser/
    cdp          cdp/
    foundation   _errors _settings _duration _conversation_ids _profile_names _tasks _metrics

- cli: argument parsing, the one-shot `call`, the admin commands.
- server: the service runtime (signals, shutdown, calls in flight), HTTP routes, MCP endpoints,
  /metrics, OpenAPI: thin doors over the manager.
- manager (conversations/): conversations: their state machine (`_conversation`), the steps
  between states (`_lifecycle`), one call in its turn (`_calls`), the idle/lifetime clock
  (`_clock`), the records for front ends (`_reports`), and the public API (`_manager`).
- sources (sources/): where browsers come from: the seam and one Chrome per conversation
  (`_seam`), the pre-warmed pool (`_pool`), shared Chromes with a context each (`_shared`).
  Below the manager: a source knows nothing of conversations.
- tools: the registry and one module per tool; a tool sees only its `ToolContext`.
- browser: one browser for one conversation: its tabs (each a page with its console buffer,
  dialogs and crash handling), popups followed as tabs.
- cdp: the CDP client: transport, connection, sessions, events, protocol types.
- foundation: errors, settings, durations, conversation ids, profile names, task helpers,
  counters.
"""

from ._conversation_ids import CONVERSATION_ID_PATTERN, session_dir_name, validate_conversation_id
from ._duration import format_duration, parse_duration
from ._errors import (
    BrowserLaunchError,
    BrowserToolError,
    CdpCommandError,
    CdpConnectionError,
    CdpError,
    CdpSessionDetachedError,
    CdpTargetCrashedError,
    CdpTimeoutError,
    ClientGone,
    CloseReason,
    ConflictError,
    DoorError,
    HandoffError,
    HttpError,
    InvalidInputError,
    ListenError,
    ListenPolicyError,
    NoConversationError,
    ResultParseError,
    ServiceError,
    SessionClosedError,
    SessionError,
    ToolError,
)
from ._metrics import Metrics
from ._profile_names import PROFILE_NAME_PATTERN, validate_profile_name
from ._settings import Settings
from .browser import BrowserSession, SessionDirs
from .cdp import CdpConnection, CdpEvent, CdpResult, CdpSession, CdpStatistics, open_cdp_connection
from .conversations import (
    BrowserSessionManager,
    CleanupReport,
    ConversationState,
    ProfileInfo,
    SessionInfo,
    open_session_manager,
)
from .sources import Browser, BrowserSource, LaunchSource, PoolSource, SourceFactory
from .tools import (
    ConversationAccess,
    FittedImage,
    ImageLimits,
    ToolContext,
    ToolImage,
    ToolOutput,
    UnknownToolError,
    fit_image,
    image_size,
    read_image_file,
    tool_definitions,
)

__all__ = [
    "CONVERSATION_ID_PATTERN",
    "PROFILE_NAME_PATTERN",
    "Browser",
    "BrowserLaunchError",
    "BrowserSession",
    "BrowserSessionManager",
    "BrowserSource",
    "BrowserToolError",
    "CdpCommandError",
    "CdpConnection",
    "CdpConnectionError",
    "CdpError",
    "CdpEvent",
    "CdpResult",
    "CdpSession",
    "CdpSessionDetachedError",
    "CdpStatistics",
    "CdpTargetCrashedError",
    "CdpTimeoutError",
    "CleanupReport",
    "ClientGone",
    "CloseReason",
    "ConflictError",
    "ConversationAccess",
    "ConversationState",
    "DoorError",
    "FittedImage",
    "HandoffError",
    "HttpError",
    "ImageLimits",
    "InvalidInputError",
    "LaunchSource",
    "ListenError",
    "ListenPolicyError",
    "Metrics",
    "NoConversationError",
    "PoolSource",
    "ProfileInfo",
    "ResultParseError",
    "ServiceError",
    "SessionClosedError",
    "SessionDirs",
    "SessionError",
    "SessionInfo",
    "Settings",
    "SourceFactory",
    "ToolContext",
    "ToolError",
    "ToolImage",
    "ToolOutput",
    "UnknownToolError",
    "fit_image",
    "format_duration",
    "image_size",
    "open_cdp_connection",
    "open_session_manager",
    "parse_duration",
    "read_image_file",
    "session_dir_name",
    "tool_definitions",
    "validate_conversation_id",
    "validate_profile_name",
]
