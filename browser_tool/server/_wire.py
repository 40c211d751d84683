"""The little ASGI the HTTP front end needs: a bounded body, JSON and text replies, and the one
error shape every non-200 answer has: {"error": {"code", "message"}}."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import trio

from .._errors import ClientGone, HttpError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]

JSON_TYPE = "application/json"

_log = logging.getLogger("browser_tool.http")

T = TypeVar("T")


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    content_type: str = JSON_TYPE
    headers: tuple[tuple[str, str], ...] = field(default=())


def json_reply(payload: object, status: int = 200) -> Reply:
    return Reply(status, json.dumps(payload, ensure_ascii=False).encode())


def error_reply(error: HttpError) -> Reply:
    body = {"error": {"code": error.code, "message": error.message}}
    return Reply(error.status, json.dumps(body).encode(), headers=error.headers)


async def send_reply(send: Send, reply: Reply) -> None:
    headers = [
        (b"content-type", reply.content_type.encode()),
        (b"content-length", str(len(reply.body)).encode()),
        *((name.encode(), value.encode()) for name, value in reply.headers),
    ]
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body})


def header(scope: Scope, name: bytes) -> str | None:
    """The first value of header `name` (lower case), decoded as latin-1, or None."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _too_large(limit: int) -> HttpError:
    return HttpError(
        413,
        "body_too_large",
        f"The request body is over the limit of {limit} bytes (BROWSER_TOOL_MAX_BODY_BYTES).",
    )


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The whole request body. Raises HttpError(413) past `limit` bytes, as soon as the
    Content-Length or the bytes received say so, and ClientGone on a disconnect."""
    declared = header(scope, b"content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = bytes(message.get("body", b""))
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def parse_json_object(body: bytes) -> dict[str, Any]:
    """The body as a JSON object; an empty body is `{}` (tools without input need none).

    Raises HttpError(400, "invalid_json") for anything else.
    """
    if not body.strip():
        return {}
    try:
        value = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HttpError(400, "invalid_json", f"The body is not valid JSON: {exc}") from None
    except RecursionError:  # `[[[[...]]]]` deeper than the parser's stack
        raise HttpError(400, "invalid_json", "The body's JSON nests too deeply.") from None
    if not isinstance(value, dict):
        raise HttpError(
            400,
            "invalid_json",
            f"The body must be a JSON object (the tool input), not {_json_kind(value)}.",
        )
    return value


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string" if isinstance(value, str) else "an array"


async def while_connected(
    nursery: trio.Nursery, receive: Receive, work: Callable[[], Awaitable[T]]
) -> T:
    """Run `work` (after the request body was read) unless the client disconnects first: then
    `work` is cancelled and ClientGone raised, so an abandoned tool call stops at once instead
    of holding its conversation until its own timeout. Exceptions of `work` pass through as
    themselves.

    `work` runs in the caller's task; only the disconnect watch is a task, spawned into the
    service's long-lived `nursery` and cancelled as soon as `work` ends. (A nursery of two
    tasks per request, as this was, cost about ten scheduling passes per HTTP call.) The watch
    never raises into `nursery`.
    """
    gone = False
    work_scope = trio.CancelScope()
    watch_scope = trio.CancelScope()

    async def watch_disconnect() -> None:
        nonlocal gone
        with watch_scope:
            try:
                while (await receive())["type"] != "http.disconnect":
                    pass
            except Exception:  # the server closed the request's channel: nobody is left
                _log.debug("the request's receive channel failed", exc_info=True)
            gone = True
            work_scope.cancel()

    nursery.start_soon(watch_disconnect)
    try:
        with work_scope:
            return await work()
    finally:
        watch_scope.cancel()
    assert gone  # only the watch cancels work_scope
    raise ClientGone
