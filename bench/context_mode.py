"""Shared-browser mode (BROWSER_TOOL_ISOLATION=context) beside process mode, through the Python
API with a local page: the first call of a new conversation (browser_navigate, while another
conversation keeps the service warm), per-call latency (browser_eval and browser_navigate of a
live conversation), and N conversations started at once: errors, wall time, and PSS per
conversation (from /proc/PID/smaps_rollup, summed over every process of every Chrome group).

Targets (issue 13): PSS per conversation at 50 <= 30 MB; first call <= 0.2x Playwright's
launch + new_page + goto (measured at ~290 ms on the reference machine: pass --playwright-ms
to use your own figure); 50 concurrent conversations, 0 errors.

Run: python -m bench context_mode   (or: python -m bench.context_mode --modes context)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from browser_tool import BrowserSessionManager, Settings, open_session_manager
from chrome_launcher import live_group_members
from fixtures_site import FixtureServer, running_fixtures

from ._stats import describe_ms, percentile

PSS_TARGET_MB = 30.0
FIRST_CALL_FACTOR = 0.2


@dataclass
class Column:
    mode: str
    first: list[float]
    evals: list[float]
    navigations: list[float]
    concurrent: int
    errors: int
    wall: float
    pss_bytes: int
    browsers: int

    @property
    def pss_per_conversation_mb(self) -> float:
        return self.pss_bytes / self.concurrent / 2**20


def pss_bytes(pid: int) -> int:
    """The process's proportional set size; 0 when it is gone."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return 0


def chrome_pss(manager: BrowserSessionManager) -> tuple[int, int]:
    """(PSS summed over every process of every Chrome group, number of groups)."""
    groups = {info.pid for info in manager.list_sessions() if info.pid is not None}
    total = sum(pss_bytes(pid) for group in groups for pid in live_group_members(group))
    return total, len(groups)


async def navigate(manager: BrowserSessionManager, conversation: str, url: str) -> bool:
    out = await manager.call_tool(conversation, "browser_navigate", {"url": url})
    return not out.is_error


async def measure(mode: str, site: FixtureServer, args: argparse.Namespace) -> Column:
    url = site.url_for("/index.html")
    with tempfile.TemporaryDirectory(prefix="bt-bench-") as tmp:
        settings = Settings(state_dir=Path(tmp) / "state", isolation=mode)
        async with open_session_manager(settings) as manager:
            assert await navigate(manager, "warm", url)  # a live service, a shared Chrome up
            first = []
            for i in range(args.first_calls):
                # Spaced like conversations arriving (7,200 an hour): idle when each comes.
                await trio.sleep(args.gap)
                started = time.monotonic()
                assert await navigate(manager, f"first-{i}", url)
                first.append(time.monotonic() - started)
                await manager.kill_session(f"first-{i}")
            evals, navigations = [], []
            for _ in range(args.calls):
                started = time.monotonic()
                await manager.call_tool("warm", "browser_eval", {"expression": "1+1"})
                evals.append(time.monotonic() - started)
            for _ in range(args.calls // 10):
                started = time.monotonic()
                assert await navigate(manager, "warm", url)
                navigations.append(time.monotonic() - started)
            await manager.kill_session("warm")

            results: list[bool] = []

            async def one(i: int) -> None:
                results.append(await navigate(manager, f"c-{i}", url))

            started = time.monotonic()
            async with trio.open_nursery() as nursery:
                for i in range(args.conversations):
                    nursery.start_soon(one, i)
            wall = time.monotonic() - started
            pss, browsers = chrome_pss(manager)
    return Column(
        mode,
        first,
        evals,
        navigations,
        args.conversations,
        results.count(False),
        wall,
        pss,
        browsers,
    )


def table(columns: list[Column], playwright_ms: float) -> list[str]:
    def ms(samples: list[float], q: float) -> str:
        return f"{percentile(samples, q) * 1000:.1f} ms"

    rows: list[tuple[str, Callable[[Column], str]]] = [
        ("first call, median", lambda c: f"{statistics.median(c.first) * 1000:.1f} ms"),
        ("first call, p90", lambda c: ms(c.first, 90)),
        ("browser_eval p50", lambda c: ms(c.evals, 50)),
        ("browser_eval p99", lambda c: ms(c.evals, 99)),
        ("browser_navigate p50", lambda c: ms(c.navigations, 50)),
        (
            "N at once: errors / wall",
            lambda c: f"{c.errors} of {c.concurrent} / {c.wall:.1f} s",
        ),
        ("N at once: Chrome groups", lambda c: str(c.browsers)),
        ("N at once: PSS total", lambda c: f"{c.pss_bytes / 2**20:.0f} MB"),
        ("N at once: PSS per conversation", lambda c: f"{c.pss_per_conversation_mb:.1f} MB"),
    ]
    lines = ["| measure | " + " | ".join(c.mode for c in columns) + " |"]
    lines.append("| --- |" + " --- |" * len(columns))
    lines += [f"| {name} | " + " | ".join(cell(c) for c in columns) + " |" for name, cell in rows]
    lines.append(f"(Playwright launch + new_page + goto taken as {playwright_ms:.0f} ms)")
    return lines


def verdicts(column: Column, playwright_ms: float) -> list[tuple[str, bool]]:
    first_ms = statistics.median(column.first) * 1000
    budget = FIRST_CALL_FACTOR * playwright_ms
    return [
        (
            f"PSS per conversation at {column.concurrent}: "
            f"{column.pss_per_conversation_mb:.1f} MB <= {PSS_TARGET_MB:.0f} MB",
            column.pss_per_conversation_mb <= PSS_TARGET_MB,
        ),
        (f"first call median {first_ms:.1f} ms <= {budget:.0f} ms", first_ms <= budget),
        (f"{column.concurrent} concurrent conversations, 0 errors", column.errors == 0),
    ]


async def main(args: argparse.Namespace) -> int:
    columns = []
    with running_fixtures() as site:
        for mode in args.modes.split(","):
            columns.append(await measure(mode, site, args))
            column = columns[-1]
            print(f"[{mode}] first call of a new conversation: {describe_ms(column.first)}")
            print(f"[{mode}] browser_eval of a live conversation: {describe_ms(column.evals)}")
            print(f"[{mode}] browser_navigate of a live one: {describe_ms(column.navigations)}")
    print("\n".join(table(columns, args.playwright_ms)))
    failed = 0
    for column in columns:
        if column.mode != "context":
            continue
        for text, passed in verdicts(column, args.playwright_ms):
            print(f"target [{column.mode}] {'PASS' if passed else 'FAIL'}: {text}")
            failed += not passed
    return 1 if failed else 0


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.context_mode", description=__doc__)
    parser.add_argument("--modes", default="context,process", help="comma-separated")
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--first-calls", type=int, default=20)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--gap", type=float, default=0.5, help="seconds between first calls")
    parser.add_argument("--playwright-ms", type=float, default=290.0)
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(trio.run(main, parse_args(sys.argv[1:])))
