"""Profiles through MCP (issue 21): a per-conversation MCP URL with `?profile=NAME` binds its
conversation to that profile, as `PUT /v1/conversations/{id}` does; a refusal comes back as a
tool error result that says why. Real `browser-tool serve`, real Chrome, the `mcp` SDK client
in both protocol modes."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from fixtures_site import FixtureServer
from tests.support.mcp_results import text_of
from tests.support.service import running_service, service_env

pytestmark = [
    pytest.mark.chrome,
    # As in test_mcp_conversation: the SDK's HTTP client leaves its SSE readers to the GC.
    pytest.mark.filterwarnings(r"ignore:Async generator 'http(x|core)2\.:ResourceWarning"),
]


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_a_profile_in_the_mcp_url_binds_the_conversation(
    state_dir: Path, site: FixtureServer, mode: str
) -> None:
    async with running_service(state_dir) as service, service.client() as http:
        base = f"{service.url}/v1/conversations"
        async with Client(f"{base}/m1/mcp?profile=work", mode=mode) as client:
            signin = site.url_for("signin.html?user=mo")
            done = await client.call_tool("browser_navigate", {"url": signin})
            assert not done.is_error, text_of(done)
        [listed] = (await http.get("/v1/profiles")).json()["profiles"]
        assert (listed["name"], listed["held_by"]) == ("work", "m1")
        async with Client(f"{base}/m2/mcp?profile=work", mode=mode) as other:
            refused = await other.call_tool("browser_eval", {"expression": "1"})
            assert refused.is_error
            assert "in use by conversation 'm1'" in text_of(refused)
        async with Client(f"{base}/m3/mcp?profile=..", mode=mode) as hostile:
            refused = await hostile.call_tool("browser_eval", {"expression": "1"})
            assert refused.is_error
            assert "Invalid input 'profile'" in text_of(refused)
        # Two profiles in one URL: refused, not one of them picked (nothing is bound).
        async with Client(f"{base}/m4/mcp?profile=x1&profile=x2", mode=mode) as twice:
            refused = await twice.call_tool("browser_eval", {"expression": "1"})
            assert refused.is_error
            assert "is given 2 times in the URL" in text_of(refused), text_of(refused)
        profiles = (await http.get("/v1/profiles")).json()["profiles"]
        assert [p["name"] for p in profiles] == ["work"]
        await http.delete("/v1/conversations/m1")
        async with Client(f"{base}/m2/mcp?profile=work", mode=mode) as other:
            seen = await other.call_tool("browser_navigate", {"url": site.url_for("signin.html")})
            assert not seen.is_error, text_of(seen)
            title = await other.call_tool("browser_eval", {"expression": "document.title"})
            assert text_of(title) == '<javascript_result>"Signed in as mo"</javascript_result>'
        for cid in ("m2", "m3"):
            await http.delete(f"/v1/conversations/{cid}")
        if mode == "legacy":  # /mcp: each handshake session's conversation, bound the same way
            async with Client(f"{service.url}/mcp?profile=work", mode=mode) as session:
                await session.call_tool("browser_eval", {"expression": "1"})
                [listed] = (await http.get("/v1/profiles")).json()["profiles"]
                assert listed["held_by"].startswith("mcp-")
                # Deleting its conversation (what the session's end does too, after its
                # answer) frees the profile once its Chrome is gone.
                await http.delete(f"/v1/conversations/{listed['held_by']}")
                [listed] = (await http.get("/v1/profiles")).json()["profiles"]
                assert listed["held_by"] is None
        assert (await http.delete("/v1/profiles/work")).json()["existed"]


async def test_stdio_profile_is_one_process_at_a_time_and_kept_after_it(
    state_dir: Path, site: FixtureServer
) -> None:
    """`browser-tool mcp --profile NAME`: the claim is an flock, so a second process on the same
    state root is refused (naming the holder) while the first runs; the profile stays after."""
    args = ["-m", "browser_tool", "mcp", "--state-dir", str(state_dir), "--profile", "desk"]
    first = StdioServerParameters(command=sys.executable, args=[*args, "--conversation-id", "a"])
    async with Client(first) as client:
        done = await client.call_tool(
            "browser_navigate", {"url": site.url_for("signin.html?user=ida")}
        )
        assert not done.is_error, text_of(done)
        with trio.fail_after(60):
            second = await trio.run_process(
                [sys.executable, *args, "--conversation-id", "b"],
                stdin=b"",
                capture_stderr=True,
                check=False,
                env=service_env(),
            )
        stderr = second.stderr.decode()
        assert second.returncode == 1, stderr
        assert "Profile 'desk' is in use by conversation 'a' of instance" in stderr
    second_run = StdioServerParameters(
        command=sys.executable, args=[*args, "--conversation-id", "b"]
    )
    async with Client(second_run) as client:
        await client.call_tool("browser_navigate", {"url": site.url_for("signin.html")})
        title = await client.call_tool("browser_eval", {"expression": "document.title"})
        assert text_of(title) == '<javascript_result>"Signed in as ida"</javascript_result>'
    shutil.rmtree(state_dir / "profiles" / "desk")
