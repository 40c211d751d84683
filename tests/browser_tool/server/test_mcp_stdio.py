"""`browser-tool mcp` over stdio, driven by the `mcp` SDK's own client, with real Chromium.

Charter: the SDK client starts the server as a subprocess with a private state dir and ends it
the way MCP clients do (close stdin, then signals if it lingers); pages come from the local
fixture site; the state_dir fixture fails the test if the server, a Chrome or a file outlives
the client.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from browser_tool import tool_definitions
from fixtures_site import running_fixtures
from tests.support.mcp_results import text_of

pytestmark = pytest.mark.chrome


def stdio_server(state_dir: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "browser_tool", "mcp", "--state-dir", str(state_dir), *args],
    )


async def test_stdio_lists_the_tools_and_calls_navigate_eval_and_screenshot(
    state_dir: Path,
) -> None:
    with running_fixtures() as site:
        async with Client(stdio_server(state_dir)) as client:
            listed = await client.list_tools()
            assert [(t.name, t.description, t.input_schema) for t in listed.tools] == [
                (t["name"], t["description"], t["input_schema"]) for t in tool_definitions()
            ]

            nav = await client.call_tool("browser_navigate", {"url": site.url_for("index.html")})
            assert nav.is_error is False, text_of(nav)
            title = await client.call_tool("browser_eval", {"expression": "location.pathname"})
            assert text_of(title) == '<javascript_result>"/index.html"</javascript_result>'

            shot = await client.call_tool("browser_take_screenshot", {})
            assert shot.is_error is False
            text, image = shot.content
            assert isinstance(text, types.TextContent)
            assert "Screenshot taken" in text.text
            assert isinstance(image, types.ImageContent)
            assert image.mime_type == "image/png"
            assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")

            failed = await client.call_tool("browser_eval", {"expression": "nope.nope"})
            assert failed.is_error is True
            assert "ReferenceError" in text_of(failed)
            invalid = await client.call_tool("browser_resize", {"width": "wide", "height": 1})
            assert invalid.is_error is True
            assert "width" in text_of(invalid)
            with pytest.raises(MCPError, match="unknown tool 'browser_fly'"):
                await client.call_tool("browser_fly", {})
    # The client closed stdin: the server deleted its conversation and exited.
    assert list((state_dir / "sessions").iterdir()) == []
    assert list((state_dir / "pids").iterdir()) == []


async def test_stdio_conversation_id_can_be_chosen(state_dir: Path) -> None:
    async with Client(stdio_server(state_dir, "--conversation-id", "agent-7")) as client:
        result = await client.call_tool("browser_eval", {"expression": "1+1"})
        assert text_of(result) == "<javascript_result>2</javascript_result>"
        [session_dir] = (state_dir / "sessions").iterdir()
        assert session_dir.name.startswith("agent-7-")
