"""Our service through each door, as one shape: `Door.call(conversation, tool, input)` returns
(is_error, text, image bytes as delivered). Python API in-process; HTTP to a `browser-tool serve`
subprocess over one httpx keep-alive client; MCP to a `browser-tool mcp --http` subprocess, one
MCP session (= one conversation) per conversation name."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import httpx
import trio
from mcp import Client
from mcp.types import ImageContent, TextContent

from browser_tool import BrowserSessionManager, PoolSource, Settings, open_session_manager

Outcome = tuple[bool, str, int]  # is_error, text, bytes of images


class Door(Protocol):
    # True while several conversations call at once (a door may call differently then).
    concurrent: bool

    async def connect(self, conversation: str) -> None:
        """Whatever a client does before its first call (MCP: its session's handshake). Run
        from the task that will `kill` it."""
        ...

    async def call(self, conversation: str, tool: str, tool_input: dict[str, Any]) -> Outcome: ...

    async def kill(self, conversation: str) -> tuple[int, int]:
        """(pid, survivors) of the conversation's browser."""
        ...

    async def pids(self) -> list[int]:
        """The browser pid (= process group) of every conversation."""
        ...


def _env() -> dict[str, str]:
    # No spare Chrome unless a door asks for one (the `pool` worker measures it): `serve` keeps
    # one by default, which would turn the HTTP and MCP doors' first call into a hand-over.
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSER_TOOL_")}
    return env | {"BROWSER_TOOL_POOL_SIZE": "0"}


class ApiDoor:
    def __init__(self, manager: BrowserSessionManager, pool: PoolSource | None = None) -> None:
        self.manager = manager
        self.pool = pool
        self.concurrent = False

    async def connect(self, conversation: str) -> None:
        pass

    async def call(self, conversation: str, tool: str, tool_input: dict[str, Any]) -> Outcome:
        out = await self.manager.call_tool(conversation, tool, tool_input)
        return out.is_error, out.output, sum(len(image.data) for image in out.images)

    async def kill(self, conversation: str) -> tuple[int, int]:
        report = await self.manager.kill_session(conversation)
        return report.pid or 0, report.survivors

    async def pids(self) -> list[int]:
        return [i.pid for i in self.manager.list_sessions() if i.pid and i.state != "pooled"]


@asynccontextmanager
async def api_door(state_dir: Path, *, pool_size: int = 0) -> AsyncIterator[ApiDoor]:
    pools: list[PoolSource] = []

    def pooling(*args: Any) -> PoolSource:
        pools.append(PoolSource(*args))
        return pools[-1]

    settings = Settings.from_env(_env(), state_dir=state_dir, pool_size=pool_size)
    async with open_session_manager(settings, source_factory=pooling if pool_size else None) as m:
        yield ApiDoor(m, pools[0] if pools else None)


@asynccontextmanager
async def served(state_dir: Path, *command: str) -> AsyncIterator[str]:
    """Run `browser-tool COMMAND --port 0`; yield its URL; SIGTERM it on exit."""
    argv = [sys.executable, "-m", "browser_tool", "--log-level", "warning", *command]
    argv += ["--port", "0", "--state-dir", str(state_dir)]
    process = await trio.lowlevel.open_process(argv, stdout=subprocess.PIPE, env=_env())
    assert process.stdout is not None
    try:
        line = b""
        while not line.endswith(b"\n"):
            chunk = await process.stdout.receive_some()
            if not chunk:
                raise RuntimeError(f"{argv} exited before listening")
            line += chunk
        yield line.decode().split()[-1]
    finally:
        process.send_signal(signal.SIGTERM)
        with trio.move_on_after(60) as waited:
            await process.wait()
        if waited.cancelled_caught:
            process.kill()
        await process.stdout.aclose()


class HttpDoor:
    """One call at a time goes through a blocking `httpx.Client` (keep-alive), as the agent
    runtimes we measure against call (and 0.2 ms cheaper here than httpx's async client under
    trio, which is client cost, not ours); concurrent calls go through an AsyncClient."""

    def __init__(self, url: str, client: httpx.AsyncClient) -> None:
        self.client = client
        self.blocking = httpx.Client(base_url=url, timeout=60)
        self.concurrent = False

    async def _request(self, method: str, url: str, body: Any = None) -> Any:
        if self.concurrent:
            response = await self.client.request(method, url, json=body)
        else:
            response = self.blocking.request(method, url, json=body)
            await trio.lowlevel.checkpoint()
        return response.json()

    async def connect(self, conversation: str) -> None:
        pass

    async def call(self, conversation: str, tool: str, tool_input: dict[str, Any]) -> Outcome:
        body = await self._request(
            "POST", f"/v1/conversations/{conversation}/tools/{tool}", tool_input
        )
        size = sum(len(base64.b64decode(image["data"])) for image in body["images"])
        return bool(body["is_error"]), str(body["output"]), size

    async def noop(self) -> None:
        """A request the service answers without work (the door's own cost)."""
        await self._request("GET", "/healthz")

    async def kill(self, conversation: str) -> tuple[int, int]:
        report = await self._request("DELETE", f"/v1/conversations/{conversation}")
        return int(report["pid"] or 0), int(report["survivors"])

    async def pids(self) -> list[int]:
        sessions = (await self._request("GET", "/v1/sessions"))["sessions"]
        return [int(s["pid"]) for s in sessions if s["pid"] and s["state"] != "pooled"]


@asynccontextmanager
async def http_door(state_dir: Path) -> AsyncIterator[HttpDoor]:
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
    async with (
        served(state_dir, "serve") as url,
        httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client,
    ):
        door = HttpDoor(url, client)
        try:
            yield door
        finally:
            door.blocking.close()


class McpDoor:
    """One MCP session per conversation on `browser-tool mcp --http` (its /mcp endpoint keeps
    one conversation per session and kills its browser when the session ends); the JSON API
    on the same server answers for the pids."""

    def __init__(self, url: str, client: httpx.AsyncClient) -> None:
        self.url = url
        self.http = HttpDoor(url, client)
        self.http.concurrent = True
        self.sessions: dict[str, tuple[Client, AsyncExitStack]] = {}
        self.concurrent = False

    async def connect(self, conversation: str) -> None:
        stack = AsyncExitStack()
        client = await stack.enter_async_context(Client(self.url + "/mcp"))
        self.sessions[conversation] = (client, stack)

    async def call(self, conversation: str, tool: str, tool_input: dict[str, Any]) -> Outcome:
        result = await self.sessions[conversation][0].call_tool(tool, tool_input)
        text = " ".join(b.text for b in result.content if isinstance(b, TextContent))
        size = sum(
            len(base64.b64decode(b.data)) for b in result.content if isinstance(b, ImageContent)
        )
        return bool(result.is_error), text, size

    async def kill(self, conversation: str) -> tuple[int, int]:
        """Ends the session, which ends its conversation (pid and survivors not reported)."""
        _, stack = self.sessions.pop(conversation)
        await stack.aclose()
        return 0, 0

    async def pids(self) -> list[int]:
        return await self.http.pids()

    async def aclose(self) -> None:
        for name in reversed(list(self.sessions)):  # sessions nest in the task that opened them
            await self.kill(name)


@asynccontextmanager
async def mcp_door(state_dir: Path) -> AsyncIterator[McpDoor]:
    async with (
        served(state_dir, "mcp", "--http") as url,
        httpx.AsyncClient(base_url=url, timeout=60) as client,
    ):
        door = McpDoor(url, client)
        try:
            yield door
        finally:
            await door.aclose()
            door.http.blocking.close()


@asynccontextmanager
async def hypercorn_floor() -> AsyncIterator[httpx.Client]:
    """A blocking keep-alive client of a bare hypercorn no-op server (bench._hypercorn_floor)."""
    argv = [sys.executable, "-m", "bench._hypercorn_floor"]
    process = await trio.lowlevel.open_process(argv, stdout=subprocess.PIPE)
    assert process.stdout is not None
    try:
        line = b""
        while not line.endswith(b"\n"):
            chunk = await process.stdout.receive_some()
            if not chunk:
                raise RuntimeError("the hypercorn floor server exited before listening")
            line += chunk
        with httpx.Client(base_url=line.decode().split()[-1]) as client:
            yield client
    finally:
        process.kill()
        await process.wait()
        await process.stdout.aclose()
