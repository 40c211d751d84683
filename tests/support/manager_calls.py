"""Tool calls through a BrowserSessionManager, for tests: one conversation, results checked."""

from __future__ import annotations

import json

from browser_tool import BrowserSessionManager, ToolOutput

C = "conv-1"


async def call(manager: BrowserSessionManager, tool: str, **args: object) -> ToolOutput:
    return await manager.call_tool(C, tool, args)


async def ok(manager: BrowserSessionManager, tool: str, **args: object) -> str:
    out = await call(manager, tool, **args)
    assert not out.is_error, out.output
    return out.output


async def js(manager: BrowserSessionManager, expression: str) -> object:
    text = await ok(manager, "browser_eval", expression=expression)
    assert text.startswith("<javascript_result>"), text
    return json.loads(text.removeprefix("<javascript_result>").split("</javascript_result>")[0])
