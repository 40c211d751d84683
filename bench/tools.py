"""The tools through the Python API: the first call of a new conversation (launch + navigate
to a local page), warm browser_eval p50/p99, and browser_take_screenshot p50.

Run: python -m bench.tools
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import trio

from browser_tool import Settings, open_session_manager
from fixtures_site import running_fixtures

from ._stats import describe_ms

FIRST_CALLS = 10
EVALS = 1000
SHOTS = 100


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bt-bench-") as tmp, running_fixtures() as site:
        settings = Settings(state_dir=Path(tmp) / "state")
        async with open_session_manager(settings) as manager:
            first = []
            for i in range(FIRST_CALLS):
                started = time.monotonic()
                out = await manager.call_tool(
                    f"first-{i}", "browser_navigate", {"url": site.url_for("/index.html")}
                )
                first.append(time.monotonic() - started)
                assert not out.is_error, out.output
                await manager.kill_session(f"first-{i}")
            print(f"first call of a new conversation (launch + navigate): {describe_ms(first)}")

            await manager.call_tool(
                "warm", "browser_navigate", {"url": site.url_for("/index.html")}
            )
            evals = []
            for _ in range(EVALS):
                started = time.monotonic()
                await manager.call_tool("warm", "browser_eval", {"expression": "1+1"})
                evals.append(time.monotonic() - started)
            print(f"warm browser_eval('1+1') via Python API: {describe_ms(evals)}")
            shots = []
            for _ in range(SHOTS):
                started = time.monotonic()
                out = await manager.call_tool("warm", "browser_take_screenshot", {})
                shots.append(time.monotonic() - started)
                assert not out.is_error, out.output
            print(f"browser_take_screenshot (1280x720 PNG) via Python API: {describe_ms(shots)}")


if __name__ == "__main__":
    trio.run(main)
