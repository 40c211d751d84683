"""The HTTP API against a real `browser-tool serve` subprocess (see tests/support/service.py).

Charter: loopback only and port 0 (the server announces its port); readiness from the
`listening on` line, never from sleeps; every server is stopped by its pid with SIGTERM and
must exit 0; the state_dir fixture fails a test that leaves a process or a file behind.
These tests need no browser: every request here is refused or answered before one starts.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import trio

from browser_tool import ListenPolicyError, tool_definitions
from browser_tool.server._listen import check_listen_policy, is_loopback
from tests.support.service import cli_argv, running_service, service_env

pytestmark = pytest.mark.chrome


def assert_error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code
    return str(body["error"]["message"])


async def test_discovery_endpoints(state_dir: Path) -> None:
    async with running_service(state_dir) as service, service.client() as client:
        tools = await client.get("/v1/tools")
        assert tools.status_code == 200
        assert tools.json() == {"tools": tool_definitions()}

        health = await client.get("/healthz")
        assert health.status_code == 200
        assert health.json()["status"] == "ok"

        openapi = (await client.get("/openapi.json")).json()
        assert openapi["openapi"].startswith("3.")
        assert set(openapi["paths"]) == {
            "/v1/tools",
            "/v1/conversations/{conversation_id}/tools/{tool}",
            "/v1/conversations/{conversation_id}",
            "/v1/conversations/{conversation_id}/reset",
            "/v1/conversations/{conversation_id}/keepalive",
            "/v1/conversations/{conversation_id}/mcp",
            "/v1/conversations/{conversation_id}/storage-state",  # issue 21
            "/v1/profiles",
            "/v1/profiles/{profile}",
            "/mcp",
            "/v1/sessions",
            "/healthz",
            "/metrics",
            "/openapi.json",
            # issue 21: hand-over
            "/v1/conversations/{conversation_id}/handoff",
            "/v1/conversations/{conversation_id}/live",
            "/v1/conversations/{conversation_id}/live/claim",
            "/v1/conversations/{conversation_id}/live/state",
            "/v1/conversations/{conversation_id}/live/frame",
            "/v1/conversations/{conversation_id}/live/input",
            "/v1/conversations/{conversation_id}/live/done",
        }

        metrics = await client.get("/metrics")
        assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
        assert '# TYPE browser_tool_sessions gauge\nbrowser_tool_sessions{state="closed"} 0' in (
            metrics.text
        )
        assert 'browser_tool_reaper_total{outcome="killed"} 0' in metrics.text

        assert (await client.get("/v1/sessions")).json() == {"sessions": []}
        assert "/openapi.json" in assert_error(await client.get("/nope"), 404, "not_found")
        wrong = await client.get("/v1/conversations/c1")
        assert_error(wrong, 405, "method_not_allowed")
        assert wrong.headers["allow"] == "DELETE, PUT"  # PUT binds a profile (issue 21)


async def test_every_request_error_has_its_code(state_dir: Path) -> None:
    env = {"BROWSER_TOOL_MAX_BODY_BYTES": "64"}
    async with running_service(state_dir, env=env) as service, service.client() as client:
        call = "/v1/conversations/c1/tools/browser_eval"
        message = assert_error(
            await client.post("/v1/conversations/c1/tools/browser_fly", json={}),
            404,
            "unknown_tool",
        )
        assert "'browser_fly'" in message
        for bad_id in ("a%20b", "x" * 129, "%C3%A9"):
            for method, path in (
                ("POST", f"/v1/conversations/{bad_id}/tools/browser_eval"),
                ("DELETE", f"/v1/conversations/{bad_id}"),
                ("POST", f"/v1/conversations/{bad_id}/reset"),
                ("POST", f"/v1/conversations/{bad_id}/keepalive"),
            ):
                response = await client.request(method, path, json={})
                assert "must match" in assert_error(response, 400, "invalid_conversation_id")

        assert_error(await client.post(call, content=b"{not json"), 400, "invalid_json")
        not_object = await client.post(call, json=[1, 2])
        assert "not an array" in assert_error(not_object, 400, "invalid_json")
        big = {"expression": "1" * 100}
        assert "64 bytes" in assert_error(await client.post(call, json=big), 413, "body_too_large")

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it streams
            for _ in range(10):
                yield b"          "

        assert_error(await client.post(call, content=chunks()), 413, "body_too_large")

        keepalive = "/v1/conversations/c1/keepalive"
        for body in (
            {},
            {"idle_timeout_s": "long"},
            {"idle_timeout_s": True},
            {"idle_timeout_s": 0},
        ):
            response = await client.post(keepalive, json=body)
            assert "idle_timeout_s" in assert_error(response, 400, "invalid_input")

        # Invalid tool input is the model's business: 200 with is_error, and no browser started.
        invalid = await client.post(call, json={"expresion": "1"})
        assert invalid.status_code == 200
        assert invalid.json()["is_error"] is True
        assert "expression" in invalid.json()["output"]
        logs = "/v1/conversations/c1/tools/browser_recent_console_logs"
        invalid = await client.post(logs, json={"context": "tab"})
        assert invalid.json() == {
            "output": "Invalid input 'context': must be one of 'page', 'service_worker', "
            "'worker'; got 'tab'",
            "is_error": True,
            "images": [],
        }
        assert (await client.get("/v1/sessions")).json() == {"sessions": []}


async def test_token_is_required_when_set(state_dir: Path) -> None:
    env = {"BROWSER_TOOL_TOKEN": "s3cret"}
    async with running_service(state_dir, env=env) as service:
        async with service.client() as anonymous:
            refused = await anonymous.get("/v1/tools")
            assert "Bearer" in assert_error(refused, 401, "unauthorized")
            assert refused.headers["www-authenticate"] == "Bearer"
            for path in ("/v1/sessions", "/metrics", "/openapi.json"):
                assert_error(await anonymous.get(path), 401, "unauthorized")
            assert_error(await anonymous.delete("/v1/conversations/c1"), 401, "unauthorized")
            assert (await anonymous.get("/healthz")).status_code == 200  # probes need no token
        async with service.client(token="wrong") as wrong:
            assert_error(await wrong.get("/v1/tools"), 401, "unauthorized")
        async with service.client(token="s3cret") as right:
            assert (await right.get("/v1/tools")).status_code == 200


async def test_without_token_every_request_is_served_on_loopback(state_dir: Path) -> None:
    async with running_service(state_dir) as service, service.client() as client:
        assert (await client.get("/v1/sessions")).status_code == 200


async def test_serve_refuses_a_public_address_without_token(state_dir: Path) -> None:
    argv = cli_argv("serve", "--host", "0.0.0.0", "--port", "0", "--state-dir", str(state_dir))
    result = await trio.run_process(
        argv, capture_stdout=True, capture_stderr=True, check=False, env=service_env()
    )
    assert result.returncode == 2
    assert b"BROWSER_TOOL_TOKEN" in result.stderr
    assert result.stdout == b""
    assert not await trio.Path(state_dir).exists()  # refused before touching anything


async def test_serve_exits_1_when_the_port_is_taken(state_dir: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        argv = cli_argv("serve", "--port", port, "--state-dir", str(state_dir))
        result = await trio.run_process(
            argv, stdout=subprocess.DEVNULL, capture_stderr=True, check=False, env=service_env()
        )
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}".encode() in result.stderr


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("example.internal", False),
    ],
)
def test_listen_policy(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    check_listen_policy(host, "token")  # a token makes any address acceptable
    if loopback:
        check_listen_policy(host, None)
    else:
        with pytest.raises(ListenPolicyError, match="BROWSER_TOOL_TOKEN"):
            check_listen_policy(host, None)
