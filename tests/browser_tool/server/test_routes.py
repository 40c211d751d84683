"""The route table feeds the matcher, the handler table and the OpenAPI document: pure checks
that the three agree, with no service running (the HTTP behaviour itself is pinned against a
real service in test_http_api.py)."""

from __future__ import annotations

from typing import Any

import pytest

from browser_tool import HttpError, tool_definitions
from browser_tool.server._endpoints import Endpoints
from browser_tool.server._live_view import LiveView
from browser_tool.server._openapi import openapi_document
from browser_tool.server._routes import ROUTES, find_route


@pytest.mark.parametrize(
    ("path", "template", "params"),
    [
        ("/v1/tools", "/v1/tools", {}),
        (
            "/v1/conversations/c-1/tools/browser_eval",
            "/v1/conversations/{conversation_id}/tools/{tool}",
            {"conversation_id": "c-1", "tool": "browser_eval"},
        ),
        (
            "/v1/conversations/a:b",
            "/v1/conversations/{conversation_id}",
            {"conversation_id": "a:b"},
        ),
        (
            "/v1/conversations/c1/keepalive",
            "/v1/conversations/{conversation_id}/keepalive",
            {"conversation_id": "c1"},
        ),
        ("/openapi.json", "/openapi.json", {}),
        (
            "/v1/conversations/c.1/mcp",
            "/v1/conversations/{conversation_id}/mcp",
            {"conversation_id": "c.1"},
        ),
        ("/mcp", "/mcp", {}),
    ],
)
def test_a_path_finds_its_route_and_parameters(
    path: str, template: str, params: dict[str, str]
) -> None:
    found = find_route(path)
    assert found is not None
    route, found_params = found
    assert route.template == template
    assert found_params == params


@pytest.mark.parametrize(
    "path",
    [
        "/nope",
        "/v1/tools/",
        "/v1/conversations/",
        "/v1/conversations/a/b",
        "/v1/conversations/c1/tools/x/y",
        "/openapiXjson",  # the template's dot is a dot, not "any character"
        "/mcp/",
        "/v1/conversations/c1/mcp/x",
    ],
)
def test_a_path_outside_the_table_finds_nothing(path: str) -> None:
    assert find_route(path) is None


def test_a_wrong_method_names_the_allowed_ones() -> None:
    found = find_route("/v1/conversations/c1")
    assert found is not None
    with pytest.raises(HttpError) as caught:
        found[0].operation("GET", "/v1/conversations/c1")
    assert (caught.value.status, caught.value.code) == (405, "method_not_allowed")
    assert caught.value.headers == (("allow", "DELETE, PUT"),)  # PUT: issue 21


def test_only_the_probe_is_open() -> None:
    assert [route.template for route in ROUTES if route.is_probe] == ["/healthz"]


def test_without_the_token_only_the_probe_and_the_live_view_are_served() -> None:
    open_routes = [route.template for route in ROUTES if not route.needs_token]
    live = "/v1/conversations/{conversation_id}/live"
    assert open_routes == [
        "/healthz",
        live,
        *(f"{live}/{tail}" for tail in ("claim", "state", "frame", "input", "done")),
    ]
    # Opening a hand-over needs the token; only using one does not.
    handoff = find_route("/v1/conversations/c1/handoff")
    assert handoff is not None
    assert handoff[0].needs_token


def test_every_operation_names_an_endpoint_method() -> None:
    for route in ROUTES:
        for operation in route.operations.values():
            if route.is_mcp:  # served whole by the MCP endpoint (the SDK's transport)
                assert operation.handler == "mcp"
            elif route.live_view:  # issue 21: the hand-over's door
                assert callable(getattr(LiveView, operation.handler, None)), operation.handler
            else:
                assert callable(getattr(Endpoints, operation.handler, None)), operation.handler


def test_the_mcp_routes_are_the_two_mcp_endpoints() -> None:
    assert [route.template for route in ROUTES if route.is_mcp] == [
        "/v1/conversations/{conversation_id}/mcp",
        "/mcp",
    ]


def test_the_openapi_paths_are_the_route_table() -> None:
    paths = openapi_document()["paths"]
    assert list(paths) == [route.template for route in ROUTES]
    for route in ROUTES:
        described = paths[route.template]
        assert set(described) == {method.lower() for method in route.operations}
        for operation in described.values():
            names = [parameter["name"] for parameter in operation.get("parameters", [])]
            assert tuple(names) == route.parameters
    tool = paths["/v1/conversations/{conversation_id}/tools/{tool}"]["post"]["parameters"][1]
    assert tool["schema"]["enum"] == [definition["name"] for definition in tool_definitions()]


def test_every_reference_in_the_openapi_document_resolves() -> None:
    document = openapi_document()
    components = document["components"]["schemas"]

    def refs(node: Any) -> list[str]:
        if isinstance(node, dict):
            own = [node["$ref"]] if "$ref" in node else []
            return own + [ref for value in node.values() for ref in refs(value)]
        if isinstance(node, list):
            return [ref for value in node for ref in refs(value)]
        return []

    found = refs(document)
    assert found
    for ref in found:
        assert ref.startswith("#/components/schemas/")
        assert ref.removeprefix("#/components/schemas/") in components
