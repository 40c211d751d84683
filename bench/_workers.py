"""Starting the benchmark's workers and talking to them (one JSON line each way per command)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import trio

from chrome_launcher import HEADLESS_SHELL, MARKER_SWITCH, ArgvSpec, build_argv, find_chrome

REPO = Path(__file__).resolve().parent.parent
PLAYWRIGHT_PYTHON = REPO / "bench" / ".venv" / "bin" / "python"


class WorkerError(RuntimeError):
    pass


class Worker:
    """One long-lived worker process."""

    def __init__(self, name: str, argv: list[str], log: Path) -> None:
        self.name = name
        self.argv = argv
        self.log = log
        self.process: trio.Process | None = None
        self._buffer = b""

    async def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = await trio.lowlevel.open_process(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=REPO,
                start_new_session=True,  # a Ctrl-C of the benchmark reaches us, not them
            )

    async def ask(self, op: str, **args: Any) -> dict[str, Any]:
        """Send one command; return its answer. Raises WorkerError when it failed."""
        process = self.process
        assert process is not None
        assert process.stdin is not None
        assert process.stdout is not None
        await process.stdin.send_all((json.dumps({"op": op, **args}) + "\n").encode())
        while b"\n" not in self._buffer:
            chunk = await process.stdout.receive_some(1 << 20)
            if not chunk:
                raise WorkerError(f"{self.name} exited; see {self.log}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        answer: dict[str, Any] = json.loads(line)
        if not answer.get("ok"):
            raise WorkerError(f"{self.name} {op}: {answer.get('error')}")
        return answer

    async def stop(self) -> None:
        if self.process is None:
            return
        with trio.move_on_after(90) as waited:
            with contextlib.suppress(
                WorkerError, trio.BrokenResourceError, trio.ClosedResourceError
            ):
                await self.ask("quit")
            await self.process.wait()
        if waited.cancelled_caught:
            self.process.kill()
            await self.process.wait()


def ours(door: str, root: Path) -> Worker:
    state = root / f"state-{door}"
    argv = [sys.executable, "-m", "bench._worker_ours", door, str(state)]
    return Worker(door, argv, root / f"{door}.log")


def raw(root: Path) -> Worker:
    argv = [sys.executable, "-m", "bench._worker_raw", str(root / "raw")]
    return Worker("raw", argv, root / "raw.log")


def playwright(root: Path) -> Worker:
    """Playwright in the benchmark's own environment, with our binary and our flags."""
    spec = ArgvSpec(find_chrome(HEADLESS_SHELL), "/unused", "bench", sandbox=os.geteuid() != 0)
    mine = ("--remote-debugging", "--user-data-dir", MARKER_SWITCH, "about:blank")
    flags = [f for f in build_argv(spec)[1:] if not f.startswith(mine)]
    config = {
        "chrome": HEADLESS_SHELL,
        "flags": flags,
        "profile_root": str(root / "playwright"),
        "run": root.name,
    }
    argv = [str(PLAYWRIGHT_PYTHON), str(REPO / "bench" / "_worker_playwright.py")]
    return Worker("playwright", [*argv, json.dumps(config)], root / "playwright.log")
