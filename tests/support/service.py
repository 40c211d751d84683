"""Support for the HTTP, MCP and CLI tests (no tests here): `browser-tool serve` or
`browser-tool mcp --http` as a real subprocess on port 0, ready when it prints its
`listening on` line, with its stderr log readable by the test, and stopped by its pid.

Every service gets the test's own state dir, so the conftest check finds it (and its Chromes)
if it outlives the test."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import trio

# Services run as deployed, start-up orphan sweep included; but without the spare Chrome that
# `serve` keeps by default (issue 23), so a test's browsers are the ones its calls launched
# (tests/browser_tool/server/test_pool_default.py covers the default).
BASE_ENV: dict[str, str] = {"BROWSER_TOOL_POOL_SIZE": "0"}
START_TIMEOUT = 30.0
STOP_TIMEOUT = 30.0


def service_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This environment without any BROWSER_TOOL_* variable, plus BASE_ENV and `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSER_TOOL_")}
    return env | BASE_ENV | dict(extra or {})


def cli_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "browser_tool", *args]


class Service:
    """A running service process: its URL, its stderr so far, and ways to stop it."""

    def __init__(self, process: trio.Process, url: str) -> None:
        self.process = process
        self.url = url
        self.log: list[str] = []
        self._changed = trio.Event()

    def client(self, token: str | None = None, timeout: float = 60.0) -> httpx.AsyncClient:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        return httpx.AsyncClient(base_url=self.url, headers=headers, timeout=timeout)

    async def read_log(self, stream: trio.abc.ReceiveStream) -> None:
        pending = b""
        async for chunk in stream:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            self.log += [line.decode(errors="replace") for line in lines]
            self._changed.set()
            self._changed = trio.Event()

    async def wait_for_log(self, text: str) -> str:
        """The first stderr line containing `text`, once it has been written."""
        while True:
            for line in self.log:
                if text in line:
                    return line
            if self.process.returncode is not None:
                raise AssertionError(f"service exited before logging {text!r}: {self.log}")
            await self._changed.wait()

    async def stop(self, signum: int = signal.SIGTERM) -> int:
        """Send `signum` and return the exit code."""
        if self.process.returncode is None:
            self.process.send_signal(signum)
        with trio.fail_after(STOP_TIMEOUT):
            return await self.process.wait()


@asynccontextmanager
async def running_service(
    state_dir: Path, *args: str, env: Mapping[str, str] | None = None, mcp: bool = False
) -> AsyncIterator[Service]:
    """Start `serve` (or `mcp --http` when `mcp`) on 127.0.0.1, port 0; stop it on exit.

    Yields once the service printed `listening on http://127.0.0.1:PORT`.
    """
    command = ["mcp", "--http"] if mcp else ["serve"]
    argv = cli_argv(*command, "--port", "0", "--state-dir", str(state_dir), *args)
    process = await trio.lowlevel.open_process(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=service_env(env)
    )
    assert process.stdout is not None
    assert process.stderr is not None
    try:
        async with trio.open_nursery() as nursery:
            line = b""
            with trio.fail_after(START_TIMEOUT):
                while not line.endswith(b"\n"):
                    chunk = await process.stdout.receive_some()
                    if not chunk:
                        raise AssertionError(f"service exited before listening: {argv}")
                    line += chunk
            prefix = "listening on "
            text = line.decode().strip()
            assert text.startswith(prefix + "http://127.0.0.1:"), text
            service = Service(process, text.removeprefix(prefix))
            nursery.start_soon(service.read_log, process.stderr)
            try:
                yield service
            finally:
                try:
                    if process.returncode is None:
                        code = await service.stop()
                        assert code == 0, f"service exit code {code}"
                finally:
                    print("\n".join(service.log))  # shown by pytest when the test fails
                    nursery.cancel_scope.cancel()
    finally:
        if process.returncode is None:  # a failed start or stop: do not leave it running
            process.kill()
            await process.wait()
        await process.stdout.aclose()
        await process.stderr.aclose()
