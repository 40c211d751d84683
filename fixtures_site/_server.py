"""The HTTP side: a threaded stdlib server on loopback and its routes.

    /                     index.html
    /<page>.html          a fixture page (see page_names())
    /slow?delay=S[&page=P] waits S seconds (capped at MAX_DELAY), then a small page, or page P
    /hang[?anything]      never answers until the server closes or the client goes away
    /api/data.json        API_DATA as JSON
    /download/<name>      DOWNLOAD_BODY as an attachment named <name>
    /pwa/                 a small PWA (pages/pwa/): index.html registers sw.js, which caches
    /pwa/<file>           the app shell, serves it offline and logs; app.js starts worker.js
    anything else         404

/slow and /hang park on one `closing` event, so closing the server releases them at once
(they then answer 503) instead of holding a thread, or a test, for up to two minutes. A parked
request also ends when its client closes the connection (a killed browser), so one test's hung
request never counts as parked in the next. Parked requests are counted per request target
("/hang?id=7"), so a test can wait for exactly its own.
"""

from __future__ import annotations

import enum
import json
import math
import re
import select
import socket
import socketserver
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

from ._pages import load_pages, load_pwa_files

MAX_DELAY = 120.0
DOWNLOAD_BODY = b"report body\n" * 10
API_DATA: Mapping[str, object] = MappingProxyType({"ok": True, "items": [1, 2, 3]})

_API_BODY = json.dumps(dict(API_DATA)).encode()

_DOWNLOAD_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")
_PWA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".webmanifest": "application/manifest+json",
}
_SLOW_PAGE = b"<!doctype html><title>Fixture Slow</title><h1>Slow</h1><p>waited %.3f s</p>\n"
# How often a parked request looks whether its client went away (a closed socket has no event
# to wait on together with `closing`).
_PEER_POLL = 0.1


class ParkEnd(enum.Enum):
    """How a parked request's wait ended."""

    WAITED = "waited"  # its delay ran out
    CLOSING = "closing"  # the server is closing
    GONE = "gone"  # the client closed the connection


def _peer_closed(conn: socket.socket) -> bool:
    """Whether the client closed its side (or the socket broke). Never blocks."""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


class FixtureHTTPServer(ThreadingHTTPServer):
    """Binds and listens in its constructor, so it is ready as soon as it exists."""

    daemon_threads = True

    def __init__(self, host: str, port: int) -> None:
        self.pages = load_pages()
        self.pwa_files = load_pwa_files()
        self.closing = threading.Event()
        self._counts = threading.Condition()
        self.requests_handled = 0
        self.parked: Counter[str] = Counter()  # request target -> requests waiting
        super().__init__((host, port), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(), a DNS lookup: skip it, never touch
        # the network (and never stall on a resolver in a sandbox).
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Browsers drop connections all the time (a cancelled navigation, a closed tab);
        # that is not worth a traceback. Anything else is a bug in a route: let it print.
        if isinstance(sys.exception(), ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)

    def count_request(self) -> None:
        with self._counts:
            self.requests_handled += 1

    def counts(self) -> tuple[int, int]:
        """(requests_handled, requests_parked), read together."""
        with self._counts:
            return self.requests_handled, self.parked.total()

    def park(self, seconds: float | None, target: str, conn: socket.socket) -> ParkEnd:
        """Wait `seconds` (None: forever), until closing, or until the client hangs up."""
        deadline = None if seconds is None else time.monotonic() + seconds
        with self._counts:
            self.parked[target] += 1
            self._counts.notify_all()
        try:
            while True:
                left = _PEER_POLL if deadline is None else deadline - time.monotonic()
                if left <= 0:
                    return ParkEnd.WAITED
                if self.closing.wait(min(left, _PEER_POLL)):
                    return ParkEnd.CLOSING
                if _peer_closed(conn):
                    return ParkEnd.GONE
        finally:
            with self._counts:
                self.parked[target] -= 1
                if not self.parked[target]:
                    del self.parked[target]
                self._counts.notify_all()

    def wait_parked(self, reached: Callable[[Counter[str]], bool], timeout: float) -> bool:
        """Wait until `reached(parked)`; False if `timeout` seconds passed first."""
        with self._counts:
            return self._counts.wait_for(lambda: reached(self.parked), timeout)


class _Handler(BaseHTTPRequestHandler):
    server_version = "fixtures_site"
    # Bounds how long an idle keep-alive or preconnected socket can hold a thread.
    timeout = 60

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests and benchmarks must not spam stderr

    def do_GET(self) -> None:
        server = cast(FixtureHTTPServer, self.server)
        server.count_request()
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        path = url.path
        if path == "/":
            path = "/index.html"
        if path.startswith("/download/"):
            self._download(path.removeprefix("/download/"))
        elif path == "/api/data.json":
            self._send(HTTPStatus.OK, "application/json", _API_BODY)
        elif path == "/slow":
            self._slow(server, query)
        elif path == "/hang":
            if server.park(None, self.path, self.connection) is ParkEnd.CLOSING:
                self._send(HTTPStatus.SERVICE_UNAVAILABLE, "text/plain", b"server closing\n")
        elif path.startswith("/pwa/"):
            self._pwa(server, path.removeprefix("/pwa/") or "index.html")
        elif path.removeprefix("/") in server.pages:
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", server.pages[path[1:]])
        else:
            self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found\n")

    def _slow(self, server: FixtureHTTPServer, query: dict[str, list[str]]) -> None:
        try:
            delay = float(query.get("delay", ["1"])[0])
        except ValueError:
            delay = math.nan
        if not 0 <= delay < math.inf:
            self._send(HTTPStatus.BAD_REQUEST, "text/plain", b"delay must be seconds >= 0\n")
            return
        page = query.get("page", [None])[0]
        if page is not None and page not in server.pages:
            self._send(HTTPStatus.NOT_FOUND, "text/plain", b"no such page\n")
            return
        delay = min(delay, MAX_DELAY)
        end = server.park(delay, self.path, self.connection)
        if end is ParkEnd.GONE:
            return
        if end is ParkEnd.CLOSING:
            self._send(HTTPStatus.SERVICE_UNAVAILABLE, "text/plain", b"server closing\n")
        elif page is None:
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", _SLOW_PAGE % delay)
        else:
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", server.pages[page])

    def _pwa(self, server: FixtureHTTPServer, name: str) -> None:
        body = server.pwa_files.get(name)
        content_type = _PWA_TYPES.get(name[name.rfind(".") :]) if "." in name else None
        if body is None or content_type is None:
            self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found\n")
        else:
            self._send(HTTPStatus.OK, content_type, body)

    def _download(self, name: str) -> None:
        if not _DOWNLOAD_NAME.fullmatch(name) or name.startswith("."):
            self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found\n")
            return
        disposition = f'attachment; filename="{name}"'
        self._send(HTTPStatus.OK, "text/plain", DOWNLOAD_BODY, disposition=disposition)

    def _send(
        self, status: HTTPStatus, content_type: str, body: bytes, *, disposition: str = ""
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        # Every load reaches the server, so a test that reloads sees fresh network events.
        self.send_header("Cache-Control", "no-store")
        if disposition:
            self.send_header("Content-Disposition", disposition)
        self.end_headers()
        self.wfile.write(body)
