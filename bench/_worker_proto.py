"""The line protocol between the benchmark and its workers, for the workers that run on trio.

The orchestrator writes one JSON command per line to a worker's stdin; the worker answers each
with one JSON line on stdout (`{"ok": true, ...}` or `{"ok": false, "error": "..."}`). Workers
are long-lived: their browsers stay warm between rounds. The Playwright worker speaks the same
protocol with its own copy of these few lines (it runs in the benchmark's own environment,
where this package is not installed).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import trio

# Chrome paints at 60 Hz and a screenshot waits for a frame: back-to-back requests would all
# land at the same phase of that clock, and a few ms more or less per call would show as a
# whole frame more or less. A random pause before each sample spreads them over the frame.
FRAME = 1 / 60

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


async def serve_lines(handle: Handler) -> None:
    """Answer commands from stdin until "quit" or EOF. A failing command answers with its
    error; the worker goes on."""
    stdin = trio.lowlevel.FdStream(0)
    buffer = b""
    while True:
        while b"\n" not in buffer:
            chunk = await stdin.receive_some(65536)
            if not chunk:
                return
            buffer += chunk
        line, buffer = buffer.split(b"\n", 1)
        command = json.loads(line)
        if command["op"] == "quit":
            print(json.dumps({"ok": True}), flush=True)
            return
        try:
            answer = {"ok": True, **await handle(command)}
        except Exception as exc:  # reported to the orchestrator, which records it
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
        print(json.dumps(answer), flush=True)


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    """Milliseconds `call` took."""
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000
