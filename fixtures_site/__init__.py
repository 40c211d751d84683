"""Static pages and a tiny loopback server for tests, demos and benchmarks. Never needs a network.

    with running_fixtures() as site:
        httpx.get(site.url_for("index.html"))

See `_server.py` for the routes and `pages/` for what each page does.
"""

from ._fixture_server import FixtureServer, FixtureStatistics, running_fixtures, serve_fixtures
from ._pages import page_names
from ._server import API_DATA, DOWNLOAD_BODY, MAX_DELAY

__all__ = [
    "API_DATA",
    "DOWNLOAD_BODY",
    "MAX_DELAY",
    "FixtureServer",
    "FixtureStatistics",
    "page_names",
    "running_fixtures",
    "serve_fixtures",
]
