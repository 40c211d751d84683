"""`browser-tool mcp` over stdio, driven by the `mcp` SDK's own client, with real Chromium.

Charter: the SDK client starts the server as a subprocess with a private state dir and ends it
the way MCP clients do (close stdin, then signals if it lingers); pages come from the local
fixture site; the state_dir fixture fails the test if the server, a Chrome or a file outlives
the client.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from browser_tool import tool_definitions
from browser_tool.server._mcp_stdio import StdinLines
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
        # Besides the pool's slots (`mcp` keeps a spare Chrome by default), one conversation.
        dirs = [p.name for p in (state_dir / "sessions").iterdir()]
        [session_dir] = [name for name in dirs if not name.startswith("pool-")]
        assert session_dir.startswith("agent-7-")


async def test_sigterm_stops_a_stdio_server_whose_client_keeps_stdin_open(state_dir: Path) -> None:
    """The wire is read by trio itself: a signal stops the server mid-read, the browser of its
    conversation is killed, and the process exits 0 (no thread parked in a read holds it)."""
    argv = [sys.executable, "-m", "browser_tool", "mcp", "--state-dir", str(state_dir)]
    process = await trio.lowlevel.open_process(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None
    assert process.stdout is not None
    lines = _Lines(process.stdout)
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": _CLIENT}
    await process.stdin.send_all(_frame(0, "initialize", hello))
    assert (await lines.next_json())["id"] == 0
    call = {"name": "browser_eval", "arguments": {"expression": "6*7"}}
    await process.stdin.send_all(_frame(1, "tools/call", call))
    answer = await lines.next_json()
    assert answer["result"]["content"][0]["text"] == "<javascript_result>42</javascript_result>"
    assert list((state_dir / "pids").iterdir())  # the conversation's (and the pool's)
    process.send_signal(signal.SIGTERM)
    with trio.fail_after(30):
        assert await process.wait() == 0
    await process.stdin.aclose()
    await process.stdout.aclose()
    assert list((state_dir / "pids").iterdir()) == []


async def test_stdin_lines_splits_chunks_into_lines_and_keeps_an_unterminated_last_one() -> None:
    read_fd, write_fd = os.pipe()
    async with trio.lowlevel.FdStream(read_fd) as reader, trio.lowlevel.FdStream(write_fd) as w:
        lines = StdinLines(reader)
        await w.send_all(b'{"a": 1}\n{"b"')
        assert await lines.__anext__() == '{"a": 1}\n'
        await w.send_all(b': "\xc3\xa9"}\n\n{"c": 3}')
        assert await lines.__anext__() == '{"b": "é"}\n'
        assert await lines.__anext__() == "\n"
        await w.aclose()
        assert [line async for line in lines] == ['{"c": 3}']


_CLIENT = {"name": "test", "version": "1"}


def _frame(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


class _Lines:
    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self._stream = stream
        self._buffer = b""

    async def next_json(self) -> dict[str, Any]:
        with trio.fail_after(30):
            while b"\n" not in self._buffer:
                chunk = await self._stream.receive_some()
                assert chunk, "the server closed stdout"
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        value: dict[str, Any] = json.loads(line)
        return value
