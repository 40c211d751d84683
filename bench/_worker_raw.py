"""The floor: a minimal raw CDP client, as small as a CDP client gets in Python on trio.

One headless shell per conversation (same binary and flags as ours, port 0, its own process
group), trio-websocket and json, one task: send a command, read messages until its answer.
No crash handling, no deadlines, no dialogs, no files: everything our service does on top is
what this leaves out. `python -m bench._worker_raw STATE_DIR`, commands as `_worker_ours`
(first_call, prepare, eval, navigate, screenshot).
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import trio
from trio_websocket import WebSocketConnection, open_websocket_url

from chrome_launcher import HEADLESS_SHELL, ArgvSpec, build_argv, find_chrome

from ._worker_proto import FRAME, serve_lines, timed

_LISTENING = re.compile(rb"DevTools listening on (ws://\S+)")


class RawBrowser:
    def __init__(
        self,
        process: trio.Process,
        socket: AbstractAsyncContextManager[WebSocketConnection],
        ws: WebSocketConnection,
    ) -> None:
        self.process = process
        self.socket = socket
        self.ws = ws
        self.ids = itertools.count(1)
        self.session = ""

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        command_id = next(self.ids)
        message: dict[str, Any] = {"id": command_id, "method": method, "params": params or {}}
        if self.session and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        await self.ws.send_message(json.dumps(message))
        while True:
            answer = json.loads(await self.ws.get_message())
            if answer.get("id") == command_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer["result"]
                return result

    async def wait_event(self, method: str) -> None:
        while json.loads(await self.ws.get_message()).get("method") != method:
            pass

    async def navigate(self, url: str) -> None:
        await self.send("Page.navigate", {"url": url})
        await self.wait_event("Page.loadEventFired")


async def launch(nursery: trio.Nursery, profile: Path) -> RawBrowser:
    binary = find_chrome(HEADLESS_SHELL)
    argv = build_argv(ArgvSpec(binary, str(profile), "bench-raw", sandbox=os.geteuid() != 0))
    argv.remove("--remote-debugging-pipe")  # no death link here: the floor has none
    process = await trio.lowlevel.open_process(
        argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, start_new_session=True
    )
    assert process.stderr is not None
    seen = b""
    while not (match := _LISTENING.search(seen)):
        seen += await process.stderr.receive_some()
    nursery.start_soon(_drain, process.stderr)
    socket = open_websocket_url(match.group(1).decode(), max_message_size=64 * 1024 * 1024)
    browser = RawBrowser(process, socket, await socket.__aenter__())
    targets = await browser.send("Target.getTargets")
    page = next(t for t in targets["targetInfos"] if t["type"] == "page")
    attached = await browser.send(
        "Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}
    )
    browser.session = attached["sessionId"]
    await browser.send("Page.enable")
    await browser.send("Runtime.enable")
    metrics = {"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": False}
    await browser.send("Emulation.setDeviceMetricsOverride", metrics)
    return browser


async def _drain(stream: trio.abc.ReceiveStream) -> None:
    while await stream.receive_some():
        pass


async def close(browser: RawBrowser) -> None:
    """Kill the group first (the floor has no death link), then drop the socket."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(browser.process.pid, signal.SIGKILL)
    await browser.process.wait()
    with contextlib.suppress(Exception):  # the peer is gone: the close handshake cannot finish
        await browser.socket.__aexit__(None, None, None)


class RawWorker:
    def __init__(self, nursery: trio.Nursery, state_dir: Path) -> None:
        self.nursery = nursery
        self.state_dir = state_dir
        self.names = itertools.count(1)
        self.warm: RawBrowser | None = None

    def profile(self) -> Path:
        return self.state_dir / f"raw-{next(self.names)}"

    async def handle(self, command: dict[str, Any]) -> dict[str, Any]:
        op = command["op"]
        if op == "first_call":
            started = time.perf_counter()
            browser = await launch(self.nursery, self.profile())
            await browser.navigate(command["url"])
            ms = (time.perf_counter() - started) * 1000
            await close(browser)
            return {"ms": ms}
        if op == "prepare":
            self.warm = await launch(self.nursery, self.profile())
            await self.warm.navigate(command["url"])
            return {}
        warm = self.warm
        assert warm is not None
        n = command.get("n", 0)
        if op == "eval":
            expr = {"expression": "1+1", "returnByValue": True}
            return {
                "samples": [
                    await timed(lambda: warm.send("Runtime.evaluate", expr)) for _ in range(n)
                ]
            }
        if op == "navigate":
            return {
                "samples": [await timed(lambda: warm.navigate(command["url"])) for _ in range(n)]
            }
        if op == "screenshot":
            samples, size = [], 0
            for _ in range(n):
                await trio.sleep(random.uniform(0, FRAME))
                started = time.perf_counter()
                # The same parameters as ours: the floor of what we send.
                params = {"format": "png", "optimizeForSpeed": True}
                shot = await warm.send("Page.captureScreenshot", params)
                size = len(base64.b64decode(shot["data"]))
                samples.append((time.perf_counter() - started) * 1000)
            return {"samples": samples, "bytes": size}
        raise ValueError(f"the floor client does not do {op!r}")


async def main(state_dir: Path) -> None:
    async with trio.open_nursery() as nursery:
        worker = RawWorker(nursery, state_dir)
        try:
            await serve_lines(worker.handle)
        finally:
            if worker.warm is not None:
                with trio.CancelScope(shield=True):
                    await close(worker.warm)
            nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main, Path(sys.argv[1]))
