"""The MCP server object itself, without a transport (pure: no Chrome, no service)."""

from __future__ import annotations

from typing import cast

from browser_tool import tool_definitions
from browser_tool.server._mcp import build_mcp_server
from browser_tool.server._service_parts import ServiceParts


def test_input_schemas_are_looked_up_not_listed() -> None:
    """A 2026-07-28 tools/call over streamable HTTP gets its tool's schema from this lookup;
    without it the SDK runs the whole tools/list on every call (issue 23)."""
    server = build_mcp_server(cast(ServiceParts, None), lambda ctx: "c")
    lookup = server.get_tool_input_schema
    assert lookup is not None
    for tool in tool_definitions():
        assert lookup(tool["name"]) == tool["input_schema"]
    assert lookup("browser_fly") is None
