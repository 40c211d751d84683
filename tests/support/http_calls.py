"""Tool calls and the session inventory through the HTTP API, for tests."""

from __future__ import annotations

from typing import Any

import httpx


async def call(client: httpx.AsyncClient, conversation: str, tool: str, **args: Any) -> Any:
    response = await client.post(f"/v1/conversations/{conversation}/tools/{tool}", json=args)
    assert response.status_code == 200, response.text
    return response.json()


async def sessions(client: httpx.AsyncClient) -> dict[str, Any]:
    rows = (await client.get("/v1/sessions")).json()["sessions"]
    return {row["conversation_id"]: row for row in rows}
