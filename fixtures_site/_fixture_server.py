"""The handle on a running fixture server, its factory and its context manager."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ._server import FixtureHTTPServer

# How often serve_forever() looks for a shutdown request: the upper bound on close()'s wait
# for the accept loop.
_POLL_INTERVAL = 0.05
# close() waits this long for released /slow and /hang requests to leave their wait.
_RELEASE_TIMEOUT = 5.0


@dataclass(frozen=True)
class FixtureStatistics:
    """Counts since the server started; `requests_parked` are /slow and /hang requests waiting."""

    requests_handled: int
    requests_parked: int


class FixtureServer:
    """A fixture server serving on a background thread. Get one from serve_fixtures()."""

    def __init__(self, httpd: FixtureHTTPServer) -> None:
        self._httpd = httpd
        host, port = httpd.server_address[:2]
        self.host: str = str(host)
        self.port: int = int(port)
        self.url = f"http://{self.host}:{self.port}"
        self._close_lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": _POLL_INTERVAL},
            name=f"fixtures-site:{self.port}",
            daemon=True,
        )
        self._thread.start()

    def __repr__(self) -> str:
        return f"<FixtureServer {self.url} closed={self._closed}>"

    def url_for(self, path: str) -> str:
        """The absolute URL of `path` ("index.html", "/slow?delay=1") on this server."""
        return f"{self.url}/{path.removeprefix('/')}"

    def statistics(self) -> FixtureStatistics:
        """A snapshot of the request counts."""
        return FixtureStatistics(*self._httpd.counts())

    def wait_parked(self, count: int = 1, timeout: float = 10.0) -> None:
        """Block until at least `count` /slow or /hang requests are waiting on the server.

        This is the readiness signal for tests that close the server under a hung request.
        Raises TimeoutError if that has not happened within `timeout` seconds.
        """
        if not self._httpd.wait_parked(lambda parked: parked >= count, timeout):
            raise TimeoutError(f"fewer than {count!r} requests parked after {timeout!r} s")

    def close(self) -> None:
        """Stop serving, answer parked /slow and /hang requests with 503, join the thread.

        Idempotent and thread-safe. Returns within about `_RELEASE_TIMEOUT` seconds even if a
        released request cannot finish (its daemon thread is then left to die with the process).
        """
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            # Release first: parked requests must not outlive the server, and shutdown()
            # only stops the accept loop, it never interrupts a running request.
            self._httpd.closing.set()
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join()
            self._httpd.wait_parked(lambda parked: parked == 0, _RELEASE_TIMEOUT)


def serve_fixtures(host: str = "127.0.0.1", port: int = 0) -> FixtureServer:
    """Start a fixture server on `host`:`port` (0: a free port) in a background thread.

    Returns once the socket is bound and listening, so the first request cannot be refused.
    Raises OSError if the address cannot be bound. Call close() (or use running_fixtures).
    """
    return FixtureServer(FixtureHTTPServer(host, port))


@contextmanager
def running_fixtures(host: str = "127.0.0.1", port: int = 0) -> Iterator[FixtureServer]:
    """serve_fixtures() as a `with` block that closes the server on the way out, however left."""
    server = serve_fixtures(host, port)
    try:
        yield server
    finally:
        server.close()
