"""The tool registry: each tool's name, description and JSON input schema; `prepare_input`,
which checks a call's input before anything runs; and `run_tool`, which turns every failure of
a call into a ToolOutput the model can read."""

from __future__ import annotations

from typing import Any

from .._duration import parse_duration
from .._errors import (
    BrowserToolError,
    CdpConnectionError,
    CdpSessionDetachedError,
    CdpTimeoutError,
    DoorError,
    InvalidInputError,
    SessionClosedError,
)
from ..browser import (
    BROWSER_CRASHED_DURING_CALL,
    CONSOLE_CONTEXTS,
    NETWORK_SOURCES,
    TAB_CLOSED_DURING_CALL,
)
from ._actions import ACTION_TOOLS
from ._console_logs import clear_console_logs, recent_console_logs
from ._context import ToolContext
from ._eval import evaluate
from ._history import HISTORY_TOOLS
from ._navigate import navigate
from ._network_sources import network_sources
from ._offline import set_offline
from ._output import ToolOutput, spill_large_text
from ._read_image import read_image
from ._request_human import REQUEST_HUMAN_TOOL
from ._resize import check_dimensions, resize
from ._screenshot import screenshot
from ._service_workers import service_workers
from ._snapshot import SNAPSHOT_TOOL
from ._tabs import TABS_TOOL
from ._tool import TIMEOUT_FIELD, Tool, object_schema
from ._upload import UPLOAD_TOOL
from ._wait_for import WAIT_FOR_TOOL

TOOLS: tuple[Tool, ...] = (
    Tool(
        "browser_navigate",
        "Navigate the browser to a URL and wait for the page to load. The browser keeps its "
        "state (cookies, storage, the open page) across calls in this conversation.",
        object_schema(
            {
                "url": {"type": "string", "description": "URL to navigate to", "minLength": 1},
                "timeout": TIMEOUT_FIELD,
            },
            ["url"],
        ),
        navigate,
    ),
    Tool(
        "browser_eval",
        "Evaluate JavaScript in the page and return the result as JSON. Use it to read the "
        "page, click (`document.querySelector('#btn').click()`), fill forms, scroll, or wait "
        "for something with a Promise. Results over 1 KiB are saved to a file.",
        object_schema(
            {
                "expression": {"type": "string", "description": "JavaScript to evaluate"},
                "timeout": TIMEOUT_FIELD,
                "await": {"type": "boolean", "description": "Await promises (default: true)"},
            },
            ["expression"],
        ),
        evaluate,
    ),
    Tool(
        "browser_take_screenshot",
        "Take a PNG screenshot of the viewport, or of the element a CSS selector matches. "
        "The image is returned scaled to fit model limits and saved to a file.",
        object_schema(
            {
                "selector": {
                    "type": "string",
                    "description": "CSS selector (optional, for an element screenshot)",
                },
                "timeout": TIMEOUT_FIELD,
            },
            [],
        ),
        screenshot,
    ),
    Tool(
        "browser_recent_console_logs",
        "Return recent console messages, uncaught exceptions, log entries and dialogs of the "
        "page and of its service workers and other workers (kept across navigations), one line "
        "each, oldest first: #seq, UTC time, level, [context URL] for a worker's entry, text, "
        "(source). When they do not all fit, the newest are shown and the rest are in a file "
        "the result names. With more than one tab open, every tab's entries are listed, each "
        "tagged [tab N].",
        object_schema(
            {
                "limit": {
                    "type": "integer",
                    "description": "Max entries to return (default: 100)",
                    "minimum": 1,
                    "maximum": 10000,
                },
                "context": {
                    "type": "string",
                    "enum": list(CONSOLE_CONTEXTS),
                    "description": "Only entries of this context (default: all)",
                },
            },
            [],
        ),
        recent_console_logs,
    ),
    Tool(
        "browser_clear_console_logs",
        "Clear the console log buffer.",
        object_schema({}, []),
        clear_console_logs,
    ),
    Tool(
        "browser_resize",
        "Resize the browser viewport (default 1280x720).",
        object_schema(
            {
                "width": {"type": "integer", "description": "Viewport width in pixels"},
                "height": {"type": "integer", "description": "Viewport height in pixels"},
                "timeout": TIMEOUT_FIELD,
            },
            ["width", "height"],
        ),
        resize,
        pre_check=check_dimensions,
    ),
    Tool(
        "browser_get_service_workers",
        "List the service workers registered for the current page's origin: each "
        "registration's scope and, for each version, its status (installing, installed, "
        "activating, activated, redundant), whether it is running, its script URL, and which "
        "one controls the page. A page with none gets an answer saying so.",
        object_schema({}, []),
        service_workers,
    ),
    Tool(
        "browser_get_network_sources",
        "List the page's recent responses (its workers' requests included), each with status, "
        "resource type, where it came from (" + ", ".join(NETWORK_SOURCES) + ") and URL, "
        "after a count per source. Recorded from the start of the session. With more than one "
        "tab open, every tab's responses are listed, each tagged [tab N].",
        object_schema(
            {
                "limit": {
                    "type": "integer",
                    "description": "Max responses to list, newest kept (default: 50)",
                    "minimum": 1,
                    "maximum": 1000,
                },
                "clear": {
                    "type": "boolean",
                    "description": "Empty the log after reading it (default: false)",
                },
            },
            [],
        ),
        network_sources,
    ),
    Tool(
        "browser_set_offline",
        "Turn offline mode on or off for the page and its workers (service workers included). "
        "Offline, requests fail with net::ERR_INTERNET_DISCONNECTED unless a service worker "
        "answers them, so you can check that a PWA works offline.",
        object_schema(
            {
                "offline": {"type": "boolean", "description": "true: offline; false: online"},
                "timeout": TIMEOUT_FIELD,
            },
            ["offline"],
        ),
        set_offline,
    ),
    Tool(
        "read_image",
        "Read an image file (PNG, JPEG, GIF, WebP; HEIC if supported) and return it scaled "
        "to fit model limits.",
        object_schema(
            {
                "path": {"type": "string", "description": "Path to image file", "minLength": 1},
                "timeout": TIMEOUT_FIELD,
            },
            ["path"],
        ),
        read_image,
    ),
    SNAPSHOT_TOOL,
    *ACTION_TOOLS,
    UPLOAD_TOOL,
    WAIT_FOR_TOOL,
    *HISTORY_TOOLS,
    REQUEST_HUMAN_TOOL,  # issue 21
    TABS_TOOL,  # issue 20
)
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}


def tool_definitions() -> list[dict[str, Any]]:
    """Every tool's name, description and JSON input schema, as front ends publish them."""
    return [tool.definition() for tool in TOOLS]


class UnknownToolError(InvalidInputError):
    def __init__(self, name: object) -> None:
        super().__init__("tool", f"unknown tool {name!r}; known: {', '.join(TOOLS_BY_NAME)}", name)


def find_tool(name: str) -> Tool:
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        raise UnknownToolError(name)
    return tool


def prepare_input(
    tool: Tool, raw: object, default_timeout: float, max_timeout: float
) -> tuple[dict[str, Any], float]:
    """Validate `raw` for `tool`. Raises InvalidInputError or ToolError; runs nothing."""
    from ._validate import validate_input

    if tool.pre_check is not None and isinstance(raw, dict):
        tool.pre_check(raw)
    args = validate_input(tool.input_schema, raw)
    timeout = default_timeout
    if "timeout" in args:
        timeout = parse_duration(args["timeout"], field="timeout", maximum=max_timeout)
    return args, timeout


async def run_tool(ctx: ToolContext, tool: Tool, args: dict[str, Any]) -> ToolOutput:
    """Run a call whose input `prepare_input` accepted, by `ctx.deadline`.

    Every BrowserToolError the call meets becomes an error ToolOutput, whichever branch of the
    tree it comes from (a bare SessionError included). A DoorError is a front end's own (a
    client gone, an HTTP status to answer with) and propagates, as do bugs and cancellation.
    """
    try:
        return await tool.run(ctx, args)
    except DoorError:
        raise
    except BrowserToolError as exc:
        if isinstance(exc, CdpSessionDetachedError) and (live := ctx.existing_browser()):
            # The tab is closing itself: once the pump saw it go, the tabs' note (with this
            # result) says which tab is current now.
            await live.tabs.wait_closed(live.page)
        return ToolOutput.error(_shorten(ctx, _describe_error(ctx, exc)))
    finally:
        if (browser := ctx.existing_browser()) is not None:
            browser.page.refs.save()  # the refs this call issued, for a later browser's numbering


def _describe_error(ctx: ToolContext, exc: BrowserToolError) -> str:
    """What a failed call tells the model: one message per situation."""
    if isinstance(exc, CdpTimeoutError):
        return f"Timeout: {exc}"
    if isinstance(exc, CdpConnectionError):
        # The page's session went away while its browser lives on: Chrome detached it (its
        # tab closed itself), or else the renderer crashed.
        # With the connection gone too, it is the browser (it can follow its renderer down).
        browser = ctx.existing_browser()
        if browser is not None and browser.alive:
            if isinstance(exc, CdpSessionDetachedError):  # its target went away: not a crash
                return TAB_CLOSED_DURING_CALL
            return str(browser.page.crash_error())
        return BROWSER_CRASHED_DURING_CALL
    if isinstance(exc, SessionClosedError):
        return f"{exc}; the call was stopped."
    return str(exc)


def _shorten(ctx: ToolContext, text: str) -> str:
    """An error that echoes a huge input (a 1 MB URL, a thrown 1 MB string) keeps its start
    inline; the rest goes to a file like any long output, or is cut if it cannot be saved."""
    limit = ctx.settings.inline_text_limit
    if len(text) <= limit:
        return text
    try:
        return spill_large_text(text, ctx.dirs().outputs, label="error", limit=limit)
    except BrowserToolError:  # no file (the conversation is gone): keep the start
        return f"{text[: limit // 2]}... [{len(text) - limit // 2:,} more characters cut]"
