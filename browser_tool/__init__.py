"""browser_tool: browser tools for AI agent runtimes, one headless Chrome per conversation.

The public names are re-exported here; front ends and other packages use nothing else.
"""

from ._conversation_ids import CONVERSATION_ID_PATTERN, session_dir_name, validate_conversation_id
from ._duration import format_duration, parse_duration
from ._errors import (
    BrowserLaunchError,
    BrowserToolError,
    CdpCommandError,
    CdpConnectionError,
    CdpError,
    CdpTimeoutError,
    ClientGone,
    DoorError,
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
from ._manager import BrowserSessionManager, open_session_manager
from ._reports import CleanupReport, SessionInfo
from ._settings import Settings
from .browser import BrowserSession, SessionState
from .cdp import CdpConnection, CdpEvent, CdpResult, CdpSession, CdpStatistics, open_cdp_connection
from .tools import (
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
    "BrowserLaunchError",
    "BrowserSession",
    "BrowserSessionManager",
    "BrowserToolError",
    "CdpCommandError",
    "CdpConnection",
    "CdpConnectionError",
    "CdpError",
    "CdpEvent",
    "CdpResult",
    "CdpSession",
    "CdpStatistics",
    "CdpTimeoutError",
    "CleanupReport",
    "ClientGone",
    "DoorError",
    "FittedImage",
    "HttpError",
    "ImageLimits",
    "InvalidInputError",
    "ListenError",
    "ListenPolicyError",
    "NoConversationError",
    "ResultParseError",
    "ServiceError",
    "SessionClosedError",
    "SessionError",
    "SessionInfo",
    "SessionState",
    "Settings",
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
]
