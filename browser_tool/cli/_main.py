"""`browser-tool`: serve the HTTP API, serve MCP, make one call, and look at a running service.

Exit codes: 0 done (a tool call whose result has is_error true is done too: it is printed),
1 the service is unreachable or failed, or refused for the state it is in (409: a profile in
use, a conversation already started), 2 a usage error (bad arguments, settings, JSON, id,
unknown tool, an unreadable or unwritable file, or a non-loopback address without
BROWSER_TOOL_TOKEN).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

import trio

from .._errors import (
    ConflictError,
    InvalidInputError,
    ListenError,
    ListenPolicyError,
    ServiceError,
)
from .._settings import Settings, env_name
from .._tasks import sole_exception
from ..server import (
    SHUTDOWN_SIGNALS,
    Shutdown,
    check_listen_policy,
)
from ._client import EXIT_FAILED, EXIT_OK, EXIT_USAGE, default_url
from ._parser import build_parser

T = TypeVar("T")

# The spare Chromes a command keeps when BROWSER_TOOL_POOL_SIZE is not set (see the README,
# "The pool"): a service's first call of a new conversation should not wait for a launch; a
# one-shot `call` (and the in-process API, whose default is the Settings' 0) would only launch
# a Chrome it never uses.
SERVICE_POOL_SIZE = 1
_POOL_SIZE_BY_COMMAND = {"serve": SERVICE_POOL_SIZE, "mcp": SERVICE_POOL_SIZE}


def default_pool_size(
    command: str, environ: Mapping[str, str], *, stdio_profile: bool = False
) -> int | None:
    """The pool size `command` runs with when the environment names none; None: the Settings'
    own default (0). `mcp` over stdio with `--profile` keeps none: its one conversation runs
    on the profile's dir, which a spare (launched on a dir of its own) can never serve."""
    if environ.get(env_name("pool_size")) or stdio_profile:
        return None
    return _POOL_SIZE_BY_COMMAND.get(command)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (see the module docstring)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return int(exc.code or 0)
    quiet = args.command in _CLIENT_COMMANDS
    level = args.log_level or ("warning" if quiet else "info")
    logging.basicConfig(
        level=level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        settings = Settings.from_env(
            state_dir=getattr(args, "state_dir", None),
            host=getattr(args, "host", None),
            port=getattr(args, "port", None),
            pool_size=default_pool_size(
                args.command,
                os.environ,
                stdio_profile=bool(getattr(args, "profile", None))
                and not getattr(args, "http", False),
            ),
        )
        command: Callable[[argparse.Namespace, Settings], int] = _COMMANDS[args.command]
        return command(args, settings)
    except (InvalidInputError, ListenPolicyError) as exc:
        print(f"browser-tool: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ServiceError as exc:
        print(f"browser-tool: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:  # `call` in-process; the manager cleaned up on the way out
        return 130


def _tools(args: argparse.Namespace, settings: Settings) -> int:
    from ..tools import tool_definitions

    print(json.dumps({"tools": tool_definitions()}, indent=2))
    return EXIT_OK


def _url(args: argparse.Namespace, settings: Settings) -> str:
    return str(args.url or default_url(settings.host, settings.port)).rstrip("/")


def _sessions(args: argparse.Namespace, settings: Settings) -> int:
    from ._client import show_sessions

    return show_sessions(_url(args, settings), settings.token, args.json)


def _kill(args: argparse.Namespace, settings: Settings) -> int:
    from .._conversation_ids import validate_conversation_id
    from ._client import kill

    return kill(_url(args, settings), settings.token, validate_conversation_id(args.id))


def _call(args: argparse.Namespace, settings: Settings) -> int:
    from .._conversation_ids import validate_conversation_id
    from ..tools import UnknownToolError, tool_definitions

    validate_conversation_id(args.id)
    if args.tool not in {tool["name"] for tool in tool_definitions()}:
        raise UnknownToolError(args.tool)
    try:
        tool_input = json.loads(args.input)
    except json.JSONDecodeError as exc:
        raise InvalidInputError("JSON", f"the tool input is not valid JSON: {exc}") from None
    if not isinstance(tool_input, dict):
        raise InvalidInputError("JSON", "the tool input must be a JSON object, like '{}'")
    output: dict[str, Any]
    if args.url and args.keep_files:
        raise InvalidInputError(
            "--keep-files", "is for in-process calls; with --url the service keeps the files"
        )
    if args.url:
        from ._client import call_remote

        if args.profile:  # issue 21: bind first (a no-op when bound to it already)
            from ._profiles import bind_remote

            bind_remote(_url(args, settings), settings.token, args.id, args.profile)

        output = call_remote(
            _url(args, settings),
            settings.token,
            args.id,
            args.tool,
            tool_input,
            with_images=args.with_images,
            read_timeout=settings.max_timeout + 30.0,
        )
    else:
        from pathlib import Path

        from ._one_shot import call_in_process

        keep_dir = Path(args.keep_files).expanduser() if args.keep_files else None
        output = _run_trio(
            partial(
                call_in_process,
                keep_dir=keep_dir,
                with_images=args.with_images,
                profile=args.profile,
            ),
            settings,
            args.id,
            args.tool,
            tool_input,
        )
    print(json.dumps(output, indent=2, ensure_ascii=False))
    return EXIT_OK


def _profiles(args: argparse.Namespace, settings: Settings) -> int:  # issue 21
    from ._profiles import delete_profile, list_profiles

    if args.profiles_action == "delete":
        return delete_profile(_url(args, settings), settings.token, args.name, args.json)
    return list_profiles(_url(args, settings), settings.token, args.json)


def _bind(args: argparse.Namespace, settings: Settings) -> int:  # issue 21
    from .._conversation_ids import validate_conversation_id
    from ._profiles import bind

    cid = validate_conversation_id(args.id)
    return bind(_url(args, settings), settings.token, cid, args.profile, args.json)


def _storage_state(args: argparse.Namespace, settings: Settings) -> int:  # issue 21
    from .._conversation_ids import validate_conversation_id
    from ._profiles import get_storage_state, put_storage_state

    cid = validate_conversation_id(args.id)
    if args.storage_action == "get":
        return get_storage_state(_url(args, settings), settings.token, cid, args.output)
    return put_storage_state(_url(args, settings), settings.token, cid, args.file, args.json)


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    from ..server import run_http_service

    check_listen_policy(settings.host, settings.token)
    shutdown = Shutdown()
    return _run_service(
        shutdown,
        lambda: run_http_service(settings, shutdown, _announce),
    )


def _mcp(args: argparse.Namespace, settings: Settings) -> int:
    if args.http:  # an alias of `serve`, which serves the MCP endpoints too
        return _serve(args, settings)
    shutdown = Shutdown()
    from .._conversation_ids import validate_conversation_id
    from ..server import default_conversation_id, run_mcp_stdio

    conversation_id = validate_conversation_id(args.conversation_id or default_conversation_id())
    return _run_service(
        shutdown, lambda: run_mcp_stdio(settings, shutdown, conversation_id, args.profile)
    )


def _announce(url: str) -> None:
    print(f"listening on {url}", flush=True)


def _run_service(shutdown: Shutdown, body: Callable[[], Awaitable[None]]) -> int:
    """Run a service under the signal handling of `_cli_service`; exit 0 after a clean stop."""

    async def run() -> None:
        with trio.open_signal_receiver(*SHUTDOWN_SIGNALS) as signals:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(shutdown.watch_signals, signals)
                await body()
                nursery.cancel_scope.cancel()

    _run_trio(run)
    return EXIT_OK


def _run_trio(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """`trio.run`, with the failures a person can act on (the address is taken, the state dir
    is unusable, bad input) turned from nested exception groups into one clear error."""
    from chrome_launcher import LauncherError

    try:
        return trio.run(fn, *args)
    except Exception as exc:
        leaf = sole_exception(exc)
        if isinstance(leaf, InvalidInputError):
            raise leaf from None
        if isinstance(leaf, ListenError | LauncherError | OSError | ConflictError):
            raise ServiceError(str(leaf), EXIT_FAILED) from None
        raise


_COMMANDS: dict[str, Callable[[argparse.Namespace, Settings], int]] = {
    "serve": _serve,
    "mcp": _mcp,
    "call": _call,
    "tools": _tools,
    "sessions": _sessions,
    "kill": _kill,
    "profiles": _profiles,
    "bind": _bind,
    "storage-state": _storage_state,
}
# Commands that only print an answer: log warnings only, unless --log-level says otherwise.
_CLIENT_COMMANDS = ("call", "tools", "sessions", "kill", "profiles", "bind", "storage-state")
