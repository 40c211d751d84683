"""fixtures_site: its pages, its routes and its server's lifecycle, over real loopback HTTP.

Charter: loopback only, port 0, no network; a fresh server per test, closed by the fixture;
httpx's sync client. Real time appears only as a lower bound (/slow waits at least what was
asked) or as a generous upper bound (close() releases a parked request). Readiness comes from
FixtureServer.wait_parked() and the CLI's printed line, never from a sleep. No Chrome needed.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import fixtures_site
from fixtures_site import (
    API_DATA,
    DOWNLOAD_BODY,
    FixtureServer,
    FixtureStatistics,
    page_names,
    running_fixtures,
)

REPO = Path(__file__).resolve().parents[2]

# What each page must contain for the browser tests that rely on it.
PAGE_MARKERS: dict[str, list[str]] = {
    "index.html": [
        "<title>Fixture Home</title>",
        "<h1>",
        'id="btn"',
        'id="status"',
        'id="form"',
        'id="name"',
        'type="submit"',
        'id="greeting"',
        'document.body.dataset.clicked = "yes"',
        '"Hello, " + name',
        "preventDefault()",
    ],
    "console.html": [
        'console.log("log message")',
        'console.warn("warn message")',
        'console.error("error message")',
        'setTimeout(() => { throw new Error("uncaught boom"); }, 0)',
    ],
    "dialogs.html": [
        'alert("alert text")',
        'confirm("confirm text")',
        'prompt("prompt text", "default")',
        "window.openAlert",
        "window.openConfirm",
        "window.openPrompt",
        "window.lastDialogResult",
        '.get("auto")',
    ],
    "download.html": ['id="download"', 'href="/download/report.txt"'],
    "tall.html": ["height: 10000px", "height: 1000px", ">0px<", ">5000px<", ">9000px<"],
    "busy.html": ["requestAnimationFrame(draw)", "window.frames_drawn++", '.get("grow") === "1"'],
    "loop.html": ["window.spin = () => { while (true) {} }", '.get("loop") === "1"', "50"],
    "signin.html": ["max-age=86400; path=/", 'localStorage.setItem("user", user)', "Signed in as "],
    "storage.html": [
        '"fixture_cookie="',
        "path=/",
        'localStorage.setItem("fixture_key", value)',
        '.get("v") ?? "set"',
    ],
    "fetch.html": ['fetch("/api/data.json")', 'id="result"'],
    "popup.html": ["window.open('/index.html')"],
    "login.html": ['action="/welcome.html"', 'name="email" type="email"', "Sign in"],
    "welcome.html": ["<title>Welcome</title>", '.get("email")'],
    "inputs.html": ['id="name"', 'id="agree"', 'name="size"', ":hover", "window.clicks"],
    "select.html": ['id="color"', "onchange", "multiple"],
    "upload.html": ['id="file" type="file"', "getElementById('hidden-file').click()"],
    "rerender.html": ["replaceChildren", "window.keydowns"],
    "overlay.html": ['aria-label="Cookie consent"', "position: fixed"],
    "disabled.html": ["disabled onclick", 'aria-disabled="true"'],
    "blank_link.html": ['target="_blank"'],
    "idp_opener.html": ["window.open('/idp.html'", "Signed in with token"],  # issue 20
    "idp.html": ["window.opener.postMessage", "window.close()"],  # issue 20
    "submit_nav.html": ['action="/welcome.html"'],
    "snapshot_form.html": ['id="remember" type="checkbox" checked', 'id="gone"'],
    "snapshot_child.html": ['id="inner"', "Frame button"],
    "frames.html": ['src="/snapshot_child.html?same"', '"localhost"'],
    "shadow.html": ['attachShadow({mode: "open"})', "Shadow button"],
    "big.html": ["i < 2500", "Buy ${i}"],
}


# The PWA under /pwa/: each file, its content type, and what the browser tests rely on.
PWA_FILES: dict[str, tuple[str, list[str]]] = {
    "": ("text/html; charset=utf-8", ["<title>Fixture PWA</title>", 'src="app.js"']),
    "index.html": ("text/html; charset=utf-8", ["<title>Fixture PWA</title>"]),
    "app.js": (
        "text/javascript; charset=utf-8",
        ['new Worker("worker.js")', 'register("sw.js")', "window.controlled", "controllerchange"],
    ),
    "app.css": ("text/css; charset=utf-8", ["#status"]),
    "worker.js": ("text/javascript; charset=utf-8", ['console.log("worker: started")']),
    "manifest.webmanifest": ("application/manifest+json", ['"start_url": "./"']),
    "sw.js": (
        "text/javascript; charset=utf-8",
        [
            '"./", "./app.js", "./app.css", "./manifest.webmanifest", "./worker.js"',
            'console.log("sw: script evaluated")',
            "sw: installed, app shell cached",
            "sw: activated, claiming open pages",
            "caches.match(event.request)",
            "sw: network failed for",
        ],
    ),
}


@pytest.fixture
def site() -> Iterator[FixtureServer]:
    with running_fixtures() as server:
        yield server


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    # One client for the module: building one costs an SSL context, tens of milliseconds.
    with httpx.Client(timeout=30) as client:
        yield client


def test_exported_members() -> None:
    assert sorted(fixtures_site.__all__) == [
        "API_DATA",
        "DOWNLOAD_BODY",
        "FixtureServer",
        "FixtureStatistics",
        "MAX_DELAY",
        "page_names",
        "running_fixtures",
        "serve_fixtures",
    ]


def test_page_names_lists_every_page() -> None:
    assert page_names() == sorted(PAGE_MARKERS)


@pytest.mark.parametrize("page", sorted(PAGE_MARKERS))
def test_page_is_served_with_its_markers(
    http: httpx.Client, site: FixtureServer, page: str
) -> None:
    response = http.get(site.url_for(page))
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    for marker in PAGE_MARKERS[page]:
        assert marker in response.text, f"{page}: {marker!r} missing"
    # Nothing a page loads may come from off this server.
    assert "http:" not in response.text
    assert "https:" not in response.text


@pytest.mark.parametrize("name", sorted(PWA_FILES))
def test_the_pwa_files_are_served_with_their_type(
    http: httpx.Client, site: FixtureServer, name: str
) -> None:
    content_type, markers = PWA_FILES[name]
    response = http.get(site.url_for(f"/pwa/{name}"))
    assert response.status_code == 200
    assert response.headers["content-type"] == content_type
    for marker in markers:
        assert marker in response.text, f"{name}: {marker!r} missing"
    assert "http:" not in response.text
    assert "https:" not in response.text


def test_root_is_index(http: httpx.Client, site: FixtureServer) -> None:
    root = http.get(site.url + "/")
    assert root.status_code == 200
    assert root.content == http.get(site.url_for("index.html")).content


def test_url_for_and_address(site: FixtureServer) -> None:
    assert site.host == "127.0.0.1"
    assert site.port > 0
    assert site.url == f"http://127.0.0.1:{site.port}"
    assert site.url_for("index.html") == f"{site.url}/index.html"
    assert site.url_for("/slow?delay=1") == f"{site.url}/slow?delay=1"


def test_api_data(http: httpx.Client, site: FixtureServer) -> None:
    response = http.get(site.url_for("/api/data.json"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"ok": True, "items": [1, 2, 3]} == API_DATA


@pytest.mark.parametrize("name", ["report.txt", "other-name_2.csv"])
def test_download_is_an_attachment(http: httpx.Client, site: FixtureServer, name: str) -> None:
    response = http.get(site.url_for(f"/download/{name}"))
    assert response.status_code == 200
    assert response.headers["content-disposition"] == f'attachment; filename="{name}"'
    assert response.content == DOWNLOAD_BODY == b"report body\n" * 10


@pytest.mark.parametrize(
    "path",
    [
        "/nope",
        "/index.htm",
        "/pages/index.html",
        "/_server.py",
        "/download/",
        "/download/a%2Fb",
        "/download/.hidden",
        "/slow?delay=0&page=nope.html",
        "/pwa/nope.js",
        "/pwa/README",
        "/pwa/../_server.py",
        "/pwa/pwa/sw.js",
    ],
)
def test_unknown_is_404(http: httpx.Client, site: FixtureServer, path: str) -> None:
    assert http.get(site.url_for(path)).status_code == 404


def test_slow_waits_at_least_the_delay(http: httpx.Client, site: FixtureServer) -> None:
    started = time.monotonic()
    response = http.get(site.url_for("/slow?delay=0.2"), timeout=30)
    assert time.monotonic() - started >= 0.2
    assert response.status_code == 200
    assert "<title>Fixture Slow</title>" in response.text


def test_slow_can_serve_a_page(http: httpx.Client, site: FixtureServer) -> None:
    response = http.get(site.url_for("/slow?delay=0&page=tall.html"))
    assert response.status_code == 200
    assert response.content == http.get(site.url_for("tall.html")).content


@pytest.mark.parametrize("delay", ["x", "-1", "nan", "inf"])
def test_slow_rejects_a_bad_delay(http: httpx.Client, site: FixtureServer, delay: str) -> None:
    assert http.get(site.url_for(f"/slow?delay={delay}")).status_code == 400


@pytest.mark.parametrize("path", ["/hang", "/slow?delay=120"])
def test_close_releases_parked_requests(http: httpx.Client, site: FixtureServer, path: str) -> None:
    outcome: list[httpx.Response | httpx.HTTPError] = []

    def request() -> None:
        try:
            outcome.append(http.get(site.url_for(path), timeout=60))
        except httpx.HTTPError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=request)
    thread.start()
    try:
        site.wait_parked(1)
        assert site.statistics().requests_parked == 1
        started = time.monotonic()
        site.close()
        assert time.monotonic() - started < 5
    finally:
        site.close()
        thread.join(10)
    assert not thread.is_alive()
    [response] = outcome
    assert isinstance(response, httpx.Response)
    assert response.status_code == 503
    assert site.statistics().requests_parked == 0


def test_wait_parked_times_out(site: FixtureServer) -> None:
    with pytest.raises(TimeoutError):
        site.wait_parked(1, timeout=0)


def _raw_get(site: FixtureServer, path: str) -> socket.socket:
    sock = socket.create_connection((site.host, site.port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {site.host}\r\n\r\n".encode())
    return sock


def test_wait_parked_with_a_path_counts_only_that_path(site: FixtureServer) -> None:
    mine, other = site.hang_path(), site.hang_path()
    assert mine != other
    with _raw_get(site, other):
        site.wait_parked(path=other)
        with pytest.raises(TimeoutError, match="at '/hang"):
            site.wait_parked(path=mine, timeout=0)
        with _raw_get(site, mine):
            site.wait_parked(path=mine)
            site.wait_parked(2)
            assert site.statistics().requests_parked == 2


@pytest.mark.parametrize("path", ["/hang?id=gone", "/slow?delay=120"])
def test_a_client_that_hangs_up_ends_its_parked_request(site: FixtureServer, path: str) -> None:
    with _raw_get(site, path):
        site.wait_parked(path=path)
    site.wait_unparked(path=path)  # well before /slow's two minutes: the client is gone
    assert site.statistics().requests_parked == 0
    with _raw_get(site, "/hang?id=kept"):
        site.wait_parked(path="/hang?id=kept")
        with pytest.raises(TimeoutError, match="still parked"):
            site.wait_unparked(timeout=0)


def test_close_is_idempotent_and_stops_serving(http: httpx.Client, site: FixtureServer) -> None:
    site.close()
    site.close()
    with pytest.raises(httpx.ConnectError):
        http.get(site.url_for("index.html"))


def test_statistics_count_requests(http: httpx.Client, site: FixtureServer) -> None:
    assert site.statistics() == FixtureStatistics(requests_handled=0, requests_parked=0)
    http.get(site.url_for("index.html"))
    http.get(site.url_for("nope"))
    assert site.statistics() == FixtureStatistics(requests_handled=2, requests_parked=0)


def test_serving_writes_nothing(
    http: httpx.Client, site: FixtureServer, capfd: pytest.CaptureFixture[str]
) -> None:
    for path in ["index.html", "nope", "/slow?delay=x", "/download/report.txt"]:
        http.get(site.url_for(path))
    site.close()
    assert capfd.readouterr() == ("", "")


def test_cli_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "fixtures_site", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0
    assert "SIGTERM" in result.stdout
    assert "--port" in result.stdout


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_cli_serves_until_signalled(http: httpx.Client, stop: signal.Signals) -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "fixtures_site", "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            assert proc.stderr is not None
            line = proc.stdout.readline()
            match = re.fullmatch(r"serving fixtures on (http://127\.0\.0\.1:\d+)\n", line)
            assert match, line
            assert http.get(match[1] + "/index.html").status_code == 200
            proc.send_signal(stop)
            assert proc.wait(timeout=10) == 0
            assert proc.stdout.read() == ""
            assert proc.stderr.read() == ""
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
