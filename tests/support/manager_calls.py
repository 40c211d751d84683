"""Tool calls through a BrowserSessionManager, for tests: one conversation, results checked."""

from __future__ import annotations

import json
import re

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


def find_ref(snapshot: str, role: str, name: str) -> str:
    """The ref of the `role` line named `name` in a browser_snapshot's text."""
    match = re.search(rf'- {role} "{re.escape(name)}"[^\n]*\[ref=(e\d+)\]', snapshot)
    assert match, f"no {role} {name!r} in:\n{snapshot}"
    return match.group(1)
