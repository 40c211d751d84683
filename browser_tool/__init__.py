"""browser_tool: browser tools for AI agent runtimes, one headless Chrome per conversation.

The public names are re-exported here; front ends and other packages use nothing else.
"""

from ._cdp_connection import CdpConnection, CdpResult, CdpSession, open_cdp_connection
from ._cdp_events import CdpEvent
from ._cdp_stats import CdpStatistics
from ._context import ToolContext
from ._conversation import CONVERSATION_ID_PATTERN, session_dir_name, validate_conversation_id
from ._duration import format_duration, parse_duration
from ._errors import (
    BrowserLaunchError,
    BrowserToolError,
    CdpCommandError,
    CdpConnectionError,
    CdpError,
    CdpTimeoutError,
    InvalidInputError,
    SessionClosedError,
    SessionError,
    ToolError,
)
from ._images import FittedImage, ImageLimits, fit_image, image_size, read_image_file
from ._manager import BrowserSessionManager, open_session_manager
from ._output import ToolImage, ToolOutput
from ._reports import CleanupReport, SessionInfo
from ._session import BrowserSession, SessionState
from ._settings import Settings
from ._tools import UnknownToolError, tool_definitions

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
    "FittedImage",
    "ImageLimits",
    "InvalidInputError",
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
