"""`python -m fixtures_site`: serve the fixture pages until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import signal
import sys

from ._fixture_server import serve_fixtures

_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGINT/SIGTERM, then close and return 0. Raises OSError if bind fails."""
    parser = argparse.ArgumentParser(
        prog="python -m fixtures_site",
        description="Serve the fixture pages (index, console, dialogs, download, tall, loop, "
        "storage, fetch, popup), a small PWA under /pwa/, plus /slow, /hang, /api/data.json and "
        "/download/<name> on a local address until SIGINT or SIGTERM.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default 0: any free)")
    args = parser.parse_args(argv)

    # Block the stop signals before any server thread exists (threads inherit the mask), so
    # one arriving at any moment stays pending until sigwait() takes it, in this thread.
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    server = serve_fixtures(args.host, args.port)
    try:
        print(f"serving fixtures on {server.url}", flush=True)
        signal.sigwait(_STOP_SIGNALS)
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
