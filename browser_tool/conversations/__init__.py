"""Conversations and the manager that runs them: the state machine (`_conversation`), the steps
between states (`_lifecycle`), one call in its turn (`_calls`), the idle/lifetime clock
(`_clock`), the records handed to front ends (`_reports`), hand-overs to a person (`_handoff`,
`_handoffs`), and the public API (`_manager`).
Browsers come from `sources`, below.
"""

from ._conversation import ConversationState
from ._handoff import DEFAULT_TTL, MAX_TTL, HandoffInfo
from ._handoffs import LIVE_PATH, Handoffs, HandoffTicket, LiveState
from ._manager import BrowserSessionManager, open_session_manager
from ._profiles import ProfileInfo
from ._reports import SESSION_STATES, CleanupReport, SessionInfo

__all__ = [
    "DEFAULT_TTL",
    "LIVE_PATH",
    "MAX_TTL",
    "SESSION_STATES",
    "BrowserSessionManager",
    "CleanupReport",
    "ConversationState",
    "HandoffInfo",
    "HandoffTicket",
    "Handoffs",
    "LiveState",
    "ProfileInfo",
    "SessionInfo",
    "open_session_manager",
]
