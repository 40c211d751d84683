"""The MCP server: the same tools as the HTTP API, on the `mcp` SDK's low-level Server.

The SDK is built on anyio and runs on trio (its own CLI runs with backend="trio"), so the
service uses it for both transports: stdio (`_mcp_stdio`) and streamable HTTP (`_mcp_http`).
Which conversation a call belongs to is the transport's business: `conversation_for` maps
the request context to a conversation id (the process's, the URL's, or the MCP session's), or
raises NoConversationError, which the client gets as a protocol error (invalid request) that
says how to connect instead.

Tool failures come back as results with `isError` true (the model must see them); screenshots
and images as MCP image content. An unknown tool is a protocol error (invalid params).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from .._errors import ConflictError, InvalidInputError, NoConversationError
from ..tools import ToolOutput, UnknownToolError, tool_definitions
from ._proxy import MOVED_HEADER, note_if_moved
from ._service_parts import ServiceParts

SERVER_NAME = "browser-tool"

Context = ServerRequestContext[Any, Any]
ConversationFor = Callable[[Context], str]


def request_header(ctx: Context, name: bytes) -> str | None:
    """A header of the HTTP request that carried this MCP message (None on stdio). The SDK
    hands handlers that request, a Starlette `Request`, as `ctx.request`."""
    headers = getattr(ctx.request, "headers", None)
    if headers is None:
        return None
    value = headers.get(name.decode("latin-1"))
    return None if value is None else str(value)


def request_query(ctx: Context, name: str) -> str | None:
    """A query parameter of the HTTP request that carried this MCP message (None on stdio)."""
    params = getattr(ctx.request, "query_params", None)
    if params is None:
        return None
    values = params.getlist(name)
    if len(values) > 1:  # which one was meant? Refused rather than guessed
        raise InvalidInputError(name, f"is given {len(values)} times in the URL; give it once")
    return str(values[0]) if values else None


def bind_from_url(parts: ServiceParts, ctx: Context, conversation_id: str) -> ToolOutput | None:
    """Issue 21: an MCP URL with `?profile=NAME` binds its conversation to that profile (the
    MCP form of `PUT /v1/conversations/{id}`), on every call, so the first one binds and the
    rest find it bound. None when that holds; else the error result that says why not."""
    try:
        profile = request_query(ctx, "profile")
    except InvalidInputError as exc:
        return ToolOutput.error(f"The ?profile= of this MCP URL could not be used: {exc}")
    if profile is None:
        return None
    try:
        parts.manager.bind_profile(conversation_id, profile)
    except (InvalidInputError, ConflictError) as exc:
        return ToolOutput.error(
            f"The ?profile={profile!r} of this MCP URL could not be used: {exc}"
        )
    return None


def to_call_tool_result(output: ToolOutput) -> types.CallToolResult:
    """The MCP form of a ToolOutput: its text, then one image block per image."""
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=output.output)]
    for image in output.images:
        data = base64.b64encode(image.data).decode("ascii")
        content.append(types.ImageContent(type="image", data=data, mime_type=image.media_type))
    return types.CallToolResult(content=content, is_error=output.is_error)


def build_mcp_server(parts: ServiceParts, conversation_for: ConversationFor) -> Server[Any]:
    """A low-level MCP Server whose tools are the manager's; see the module docstring."""
    definitions = tool_definitions()
    tools = [
        types.Tool(name=t["name"], description=t["description"], input_schema=t["input_schema"])
        for t in definitions
    ]
    # A 2026-07-28 tools/call over streamable HTTP has its Mcp-Param headers checked against
    # the tool's input schema. Without this lookup the SDK finds the schema by running the
    # whole tools/list (every tool built, validated and serialized) on every call: about half
    # of that door's time (issue 23).
    input_schemas = {t["name"]: t["input_schema"] for t in definitions}

    async def list_tools(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        if parts.shutdown.stopping:
            return to_call_tool_result(ToolOutput.error("The service is shutting down."))
        try:
            conversation_id = conversation_for(ctx)
        except NoConversationError as exc:
            raise MCPError(types.INVALID_REQUEST, str(exc)) from None
        note_if_moved(parts.manager, conversation_id, request_header(ctx, MOVED_HEADER))
        if (refused := bind_from_url(parts, ctx, conversation_id)) is not None:
            return to_call_tool_result(refused)
        with parts.inflight.track():
            try:
                output = await parts.manager.call_tool(
                    conversation_id, params.name, dict(params.arguments or {})
                )
            except UnknownToolError as exc:
                raise MCPError(types.INVALID_PARAMS, str(exc)) from None
            except InvalidInputError as exc:
                output = ToolOutput.error(str(exc))
        return to_call_tool_result(output)

    return Server(
        SERVER_NAME,
        version=_version(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schemas.get,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("browser-tool")
    except PackageNotFoundError:
        return "0"
