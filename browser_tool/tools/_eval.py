"""browser_eval: evaluate JavaScript in the page; runaway scripts are terminated at the deadline."""

from __future__ import annotations

import json
from typing import Any

import trio

from .._errors import CdpError, CdpTargetCrashedError, ToolError
from ..browser import exception_text
from ._context import ToolContext
from ._output import ToolOutput, spill_large_text


def format_exception(details: dict[str, Any]) -> str:
    """'ReferenceError: foo is not defined at line 1' from Runtime exceptionDetails."""
    text = exception_text(details)
    line = details.get("lineNumber")
    return f"{text} at line {line + 1}" if isinstance(line, int) else text


def format_value(result: dict[str, Any]) -> str:
    """A RemoteObject returned by value, as JSON (or JS's own spelling where JSON has none)."""
    if "value" in result:
        return json.dumps(result["value"], ensure_ascii=False)
    if "unserializableValue" in result:
        return str(result["unserializableValue"])
    if result.get("type") == "undefined":
        return "undefined"
    return str(result.get("description") or result.get("type", "undefined"))


async def evaluate(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    session = await ctx.browser()
    page = session.page
    cdp = page.session
    crash = page.crashed  # replaced once the page is reset: this one is the page we evaluate in
    params = {
        "expression": args["expression"],
        "returnByValue": True,
        "awaitPromise": bool(args.get("await", True)),
        "userGesture": True,
        # CDP's own limit stops a synchronous loop inside V8; ours below covers awaited promises.
        # It gets what is left of the call's time, the launch having taken its share.
        "timeout": max(1, int((ctx.deadline - trio.current_time()) * 1000)),
    }
    result: dict[str, Any] = {}
    crashed = crash.is_set()
    with trio.move_on_at(ctx.deadline) as deadline:
        # No crash watch of our own (a task per call): a renderer crash fails the command at
        # once (CdpTargetCrashedError); the crash event covers one just before it was sent.
        try:
            if not crashed:
                result = await cdp.send("Runtime.evaluate", params)
        except CdpTargetCrashedError:
            crashed = True
        except CdpError:
            if not crash.is_set():
                raise
            crashed = True
    if deadline.cancelled_caught or _was_terminated(result):
        # Stop whatever still runs so the page stays usable for the next call.
        terminated = await page.send_best_effort("Runtime.terminateExecution")
        if deadline.cancelled_caught and page.navigating_to is not None:
            raise ctx.timeout_error(
                f": the expression did not run because "
                f"the page is still navigating to {page.navigating_to}, which has not answered; "
                "Chrome runs no script on a page until its navigation commits. Wait and retry, "
                "or call browser_navigate (it replaces the pending navigation)."
            )
        # Say only what was checked: Chrome acknowledged the termination, or did not (then the
        # browser may have stopped answering; the watchdog probes it after this call).
        if terminated:
            raise ctx.timeout_error(
                "evaluating the expression; Chrome confirmed that the script was terminated."
            )
        raise ctx.timeout_error(
            "evaluating the expression; Chrome did not confirm terminating the script either: "
            "the browser may have stopped answering (it is checked now, and replaced if so)."
        )
    if crashed:
        raise page.crash_error(cdp)
    if "exceptionDetails" in result:
        raise ToolError(format_exception(result["exceptionDetails"]))
    text = format_value(result.get("result", {}))
    limit = ctx.settings.inline_text_limit
    if len(text) * 4 > limit:  # could be over the limit in UTF-8: only then the dir is needed
        text = spill_large_text(text, ctx.dirs().outputs, label="eval", limit=limit)
    return ToolOutput.ok(f"<javascript_result>{text}</javascript_result>")


def _was_terminated(result: dict[str, Any]) -> bool:
    details = result.get("exceptionDetails")
    if not details:
        return False
    description = str((details.get("exception") or {}).get("description", ""))
    return "Execution was terminated" in description or "terminated" in str(details.get("text", ""))
