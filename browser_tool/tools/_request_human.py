"""browser_request_human: the model asks for a person to take over the browser (issue 21).

The result is the live view's link, for the runtime to show its user. From then on the
conversation's calls wait until the person presses Done (or the link expires), and the first
result after that says what happened. Needs the live view, which `browser-tool serve` (and
`browser-tool mcp --http`) serves; elsewhere the call fails and says so.
"""

from __future__ import annotations

from typing import Any

from .._duration import format_duration
from .._errors import HandoffError, ToolError
from ._context import ToolContext
from ._output import ToolOutput
from ._tool import TIMEOUT_FIELD, Tool, object_schema

HANDOFF_TTL = 600.0  # the link's life when the model asks (the HTTP door takes its own ttl)


async def request_human(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    reason = str(args["reason"]).strip()
    await ctx.browser()  # a hand-over needs a running browser: launched now if there is none
    try:
        url = ctx.conversation.request_handoff(reason)
    except HandoffError as exc:
        raise ToolError(exc.message) from None
    return ToolOutput.ok(
        f"A person can take over the browser at this link (single use, valid for "
        f"{format_duration(HANDOFF_TTL)}): {url}\n"
        "Show it to your user and say what they should do there. Your next browser call waits "
        "until they press Done (or the link expires), within its own timeout; its result says "
        "what they did and where they left the page."
    )


REQUEST_HUMAN_TOOL = Tool(
    "browser_request_human",
    "Ask a person to take over the browser for a step you cannot do yourself: a sign-in with a "
    "second factor, a consent screen, a CAPTCHA. Returns a link to a live view of the page for "
    "your user; they act in it and press Done, then the browser is yours again.",
    object_schema(
        {
            "reason": {
                "type": "string",
                "description": "What the person should do, shown to them (e.g. 'Sign in to "
                "example.com with your second factor')",
                "minLength": 1,
                "maxLength": 500,
            },
            "timeout": TIMEOUT_FIELD,
        },
        ["reason"],
    ),
    request_human,
)
