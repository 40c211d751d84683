"""The CLI's side of the HTTP API: `sessions`, `kill ID` and `call ... --url` against a
running service (the profile and storage-state commands are in `_profiles`), with
BROWSER_TOOL_TOKEN sent as the bearer token when it is set."""

from __future__ import annotations

import json
import sys
from typing import Any
from urllib.parse import quote

import httpx

from .._errors import ServiceError
from ..conversations import HandoffInfo, SessionInfo

EXIT_OK = 0
EXIT_FAILED = 1  # the service is unreachable or failed
EXIT_USAGE = 2  # the request was wrong (bad id, unknown tool, bad JSON, ...)


def default_url(host: str, port: int) -> str:
    """Where a local `serve` with these settings listens (a wildcard host means loopback)."""
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def request(
    method: str,
    url: str,
    token: str | None,
    *,
    body: object = None,
    read_timeout: float | None = 30.0,
) -> Any:
    """One request to the service; the decoded JSON answer of a 200.

    Raises ServiceError: exit code 1 when the service is unreachable or answers 401/5xx, or
    refuses for the state it is in (409: a profile in use, a conversation started), 2 when it
    rejects the request itself (400, 404, 405, 413).
    """
    headers = {"authorization": f"Bearer {token}"} if token else {}
    timeout = httpx.Timeout(10.0, read=read_timeout)
    try:
        with httpx.Client(timeout=timeout) as client:
            response = client.request(method, url, json=body, headers=headers)
    except httpx.TransportError as exc:
        raise ServiceError(
            f"cannot reach the service at {url}: {exc or type(exc).__name__} "
            "(is `browser-tool serve` running? --url sets where)",
            EXIT_FAILED,
        ) from None
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if response.status_code == 200 and payload is not None:
        return payload
    message = response.text[:500]
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        message = str(payload["error"].get("message", message))
    usage = response.status_code in (400, 404, 405, 413)
    raise ServiceError(
        f"{method} {url} -> {response.status_code}: {message}", EXIT_USAGE if usage else EXIT_FAILED
    )


def conversation_url(url: str, conversation_id: str) -> str:
    # Percent-encode every dot too: ids "." and ".." are valid and must not become path steps.
    return f"{url}/v1/conversations/{quote(conversation_id, safe='').replace('.', '%2E')}"


def format_session(info: SessionInfo) -> str:
    """One compact line: `conv-1 ready pid=4242 age=47.2s idle_left=1752.8s rss=71MB calls=12`."""
    pid = "-" if info.pid is None else str(info.pid) + (" (shared)" if info.shared else "")
    line = (
        f"{info.conversation_id} {info.state} pid={pid} age={info.age_s:.1f}s "
        f"idle_left={info.idle_left_s:.1f}s rss={round(info.rss_bytes / 2**20)}MB "
        f"calls={info.calls}"
    )
    if info.last_error:
        line += f" last_error={json.dumps(info.last_error[:80])}"
    if info.profile is not None:  # issue 21: its Chrome runs on a persistent profile
        line += f" profile={info.profile}"
    if info.handoff is not None:  # issue 21: a person holds (or was offered) the browser
        line += f" handoff={info.handoff.state} reason={json.dumps(info.handoff.reason[:80])}"
    return line


def show_sessions(url: str, token: str | None, as_json: bool) -> int:
    payload = request("GET", f"{url}/v1/sessions", token)
    if as_json:
        print(json.dumps(payload, indent=2))
        return EXIT_OK
    rows = payload.get("sessions", [])
    for row in rows:
        handoff = row.get("handoff")
        fields = row | {"handoff": HandoffInfo(**handoff) if isinstance(handoff, dict) else None}
        print(format_session(SessionInfo(**fields)))
    if not rows:
        print("no sessions", file=sys.stderr)
    return EXIT_OK


def kill(url: str, token: str | None, conversation_id: str) -> int:
    report = request("DELETE", conversation_url(url, conversation_id), token)
    print(json.dumps(report, indent=2))
    return EXIT_OK


def call_remote(
    url: str,
    token: str | None,
    conversation_id: str,
    tool: str,
    tool_input: dict[str, Any],
    *,
    with_images: bool,
    read_timeout: float,
) -> dict[str, Any]:
    """The ToolOutput JSON of one call through the service (image data dropped unless
    `with_images`). Raises ServiceError."""
    output: dict[str, Any] = request(
        "POST",
        f"{conversation_url(url, conversation_id)}/tools/{quote(tool, safe='')}",
        token,
        body=tool_input,
        read_timeout=read_timeout,
    )
    if not with_images:
        for image in output.get("images", []):
            image.pop("data", None)
    return output
