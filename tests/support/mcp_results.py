"""Reading MCP tool results in tests."""

from __future__ import annotations

import mcp_types as types


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text
