"""A tiny loopback site with a service worker, for isolation tests: `/sw.html` registers
`/sw.js` and `/blank.html` registers nothing. Kept apart from fixtures_site (whose pages are
static HTML) because a service worker needs a script served as JavaScript."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_FILES = {
    "/sw.html": ("text/html", b"<!doctype html><title>sw</title><p>registers /sw.js</p>"),
    "/blank.html": ("text/html", b"<!doctype html><title>blank</title><p>nothing</p>"),
    "/sw.js": ("text/javascript", b"self.addEventListener('fetch', () => {});\n"),
}

# Resolves to the registered worker's script URL once it is active.
REGISTER_JS = (
    "navigator.serviceWorker.register('/sw.js')"
    ".then(() => navigator.serviceWorker.ready)"
    ".then(r => r.active.scriptURL)"
)
COUNT_JS = "navigator.serviceWorker.getRegistrations().then(rs => rs.length)"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        kind, body = _FILES.get(self.path, ("text/plain", b"not found\n"))
        self.send_response(HTTPStatus.OK if self.path in _FILES else HTTPStatus.NOT_FOUND)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def service_worker_site() -> Iterator[str]:
    """Serve on 127.0.0.1, port 0; yield the base URL (http://127.0.0.1:PORT)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
