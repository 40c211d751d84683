"""`/v1/conversations/{id}/mcp` on `browser-tool serve`, driven by the `mcp` SDK's client in
each protocol mode, with real Chromium: every request on the URL belongs to that conversation;
MCP sessions come and go, the conversation stays until its delete hook.

Charter: a real server subprocess on loopback, port 0, ready at its `listening on` line and
stopped with SIGTERM (exit 0); what reached which browser is read back from the browser itself
(`document.title`, a window variable) and from the session inventory; the state_dir fixture
fails the test if anything outlives it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from pathlib import Path

import httpx
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

MODES = ["2026-07-28", "legacy"]


def _url(base: str, conversation_id: str) -> str:
    return f"{base}/v1/conversations/{conversation_id}/mcp"


@pytest.mark.parametrize("mode", MODES)
async def test_two_clients_on_one_conversation_url_reach_one_browser(
    state_dir: Path, mode: str
) -> None:
    async with running_service(state_dir) as service, service.client() as http:
        endpoint = _url(service.url, "shared-1")
        async with Client(endpoint, mode=mode) as first:
            assert first.protocol_version == ("2026-07-28" if mode != "legacy" else "2025-11-25")
            await first.call_tool("browser_eval", {"expression": "document.title = 'from one'"})
            [row] = (await sessions(http)).values()
            assert row["conversation_id"] == "shared-1"
        # The first client is gone (in legacy mode its MCP session was ended with a DELETE);
        # the conversation and its browser are not.
        assert live_group_members(row["pid"])
        async with Client(endpoint, mode=mode) as second, Client(endpoint, mode=mode) as third:
            seen = await second.call_tool("browser_eval", {"expression": "document.title"})
            assert text_of(seen) == '<javascript_result>"from one"</javascript_result>'
            await third.call_tool("browser_eval", {"expression": "window.mark = 3"})
            seen = await second.call_tool("browser_eval", {"expression": "window.mark"})
            assert text_of(seen) == "<javascript_result>3</javascript_result>"
        assert [r["pid"] for r in (await sessions(http)).values()] == [row["pid"]]
        # Only the delete hook ends it.
        deleted = await http.delete("/v1/conversations/shared-1")
        assert deleted.json()["pid"] == row["pid"]
        assert await wait_group_gone(row["pid"], within=10.0)
        assert await sessions(http) == {}


async def test_both_modes_and_the_http_api_share_the_conversation(state_dir: Path) -> None:
    async with running_service(state_dir) as service, service.client() as http:
        endpoint = _url(service.url, "mixed")
        async with Client(endpoint, mode="2026-07-28") as modern, Client(endpoint) as auto:
            assert auto.protocol_version == "2026-07-28"  # it probed and found 2026-07-28
            async with Client(endpoint, mode="legacy") as legacy:
                await legacy.call_tool("browser_eval", {"expression": "window.by = 'legacy'"})
            seen = await modern.call_tool("browser_eval", {"expression": "window.by"})
            assert text_of(seen) == '<javascript_result>"legacy"</javascript_result>'
            response = await http.post(
                "/v1/conversations/mixed/tools/browser_eval", json={"expression": "window.by"}
            )
            assert response.json()["output"] == '<javascript_result>"legacy"</javascript_result>'
        async with Client(_url(service.url, "other"), mode="2026-07-28") as other:
            seen = await other.call_tool("browser_eval", {"expression": "String(window.by)"})
            assert text_of(seen) == '<javascript_result>"undefined"</javascript_result>'
        assert set(await sessions(http)) == {"mixed", "other"}


@pytest.mark.parametrize("mode", MODES)
async def test_the_tools_are_the_http_apis(state_dir: Path, mode: str) -> None:
    async with running_service(state_dir) as service, service.client() as http:
        definitions = (await http.get("/v1/tools")).json()["tools"]
        async with Client(_url(service.url, "listing"), mode=mode) as client:
            listed = (await client.list_tools()).tools
            unknown = await _error_of(client.call_tool("no_such_tool", {}))
            invalid = await client.call_tool("browser_resize", {"width": "wide", "height": 1})
        assert [(t.name, t.description, t.input_schema) for t in listed] == [
            (d["name"], d["description"], d["input_schema"]) for d in definitions
        ]
        assert unknown.error.code == -32602
        assert "no_such_tool" in unknown.error.message
        assert invalid.is_error is True
        assert "width" in text_of(invalid)
        assert await sessions(http) == {}  # nothing above needed a browser


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bad_id", ["bad%20id", "x" * 129, "%C3%A9t%C3%A9"])
async def test_a_bad_conversation_id_is_refused_with_the_rule(
    state_dir: Path, mode: str, bad_id: str
) -> None:
    async with running_service(state_dir) as service:

        async def connect_and_list() -> None:
            async with Client(_url(service.url, bad_id), mode=mode) as client:
                await client.list_tools()

        error = await _error_of(connect_and_list())
        assert error.error.code == -32600
        assert "Invalid input 'conversation_id': must match" in error.error.message
        async with service.client() as http:
            raw = await http.post(f"/v1/conversations/{bad_id}/mcp", json={})
            assert raw.status_code == 400
            assert raw.json()["error"]["code"] == -32600
            assert await sessions(http) == {}


async def test_the_token_and_the_host_rules_hold(state_dir: Path) -> None:
    async with running_service(state_dir) as service, service.client() as http:
        # On loopback without a token the SDK's DNS-rebinding check is on.
        rebound = await http.post(
            "/v1/conversations/c1/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"host": "evil.example:80", "accept": "application/json, text/event-stream"},
        )
        assert rebound.status_code == 421
    env = {"BROWSER_TOOL_TOKEN": "s3cret"}
    async with running_service(state_dir, env=env) as service:
        async with httpx.AsyncClient(base_url=service.url) as anonymous:
            refused = await anonymous.post("/v1/conversations/c1/mcp", json={})
            assert refused.status_code == 401
        headers = {"authorization": "Bearer s3cret"}
        async with (
            create_mcp_http_client(headers=headers) as http_client,
            Client(
                streamable_http_client(_url(service.url, "c1"), http_client=http_client),
                mode="2026-07-28",
            ) as client,
        ):
            assert (await client.list_tools()).tools


async def test_a_conversation_moved_here_by_the_proxy_is_told_so(state_dir: Path) -> None:
    async with (
        running_service(state_dir) as service,
        create_mcp_http_client(headers={"browser-tool-moved": "unreachable"}) as http_client,
        Client(
            streamable_http_client(_url(service.url, "moved"), http_client=http_client),
            mode="2026-07-28",
        ) as client,
    ):
        first = await client.call_tool("browser_eval", {"expression": "1"})
        assert "another instance of this service" in text_of(first)
        again = await client.call_tool("browser_eval", {"expression": "2"})
        assert text_of(again) == "<javascript_result>2</javascript_result>"


async def _error_of(call: Awaitable[object]) -> MCPError:
    """The MCPError `call` raises, alone or as the sole member of (nested) exception groups
    (the SDK's client raises from inside its task group)."""
    try:
        await call
    except BaseException as exc:
        leaf: BaseException = exc
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        if isinstance(leaf, MCPError):
            return leaf
        raise
    raise AssertionError("no MCPError was raised")
