"""browser_wait_for: wait until a text appears or disappears on the page, or a fixed time."""

from __future__ import annotations

import json
from typing import Any

import trio

from .._duration import format_duration
from .._errors import CdpError, InvalidInputError
from ._context import ToolContext
from ._output import ToolOutput
from ._tool import TIMEOUT_FIELD, Tool, object_schema

_POLL = 0.1


def _check(args: dict[str, Any]) -> None:
    if not any(k in args for k in ("text", "text_gone", "time")):
        raise InvalidInputError("input", "needs text, text_gone or time")


async def wait_for(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    _check(args)
    timeout_text = format_duration(ctx.timeout)
    if "time" in args:
        seconds = float(args["time"])
        remaining = ctx.deadline - trio.current_time()
        if seconds > remaining:
            await trio.sleep_until(ctx.deadline)
            return ToolOutput.ok(f"Waited {timeout_text} (the timeout; {seconds:g}s were asked).")
        await trio.sleep(seconds)
        if "text" not in args and "text_gone" not in args:
            return ToolOutput.ok(f"Waited {seconds:g}s.")
    page = (await ctx.browser()).page
    text, gone = args.get("text"), args.get("text_gone")
    expression = (
        "(() => { const t = document.body ? document.body.innerText : '';"
        f" return [t.includes({json.dumps(text)}), t.includes({json.dumps(gone)})]; }})()"
    )
    with trio.move_on_at(ctx.deadline):
        while True:
            try:
                result = await page.session.send(
                    "Runtime.evaluate", {"expression": expression, "returnByValue": True}
                )
                has_text, has_gone = result.get("result", {}).get("value") or [False, True]
            except CdpError:
                has_text, has_gone = False, True  # between documents: look again
            if (text is None or has_text) and (gone is None or not has_gone):
                parts = []
                if text is not None:
                    parts.append(f"{text!r} appeared")
                if gone is not None:
                    parts.append(f"{gone!r} is gone")
                sentence = " and ".join(parts)
                return ToolOutput.ok(sentence[0].upper() + sentence[1:] + " on the page.")
            await trio.sleep(_POLL)
    what = " and ".join(
        ([f"{text!r} to appear"] if text is not None else [])
        + ([f"{gone!r} to disappear"] if gone is not None else [])
    )
    raise ctx.timeout_error(f"waiting for {what} on the page.")


WAIT_FOR_TOOL = Tool(
    "browser_wait_for",
    "Wait until a text appears on the page, or a text disappears, or a time passes (seconds); "
    "all within the call's timeout.",
    object_schema(
        {
            "text": {"type": "string", "minLength": 1, "maxLength": 10_000},
            "text_gone": {"type": "string", "minLength": 1, "maxLength": 10_000},
            "time": {"type": "number", "minimum": 0, "maximum": 3600, "description": "Seconds"},
            "timeout": TIMEOUT_FIELD,
        },
        [],
    ),
    wait_for,
)
