"""An experiment (issue 23): how long from spawn to the first answered CDP command, over the
DevTools WebSocket (`--remote-debugging-port=0`, what the launcher does: the endpoint from
Chrome's stderr line, a WebSocket handshake, then `Browser.getVersion`) and over the pipe
alone (`--remote-debugging-pipe`: NUL-terminated JSON on fds 3 and 4, no port, no handshake).
Both with our argv otherwise (chrome_launcher.build_argv), the same binary, alternating.

Run: python -m bench.pipe_launch [--rounds N]. Not part of `make bench`: its answer is written
down in docs/decisions.md ("Issue 23").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import statistics
import tempfile
import time
from pathlib import Path

import trio
from trio_websocket import open_websocket_url

from chrome_launcher import HEADLESS_SHELL, ArgvSpec, build_argv, find_chrome

_LISTENING = re.compile(rb"DevTools listening on (ws://\S+)")
_GET_VERSION = {"id": 1, "method": "Browser.getVersion"}


def _spawn(argv: list[str]) -> tuple[int, int, int, int]:
    """Chrome in its own session with fds 3/4 as the CDP pipe; returns (pid, write end to
    Chrome, read end from Chrome, read end of its stderr)."""
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()
    err_r, err_w = os.pipe()
    devnull = os.open(os.devnull, os.O_RDWR)
    actions = [
        (os.POSIX_SPAWN_DUP2, devnull, 0),
        (os.POSIX_SPAWN_DUP2, devnull, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2),
        (os.POSIX_SPAWN_DUP2, to_chrome_r, 3),
        (os.POSIX_SPAWN_DUP2, from_chrome_w, 4),
    ]
    pid = os.posix_spawn(argv[0], argv, dict(os.environ), file_actions=actions, setsid=True)
    for fd in (to_chrome_r, from_chrome_w, err_w, devnull):
        os.close(fd)
    return pid, to_chrome_w, from_chrome_r, err_r


async def over_websocket(argv: list[str]) -> float:
    started = time.perf_counter()
    pid, to_chrome, from_chrome, err = _spawn(argv)
    try:
        async with trio.lowlevel.FdStream(err) as stderr:
            seen = b""
            while not (match := _LISTENING.search(seen)):
                seen += await stderr.receive_some()
            async with open_websocket_url(match.group(1).decode()) as ws:
                await ws.send_message(json.dumps(_GET_VERSION))
                assert json.loads(await ws.get_message())["id"] == 1
                return (time.perf_counter() - started) * 1000
    finally:
        await _kill(pid, to_chrome, from_chrome)


async def over_pipe(argv: list[str]) -> float:
    started = time.perf_counter()
    pid, to_chrome, from_chrome, err = _spawn(argv)
    os.close(err)
    try:
        send = trio.lowlevel.FdStream(os.dup(to_chrome))
        receive = trio.lowlevel.FdStream(os.dup(from_chrome))
        async with send, receive:
            await send.send_all(json.dumps(_GET_VERSION).encode() + b"\0")
            answer = b""
            while not answer.endswith(b"\0"):
                answer += await receive.receive_some()
            assert json.loads(answer[:-1])["id"] == 1
            return (time.perf_counter() - started) * 1000
    finally:
        await _kill(pid, to_chrome, from_chrome)


async def _kill(pid: int, *fds: int) -> None:
    for fd in fds:
        os.close(fd)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    await trio.to_thread.run_sync(os.waitpid, pid, 0)


async def run(rounds: int) -> None:
    binary = find_chrome(HEADLESS_SHELL)
    samples: dict[str, list[float]] = {"websocket": [], "pipe": []}
    with tempfile.TemporaryDirectory(prefix="bt-pipe-") as tmp:
        for index in range(rounds + 1):  # the first round reads Chrome from disk: dropped
            order = ["websocket", "pipe"] if index % 2 else ["pipe", "websocket"]
            for name in order:
                profile = Path(tmp) / f"{name}-{index}"
                spec = ArgvSpec(binary, str(profile), "bench-pipe", sandbox=os.geteuid() != 0)
                argv = build_argv(spec)
                if name == "pipe":
                    argv = [a for a in argv if not a.startswith("--remote-debugging-port")]
                ms = await (over_pipe if name == "pipe" else over_websocket)(argv)
                if index:
                    samples[name].append(ms)
    for name, values in samples.items():
        print(f"{name}: p50 {statistics.median(values):.1f} ms, min {min(values):.1f}, "
              f"max {max(values):.1f} (n={len(values)})")  # fmt: skip
    pairs = zip(samples["pipe"], samples["websocket"], strict=True)
    print(f"pipe / websocket, median of per-round ratios: "
          f"{statistics.median(p / w for p, w in pairs):.2f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.pipe_launch")
    parser.add_argument("--rounds", type=int, default=15)
    trio.run(run, parser.parse_args().rounds)


if __name__ == "__main__":
    main()
