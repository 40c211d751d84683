"""Security edges on real Chromium: refused URL schemes (before any browser starts), private
dirs, the argv of every live Chrome process, the DevTools port's own Host and Origin checks
(asserted as Chrome's behaviour, so a flag change that loosens them fails here), and the HTTP
API refusing to listen off loopback without a token (the MCP door; `serve` has its own test)."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest
import trio

from browser_tool import BrowserSessionManager
from chrome_launcher import cmdline, live_group_members
from tests.support.manager_calls import C, call
from tests.support.service import cli_argv, service_env

pytestmark = pytest.mark.chrome

FORBIDDEN_FLAGS = ("--remote-allow-origins", "--remote-debugging-address")


async def raw_http(port: int, request: str) -> str:
    """Send `request`; return the answer's head and body (by its Content-Length): Chrome keeps
    an accepted WebSocket open, so nothing here reads to the end of the stream."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(request.encode())
        data = b""
        with trio.fail_after(10):
            while b"\r\n\r\n" not in data and (chunk := await stream.receive_some(65536)):
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            while length and len(body) < int(length[1]):
                if not (chunk := await stream.receive_some(65536)):
                    break
                body += chunk
    return (head + b"\r\n\r\n" + body).decode(errors="replace")


def upgrade(path: str, host: str, origin: str | None) -> str:
    lines = [
        f"GET /{path} HTTP/1.1",
        f"Host: {host}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
    ]
    if origin:
        lines.append(f"Origin: {origin}")
    return "\r\n".join(lines) + "\r\n\r\n"


async def test_refused_schemes_start_no_browser(fault_manager: BrowserSessionManager) -> None:
    for url in (
        "file:///etc/passwd",
        "chrome://settings",
        "devtools://devtools/bundled/inspector.html",
        "view-source:https://example.com",
        "FILE:///etc/hostname",
        " file:///etc/hostname",
    ):
        out = await call(fault_manager, "browser_navigate", url=url)
        assert out.is_error
        assert "is not allowed" in out.output, out.output
    assert fault_manager.list_sessions() == []


async def test_dirs_are_private_and_no_chrome_carries_a_loosening_flag(
    fault_manager: BrowserSessionManager, state_dir: Path
) -> None:
    await call(fault_manager, "browser_eval", expression="'x'.repeat(5000)")  # an output file
    session = await fault_manager.get_or_create(C)
    conversation_dir = session.chrome.browser_dir.parent
    for path in (
        state_dir,
        state_dir / "sessions",
        conversation_dir,
        conversation_dir / "outputs",
        conversation_dir / "downloads",
        session.chrome.profile_dir,
    ):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    members = live_group_members(session.pid)
    assert session.pid in members
    for pid in members:
        argv = cmdline(pid) or []
        assert not [a for a in argv if a.startswith(FORBIDDEN_FLAGS)], argv
    assert session.chrome.ws_url is not None
    assert session.chrome.ws_url.startswith("ws://127.0.0.1:")


async def test_the_devtools_port_refuses_a_foreign_host_and_origin(
    fault_manager: BrowserSessionManager,
) -> None:
    session = await fault_manager.get_or_create(C)
    assert session.chrome.ws_url is not None
    address, path = session.chrome.ws_url.removeprefix("ws://").split("/", 1)
    port = int(address.rsplit(":", 1)[1])
    own = f"127.0.0.1:{port}"

    def get(host: str) -> str:
        return f"GET /json/version HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"

    assert (await raw_http(port, get(own))).startswith("HTTP/1.1 200")
    foreign_host = await raw_http(port, get("attacker.example"))
    assert not foreign_host.startswith("HTTP/1.1 200")
    assert "Host header is specified and is not an IP address or localhost" in foreign_host
    foreign_ws_host = await raw_http(port, upgrade(path, "attacker.example", None))
    assert not foreign_ws_host.startswith("HTTP/1.1 101")
    foreign_origin = await raw_http(port, upgrade(path, own, "http://attacker.example"))
    assert foreign_origin.startswith("HTTP/1.1 403")
    assert "Rejected an incoming WebSocket connection" in foreign_origin
    # Our own client sends no Origin, and that is what Chrome accepts.
    assert (await raw_http(port, upgrade(path, own, None))).startswith("HTTP/1.1 101")
    assert await call(fault_manager, "browser_eval", expression="1")  # the session is unharmed


async def test_the_mcp_http_door_refuses_a_public_address_without_a_token(
    state_dir: Path,
) -> None:
    # `serve` is checked in tests/browser_tool/server/test_http_api.py; this is the other door.
    argv = cli_argv(
        "mcp", "--http", "--host", "0.0.0.0", "--port", "0", "--state-dir", str(state_dir)
    )
    result = await trio.run_process(
        argv, capture_stdout=True, capture_stderr=True, check=False, env=service_env()
    )
    assert result.returncode == 2
    assert b"BROWSER_TOOL_TOKEN" in result.stderr
    assert not await trio.Path(state_dir).exists()
