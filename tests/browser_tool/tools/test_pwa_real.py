"""The PWA tools against real Chromium (headless shell) and the fixture PWA (/pwa/).

The fixture's sw.js caches the app shell on install, serves it cache-first (offline too),
sends anything else to the network, and logs each step; app.js starts a dedicated worker that
logs as soon as it starts. Readiness is the page's own: `window.controlled` resolves once the
service worker controls the page. Calls go through `manager.call_tool`, as a front end's do.
"""

from __future__ import annotations

import re

import pytest

from browser_tool import BrowserSessionManager
from fixtures_site import FixtureServer
from tests.support.manager_calls import C, call, js, ok

pytestmark = pytest.mark.chrome


async def install_pwa(manager: BrowserSessionManager, site: FixtureServer) -> None:
    """Load the PWA, wait until its worker controls the page, then load it again."""
    await ok(manager, "browser_navigate", url=site.url_for("/pwa/"))
    assert await js(manager, "window.controlled.then(() => 'controlled')") == "controlled"
    await ok(manager, "browser_navigate", url=site.url_for("/pwa/"))


async def entries(
    manager: BrowserSessionManager, context: str | None = None
) -> list[tuple[str, str]]:
    """(text, context URL) of the console entries of `context` (None: all), oldest first,
    read from the buffer itself: the tool's output format is its own tests' business."""
    console = (await manager.get_or_create(C)).page.console
    return [(e.text, e.context_url) for e in console.recent(1000, context)]


async def test_the_registration_is_activated_and_controls_the_page_after_a_reload(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await install_pwa(manager, site)
    sw, origin = site.url_for("/pwa/sw.js"), site.url
    assert await ok(manager, "browser_get_service_workers") == (
        f"1 service worker registration for {origin}; this page ({site.url_for('/pwa/')}) is "
        f"controlled by {sw}.\n"
        f"- scope {site.url_for('/pwa/')}\n"
        f"  - activated, running, controls this page: script {sw}"
    )


async def test_a_second_load_is_answered_by_the_service_worker(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/pwa/"))
    first = await ok(manager, "browser_get_network_sources", clear=True)
    assert f"200 Document network {site.url_for('/pwa/')}\n" in first
    assert "service_worker 0," in first
    assert await js(manager, "window.controlled.then(() => 'controlled')") == "controlled"
    await ok(manager, "browser_get_network_sources", clear=True)
    await ok(manager, "browser_navigate", url=site.url_for("/pwa/"))
    # Logged by the event task, which may run just after the load the navigation waited for:
    # the tool lets it catch up first.
    second = await ok(manager, "browser_get_network_sources")
    assert re.match(
        r"\d+ responses recorded; by source: network \d+, service_worker [3-9],", second
    )
    # The worker's own install fetches may still be logged after the clear (they reach the log
    # through its session): none of the page's requests went to the network.
    from_network = [
        line
        for line in second.splitlines()[1:]
        if " network " in line and not line.endswith("[requested by the service_worker]")
    ]
    assert from_network == [], second
    for path, kind in (
        ("/pwa/", "Document"),
        ("/pwa/app.js", "Script"),
        ("/pwa/app.css", "Stylesheet"),
    ):
        line = f"200 {kind} service_worker (cache-storage) {site.url_for(path)}"
        assert line in second.splitlines(), second


async def test_offline_the_app_shell_loads_from_the_worker_and_the_rest_fails(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await install_pwa(manager, site)
    on = await ok(manager, "browser_set_offline", offline=True)
    # The dedicated worker may or may not have started yet: the service worker has.
    assert on.startswith("Offline mode is on for the page")
    assert "1 service worker" in on
    assert on.endswith(
        ": requests fail with net::ERR_INTERNET_DISCONNECTED unless a service worker answers them."
    )
    await ok(manager, "browser_get_network_sources", clear=True)
    assert await ok(manager, "browser_navigate", url=site.url_for("/pwa/")) == "done"
    assert await js(manager, "document.title") == "Fixture PWA"
    sources = await ok(manager, "browser_get_network_sources")
    assert f"200 Document service_worker (cache-storage) {site.url_for('/pwa/')}" in sources
    # Outside the worker's scope: the page's own request meets the network error.
    out = await call(manager, "browser_navigate", url=site.url_for("/index.html"))
    assert out.is_error
    assert out.output == "net::ERR_INTERNET_DISCONNECTED: No network connection"
    # Inside its scope but not cached: the worker's own fetch is offline too, so it fails.
    out = await call(manager, "browser_navigate", url=site.url_for("/pwa/uncached.html"))
    assert out.is_error
    assert out.output.startswith("net::ERR_FAILED")
    warnings = [text for text, _ in await entries(manager, "service_worker")]
    assert "sw: network failed for /pwa/uncached.html: TypeError: Failed to fetch" in warnings
    # (The worker's failed fetch is in the network log too, but Chromium may report it after
    # the navigation's failure: not asserted here, to keep the test deterministic.)
    off = await ok(manager, "browser_set_offline", offline=False)
    assert off.startswith("Offline mode is off for the page")
    assert "1 service worker" in off
    assert await ok(manager, "browser_navigate", url=site.url_for("/index.html")) == "done"
    assert await js(manager, "document.title") == "Fixture Home"


async def test_every_context_logs_into_the_one_buffer_tagged(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/pwa/"))
    assert await js(manager, "window.controlled.then(() => 'controlled')") == "controlled"
    # The dedicated worker logs before it answers the page: once the page heard, it logged.
    ready = "document.body.dataset.worker ? r(1) : setTimeout(f, 5)"
    assert await js(manager, f"new Promise((r) => {{ const f = () => {ready}; f(); }})") == 1
    sw = await entries(manager, "service_worker")
    sw_url = site.url_for("/pwa/sw.js")
    # The worker's first line ran while the page was loading, and it is there.
    assert sw[:3] == [
        ("sw: script evaluated", sw_url),
        ("sw: installed, app shell cached (5 files)", sw_url),
        ("sw: activated, claiming open pages", sw_url),
    ]
    workers = await entries(manager, "worker")
    assert workers == [("worker: started", site.url_for("/pwa/worker.js"))]
    page = await entries(manager, "page")
    assert page == [("page: app.js loaded", site.url_for("/pwa/"))]
    everything = await entries(manager)
    assert len(everything) == len(sw) + len(workers) + len(page)
    # The tool's filter: the worker's entry, and nothing of the other contexts.
    text = await ok(manager, "browser_recent_console_logs", context="worker")
    assert "worker: started" in text
    assert "sw: " not in text
    assert "page: " not in text


async def test_a_page_without_a_worker_gets_an_empty_answer(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    assert await ok(manager, "browser_get_service_workers") == (
        "No browser is running in this conversation, so no page and no service worker. "
        "Navigate to a page first."
    )
    await ok(manager, "browser_navigate", url="about:blank")
    assert await ok(manager, "browser_get_service_workers") == (
        "The page (about:blank) has no web origin, so no service worker: service workers "
        "belong to http(s) pages. Navigate to one first."
    )
    await ok(manager, "browser_navigate", url=site.url_for("/index.html"))
    assert await ok(manager, "browser_get_service_workers") == (
        f"No service worker is registered for {site.url}; this page "
        f"({site.url_for('/index.html')}) is not controlled by a service worker."
    )


async def test_one_conversations_workers_and_logs_stay_its_own(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await install_pwa(manager, site)  # in conversation C
    await ok(manager, "browser_set_offline", offline=True)
    other = "conv-2"
    out = await manager.call_tool(other, "browser_navigate", {"url": site.url_for("/index.html")})
    assert out.output == "done"  # C's offline mode is C's
    out = await manager.call_tool(other, "browser_get_service_workers", {})
    assert out.output.startswith(f"No service worker is registered for {site.url};")
    out = await manager.call_tool(
        other, "browser_recent_console_logs", {"context": "service_worker"}
    )
    assert out.output == "No console log entries of context service_worker."
    out = await manager.call_tool(other, "browser_get_network_sources", {})
    assert "service_worker 0," in out.output
    assert "/pwa/" not in out.output
    assert await entries(manager, "service_worker")  # C's own are there
