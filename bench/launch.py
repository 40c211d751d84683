"""Cold launch to a usable endpoint (first answered Browser.getVersion), median of 20, for the
headless shell and full Chromium; evaluate round trips over raw CDP; and the kill ladder's time.

Run: python -m bench.launch
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import trio

from browser_tool import open_cdp_connection
from chrome_launcher import CHROMIUM, HEADLESS_SHELL, LaunchOptions, launch_chrome

from ._stats import describe_ms

LAUNCHES = 20
EVALS = 1000


async def cold_launches(root: Path, chrome_path: str) -> None:
    ready: list[float] = []
    ladder: list[float] = []
    async with trio.open_nursery() as nursery:
        for i in range(LAUNCHES):
            options = LaunchOptions(
                root, "bench", root / "sessions" / f"s{i}", chrome_path=chrome_path
            )
            started = time.monotonic()
            chrome = await launch_chrome(options, nursery)
            assert chrome.ws_url is not None
            async with open_cdp_connection(chrome.ws_url) as conn:
                await conn.send("Browser.getVersion", timeout=10)
                ready.append(time.monotonic() - started)

                async def polite() -> object:
                    return await conn.send("Browser.close")

                report = await chrome.aclose(polite=polite)
            ladder.append(report.duration)
            (root / "sessions" / f"s{i}").rmdir()
    name = Path(chrome_path).name
    print(f"cold launch to usable endpoint [{name}]: {describe_ms(ready)}")
    print(f"kill ladder (Browser.close first) [{name}]: {describe_ms(ladder)}")


async def evaluate_round_trips(root: Path) -> None:
    async with trio.open_nursery() as nursery:
        chrome = await launch_chrome(LaunchOptions(root, "bench", root / "sessions" / "e"), nursery)
        try:
            assert chrome.ws_url is not None
            async with open_cdp_connection(chrome.ws_url) as conn:
                targets = await conn.send("Target.getTargets")
                page = next(t for t in targets["targetInfos"] if t["type"] == "page")
                session = await conn.attach_to_target(page["targetId"])
                samples = []
                for _ in range(EVALS):
                    started = time.monotonic()
                    await session.send(
                        "Runtime.evaluate", {"expression": "1+1", "returnByValue": True}
                    )
                    samples.append(time.monotonic() - started)
            print(f"Runtime.evaluate('1+1') round trip over CDP: {describe_ms(samples)}")
        finally:
            report = await chrome.aclose()
            print(
                f"kill ladder (signals only) [{Path(chrome.record.chrome_path).name}]: "
                f"{report.duration * 1000:.1f} ms, steps {','.join(report.steps)}"
            )
    (root / "sessions" / "e").rmdir()


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bt-bench-") as tmp:
        root = Path(tmp) / "state"
        for chrome_path in (HEADLESS_SHELL, CHROMIUM):
            await cold_launches(root, chrome_path)
        await evaluate_round_trips(root)


if __name__ == "__main__":
    trio.run(main)
