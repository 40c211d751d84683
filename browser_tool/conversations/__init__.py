"""Conversations and the manager that runs them: the state machine (`_conversation`), the steps
between states (`_lifecycle`), one call in its turn (`_calls`), the idle/lifetime clock
(`_clock`), the records handed to front ends (`_reports`), and the public API (`_manager`).
Browsers come from `sources`, below.
"""

from ._conversation import ConversationState
from ._manager import BrowserSessionManager, open_session_manager
from ._profiles import ProfileInfo
from ._reports import SESSION_STATES, CleanupReport, SessionInfo

__all__ = [
    "SESSION_STATES",
    "BrowserSessionManager",
    "CleanupReport",
    "ConversationState",
    "ProfileInfo",
    "SessionInfo",
    "open_session_manager",
]
