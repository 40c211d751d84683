"""Benchmark worker for our service through one door: `python -m bench._worker_ours DOOR
STATE_DIR` with DOOR one of api, http, mcp, pool (the Python API with a pool of one).

Commands (see `_worker_proto`): first_call, prepare, eval, navigate, screenshot, kill, open,
load, pids, close_all. Latencies come back in milliseconds.
"""

from __future__ import annotations

import itertools
import random
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import trio

from chrome_launcher import live_group_members

from ._doors import ApiDoor, Door, HttpDoor, api_door, http_door, hypercorn_floor, mcp_door
from ._worker_proto import FRAME, serve_lines, timed

WARM = "warm"
_names = itertools.count(1)


class OursWorker:
    def __init__(self, door: Door, stack: AsyncExitStack) -> None:
        self.door = door
        self.stack = stack
        self.floor: httpx.Client | None = None
        self.open: list[str] = []  # conversations opened by "open", used by "load"

    async def handle(self, command: dict[str, Any]) -> dict[str, Any]:
        handler = getattr(self, "op_" + command["op"])
        result: dict[str, Any] = await handler(command)
        return result

    async def _call(self, conversation: str, tool: str, tool_input: dict[str, Any]) -> int:
        is_error, text, size = await self.door.call(conversation, tool, tool_input)
        if is_error:
            raise RuntimeError(f"{tool} failed: {text[:300]}")
        return size

    async def op_first_call(self, command: dict[str, Any]) -> dict[str, Any]:
        pool = self.door.pool if isinstance(self.door, ApiDoor) else None
        if pool is not None:
            await pool.wait_filled()
        conversation = f"first-{next(_names)}"
        nav = {"url": command["url"]}

        async def first() -> None:
            await self.door.connect(conversation)
            await self._call(conversation, "browser_navigate", nav)

        ms = await timed(first)
        await self.door.kill(conversation)
        if pool is not None:  # its refill must not land on the next system's measurement
            await pool.wait_filled()
        return {"ms": ms}

    async def op_prepare(self, command: dict[str, Any]) -> dict[str, Any]:
        await self.door.connect(WARM)
        await self._call(WARM, "browser_navigate", {"url": command["url"]})
        for _ in range(20):
            await self._call(WARM, "browser_eval", {"expression": "1+1"})
        return {}

    async def op_eval(self, command: dict[str, Any]) -> dict[str, Any]:
        expr = {"expression": "1+1"}
        samples = [
            await timed(lambda: self._call(WARM, "browser_eval", expr)) for _ in range(command["n"])
        ]
        return {"samples": samples}

    async def op_navigate(self, command: dict[str, Any]) -> dict[str, Any]:
        nav = {"url": command["url"]}
        samples = []
        for _ in range(command["n"]):
            await trio.sleep(random.uniform(0, FRAME))
            samples.append(await timed(lambda: self._call(WARM, "browser_navigate", nav)))
        return {"samples": samples}

    async def op_screenshot(self, command: dict[str, Any]) -> dict[str, Any]:
        samples, sizes = [], []
        for _ in range(command["n"]):
            await trio.sleep(random.uniform(0, FRAME))
            started = time.perf_counter()
            sizes.append(await self._call(WARM, "browser_take_screenshot", {}))
            samples.append((time.perf_counter() - started) * 1000)
        return {"samples": samples, "bytes": statistics.median(sizes)}

    async def op_kill(self, command: dict[str, Any]) -> dict[str, Any]:
        names = [f"kill-{next(_names)}" for _ in range(command["n"])]
        await self._open(names, command["url"])
        samples, survivors = [], 0
        for name in names:
            started = time.perf_counter()
            pid, left = await self.door.kill(name)
            samples.append((time.perf_counter() - started) * 1000)
            survivors += left + (1 if pid and live_group_members(pid) else 0)
        return {"samples": samples, "survivors": survivors}

    async def _open(self, names: list[str], url: str) -> None:
        for name in names:  # in this task, which will close them
            await self.door.connect(name)
        limit = trio.Semaphore(4)  # launches at once: the machine has 2 cores

        async def one(name: str) -> None:
            async with limit:
                await self._call(name, "browser_navigate", {"url": url})

        async with trio.open_nursery() as nursery:
            for name in names:
                nursery.start_soon(one, name)

    async def op_open(self, command: dict[str, Any]) -> dict[str, Any]:
        names = [f"load-{len(self.open) + i}" for i in range(command["count"] - len(self.open))]
        await self._open(names, command["url"])
        self.open += names
        return {}

    async def op_load(self, command: dict[str, Any]) -> dict[str, Any]:
        """`count` conversations loop navigate + eval + screenshot for `seconds`."""
        url, deadline = command["url"], trio.current_time() + command["seconds"]
        samples: list[float] = []
        errors = 0

        async def loop(name: str) -> None:
            nonlocal errors
            steps: tuple[tuple[str, dict[str, Any]], ...] = (
                ("browser_navigate", {"url": url}),
                ("browser_eval", {"expression": "document.title"}),
                ("browser_take_screenshot", {}),
            )
            for tool, tool_input in itertools.cycle(steps):
                if trio.current_time() >= deadline:
                    return
                started = time.perf_counter()
                try:
                    await self._call(name, tool, tool_input)
                except Exception:
                    errors += 1
                samples.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        self.door.concurrent = True
        try:
            async with trio.open_nursery() as nursery:
                for name in self.open[: command["count"]]:
                    nursery.start_soon(loop, name)
        finally:
            self.door.concurrent = False
        elapsed = time.perf_counter() - started
        return {"samples": samples, "errors": errors, "elapsed": elapsed}

    async def op_noop(self, command: dict[str, Any]) -> dict[str, Any]:
        """HTTP only: `n` requests the service answers without work (GET /healthz)."""
        door = self.door
        assert isinstance(door, HttpDoor)
        return {"samples": [await timed(door.noop) for _ in range(command["n"])]}

    async def op_door(self, command: dict[str, Any]) -> dict[str, Any]:
        """`n` tool calls that do no CDP at all (clearing an empty console log): the door's and
        the manager's own cost."""
        clear: dict[str, Any] = {}
        samples = [
            await timed(lambda: self._call(WARM, "browser_clear_console_logs", clear))
            for _ in range(command["n"])
        ]
        return {"samples": samples}

    async def op_floor(self, command: dict[str, Any]) -> dict[str, Any]:
        """`n` POSTs of the eval input to a bare hypercorn no-op server, same client kind."""
        if self.floor is None:
            self.floor = await self.stack.enter_async_context(hypercorn_floor())
        client: httpx.Client = self.floor

        async def post() -> None:
            client.post("/", json={"expression": "1+1"})  # noqa: ASYNC212 (one at a time)
            await trio.lowlevel.checkpoint()

        return {"samples": [await timed(post) for _ in range(command["n"])]}

    async def op_pids(self, command: dict[str, Any]) -> dict[str, Any]:
        return {"pids": await self.door.pids()}

    async def op_close_all(self, command: dict[str, Any]) -> dict[str, Any]:
        for name in reversed(self.open):  # the reverse of opening: MCP sessions nest
            await self.door.kill(name)
        self.open = []
        return {}


@asynccontextmanager
async def open_door(kind: str, state_dir: Path) -> AsyncIterator[Door]:
    if kind == "api":
        async with api_door(state_dir) as door:
            yield door
    elif kind == "pool":
        async with api_door(state_dir, pool_size=1) as door:
            yield door
    elif kind == "http":
        async with http_door(state_dir) as http:
            yield http
    elif kind == "mcp":
        async with mcp_door(state_dir) as mcp:
            yield mcp
    else:
        raise SystemExit(f"unknown door {kind!r}")


async def main(kind: str, state_dir: Path) -> None:
    async with open_door(kind, state_dir) as door, AsyncExitStack() as stack:
        await serve_lines(OursWorker(door, stack).handle)


if __name__ == "__main__":
    trio.run(main, sys.argv[1], Path(sys.argv[2]))
