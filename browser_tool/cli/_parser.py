"""The argument parser of `browser-tool`: every subcommand, and help that says what it does."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

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
        "1 service unreachable or failed, or it refused for the state it is in (409: a profile "
        "in use, a conversation already started), 2 usage error (bad arguments, JSON, id, "
        "file). " + _ENV,
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
    call.add_argument(  # issue 21
        "--profile",
        metavar="NAME",
        help="bind the conversation to this persistent profile before the call: in-process, "
        "the browser runs on <state dir>/profiles/NAME/, which stays after the call (so a "
        "sign-in does too); with --url, PUT /v1/conversations/ID first (a no-op when it is "
        "bound to NAME already). Process isolation only",
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
    _add_profile_commands(commands)
    return parser


def _add_client_flags(parser: argparse.ArgumentParser, *, nested: bool = False) -> None:
    # Flags of a nested command default to SUPPRESS: argparse would let their default
    # overwrite the same flag given before the nested command's name.
    default = argparse.SUPPRESS if nested else None
    parser.add_argument("--url", default=default, help=_CLIENT_URL)
    parser.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if nested else False,
        help="print the raw JSON answer instead",
    )


def _add_profile_commands(commands: Any) -> None:  # issue 21
    profiles = commands.add_parser(
        "profiles",
        help="list a running service's persistent profiles, or delete one",
        usage="browser-tool profiles [-h] [--url URL] [--json] [delete NAME]",
        description="Without an action: one line per profile under the state dir: name, "
        "free or in_use held_by=CONVERSATION, size, last change (UTC). `profiles delete NAME` "
        "removes the profile dir and all it holds (its sign-ins); refused (exit 1, 409) while "
        "a conversation holds it; a missing profile is said so and exits 0.",
    )
    _add_client_flags(profiles)
    actions = profiles.add_subparsers(dest="profiles_action", metavar="ACTION")
    delete = actions.add_parser(
        "delete", help="delete a profile", description="DELETE /v1/profiles/NAME."
    )
    delete.add_argument("name", help="profile name")
    _add_client_flags(delete, nested=True)

    bind = commands.add_parser(
        "bind",
        help="bind a conversation to a persistent profile on a running service",
        description='PUT /v1/conversations/ID {"profile": PROFILE}, before the '
        "conversation's first call: its Chrome then runs on <state dir>/profiles/PROFILE/ "
        "(created if new), which outlives the conversation. Binding again to the same "
        "profile is a no-op. Refused (exit 1, 409) when another live conversation holds the "
        "profile (named), the conversation already had a call or is bound to another "
        "profile, or isolation is context.",
    )
    bind.add_argument("id", help="conversation id")
    bind.add_argument(
        "profile", help="profile name: 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit"
    )
    _add_client_flags(bind)

    storage = commands.add_parser(
        "storage-state",
        help="read or load a conversation's cookies and localStorage on a running service",
        description="The cookies and localStorage of a conversation's browser as JSON, in "
        "the shape of Playwright's storage_state. It carries sign-ins: treat it as a secret.",
    )
    verbs = storage.add_subparsers(dest="storage_action", required=True, metavar="ACTION")
    get = verbs.add_parser(
        "get",
        help="print the state, or write it to a file",
        description="GET /v1/conversations/ID/storage-state: print it, or write it to "
        "--output FILE (created, or truncated, with mode 0600). A conversation without a "
        "running browser (and no loaded state waiting) is refused (exit 1, 409).",
    )
    get.add_argument("id", help="conversation id")
    get.add_argument("-o", "--output", metavar="FILE", type=Path, help="write it here (0600)")
    get.add_argument("--url", help=_CLIENT_URL)
    put = verbs.add_parser(
        "put",
        help="load a state from a file or stdin",
        description="PUT /v1/conversations/ID/storage-state: load the state in FILE ('-' "
        "reads stdin) into the conversation, at once when its browser runs ('applied'), else "
        "into the browser its next call starts ('pending'). Adds to what the browser holds: "
        "nothing is cleared.",
    )
    put.add_argument("id", help="conversation id")
    put.add_argument("file", metavar="FILE", help="JSON file of a storage state, or - for stdin")
    _add_client_flags(put)
