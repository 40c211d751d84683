"""browser_recent_console_logs and browser_clear_console_logs: the page's console buffer.

Neither launches a browser: with none running, nothing was logged.
"""

from __future__ import annotations

import json
from typing import Any

from ._context import ToolContext
from ._output import ToolOutput, spill_large_text


async def recent_console_logs(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    session = ctx.existing_browser()
    context = args.get("context")
    limit = int(args.get("limit", 100))
    entries = session.page.console.recent(limit, context) if session else []
    if not entries:
        return ToolOutput.ok(
            f"No console log entries{f' of context {context}' if context else ''}."
        )
    text = json.dumps([e.to_json() for e in entries], ensure_ascii=False, indent=1)
    return ToolOutput.ok(
        spill_large_text(
            text, ctx.dirs().outputs, label="console", limit=ctx.settings.inline_text_limit
        )
    )


async def clear_console_logs(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    session = ctx.existing_browser()
    count = session.page.console.clear() if session else 0
    return ToolOutput.ok(f"Cleared {count} console log entries.")
