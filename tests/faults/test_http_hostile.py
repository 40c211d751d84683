"""Hostile HTTP requests, sent as raw bytes (a client library would tidy them up first):
conversation ids with `..`, percent-encoded slashes, NUL bytes and 10,000 characters;
malformed, deeply nested and mistyped bodies; odd methods and headers. Every one gets an
answer in our error shape or a protocol-level 400, never a 500, and the service stays up."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import httpx
import pytest
import trio

from browser_tool import InvalidInputError, validate_conversation_id
from tests.support.service import running_service

pytestmark = pytest.mark.chrome

TOOL = "/tools/browser_clear_console_logs"  # needs no browser when it works
HOSTILE_IDS = [
    "..",
    "../x",
    "..%2Fx",
    "%2E%2E%2Fx",
    "a%2Fb",
    "%2F",
    "a%00b",
    "a%5C..%5Cb",
    "x" * 10_000,
    "%ZZ",
    "%C0%AE%C0%AE",
    "%F0%9F%99%82",
    "a;b",
    "",
]


async def raw_request(url: str, request: bytes) -> tuple[int, bytes]:
    """Send `request` as it is; return the status code and the body."""
    host, port = url.removeprefix("http://").split(":")
    stream = await trio.open_tcp_stream(host, int(port))
    async with stream:
        await stream.send_all(request)
        data = b""
        with trio.fail_after(30):
            while chunk := await stream.receive_some(65536):
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def valid_id(conversation: str) -> bool:
    try:
        validate_conversation_id(urllib.parse.unquote(conversation))
    except InvalidInputError:
        return False
    return "%2F" not in conversation.upper()  # a slash splits the path before the id is read


def request(method: str, target: str, body: bytes = b"", *headers: str) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *headers]
    if body or method in ("POST", "PUT"):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def our_error(status: int, body: bytes) -> str:
    """The error code of an answer in our shape (a protocol-level 400 may be plain text)."""
    assert status != 500, body
    if status >= 400 and body.startswith(b"{"):
        return str(json.loads(body)["error"]["code"])
    return ""


async def test_hostile_paths_bodies_and_methods_never_get_a_500(state_dir: Path) -> None:
    async with running_service(state_dir) as service:
        url = service.url
        for conversation in HOSTILE_IDS:
            for method, suffix in (("POST", TOOL), ("DELETE", ""), ("POST", "/reset")):
                target = f"/v1/conversations/{conversation}{suffix}"
                status, body = await raw_request(url, request(method, target, b"{}"))
                code = our_error(status, body)
                if valid_id(conversation):  # `..` is a valid id; its dir name is a hash
                    assert status == 200, (target[:80], status, body[:200])
                else:
                    assert status in (400, 404, 405), (target[:80], status, body[:200])
                    assert code in ("invalid_conversation_id", "not_found"), (
                        target[:80],
                        status,
                        body[:200],
                    )
        # A NUL byte or a raw space in the request line itself is refused by the HTTP parser.
        for raw in (b"POST /v1/conversations/a\x00b/tools/x HTTP/1.1", b"GET /v1/a b HTTP/1.1"):
            status, body = await raw_request(url, raw + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert status == 400, body

        call = f"/v1/conversations/c1{TOOL}"
        bodies = {
            b"": "",  # no body: an empty input
            b"{": "invalid_json",
            b"null": "invalid_json",
            b'"x"': "invalid_json",
            b"\xff\xfe{}": "invalid_json",
            b"[" * 100_000 + b"]" * 100_000: "",  # deep nesting: refused, never a crash
            b'{"a": NaN}': "",
            b'{"\\ud800": 1}': "",
        }
        for body, code in bodies.items():
            status, answer = await raw_request(url, request("POST", call, body))
            got = our_error(status, answer)
            assert status in (200, 400, 413), (body[:40], status, answer[:200])
            if code:
                assert got == code, (body[:40], answer[:200])
        for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/x"):
            status, answer = await raw_request(
                url, request("POST", call, b"{}", f"Content-Type: {content_type}")
            )
            assert status in (200, 400, 415), answer
        for method in ("PUT", "PATCH", "OPTIONS", "TRACE", "FOO"):
            status, answer = await raw_request(url, request(method, call, b"{}"))
            assert our_error(status, answer) == "method_not_allowed", (method, answer[:200])
        for header in ("Content-Length: abc", "Content-Length: -1", "Transfer-Encoding: zip"):
            text = f"POST {call} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{header}\r\n\r\n{{}}"
            status, answer = await raw_request(url, text.encode())
            assert status in (400, 501), (header, status, answer[:200])
        await _issue_21_routes(url)
        status, answer = await raw_request(url, request("GET", "/healthz"))
        assert status == 200  # still up and answering
        assert b'"ok"' in answer
    # Nothing was written outside the state root's own layout by any of it.
    layout = {"pids", "instances", "sessions", "tmp", "profiles"}
    assert {p.name for p in state_dir.iterdir()} <= layout
    assert not any((state_dir / "profiles").iterdir())  # every profile made was deleted


async def test_hostile_requests_to_the_live_view_never_get_a_500(state_dir: Path) -> None:
    """Issue 21: the hand-over's routes, which answer without the bearer token."""
    async with running_service(state_dir) as service:
        url = service.url
        tails = ("/live", "/live/claim", "/live/state", "/live/frame", "/live/input", "/live/done")
        for conversation in HOSTILE_IDS:
            for method, tail in (("POST", "/handoff"), *(("GET", t) for t in tails)):
                target = f"/v1/conversations/{conversation}{tail}"
                status, body = await raw_request(url, request(method, target, b"{}"))
                our_error(status, body)
                if not valid_id(conversation):
                    assert status in (400, 404, 405), (target[:80], status, body[:200])
        # A hand-over to attack (it launches the conversation's browser).
        status, body = await raw_request(
            url, request("POST", "/v1/conversations/c1/handoff", b'{"ttl": "5m"}')
        )
        assert status == 200, body
        token = json.loads(body)["url"].split("#", 1)[1]
        live = "/v1/conversations/c1/live"
        claims = [
            b"",
            b"{",
            b'{"token": 5}',
            b'{"token": null}',
            b'{"token": ["x"]}',
            b'{"token": "' + b"x" * 100_000 + b'"}',
            b'{"token": "\\ud800"}',
            b'{"token": "\\u0000"}',
            b"[" * 50_000 + b"]" * 50_000,
        ]
        for claim in claims:
            status, body = await raw_request(url, request("POST", f"{live}/claim", claim))
            assert our_error(status, body) in ("invalid_json", "handoff_refused"), (
                claim[:40],
                body,
            )
        cookies = ["bt_live=", "bt_live=\xff\xfe", "bt_live=a; bt_live=b", "=;;;=", "bt_live" * 500]
        for cookie in cookies:
            for method, tail in (("GET", "/state"), ("GET", "/frame"), ("POST", "/done")):
                status, body = await raw_request(
                    url, request(method, f"{live}{tail}", b"", f"Cookie: {cookie}")
                )
                assert our_error(status, body) == "handoff_refused", (cookie, tail, body)
        async with httpx.AsyncClient(base_url=url) as person:
            claimed = await person.post(f"{live}/claim", json={"token": token})
            assert claimed.status_code == 200, claimed.text
            secret = person.cookies["bt_live"]
        cookie = f"Cookie: bt_live={secret}"
        for after in ("-1", "abc", "9" * 30, "1e3", "%00", "1&after=2", "\u0661"):
            status, body = await raw_request(
                url, request("GET", f"{live}/frame?after={urllib.parse.quote(after)}", b"", cookie)
            )
            assert status in (200, 204, 400), (after, status, body[:200])
            our_error(status, body)
        inputs = [
            b"{",
            b"[]",
            b'{"events": null}',
            b'{"events": [null, 1, "x", []]}',
            b'{"events": [{"type": "mouse", "action": "down", "x": 1e308, "y": -1e308}]}',
            b'{"events": [{"type": "mouse", "action": "down", "x": NaN, "y": 1}]}',
            b'{"events": [{"type": "key", "action": "down", "key": "\\ud800"}]}',
            b'{"events": [{"type": "text", "text": "\\udfff"}]}',
            b'{"events": [{"type": "key", "action": "down", "key": "a", "commands": "selectAll"}]}',
            b'{"events": ['
            + b'{"type": "mouse", "action": "move", "x": 1, "y": 1},' * 300
            + b"{}]}",
            b'{"events": [{"type": "wheel", "x": 1, "y": 1, "dx": 1e5, "dy": -1e5}]}',
        ]
        for body in inputs:
            status, answer = await raw_request(url, request("POST", f"{live}/input", body, cookie))
            assert status in (200, 400), (body[:60], status, answer[:200])
            our_error(status, answer)
        status, body = await raw_request(url, request("GET", "/healthz"))
        assert status == 200  # still up and answering


# ---- issue 21: profiles and storage state ---------------------------------------------------

HOSTILE_PROFILES = [*HOSTILE_IDS, ".hidden", "%2Ehidden", "a%20b", "-x", "a:b", "p" * 65]
PROFILE_BODIES = [
    b'{"profile": ".."}',
    b'{"profile": "../../etc"}',
    b'{"profile": "/abs"}',
    rb'{"profile": "a\u0000b"}',
    b'{"profile": ""}',
    b'{"profile": null}',
    b'{"profile": ["p"]}',
    b'{"profile": {"name": "p"}}',
    b'{"profile": 1e400}',
    b"{}",
    b'{"profile": "' + b"p" * 100_000 + b'"}',
]
STATE_BODIES = [
    b"{}",
    b'{"cookies": null}',
    b'{"cookies": [null]}',
    b'{"cookies": [{"name": "a", "value": "b", "domain": "x", "expires": 1e400}]}',
    b'{"cookies": [{"name": "a", "value": "b", "domain": "x", "expires": NaN}]}',
    rb'{"cookies": [{"name": "\ud800", "value": "b", "domain": "\u0000"}]}',
    b'{"origins": [{"origin": "javascript:alert(1)"}]}',
    b'{"origins": [{"origin": "http://[::1"}]}',
    b'{"origins": [{"origin": "https://a.test", "localStorage": {"k": "v"}}]}',
    b'{"origins": ' + b"[" * 10_000 + b"]" * 10_000 + b"}",
]


async def _issue_21_routes(url: str) -> None:
    """The routes of issue 21 with hostile ids, names and bodies: 200, 400, 404, 405, 409 or
    413, never a 500; whatever they made (bindings, kept states, profiles) is removed after."""
    allowed = {200, 400, 404, 405, 409, 413}
    for conversation in HOSTILE_IDS:
        base = f"/v1/conversations/{conversation}"
        for method, target, body in (
            ("PUT", base, b'{"profile": "hostile"}'),
            ("GET", base + "/storage-state", b""),
            ("PUT", base + "/storage-state", b'{"cookies": []}'),
        ):
            status, answer = await raw_request(url, request(method, target, body))
            our_error(status, answer)
            assert status in allowed, (target[:80], status, answer[:200])
            if not valid_id(conversation):
                assert status in (400, 404), (target[:80], status, answer[:200])
        if valid_id(conversation):
            await raw_request(url, request("DELETE", base))
    status, answer = await raw_request(url, request("DELETE", "/v1/profiles/hostile"))
    assert (status, json.loads(answer)["existed"]) == (200, True), answer[:200]
    for name in HOSTILE_PROFILES:
        status, answer = await raw_request(url, request("DELETE", f"/v1/profiles/{name}"))
        our_error(status, answer)
        assert status in (200, 400, 404, 405), (name[:80], status, answer[:200])
    for method in ("GET", "POST", "PUT"):
        status, answer = await raw_request(url, request(method, "/v1/profiles/x", b"{}"))
        assert our_error(status, answer) == "method_not_allowed", (method, answer[:200])
    for body in PROFILE_BODIES:
        status, answer = await raw_request(url, request("PUT", "/v1/conversations/h1", body))
        assert our_error(status, answer) in ("invalid_input", "invalid_json", "body_too_large"), (
            body[:60],
            status,
            answer[:200],
        )
    for body in STATE_BODIES:
        target = "/v1/conversations/h2/storage-state"
        status, answer = await raw_request(url, request("PUT", target, body))
        got = our_error(status, answer)
        assert status in (200, 400), (body[:60], status, answer[:200])
        assert status == 200 or got in ("invalid_input", "invalid_json"), (body[:60], answer)
    for conversation in ("h1", "h2"):
        await raw_request(url, request("DELETE", f"/v1/conversations/{conversation}"))
