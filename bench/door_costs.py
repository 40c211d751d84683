"""Each door's own cost, with clients that cost next to nothing (issue 23).

One process, one warm conversation per door, rounds alternating (the order rotating):

- the Python API in-process (`BrowserSessionManager.call_tool`): the engine, no door;
- the HTTP API of a `browser-tool serve` subprocess, through one blocking httpx keep-alive
  client: `browser_eval`, a tool call that sends no CDP (`browser_clear_console_logs`), and
  `/healthz`; beside hypercorn's own no-op floor (`bench._hypercorn_floor`), same client;
- MCP over streamable HTTP on that service, as plain JSON-RPC POSTs through the same client:
  the per-conversation endpoint (a stateless 2026-07-28 request) and `/mcp` (a 2025-11-25
  handshake session);
- MCP over stdio (`browser-tool mcp`), as JSON-RPC lines on its pipes: a handshake session and
  2026-07-28 requests (two servers); and the `mcp` SDK's own `ClientSession` on a third, to
  show what that client costs on top.

A door's cost is its call minus the same call through the Python API, per round, then the
median over rounds. The HTTP door's own cost also takes off hypercorn's floor. Goals (issue
23): MCP within 1.5 ms of the Python API on both transports; the HTTP door's own cost at most
0.3 ms over hypercorn's floor for every tool call.

Run: python -m bench.door_costs [--rounds N]   (also part of `python -m bench`)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AsyncExitStack, ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import trio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from browser_tool import Settings, open_session_manager

from ._door_clients import (
    EVAL,
    HANDSHAKE,
    MODERN,
    NOOP,
    Service,
    StdioLines,
    cli_argv,
    door_env,
    listening_url,
)
from ._plot import plot_bars
from ._report import put_section

RESULTS = Path(__file__).resolve().parent / "results"
CALLS = 60
MCP_GOAL_MS = 1.5
HTTP_GOAL_MS = 0.3


async def _timed_n(call: Callable[[], Any], n: int) -> float:
    """The median of `n` calls, in ms; `call` may be blocking or return an awaitable."""
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        result = call()
        if hasattr(result, "__await__"):
            await result
        samples.append((time.perf_counter() - started) * 1000)
    await trio.lowlevel.checkpoint()
    return statistics.median(samples)


async def run(rounds: int) -> dict[str, Any]:
    results: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "rounds": rounds,
        "calls_per_round": CALLS,
        "load_average_at_start": list(os.getloadavg()),
    }
    with tempfile.TemporaryDirectory(prefix="bt-bench-doors-") as tmp, ExitStack() as procs:
        root = Path(tmp)

        def spawn(argv: list[str], name: str) -> subprocess.Popen[bytes]:
            process = subprocess.Popen(argv, stdout=subprocess.PIPE, env=door_env(root / name))
            procs.callback(process.wait, 60)
            procs.callback(process.terminate)
            return process

        service = Service(listening_url(spawn(cli_argv("serve", "--port", "0"), "serve")))
        floor_process = spawn([sys.executable, "-m", "bench._hypercorn_floor"], "floor")
        floor = httpx.Client(base_url=listening_url(floor_process), timeout=60)
        procs.callback(floor.close)
        procs.callback(service.client.close)
        stdio_session, stdio_modern = StdioLines(root / "s1", False), StdioLines(root / "s2", True)
        procs.callback(stdio_session.close)
        procs.callback(stdio_modern.close)
        settings = Settings.from_env(door_env(root / "api"), state_dir=root / "api")
        params = StdioServerParameters(command=sys.executable, args=cli_argv("mcp")[1:],
                                       env=door_env(root / "s3"))  # fmt: skip
        async with open_session_manager(settings) as manager, AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(stdio_client(params))
            sdk = await stack.enter_async_context(ClientSession(read, write))
            await sdk.initialize()

            async def api(tool: str, body: dict[str, Any]) -> None:
                out = await manager.call_tool("bench-api", tool, body)
                if out.is_error:
                    raise RuntimeError(out.output)

            async def sdk_eval() -> None:
                out = await sdk.call_tool("browser_eval", EVAL)
                if out.is_error:
                    raise RuntimeError(str(out.content))

            calls: dict[str, Callable[[], Any]] = {
                "api_eval": lambda: api("browser_eval", EVAL),
                "api_noop": lambda: api(NOOP, {}),
                "http_eval": lambda: service.tool("browser_eval", EVAL),
                "http_noop": lambda: service.tool(NOOP, {}),
                "http_healthz": service.healthz,
                "hypercorn_floor": lambda: floor.post("/", json={}),
                "mcp_http_modern_eval": service.mcp_modern,
                "mcp_http_session_eval": service.mcp_session,
                "mcp_stdio_session_eval": stdio_session.eval,
                "mcp_stdio_modern_eval": stdio_modern.eval,
                "mcp_stdio_sdk_client_eval": sdk_eval,
            }
            for call in calls.values():  # warm: browsers launched, code paths hot
                await _timed_n(call, 20)
            per_round: dict[str, list[float]] = {name: [] for name in calls}
            names = list(calls)
            for index in range(rounds):
                for name in names[index % len(names) :] + names[: index % len(names)]:
                    per_round[name].append(await _timed_n(calls[name], CALLS))
            await manager.kill_session("bench-api")
    results["p50"] = {name: statistics.median(values) for name, values in per_round.items()}
    results["per_round"] = per_round
    results["costs"] = costs(per_round)
    results["load_average_at_end"] = list(os.getloadavg())
    return results


def costs(per_round: dict[str, list[float]]) -> dict[str, float]:
    """Each door's cost: per round, the door's p50 minus the API's (and minus hypercorn's floor
    for the HTTP door's own cost); then the median over rounds."""

    def median_of(f: Callable[[int], float]) -> float:
        return statistics.median(f(i) for i in range(len(per_round["api_eval"])))

    r = per_round
    out = {
        name.removesuffix("_eval") + "_over_api": median_of(
            lambda i, name=name: r[name][i] - r["api_eval"][i]  # type: ignore[misc]
        )
        for name in r
        if name.startswith("mcp_")
    }
    out["http_eval_over_api"] = median_of(lambda i: r["http_eval"][i] - r["api_eval"][i])
    out["http_noop_over_api"] = median_of(lambda i: r["http_noop"][i] - r["api_noop"][i])
    floor = r["hypercorn_floor"]
    out["http_eval_own"] = median_of(lambda i: r["http_eval"][i] - r["api_eval"][i] - floor[i])
    out["http_noop_own"] = median_of(lambda i: r["http_noop"][i] - r["api_noop"][i] - floor[i])
    out["http_healthz_own"] = median_of(lambda i: r["http_healthz"][i] - floor[i])
    return out


TITLE = "## The doors' own cost (lean clients)"
LABELS = {
    "api_eval": "Python API, `browser_eval`",
    "api_noop": f"Python API, `{NOOP}` (no CDP)",
    "http_eval": "HTTP API, `browser_eval`",
    "http_noop": f"HTTP API, `{NOOP}` (no CDP)",
    "http_healthz": "HTTP, GET /healthz",
    "hypercorn_floor": "hypercorn's trio worker, a no-op ASGI app (the floor)",
    "mcp_http_modern_eval": f"MCP streamable HTTP, per-conversation URL, {MODERN}, eval",
    "mcp_http_session_eval": f"MCP streamable HTTP, /mcp session, {HANDSHAKE}, eval",
    "mcp_stdio_session_eval": f"MCP stdio, handshake session ({HANDSHAKE}), eval",
    "mcp_stdio_modern_eval": f"MCP stdio, {MODERN} requests, eval",
    "mcp_stdio_sdk_client_eval": "MCP stdio through the SDK's ClientSession, eval",
}


# What a miss is made of, as profiled (docs/decisions.md, "Issue 23"): said beside a goal
# that a run misses, with by how much.
WHY = {
    "mcp_http_session_over_api": "the SDK's handshake-session transport: the POST, the "
    "session's server loop and its message router talk through memory streams and each "
    "request gets a task (about 24 scheduler passes per call against 17 for a stateless "
    "2026-07-28 call); stay on the SDK, or use the per-conversation URL",
    "mcp_http_modern_over_api": "the SDK's per-request work (envelope validation, the "
    "server's context and middleware, pydantic validation of params and result)",
    "http_eval_own": "not the door's Python work, which for an eval is a no-CDP call's plus "
    "about 40 us (3.5 scheduler passes, 2 of them the CDP wait, counted with cProfile): the "
    "rest is time the service spends waiting in epoll, which grows with the machine's load",
    "http_noop_own": "hypercorn's h11 parse and send plus our routing and JSON",
}


def goals(results: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(goal, measured, met) for the door goals of issue 23."""
    c = results["costs"]
    rows = []
    for key, label in [
        ("mcp_http_modern_over_api", f"MCP streamable HTTP ({MODERN}) - API"),
        ("mcp_http_session_over_api", f"MCP streamable HTTP (/mcp, {HANDSHAKE}) - API"),
        ("mcp_stdio_session_over_api", f"MCP stdio ({HANDSHAKE}) - API"),
        ("mcp_stdio_modern_over_api", f"MCP stdio ({MODERN}) - API"),
    ]:
        rows.append(
            (f"{label} <= {MCP_GOAL_MS} ms", _measured(c, key, MCP_GOAL_MS), c[key] <= MCP_GOAL_MS)
        )
    for key, label in [("http_eval_own", "eval"), ("http_noop_own", "no-CDP tool")]:
        rows.append(
            (
                f"HTTP door's own cost, {label} (minus API, minus floor) <= {HTTP_GOAL_MS} ms",
                _measured(c, key, HTTP_GOAL_MS),
                c[key] <= HTTP_GOAL_MS,
            )
        )
    return rows


def _measured(c: dict[str, float], key: str, goal: float) -> str:
    if c[key] <= goal:
        return f"{c[key]:.2f} ms"
    why = WHY.get(key, "see docs/decisions.md")
    return f"{c[key]:.2f} ms: missed by {c[key] - goal:.2f} ms ({why})"


def markdown(results: dict[str, Any]) -> str:
    load = ", ".join(f"{x:.2f}" for x in results["load_average_at_start"])
    p50, c = results["p50"], results["costs"]
    lines = [
        TITLE,
        "",
        f"`python -m bench.door_costs`, {results['when']}, {results['rounds']} rounds of "
        f"{results['calls_per_round']} calls per door (order rotating), load average at start "
        f"{load}. Clients that cost next to nothing: JSON-RPC lines on the stdio pipes, plain "
        "JSON-RPC POSTs through one blocking httpx keep-alive client; the SDK's own "
        "ClientSession for comparison. A cost is per round, then the median over rounds.",
        "",
        "| call | p50 |",
        "| --- | --- |",
        *(f"| {LABELS[name]} | {value:.3f} ms |" for name, value in p50.items()),
        "",
        f"HTTP: eval costs {c['http_eval_over_api']:.3f} ms over the API, a no-CDP call "
        f"{c['http_noop_over_api']:.3f} ms, /healthz {c['http_healthz_own']:.3f} ms over the "
        f"floor; the door's own cost past hypercorn's floor is {c['http_eval_own']:.3f} ms "
        f"(eval) and {c['http_noop_own']:.3f} ms (no CDP). The SDK's ClientSession adds "
        f"{c['mcp_stdio_sdk_client_over_api'] - c['mcp_stdio_session_over_api']:.3f} ms of its "
        "own to a stdio call.",
        "",
        "| goal (issue 23) | measured | met |",
        "| --- | --- | --- |",
        *(f"| {g} | {m} | {'yes' if ok else 'NO'} |" for g, m, ok in goals(results)),
        "",
        "Plot: `doors.png` (warm `browser_eval` p50 through each door, side by side).",
    ]
    return "\n".join(lines) + "\n"


def write(results: dict[str, Any]) -> str:
    RESULTS.mkdir(exist_ok=True)
    section = markdown(results)
    (RESULTS / "door_costs.md").write_text(section)
    evals = {LABELS[k]: v for k, v in results["p50"].items() if k.endswith("_eval")}
    plot_bars(evals, RESULTS / "doors.png", "warm browser_eval p50 through each door", "ms")
    put_section(RESULTS, TITLE, section, "door_costs", results)
    return section


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.door_costs")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    print(write(trio.run(run, args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
