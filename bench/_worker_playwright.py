"""Benchmark worker for Playwright for Python, run by the benchmark's own interpreter
(bench/.venv, where Playwright is installed; nothing of this repo is importable there, so this
file uses the standard library and Playwright only).

`bench/.venv/bin/python bench/_worker_playwright.py CONFIG_JSON`; CONFIG_JSON gives the Chrome
binary, the flags (ours, the same for everyone) and a profile root. Playwright's own default
flags are not used (`ignore_default_args=True`): only ours, plus the pipe Playwright talks
over and a profile dir. It never downloads a browser. One browser per conversation, as ours.
Commands and answers as in bench/_worker_proto.py.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import statistics
import sys
import time
from typing import Any

from playwright.async_api import Browser, Page, Playwright, async_playwright

FRAME = 1 / 60  # a random pause before each navigate and screenshot: see _worker_proto.FRAME


class PlaywrightWorker:
    def __init__(self, playwright: Playwright, config: dict[str, Any]) -> None:
        self.pw = playwright
        self.config = config
        self.names = itertools.count(1)
        self.warm: tuple[Browser, Page] | None = None
        self.open: list[tuple[Browser, Page]] = []

    async def launch(self) -> tuple[Browser, Page, str]:
        """A browser and its page; the marker switch names it in its command line."""
        marker = f"--bench-conversation={self.config['run']}-{next(self.names)}"
        profile = f"{self.config['profile_root']}/pw-{marker.rsplit('-', 1)[1]}"
        browser = await self.pw.chromium.launch(
            executable_path=self.config["chrome"],
            args=[
                *self.config["flags"],
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                marker,
            ],
            ignore_default_args=True,
            headless=True,
        )
        page = await browser.new_page(viewport={"width": 1280, "height": 720})
        return browser, page, marker

    async def handle(self, command: dict[str, Any]) -> dict[str, Any]:
        op, n, url = command["op"], command.get("n", 0), command.get("url", "")
        if op == "first_call":
            started = time.perf_counter()
            browser, page, _ = await self.launch()
            await page.goto(url)
            ms = (time.perf_counter() - started) * 1000
            await browser.close()
            return {"ms": ms}
        if op == "prepare":
            browser, page, _ = await self.launch()
            await page.goto(url)
            self.warm = (browser, page)
            for _ in range(20):
                await page.evaluate("1+1")
            return {}
        if op == "open":
            limit = asyncio.Semaphore(4)
            markers: list[str] = []

            async def one() -> None:
                async with limit:
                    browser, page, marker = await self.launch()
                    await page.goto(url)
                    self.open.append((browser, page))
                    markers.append(marker)

            await asyncio.gather(*(one() for _ in range(command["count"] - len(self.open))))
            return {"markers": markers}
        if op == "load":
            return await self.load(url, command["count"], command["seconds"])
        if op == "close_all":
            await asyncio.gather(*(browser.close() for browser, _ in self.open))
            self.open = []
            return {}
        assert self.warm is not None
        _, page = self.warm
        if op == "eval":
            return {"samples": [await timed(page.evaluate("1+1")) for _ in range(n)]}
        if op == "navigate":
            samples = []
            for _ in range(n):
                await asyncio.sleep(random.uniform(0, FRAME))
                samples.append(await timed(page.goto(url)))
            return {"samples": samples}
        if op == "screenshot":
            samples, sizes = [], []
            for _ in range(n):
                await asyncio.sleep(random.uniform(0, FRAME))
                started = time.perf_counter()
                sizes.append(len(await page.screenshot()))
                samples.append((time.perf_counter() - started) * 1000)
            return {"samples": samples, "bytes": statistics.median(sizes)}
        raise ValueError(f"unknown op {op!r}")

    async def load(self, url: str, count: int, seconds: float) -> dict[str, Any]:
        deadline = time.perf_counter() + seconds
        samples: list[float] = []
        errors = 0

        async def loop(page: Page) -> None:
            nonlocal errors
            steps = itertools.cycle(
                (lambda: page.goto(url), lambda: page.evaluate("document.title"), page.screenshot)
            )
            for step in steps:
                if time.perf_counter() >= deadline:
                    return
                started = time.perf_counter()
                try:
                    await step()
                except Exception:
                    errors += 1
                samples.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        await asyncio.gather(*(loop(page) for _, page in self.open[:count]))
        return {"samples": samples, "errors": errors, "elapsed": time.perf_counter() - started}

    async def aclose(self) -> None:
        browsers = [browser for browser, _ in self.open]
        if self.warm is not None:
            browsers.append(self.warm[0])
        await asyncio.gather(*(browser.close() for browser in browsers), return_exceptions=True)


async def timed(awaitable: Any) -> float:
    started = time.perf_counter()
    await awaitable
    return (time.perf_counter() - started) * 1000


async def main(config: dict[str, Any]) -> None:
    loop = asyncio.get_running_loop()
    async with async_playwright() as playwright:
        worker = PlaywrightWorker(playwright, config)
        try:
            while True:
                line = await loop.run_in_executor(None, sys.stdin.readline)
                if not line:
                    return
                command = json.loads(line)
                if command["op"] == "quit":
                    print(json.dumps({"ok": True}), flush=True)
                    return
                try:
                    answer = {"ok": True, **await worker.handle(command)}
                except Exception as exc:
                    answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
                print(json.dumps(answer), flush=True)
        finally:
            await worker.aclose()


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
