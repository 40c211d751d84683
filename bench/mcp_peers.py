"""The MCP peers: our stdio MCP server beside Playwright MCP (`@playwright/mcp`) and Chrome
DevTools MCP (`chrome-devtools-mcp`), both installed from npm into bench/.node by `make bench`.

One MCP client for all three: the `mcp` SDK's `ClientSession` over stdio, the same calls in the
same order. Every server drives the same Chromium binary (the headless shell; no browser is
downloaded), headless, with a throwaway profile. A round starts each server afresh (the order
rotating round by round) and measures, through that one client: the first navigate (the
server's browser launched on its first use, or taken from our pool), warm navigates of a small
page, warm evals of `1+1`, screenshots, and the PSS of the server's whole process tree (the
server and every browser process under it) after them and 2 s of rest. A ratio is the median
of the per-round ratios (ours / peer), so a load spike hits every system of its round.

Ours runs as deployed: `browser-tool mcp` keeps one spare Chrome by default (issue 23), which
its first navigate takes and its memory figure includes.

Run: python -m bench.mcp_peers [--rounds N]   (also part of `python -m bench`)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import trio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from fixtures_site import running_fixtures

from ._procs import pss_bytes
from ._report import put_section

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
NODE_BIN = BENCH / ".node" / "node_modules" / ".bin"
CHROME = os.environ.get("BROWSER_TOOL_CHROME", "/usr/lib/chromium/chromium-headless-shell")
TITLE = "## MCP peers: one stdio MCP client, three servers"
EVALS, NAVIGATES, SHOTS = 50, 8, 5
SETTLE_S = 2.0
Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Server:
    title: str
    params: Callable[[Path], StdioServerParameters]
    navigate: Callable[[str], Call]
    evaluate: Call
    screenshot: Call


def _ours(tmp: Path) -> StdioServerParameters:
    env = {"BROWSER_TOOL_STATE_DIR": str(tmp / "state"), "BROWSER_TOOL_CHROME": CHROME}
    return StdioServerParameters(
        command=str(Path(sys.executable).parent / "browser-tool"),
        args=["--log-level", "warning", "mcp", "--conversation-id", "bench-peers"],
        env={**env, "PATH": "/usr/bin:/bin"},
    )


def _playwright(tmp: Path) -> StdioServerParameters:
    args = ["--headless", "--isolated", "--no-sandbox", "--executable-path", CHROME]
    return StdioServerParameters(
        command=str(NODE_BIN / "playwright-mcp"),
        args=[*args, "--output-dir", str(tmp / "out")],
        env={"PATH": "/usr/bin:/bin", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1", "HOME": str(tmp)},
    )


def _devtools(tmp: Path) -> StdioServerParameters:
    args = ["--headless", "--isolated", "--executablePath", CHROME, "--chromeArg=--no-sandbox"]
    args += ["--viewport", "1280x720", "--no-usage-statistics", "--no-performance-crux"]
    args += ["--no-page-id-routing"]  # one page: no page id to thread through every call
    return StdioServerParameters(
        command=str(NODE_BIN / "chrome-devtools-mcp"),
        args=args,
        env={
            "PATH": "/usr/bin:/bin",
            "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1",
            "HOME": str(tmp),
        },
    )


SERVERS: dict[str, Server] = {
    "ours": Server(
        "ours (`browser-tool mcp`)",
        _ours,
        lambda url: ("browser_navigate", {"url": url}),
        ("browser_eval", {"expression": "1+1"}),
        ("browser_take_screenshot", {}),
    ),
    "playwright": Server(
        "Playwright MCP",
        _playwright,
        lambda url: ("browser_navigate", {"url": url}),
        ("browser_evaluate", {"function": "() => 1+1"}),
        ("browser_take_screenshot", {}),
    ),
    "devtools": Server(
        "Chrome DevTools MCP",
        _devtools,
        lambda url: ("navigate_page", {"type": "url", "url": url}),
        ("evaluate_script", {"function": "() => 1+1"}),
        ("take_screenshot", {}),
    ),
}


def descendants(pid: int) -> list[int]:
    """Every live process under `pid` (its children, theirs, ...), found by their parent."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(child)
        todo += children.get(child, [])
    return found


async def _call(session: ClientSession, call: Call) -> None:
    out = await session.call_tool(*call)
    if out.is_error:
        text = " ".join(getattr(c, "text", "") for c in out.content)
        raise RuntimeError(f"{call[0]}: {text[:300]}")


async def _timed(work: Callable[[], Awaitable[None]]) -> float:
    started = time.perf_counter()
    await work()
    return (time.perf_counter() - started) * 1000


async def one_round(server: Server, url: str, tmp: Path, before: set[int]) -> dict[str, Any]:
    """Start `server`, measure, stop it. `before`: processes of ours that are not its."""
    async with AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(stdio_client(server.params(tmp)))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        await session.list_tools()  # what a client does before its first call
        first = await _timed(lambda: _call(session, server.navigate(url)))
        navigates = [
            await _timed(lambda: _call(session, server.navigate(url))) for _ in range(NAVIGATES)
        ]
        for _ in range(5):
            await _call(session, server.evaluate)
        evals = [await _timed(lambda: _call(session, server.evaluate)) for _ in range(EVALS)]
        shots = [await _timed(lambda: _call(session, server.screenshot)) for _ in range(SHOTS)]
        # Memory once things settle (ours launches its next spare half a second after the
        # hand-out): the same wait for every server.
        await trio.sleep(SETTLE_S)
        tree = [pid for pid in descendants(os.getpid()) if pid not in before]
        memory = sum(pss_bytes(pid) for pid in tree)
    return {
        "first_navigate": first,
        "navigate": statistics.median(navigates),
        "eval": statistics.median(evals),
        "screenshot": statistics.median(shots),
        "pss_mb": memory / 1e6,
        "processes": len(tree),
    }


FIGURES = ("first_navigate", "navigate", "eval", "screenshot", "pss_mb")


async def run(rounds: int) -> dict[str, Any]:
    results: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "rounds": rounds,
        "load_average_at_start": list(os.getloadavg()),
        "chrome": CHROME,
        "samples": {name: [] for name in SERVERS},
    }
    names = list(SERVERS)
    with tempfile.TemporaryDirectory(prefix="bt-bench-peers-") as tmp, running_fixtures() as site:
        url = site.url_for("index.html")
        before = set(descendants(os.getpid()))
        for index in range(rounds):
            for name in names[index % len(names) :] + names[: index % len(names)]:
                print(f"mcp peers: round {index + 1}, {name}", file=sys.stderr, flush=True)
                where = Path(tmp) / f"{name}-{index}"
                where.mkdir()
                sample = await one_round(SERVERS[name], url, where, before)
                results["samples"][name].append(sample)
    results["load_average_at_end"] = list(os.getloadavg())
    results["summary"] = summary(results["samples"])
    return results


def summary(samples: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per server and figure the median; per peer and figure the median per-round ratio."""
    out: dict[str, Any] = {}
    for name, rows in samples.items():
        out[name] = {f: statistics.median(row[f] for row in rows) for f in FIGURES}
        out[name]["processes"] = max(row["processes"] for row in rows)
        if name == "ours":
            continue
        out[name]["ratio"] = {
            f: statistics.median(
                ours[f] / theirs[f] for ours, theirs in zip(samples["ours"], rows, strict=False)
            )
            for f in FIGURES
        }
    return out


def markdown(results: dict[str, Any]) -> str:
    load = ", ".join(f"{x:.2f}" for x in results["load_average_at_start"])
    s = results["summary"]
    peers = [name for name in SERVERS if name != "ours"]
    head = ["figure", SERVERS["ours"].title] + [SERVERS[p].title for p in peers]
    head += [f"ours / {SERVERS[p].title}" for p in peers]
    lines = [
        TITLE,
        "",
        f"`python -m bench.mcp_peers`, {results['when']}, {results['rounds']} rounds (each "
        f"server started afresh every round, the order rotating), load average at start "
        f"{load}. One client for all (the `mcp` SDK's ClientSession over stdio); every server "
        f"drives {results['chrome']}. Ours runs as deployed, its spare Chrome included. A "
        "ratio is the median of per-round ratios; below 1 ours is faster or smaller.",
        "",
        "| " + " | ".join(head) + " |",
        "| " + " | ".join("---" for _ in head) + " |",
    ]
    labels = {
        "first_navigate": ("first navigate (launch included), p50", "ms"),
        "navigate": ("warm navigate, small page, p50", "ms"),
        "eval": ("warm eval `1+1`, p50", "ms"),
        "screenshot": ("screenshot, p50", "ms"),
        "pss_mb": ("memory: PSS of the server's process tree", "MB"),
    }
    for figure, (label, unit) in labels.items():
        cells = [label]
        cells += [f"{s[n][figure]:.2f} {unit}" for n in ["ours", *peers]]
        cells += [f"{s[p]['ratio'][figure]:.3g}x" for p in peers]
        lines.append("| " + " | ".join(cells) + " |")
    procs = ", ".join(f"{SERVERS[n].title} {s[n]['processes']}" for n in SERVERS)
    lines += ["", f"Processes in each tree (most seen): {procs}."]
    return "\n".join(lines) + "\n"


def write(results: dict[str, Any]) -> str:
    RESULTS.mkdir(exist_ok=True)
    section = markdown(results)
    (RESULTS / "mcp_peers.md").write_text(section)
    put_section(RESULTS, TITLE, section, "mcp_peers", results)
    return section


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp_peers")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    missing = [str(NODE_BIN / b) for b in ("playwright-mcp", "chrome-devtools-mcp")]
    if missing := [path for path in missing if not Path(path).exists()]:
        print(f"{missing} missing: run `make bench` (it installs the peers)", file=sys.stderr)
        return 2
    results = trio.run(run, args.rounds)
    print(write(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
