"""Support for the multi-host test (no tests here): Debian's nginx in front of test services,
with the repo's reference configuration (deploy/nginx/browser-tool.conf) templated with the
test's addresses.

nginx runs as the test's own child: `daemon off`, its own session (so its process group is
its master's pid, workers included), every path (prefix, config, pid, temp dirs) in the
test's tmp dir, its error log on stderr. It is ready when it logs that it started its worker
(the listening socket is open before that), and it is stopped by its pid: SIGTERM, then the
group must be empty; anything left is SIGKILLed and fails the test.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import httpx
import trio

from browser_tool._tasks import first_of
from chrome_launcher import live_group_members
from tests.support.checks import wait_group_gone

REFERENCE = Path(__file__).resolve().parents[2] / "deploy" / "nginx" / "browser-tool.conf"
UPSTREAM_HEADER = "test-upstream"
START_TIMEOUT = 20.0
STOP_TIMEOUT = 20.0

_SERVER_LINE = re.compile(r"^ *server \S+ max_fails=0;\n", re.MULTILINE)
_LISTEN_LINE = re.compile(r"^ *listen \S+;\n", re.MULTILINE)

# The http {} around the reference file. The one addition is a response header naming the
# instance(s) nginx tried, in order, which is how the test sees where a request went.
_MAIN = """\
{user}daemon off;
master_process on;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log stderr notice;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    add_header {header} $upstream_addr always;
    include {prefix}/browser-tool.conf;
}}
"""


def reference_config(upstreams: list[str], listen: str) -> str:
    """The reference configuration with its example servers replaced by `upstreams` and its
    listen address by `listen`."""
    text = REFERENCE.read_text()
    servers = _SERVER_LINE.findall(text)
    listens = _LISTEN_LINE.findall(text)
    assert len(servers) >= 2, f"no upstream servers found in {REFERENCE}"
    assert len(listens) == 1, f"expected one listen line in {REFERENCE}: {listens}"
    ours = "".join(f"    server {address} max_fails=0;\n" for address in upstreams)
    text = text.replace(servers[0], ours, 1)
    for line in servers[1:]:
        text = text.replace(line, "", 1)
    return text.replace(listens[0], f"    listen {listen};\n", 1)


def served_by(response: httpx.Response) -> str:
    """The instance that answered: the last address nginx tried (`$upstream_addr` separates
    tries with ', ' and the tries after an internal redirect with ' : ')."""
    tried = response.headers.get(UPSTREAM_HEADER, "")
    return re.split(r", | : ", tried)[-1]


def free_loopback_port() -> int:
    """A port free on 127.0.0.1 right now. nginx cannot report a port-0 bind, so this is
    the one place a port is chosen; another process could take it in between (unlikely on
    loopback, and then nginx fails to start with a clear error)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Nginx:
    def __init__(self, process: trio.Process, url: str) -> None:
        self.process = process
        self.url = url
        self.log: list[str] = []

    def client(self, timeout: float = 60.0) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, timeout=timeout)


@asynccontextmanager
async def running_nginx(binary: str, prefix: Path, upstreams: list[str]) -> AsyncIterator[Nginx]:
    """nginx with the reference configuration in front of `upstreams`, on a loopback port.

    Yields once its worker runs. On exit it is stopped and its process group must be empty.
    """
    prefix.mkdir(parents=True)
    port = free_loopback_port()
    (prefix / "browser-tool.conf").write_text(reference_config(upstreams, f"127.0.0.1:{port}"))
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers keep the test's own uid
    main = _MAIN.format(user=user, prefix=prefix, header=UPSTREAM_HEADER)
    (prefix / "nginx.conf").write_text(main)
    argv = [binary, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-e", "stderr"]
    process = await trio.lowlevel.open_process(argv, stderr=subprocess.PIPE, start_new_session=True)
    assert process.stderr is not None
    nginx = Nginx(process, f"http://127.0.0.1:{port}")
    try:
        async with trio.open_nursery() as nursery:
            started = trio.Event()
            nursery.start_soon(_read_log, process.stderr, nginx.log, started)
            with trio.fail_after(START_TIMEOUT):
                first = await first_of(started=started.wait, exited=process.wait)
            assert first == "started", f"nginx exited before it started: {nginx.log}"
            try:
                yield nginx
            finally:
                print("\n".join(["nginx:", *nginx.log]))  # shown by pytest when a test fails
                nursery.cancel_scope.cancel()
    finally:
        await _stop(process)
        await process.stderr.aclose()


async def _read_log(stream: trio.abc.ReceiveStream, log: list[str], started: trio.Event) -> None:
    pending = b""
    async for chunk in stream:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            text = line.decode(errors="replace")
            log.append(text)
            if "start worker process" in text:
                started.set()


async def _stop(process: trio.Process) -> None:
    """SIGTERM to the master (it stops its workers), wait, then the group must be empty."""
    group = process.pid
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
    with trio.move_on_after(STOP_TIMEOUT):
        await process.wait()
    gone = process.returncode is not None and await wait_group_gone(group, within=STOP_TIMEOUT)
    if not gone:
        left = live_group_members(group)
        with suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
        await process.wait()
        raise AssertionError(f"nginx did not stop on SIGTERM; killed its group: {left}")
