"""The argument parser of `browser-tool`: every subcommand, and help that says what it does."""

from __future__ import annotations

import argparse
from pathlib import Path

_ENV = (
    "Settings come from BROWSER_TOOL_* environment variables (see the README); flags win over them."
)
_CLIENT_URL = (
    "URL of a running service (default: http://127.0.0.1:8765, or the host and port from "
    "BROWSER_TOOL_HOST/BROWSER_TOOL_PORT). BROWSER_TOOL_TOKEN, when set, is sent as the "
    "bearer token."
)


def _add_listen(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host",
        help="address to listen on (default: 127.0.0.1, or BROWSER_TOOL_HOST); any address "
        "other than loopback requires BROWSER_TOOL_TOKEN",
    )
    parser.add_argument(
        "--port", type=int, help="port (default: 8765, or BROWSER_TOOL_PORT); 0 picks a free one"
    )


def _add_state_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state-dir",
        type=Path,
        help="root of PID records, instance locks and session dirs (default: "
        "BROWSER_TOOL_STATE_DIR, else $XDG_STATE_HOME/browser-tool)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="browser-tool",
        description="Browser tools for AI agents: one headless Chrome per conversation.",
        epilog="Exit codes: 0 done (a tool result with is_error true is printed and exits 0), "
        "1 service unreachable or failed, 2 usage error. " + _ENV,
    )
    parser.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        help="log level on stderr (default: info for serve and mcp, warning otherwise)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser(
        "serve",
        help="serve the HTTP API and MCP over streamable HTTP",
        description="Serve the HTTP API (see GET /openapi.json) and MCP over streamable HTTP: "
        "per conversation at /v1/conversations/ID/mcp (every protocol version), and at /mcp "
        "one conversation per handshake session (see docs/mcp.md). Prints 'listening on "
        "http://HOST:PORT' once it accepts connections. SIGTERM or SIGINT: stop accepting, "
        "give calls in flight BROWSER_TOOL_CALL_GRACE, kill every browser, exit 0; a second "
        "signal stops the calls in flight at once.",
        epilog=_ENV,
    )
    _add_listen(serve)
    _add_state_dir(serve)

    mcp = commands.add_parser(
        "mcp",
        help="serve the tools over MCP (stdio, or streamable HTTP with --http)",
        description="Serve the tools as an MCP server. Over stdio (the default) the process is "
        "one conversation, ended when stdin closes. With --http it is `serve` under another "
        "name: the HTTP API and its MCP endpoints, /v1/conversations/ID/mcp and /mcp.",
        epilog=_ENV,
    )
    mcp.add_argument(
        "--http", action="store_true", help="serve streamable HTTP, not stdio (the same as `serve`)"
    )
    _add_listen(mcp)
    _add_state_dir(mcp)
    mcp.add_argument(
        "--conversation-id",
        help="stdio only: the conversation id (default: mcp-stdio-<pid>)",
    )
    mcp.add_argument(  # issue 21
        "--profile",
        help="stdio only: run the conversation's Chrome on this persistent profile "
        "(<state dir>/profiles/NAME/, kept after the process ends); one process per profile",
    )

    call = commands.add_parser(
        "call",
        help="run one tool call and print its result as JSON",
        description="Run one tool call. Without --url it runs in this process: a browser is "
        "started, the call runs, and the browser and the conversation's files are removed "
        "before exit: the files the result names (screenshots, downloads, long outputs) are "
        "copied to --keep-files DIR first, or the result lists them as removed. With --url it "
        "goes to a running service and the conversation's browser and files stay there.",
        epilog='Example: browser-tool call conv-1 browser_eval \'{"expression": "1+1"}\'',
    )
    call.add_argument("id", help="conversation id (1-128 of A-Z a-z 0-9 . _ : -)")
    call.add_argument("tool", help="tool name (see `browser-tool tools`)")
    call.add_argument("input", nargs="?", default="{}", help="tool input as a JSON object")
    call.add_argument(
        "--url",
        help="send the call to the service at this URL instead of running it in this process "
        "(BROWSER_TOOL_TOKEN, when set, is sent as the bearer token)",
    )
    call.add_argument(
        "--with-images", action="store_true", help="include base64 image data (default: paths)"
    )
    call.add_argument(
        "--keep-files",
        metavar="DIR",
        help="in-process only: copy the files the result names into DIR (created if needed) "
        "and print their new paths",
    )
    _add_state_dir(call)

    commands.add_parser(
        "tools",
        help="print the tool definitions as JSON",
        description='Print {"tools": [{"name", "description", "input_schema"}]}, as GET '
        "/v1/tools serves it.",
    )

    sessions = commands.add_parser(
        "sessions",
        help="list a running service's sessions",
        description="One line per session: id, state, pid (marked (shared) for a Chrome that "
        "conversations share, isolation context), age, idle time left, RSS of the whole Chrome "
        "process group, calls (and the last error, if any).",
    )
    sessions.add_argument("--url", help=_CLIENT_URL)
    sessions.add_argument("--json", action="store_true", help="print the raw JSON instead")

    kill = commands.add_parser(
        "kill",
        help="end a conversation's browser on a running service",
        description="DELETE the conversation on a running service: its browser is killed and "
        "its files removed. Idempotent. Prints the cleanup report as JSON.",
    )
    kill.add_argument("id", help="conversation id")
    kill.add_argument("--url", help=_CLIENT_URL)
    return parser
