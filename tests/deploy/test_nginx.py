"""Many hosts behind nginx: Debian's nginx with the reference configuration
(deploy/nginx/browser-tool.conf) in front of two `browser-tool serve` instances, all on
loopback, with real Chromium.

Charter: real processes only (two services on port 0, nginx on a free loopback port, see
tests/support/nginx.py), each ready on its own signal and stopped by its pid; where a request
went is read from nginx's `$upstream_addr` (a response header the test's wrapper adds) and
checked against each instance's own inventory; nothing may outlive the test (conftest checks
the services and Chromes, the nginx support checks nginx's process group).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.support.checks import leftover_files, wait_group_gone
from tests.support.http_calls import sessions
from tests.support.nginx import UPSTREAM_HEADER, running_nginx, served_by
from tests.support.service import Service, running_service

pytestmark = [pytest.mark.chrome, pytest.mark.nginx]

CONVERSATIONS = [f"conv-{n}" for n in range(40)]
MOVED_NOTE = "was on another instance of this service, which stopped or could not be reached"


def _address(service: Service) -> str:
    return service.url.removeprefix("http://")


async def _call(proxy: httpx.AsyncClient, conversation: str, tool: str, **args: object) -> str:
    """One tool call through the proxy; returns the instance that answered it."""
    response = await proxy.post(f"/v1/conversations/{conversation}/tools/{tool}", json=args)
    assert response.status_code == 200, response.text
    return served_by(response)


async def _eval(proxy: httpx.AsyncClient, conversation: str, expression: str) -> tuple[str, str]:
    response = await proxy.post(
        f"/v1/conversations/{conversation}/tools/browser_eval", json={"expression": expression}
    )
    assert response.status_code == 200, response.text
    return served_by(response), response.json()["output"]


async def _mcp_list_tools(proxy: httpx.AsyncClient, conversation: str) -> str:
    """A stateless 2026-07-28 request on the conversation's MCP endpoint, through the proxy."""
    response = await proxy.post(
        f"/v1/conversations/{conversation}/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        },
        headers={
            "mcp-protocol-version": "2026-07-28",
            "accept": "application/json, text/event-stream",
            "mcp-method": "tools/list",
        },
    )
    assert response.status_code == 200, response.text
    assert response.json()["result"]["tools"], response.text
    return served_by(response)


async def test_conversations_stay_on_one_instance_and_move_when_it_stops(
    state_dir: Path, nginx_binary: str
) -> None:
    state_b = state_dir.parent / "state-b"
    async with (
        running_service(state_dir) as a,
        running_service(state_b) as b,
        running_nginx(nginx_binary, state_dir.parent / "nginx", [_address(a), _address(b)]) as n,
        n.client() as proxy,
        a.client() as direct_a,
        b.client() as direct_b,
    ):
        instances = {_address(a): "A", _address(b): "B"}
        # Many conversations, each on exactly one instance (no browser needed to find out).
        owner = {c: await _call(proxy, c, "browser_recent_console_logs") for c in CONVERSATIONS}
        assert set(owner.values()) == set(instances)
        spread = Counter(instances[o] for o in owner.values())
        print(f"\n{len(CONVERSATIONS)} conversations over two instances: {dict(spread)}")
        # ... and every route of a conversation reaches the same one, again and again.
        for conversation in CONVERSATIONS:
            again = await _call(proxy, conversation, "browser_clear_console_logs")
            kept = await proxy.post(
                f"/v1/conversations/{conversation}/keepalive", json={"idle_timeout_s": 600}
            )
            mcp = await _mcp_list_tools(proxy, conversation)
            assert {again, served_by(kept), mcp} == {owner[conversation]}, conversation
        print("every tool call, keepalive and MCP request stayed on its instance")

        on_a = [c for c in CONVERSATIONS if owner[c] == _address(a)]
        on_b = [c for c in CONVERSATIONS if owner[c] == _address(b)]
        for conversation in [*on_a[:2], *on_b[:2]]:
            await _eval(proxy, conversation, f"window.mark = '{conversation}'")
        rows_a, rows_b = await sessions(direct_a), await sessions(direct_b)
        assert set(rows_a) == set(on_a[:2])
        assert set(rows_b) == set(on_b[:2])

        # The delete hook reaches the owner.
        deleted = await proxy.delete(f"/v1/conversations/{on_a[1]}")
        assert deleted.status_code == 200
        assert served_by(deleted) == _address(a)
        assert deleted.json()["pid"] == rows_a[on_a[1]]["pid"]
        assert await wait_group_gone(rows_a[on_a[1]]["pid"], within=10.0)
        assert set(await sessions(direct_a)) == {on_a[0]}
        print(f"DELETE {on_a[1]} reached A and killed pid {rows_a[on_a[1]]['pid']}")

        # A stops: its conversations move to B, with fresh browsers, and the model is told.
        assert await a.stop() == 0
        assert await wait_group_gone(rows_a[on_a[0]]["pid"], within=10.0)
        where, output = await _eval(proxy, on_a[0], "String(window.mark)")
        assert where == _address(b)
        assert MOVED_NOTE in output
        assert '"undefined"' in output  # a fresh browser: the old page state is gone
        where, output = await _eval(proxy, on_a[0], "String(window.mark)")
        assert where == _address(b)
        assert MOVED_NOTE not in output  # said once
        for conversation in on_a[2:]:
            assert await _call(proxy, conversation, "browser_recent_console_logs") == _address(b)
            assert await _mcp_list_tools(proxy, conversation) == _address(b)
        # B's own conversations are untouched.
        for conversation in on_b[:2]:
            where, output = await _eval(proxy, conversation, "window.mark")
            assert where == _address(b)
            assert output == f'<javascript_result>"{conversation}"</javascript_result>'
        rows_b = await sessions(direct_b)
        assert set(rows_b) == {*on_b[:2], on_a[0]}
        assert rows_b[on_a[0]]["pid"] != rows_a[on_a[0]]["pid"]
        print(
            f"A stopped: its conversations are served by B; {on_a[0]} got a fresh browser "
            f"(pid {rows_b[on_a[0]]['pid']}, was {rows_a[on_a[0]]['pid']}) and the note"
        )
        # The proxy answers for what only an instance knows with a pointer to the instances.
        for per_instance in ("/metrics", "/v1/sessions"):
            answer = await proxy.get(per_instance)
            assert answer.status_code == 404
            assert answer.json()["error"]["code"] == "per_instance"
            assert UPSTREAM_HEADER not in answer.headers
    assert leftover_files(state_b) == []


async def test_the_live_view_of_a_hand_over_goes_through_the_proxy(
    state_dir: Path, nginx_binary: str
) -> None:
    """Issue 21: the link, the page's claim, its frames, input and Done all reach the instance
    that runs the conversation's browser (its id is in every path), by plain HTTP."""
    state_b = state_dir.parent / "state-b"
    async with (
        running_service(state_dir) as a,
        running_service(state_b) as b,
        running_nginx(nginx_binary, state_dir.parent / "nginx", [_address(a), _address(b)]) as n,
        n.client() as proxy,
    ):
        conversation = "conv-live"
        opened = await proxy.post(f"/v1/conversations/{conversation}/handoff", json={"ttl": 60})
        assert opened.status_code == 200, opened.text
        owner = served_by(opened)
        assert owner in (_address(a), _address(b))
        # The instances do not know the proxy's address here (BROWSER_TOOL_PUBLIC_URL would
        # say it): the link's path and fragment are what the person's browser sends on.
        link = httpx.URL(opened.json()["url"])
        token = link.fragment
        live = link.path
        assert live == f"/v1/conversations/{conversation}/live"
        page = await proxy.get(live)
        claimed = await proxy.post(f"{live}/claim", json={"token": token})
        assert claimed.status_code == 200, claimed.text
        frame = await proxy.get(f"{live}/frame", params={"after": 0})
        assert frame.status_code == 200, frame.text
        assert frame.headers["content-type"] == "image/jpeg"
        move = {"type": "mouse", "action": "move", "x": 5, "y": 5}
        sent = await proxy.post(f"{live}/input", json={"events": [move]})
        assert sent.json() == {"sent": 1}
        done = await proxy.post(f"{live}/done")
        assert done.status_code == 200, done.text
        served = [served_by(r) for r in (page, claimed, frame, sent, done)]
        assert served == [owner] * 5
        again = await proxy.post(f"{live}/claim", json={"token": token})
        assert again.status_code == 403
