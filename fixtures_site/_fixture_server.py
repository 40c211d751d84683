"""The handle on a running fixture server, its factory and its context manager."""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Callable, Iterator
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
        self._ids = itertools.count(1)
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

    def hang_path(self) -> str:
        """A /hang path no other caller of this server gets ("/hang?id=3"): wait_parked(path=)
        on it sees only the requests made for it."""
        return f"/hang?id={next(self._ids)}"

    def wait_parked(
        self, count: int = 1, timeout: float = 10.0, *, path: str | None = None
    ) -> None:
        """Block until at least `count` /slow or /hang requests are waiting on the server; with
        `path` ("/hang?id=3", as given to url_for), only requests for exactly that path count.

        This is the readiness signal for tests that act under a hung request. Raises
        TimeoutError if that has not happened within `timeout` seconds.
        """
        if not self._httpd.wait_parked(_at_least(count, path), timeout):
            where = "" if path is None else f" at {path!r}"
            raise TimeoutError(f"fewer than {count!r} requests parked{where} after {timeout!r} s")

    def wait_unparked(self, timeout: float = 10.0, *, path: str | None = None) -> None:
        """Block until no /slow or /hang request (with `path`: none for that path) is waiting,
        as after its client hung up. Raises TimeoutError after `timeout` seconds."""
        if not self._httpd.wait_parked(lambda parked: not _at_least(1, path)(parked), timeout):
            where = "" if path is None else f" at {path!r}"
            raise TimeoutError(f"requests still parked{where} after {timeout!r} s")

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
            self._httpd.wait_parked(lambda parked: parked.total() == 0, _RELEASE_TIMEOUT)


def _at_least(count: int, path: str | None) -> Callable[[Counter[str]], bool]:
    """A test of the parked counts: `count` or more in all, or at `path` when given."""
    target = None if path is None else "/" + path.removeprefix("/")

    def reached(parked: Counter[str]) -> bool:
        return (parked.total() if target is None else parked[target]) >= count

    return reached


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
