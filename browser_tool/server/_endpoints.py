"""The HTTP API's endpoints, each a thin translation to one BrowserSessionManager call. The
route table (`_routes`) names the method that serves each operation; `handlers()` looks them up.

Tool failures and invalid tool input are 200 with `is_error` true: the model must see them.
Everything the caller got wrong about the request itself is a 4xx with the error shape.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import trio

from .._conversation_ids import ConversationId, validate_conversation_id
from .._errors import ConflictError, HttpError, InvalidInputError, SessionError
from ..tools import UnknownToolError, tool_definitions
from ._metrics_text import render_metrics
from ._openapi import openapi_document
from ._proxy import MOVED_HEADER, note_if_moved
from ._routes import ROUTES
from ._service_parts import ServiceParts
from ._wire import (
    Receive,
    Reply,
    Scope,
    header,
    json_reply,
    parse_json_object,
    read_body,
    while_connected,
)


@dataclass(frozen=True)
class Request:
    scope: Scope
    receive: Receive
    params: dict[str, str]

    @property
    def conversation_id(self) -> ConversationId:
        """The path's conversation id. Raises HttpError(400) if it breaks the id rule."""
        try:
            return validate_conversation_id(self.params["conversation_id"])
        except InvalidInputError as exc:
            raise HttpError(400, "invalid_conversation_id", str(exc)) from None


Handler = Callable[[Request], Awaitable[Reply]]


@contextmanager
def _translated() -> Iterator[None]:
    """The manager's refusals as answers (issue 21's endpoints): bad input 400, a clash with
    the state 409 (its own code), a browser that is gone or does not answer 503."""
    try:
        yield
    except InvalidInputError as exc:
        raise HttpError(400, "invalid_input", str(exc)) from None
    except ConflictError as exc:
        status = 503 if exc.code == "shutting_down" else 409
        raise HttpError(status, exc.code, exc.message) from None
    except SessionError as exc:
        raise HttpError(503, "browser_unavailable", str(exc)) from None


class Endpoints:
    """One method per operation of the route table."""

    def __init__(self, parts: ServiceParts, nursery: trio.Nursery) -> None:
        self._nursery = nursery  # long-lived: the disconnect watch of each tool call runs here
        self._manager = parts.manager
        self._settings = parts.settings
        self._shutdown = parts.shutdown
        self._tools = tool_definitions()
        self._tool_names = frozenset(tool["name"] for tool in self._tools)
        self._openapi = openapi_document()

    async def _json_body(self, req: Request) -> dict[str, Any]:
        body = await read_body(req.scope, req.receive, self._settings.max_body_bytes)
        return parse_json_object(body)

    async def list_tools(self, req: Request) -> Reply:
        return json_reply({"tools": self._tools})

    async def call_tool(self, req: Request) -> Reply:
        conversation_id = req.conversation_id
        tool = req.params["tool"]
        if tool not in self._tool_names:
            raise HttpError(404, "unknown_tool", str(UnknownToolError(tool)))
        tool_input = await self._json_body(req)
        note_if_moved(self._manager, conversation_id, header(req.scope, MOVED_HEADER))
        try:
            output = await while_connected(
                self._nursery,
                req.receive,
                lambda: self._manager.call_tool(conversation_id, tool, tool_input),
            )
        except UnknownToolError as exc:
            raise HttpError(404, "unknown_tool", str(exc)) from None
        except InvalidInputError as exc:
            raise HttpError(400, "invalid_input", str(exc)) from None
        return json_reply(output.to_json())

    async def delete_conversation(self, req: Request) -> Reply:
        report = await self._manager.kill_session(req.conversation_id)
        return json_reply(report.to_json())

    async def reset_conversation(self, req: Request) -> Reply:
        report = await self._manager.reset_session(req.conversation_id)
        return json_reply(report.to_json())

    async def keepalive(self, req: Request) -> Reply:
        conversation_id = req.conversation_id
        body = await self._json_body(req)
        value = body.get("idle_timeout_s")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise HttpError(
                400,
                "invalid_input",
                "Invalid input 'idle_timeout_s': must be a number of seconds greater than 0, "
                f'as in {{"idle_timeout_s": 3600}}; got {value!r}',
            )
        try:
            granted = self._manager.keepalive(conversation_id, float(value))
        except InvalidInputError as exc:
            raise HttpError(400, "invalid_input", str(exc)) from None
        return json_reply({"conversation_id": conversation_id, "idle_timeout_s": granted})

    async def sessions(self, req: Request) -> Reply:
        return json_reply({"sessions": [info.to_json() for info in self._manager.list_sessions()]})

    async def healthz(self, req: Request) -> Reply:
        # Cheap on purpose (probes call it often): the inventory reads /proc for every session.
        stopping = self._shutdown.stopping
        payload = {
            "status": "stopping" if stopping else "ok",
            "instance_id": self._manager.instance_id,
        }
        return json_reply(payload, 503 if stopping else 200)

    async def metrics(self, req: Request) -> Reply:
        text = render_metrics(self._manager)
        return Reply(200, text.encode(), "text/plain; version=0.0.4; charset=utf-8")

    async def openapi(self, req: Request) -> Reply:
        return json_reply(self._openapi)

    # ---- issue 21: persistent profiles and storage state ------------------------------------

    async def bind_conversation(self, req: Request) -> Reply:
        conversation_id = req.conversation_id
        body = await self._json_body(req)
        with _translated():
            if "profile" not in body:
                raise InvalidInputError("profile", 'required, as in {"profile": "work"}')
            profile = self._manager.bind_profile(conversation_id, body["profile"])
        return json_reply({"conversation_id": conversation_id, "profile": profile})

    async def get_storage_state(self, req: Request) -> Reply:
        conversation_id = req.conversation_id
        with _translated():
            state = await self._manager.storage_state(conversation_id)
        return json_reply(state)

    async def put_storage_state(self, req: Request) -> Reply:
        conversation_id = req.conversation_id
        body = await self._json_body(req)
        with _translated():
            loaded = await self._manager.load_storage_state(conversation_id, body)
        return json_reply({"conversation_id": conversation_id, "loaded": loaded})

    async def list_profiles(self, req: Request) -> Reply:
        profiles = await self._manager.list_profiles()
        return json_reply({"profiles": [info.to_json() for info in profiles]})

    async def delete_profile(self, req: Request) -> Reply:
        name = req.params["profile"]
        with _translated():
            existed = await self._manager.delete_profile(name)
        return json_reply({"profile": name, "existed": existed})

    # ---- end of issue 21 ---------------------------------------------------------------------

    def handlers(self) -> dict[str, Handler]:
        """The handler of every operation in the route table, by the name the table gives it.

        Raises AttributeError, at start-up, when the table names a method this class lacks.
        """
        names = {
            op.handler
            for route in ROUTES
            if not (route.is_mcp or route.live_view)  # the live view serves its own (issue 21)
            for op in route.operations.values()
        }
        return {name: getattr(self, name) for name in sorted(names)}
