"""cdp: the Chrome DevTools Protocol client. One WebSocket per browser, one reader task, commands
correlated by id, sessions demultiplexed by `sessionId`, events routed to bounded listeners.

Imports nothing of browser_tool but the foundation modules (`_errors`).
"""

from ._commands import CdpResult
from ._connection import CdpConnection
from ._events import CdpEvent
from ._open import open_cdp_connection
from ._session import CdpSession
from ._statistics import CdpStatistics

__all__ = [
    "CdpConnection",
    "CdpEvent",
    "CdpResult",
    "CdpSession",
    "CdpStatistics",
    "open_cdp_connection",
]
