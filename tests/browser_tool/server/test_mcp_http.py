"""`/mcp` on `browser-tool serve` (and its alias `mcp --http`), driven by the `mcp` SDK's
client, with real Chromium: each handshake session is one conversation, deleted when the client
ends the session; a stateless request is sent to the per-conversation endpoint.

Charter: a real server subprocess on loopback, port 0, ready at its `listening on` line and
stopped with SIGTERM (exit 0); the end of a session is observed through the death of its
Chrome group (the kernel gives no event for that, so conftest's wait_group_gone polls /proc);
the state_dir fixture fails the test if anything outlives it.
"""

from __future__ import annotations

import base64
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from chrome_launcher import live_group_members
from tests.support.checks import wait_group_gone
from tests.support.http_calls import sessions
from tests.support.mcp_results import text_of
from tests.support.service import running_service

pytestmark = [
    pytest.mark.chrome,
    # The SDK's HTTP client leaves its SSE readers (httpx2 async generators) to the garbage
    # collector when a session closes; trio warns about each. Theirs, not ours.
    pytest.mark.filterwarnings(r"ignore:Async generator 'http(x|core)2\.:ResourceWarning"),
]


async def test_two_mcp_sessions_are_two_conversations_ended_with_their_sessions(
    state_dir: Path,
) -> None:
    async with running_service(state_dir, mcp=True) as service, service.client() as http:
        endpoint = service.url + "/mcp"
        async with Client(endpoint) as alpha:
            listed = await alpha.list_tools()
            assert "browser_eval" in {tool.name for tool in listed.tools}
            await alpha.call_tool("browser_eval", {"expression": "window.who = 'alpha'"})
            [alpha_row] = (await sessions(http)).values()
            assert alpha_row["conversation_id"].startswith("mcp-")

            async with Client(endpoint) as beta:
                await beta.call_tool("browser_eval", {"expression": "window.who = 'beta'"})
                seen_a = await alpha.call_tool("browser_eval", {"expression": "window.who"})
                seen_b = await beta.call_tool("browser_eval", {"expression": "window.who"})
                assert text_of(seen_a) == '<javascript_result>"alpha"</javascript_result>'
                assert text_of(seen_b) == '<javascript_result>"beta"</javascript_result>'

                shot = await beta.call_tool("browser_take_screenshot", {})
                image = shot.content[1]
                assert isinstance(image, types.ImageContent)
                assert base64.b64decode(image.data).startswith(b"\x89PNG")

                rows = await sessions(http)
                assert len(rows) == 2
                [beta_row] = [
                    row
                    for row in rows.values()
                    if row["conversation_id"] != alpha_row["conversation_id"]
                ]
                beta_pid = beta_row["pid"]
                assert beta_pid != alpha_row["pid"]
            # Beta's session ended: its browser goes, alpha's stays.
            assert await wait_group_gone(beta_pid, within=10.0)
            assert list(await sessions(http)) == [alpha_row["conversation_id"]]
            assert live_group_members(alpha_row["pid"])
            again = await alpha.call_tool("browser_eval", {"expression": "window.who"})
            assert text_of(again) == '<javascript_result>"alpha"</javascript_result>'
        assert await wait_group_gone(alpha_row["pid"], within=10.0)
        assert await sessions(http) == {}


async def test_a_stateless_request_is_told_the_per_conversation_url(state_dir: Path) -> None:
    async with (
        running_service(state_dir) as service,
        Client(service.url + "/mcp", mode="2026-07-28") as client,
        service.client() as http,
    ):
        with pytest.raises(MCPError) as caught:
            await client.call_tool("browser_eval", {"expression": "1"})
        assert caught.value.error.code == types.INVALID_REQUEST
        url = service.url + "/v1/conversations/{conversation_id}/mcp"
        assert url in caught.value.error.message
        assert await sessions(http) == {}


async def test_a_probing_client_falls_back_to_a_session(state_dir: Path) -> None:
    async with (
        running_service(state_dir) as service,
        Client(service.url + "/mcp", mode="auto") as client,
    ):
        assert client.protocol_version == "2025-11-25"


async def test_mcp_endpoint_requires_the_token_when_set(state_dir: Path) -> None:
    env = {"BROWSER_TOOL_TOKEN": "s3cret"}
    async with running_service(state_dir, env=env) as service:
        async with service.client() as anonymous:
            refused = await anonymous.post(
                "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
            )
            assert refused.status_code == 401
        headers = {"authorization": "Bearer s3cret"}
        async with (
            create_mcp_http_client(headers=headers) as http_client,
            Client(streamable_http_client(service.url + "/mcp", http_client=http_client)) as client,
        ):
            assert (await client.list_tools()).tools
