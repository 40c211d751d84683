"""server: the service runtime (signals, shutdown, calls in flight) and the doors over the
manager: the HTTP API, the MCP endpoints (stdio and streamable HTTP), /metrics and OpenAPI.

Imports the manager (top-level modules) and the layers below it; nothing of `cli`.
"""

from ._http_service import run_http_service
from ._listen import check_listen_policy
from ._mcp_stdio import default_conversation_id, run_mcp_stdio
from ._runtime import SHUTDOWN_SIGNALS, Shutdown

__all__ = [
    "SHUTDOWN_SIGNALS",
    "Shutdown",
    "check_listen_policy",
    "default_conversation_id",
    "run_http_service",
    "run_mcp_stdio",
]
