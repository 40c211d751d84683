"""What does a door cost per call? `python -m bench.http_overhead [--calls N]`

Measures a warm `browser_eval('1+1')` (the browser already running, the conversation already
used) four ways and prints the medians:

- the Python API: `manager.call_tool` in this process;
- the HTTP API: `browser-tool serve` in a subprocess, one keep-alive httpx client;
- MCP over stdio: the `mcp` SDK's client driving `browser-tool mcp`;
- MCP over streamable HTTP: the SDK's client driving `browser-tool mcp --http`.

HTTP overhead per call = HTTP p50 - Python API p50. Everything runs on loopback with a fresh
state root that is removed at the end; every server is stopped with SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from browser_tool import Settings, open_session_manager

EVAL = {"expression": "1+1"}
WARMUP = 20


async def measure(call: Callable[[], Awaitable[object]], n: int) -> list[float]:
    for _ in range(WARMUP):
        await call()
    times = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return times


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("BROWSER_TOOL_")}


def _argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "browser_tool", "--log-level", "warning", *args]


@asynccontextmanager
async def served(state_dir: Path, *command: str) -> AsyncIterator[str]:
    argv = _argv(*command, "--port", "0", "--state-dir", str(state_dir))
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
        with trio.fail_after(60):
            await process.wait()
        await process.stdout.aclose()


async def python_api(root: Path, n: int) -> list[float]:
    settings = Settings.from_env(_env(), state_dir=root / "api")
    async with open_session_manager(settings) as manager:
        return await measure(lambda: manager.call_tool("bench", "browser_eval", EVAL), n)


async def http_api(root: Path, n: int) -> list[float]:
    async with served(root / "http", "serve") as url, httpx.AsyncClient(base_url=url) as client:

        async def call() -> None:
            response = await client.post("/v1/conversations/bench/tools/browser_eval", json=EVAL)
            assert response.json()["is_error"] is False

        return await measure(call, n)


async def mcp_stdio(root: Path, n: int) -> list[float]:
    state = str(root / "mcp-stdio")
    server = StdioServerParameters(
        command=sys.executable, args=_argv("mcp", "--state-dir", state)[1:]
    )
    async with Client(server) as client:
        return await measure(lambda: client.call_tool("browser_eval", EVAL), n)


async def mcp_http(root: Path, n: int) -> list[float]:
    async with served(root / "mcp-http", "mcp", "--http") as url, Client(url + "/mcp") as client:
        return await measure(lambda: client.call_tool("browser_eval", EVAL), n)


def _ms(times: list[float], q: int) -> float:
    return statistics.quantiles(times, n=100)[q - 1] * 1000


async def main(n: int) -> int:
    root = Path(tempfile.mkdtemp(prefix="bt-bench-", dir="/tmp"))
    try:
        results = {
            "Python API (manager.call_tool)": await python_api(root, n),
            "HTTP API (POST .../tools/browser_eval)": await http_api(root, n),
            "MCP over stdio (SDK client)": await mcp_stdio(root, n),
            "MCP over streamable HTTP (SDK client)": await mcp_http(root, n),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"warm browser_eval('1+1'), {n} calls each after {WARMUP} warm-up calls:")
    for name, times in results.items():
        p50 = statistics.median(times) * 1000
        print(f"  {name:40} p50 {p50:6.2f} ms  p90 {_ms(times, 90):6.2f} ms")
    api, http = (statistics.median(t) * 1000 for t in list(results.values())[:2])
    print(f"HTTP overhead per call (HTTP p50 - Python API p50): {http - api:.2f} ms")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=300, help="measured calls per door")
    sys.exit(trio.run(main, parser.parse_args().calls))
