"""LiveView: the HTTP door of hand-overs to a person (issue 21). The runtime opens one with the
bearer token (`POST /v1/conversations/{id}/handoff`); the person's browser then uses the routes
under `/v1/conversations/{id}/live` without it:

    GET  live          the page (static: it holds no secret)
    POST live/claim    {"token"}: spends the link's token; sets the page's secret (a cookie)
    GET  live/state    what the page shows (the reason, the tab's address, the time left)
    GET  live/frame    ?after=N: the next JPEG frame (long poll; 204 when none came)
    POST live/input    the person's mouse, wheel and keyboard events
    POST live/done     hand the browser back

The link carries its token in the URL's fragment (`.../live#<token>`), which a browser never
sends: no request line, proxy log or access log ever holds it. The page sends it once, in a
POST body, and removes it from its address bar. The cookie is HttpOnly, SameSite=Strict, and
its Path is the conversation's `live` routes only.
"""

from __future__ import annotations

import importlib.resources
import math
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import trio

from .._duration import parse_duration
from .._errors import (
    BrowserToolError,
    CdpError,
    HandoffError,
    HttpError,
    InvalidInputError,
    SessionError,
)
from ..conversations import DEFAULT_TTL, LIVE_PATH, MAX_TTL, HandoffTicket
from ._endpoints import Request
from ._routes import ROUTES
from ._service_parts import ServiceParts
from ._wire import Reply, header, json_reply, parse_json_object, read_body, while_connected

COOKIE = "bt_live"
ENDED_NOTICE_S = 600  # how long after the end the page's secret still hears why
FRAME_WAIT = 20.0  # seconds a frame request waits before answering 204 (proxies allow more)
_PAGE_HEADERS = (
    (
        "content-security-policy",
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        "img-src blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'",
    ),
    ("referrer-policy", "no-referrer"),
    ("x-content-type-options", "nosniff"),
    ("cache-control", "no-store"),
)
_NO_STORE = (("cache-control", "no-store"),)
_STATUS = {"refused": 403, "ended": 410, "busy": 409, "unserved": 503}

Handler = Callable[[Request], Awaitable[Reply]]


class LiveView:
    """One method per live view operation of the route table."""

    def __init__(self, parts: ServiceParts, nursery: trio.Nursery) -> None:
        self._nursery = nursery
        self._manager = parts.manager
        self._handoffs = parts.manager.handoffs
        self._max_body = parts.settings.max_body_bytes
        self._page = (
            importlib.resources.files("browser_tool.server").joinpath("live_view.html").read_bytes()
        )

    def handlers(self) -> dict[str, Handler]:
        """The handler of every live view operation. Raises AttributeError at start-up when
        the table names a method this class lacks."""
        names = {
            op.handler for route in ROUTES if route.live_view for op in route.operations.values()
        }
        return {name: getattr(self, name) for name in sorted(names)}

    async def _body(self, req: Request) -> dict[str, Any]:
        return parse_json_object(await read_body(req.scope, req.receive, self._max_body))

    async def handoff(self, req: Request) -> Reply:
        conversation_id = req.conversation_id
        body = await self._body(req)
        reason = body.get("reason", "")
        if not isinstance(reason, str) or len(reason) > 500:
            raise _invalid("reason", "must be a string of at most 500 characters", reason)
        ttl = _ttl(body.get("ttl"))
        manager = self._manager
        try:
            ticket: HandoffTicket = await while_connected(
                self._nursery,
                req.receive,
                lambda: manager.hand_over(conversation_id, reason, ttl),
            )
        except InvalidInputError as exc:
            raise HttpError(400, "invalid_input", str(exc)) from None
        except HandoffError as exc:
            raise _http(exc) from None
        except SessionError as exc:  # the browser would not start, or the conversation ended
            raise HttpError(503, "browser_unavailable", str(exc)) from None
        return json_reply(ticket.to_json())

    async def live_page(self, req: Request) -> Reply:
        req.conversation_id  # noqa: B018  # a bad id is refused (400) here too
        return Reply(200, self._page, "text/html; charset=utf-8", _PAGE_HEADERS)

    async def live_claim(self, req: Request) -> Reply:
        conversation_id = req.conversation_id
        token = (await self._body(req)).get("token")
        if not isinstance(token, str) or not 0 < len(token) <= 200:
            raise _http(HandoffError("refused", "A hand-over link's token is needed."))
        try:
            secret, state = self._handoffs.claim(conversation_id, token)
        except HandoffError as exc:
            raise _http(exc) from None
        # It outlives the hand-over, so that its page, left open, is told why it ended (410);
        # the secret admits nothing more once it has (see `Handoffs._page`).
        max_age = math.ceil(state.expires_in_s) + ENDED_NOTICE_S
        cookie = self._cookie(conversation_id, secret, max_age)
        return _json(state.to_json(), (("set-cookie", cookie),))

    async def live_state(self, req: Request) -> Reply:
        conversation_id = req.conversation_id
        with _translated():
            state = self._handoffs.state(conversation_id, _secret(req))
        return _json(state.to_json())

    async def live_frame(self, req: Request) -> Reply:
        conversation_id = req.conversation_id
        after = _after(req)
        handoffs = self._handoffs
        with _translated():
            found = await while_connected(
                self._nursery,
                req.receive,
                lambda: handoffs.frame(conversation_id, _secret(req), after, FRAME_WAIT),
            )
        if found is None:
            return Reply(204, b"", "text/plain", _NO_STORE)
        frame, state = found
        headers = (
            ("x-frame-seq", str(frame.seq)),
            ("x-frame-width", str(frame.width)),
            ("x-frame-height", str(frame.height)),
            ("x-page-url", quote(state.url, safe="")),
            *_NO_STORE,
        )
        return Reply(200, frame.jpeg, "image/jpeg", headers)

    async def live_input(self, req: Request) -> Reply:
        conversation_id = req.conversation_id
        body = await self._body(req)
        with _translated():
            sent = await self._handoffs.send_input(conversation_id, _secret(req), body)
        return _json({"sent": sent})

    async def live_done(self, req: Request) -> Reply:
        conversation_id = req.conversation_id
        with _translated():
            await self._handoffs.done(conversation_id, _secret(req))
        return _json({"done": True}, (("set-cookie", self._cookie(conversation_id, "", 0)),))

    def _cookie(self, conversation_id: str, secret: str, max_age: int) -> str:
        base = self._handoffs.base_url or ""
        path = urlsplit(base).path.rstrip("/") + LIVE_PATH.format(conversation_id)
        secure = "; Secure" if base.startswith("https://") else ""
        return (
            f"{COOKIE}={secret}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite=Strict{secure}"
        )


@contextmanager
def _translated() -> Iterator[None]:
    """Around a live view call: its domain errors as HTTP answers."""
    try:
        yield
    except HandoffError as exc:
        raise _http(exc) from None
    except InvalidInputError as exc:
        raise HttpError(400, "invalid_input", str(exc)) from None
    except CdpError as exc:
        raise HttpError(503, "browser_unavailable", f"The browser did not take it: {exc}") from None


def _http(exc: HandoffError) -> HttpError:
    status = _STATUS.get(exc.kind, 409)
    return HttpError(status, f"handoff_{exc.kind}", exc.message)


def _json(payload: object, headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    reply = json_reply(payload)
    return Reply(reply.status, reply.body, reply.content_type, (*headers, *_NO_STORE))


def _invalid(field: str, rule: str, value: object) -> HttpError:
    return HttpError(400, "invalid_input", str(InvalidInputError(field, rule, value)))


def _ttl(value: object) -> float:
    if value is None:
        return DEFAULT_TTL
    try:
        if isinstance(value, str):
            value = parse_duration(value, field="ttl", maximum=MAX_TTL)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidInputError("ttl", 'must be a duration such as "10m", or seconds', value)
    except BrowserToolError as exc:
        raise HttpError(400, "invalid_input", str(exc)) from None
    if not 0 < value <= MAX_TTL:
        raise _invalid("ttl", f"must be over 0 and at most {MAX_TTL:g} seconds", value)
    return float(value)


def _after(req: Request) -> int:
    raw = bytes(req.scope.get("query_string", b"")).decode("latin-1")
    values = parse_qs(raw).get("after", ["0"])
    text = values[0]
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise _invalid("after", "must be the sequence number of the last frame seen", text)
    return int(text)


def _secret(req: Request) -> str | None:
    """The page's secret from its cookie, or None."""
    for part in (header(req.scope, b"cookie") or "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE and value:
            return value
    return None
